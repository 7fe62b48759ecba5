// Event and EventActions: what agents emit, what sessions store, what the HTTP API streams.
//
// The JSON is ADK Python's: camelCase keys, absent instead of null, timestamps in float seconds.
// Fields adk-cpp does not model (groundingMetadata, inputTranscription, agentState, ...) are kept in
// `extra` and written back as read.
#pragma once

#include <adk/core/boxed.hpp>
#include <adk/core/content.hpp>

#include <boost/json/object.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace adk {

// Token counts reported by a model (genai GenerateContentResponseUsageMetadata).
class UsageMetadata {
public:
    UsageMetadata() = default;
    std::optional<std::int64_t> prompt_token_count;
    std::optional<std::int64_t> candidates_token_count;
    std::optional<std::int64_t> total_token_count;
    std::optional<std::int64_t> thoughts_token_count;
    std::optional<std::int64_t> cached_content_token_count;
    json::object extra;  // promptTokensDetails, serviceTier, ...

    friend bool operator==(const UsageMetadata&, const UsageMetadata&) = default;
};

// The tokens a model call used, input and output: totalTokenCount when the model gave it, else promptTokenCount +
// candidatesTokenCount + thoughtsTokenCount (each missing or negative count taken as 0).
std::int64_t total_tokens(const UsageMetadata& usage);

// ADK's EventCompaction: a summary that stands, in what a model is sent, for the session's events whose
// timestamps lie in [start_timestamp, end_timestamp] (adk/compaction/compaction.hpp writes them). Each field is
// optional on the wire, as in ADK; a compaction missing one is kept as read and ignored.
class EventCompaction {
public:
    EventCompaction() = default;
    std::optional<double> start_timestamp;
    std::optional<double> end_timestamp;
    std::optional<Content> compacted_content;
    json::object extra;

    bool complete() const { return start_timestamp && end_timestamp && compacted_content; }
    friend bool operator==(const EventCompaction&, const EventCompaction&) = default;
};

// ADK 2.x's NodeInfo: which node of a workflow (or of an agent tree in a resumable app) wrote the event.
// `path` is the node's path: segments "name@run" joined by '/' ("triage@1/classify@1"), as ADK Python writes
// it; `output_for` the paths whose output this event's output is (the node's first, then ancestors that took
// it as theirs); `message_as_output`: the event's text is the node's output.
class NodeInfo {
public:
    NodeInfo() = default;
    std::optional<std::string> path;
    std::vector<std::string> output_for;
    bool message_as_output = false;
    json::object extra;

    friend bool operator==(const NodeInfo&, const NodeInfo&) = default;
};

class EventActions {
public:
    EventActions() = default;

    json::object state_delta;                           // key -> new value; prefixes app:, user:, temp:
    std::map<std::string, std::int64_t> artifact_delta;  // file name -> version
    bool skip_summarization = false;
    Boxed<std::string> transfer_to_agent;
    bool escalate = false;
    json::object requested_tool_confirmations;  // function call id -> ToolConfirmation
    json::object requested_auth_configs;        // function call id -> AuthConfig
    Boxed<EventCompaction> compaction;  // boxed (as node_info): rare, and 152 bytes inline
    bool end_of_agent = false;                   // the author finished its part of the invocation
    Boxed<json::object> agent_state;             // where the author stands, to resume from (resumable apps)
    Boxed<std::string> rewind_before_invocation_id;  // Runner::rewind's marker
    // The route(s) a workflow node took: a string, a number, a boolean, or an array of them (ADK 2.x).
    Boxed<json::value> route;
    json::object extra;

    // Nothing set: the event does nothing (a streamed chunk's actions). Cheaper than comparing with EventActions().
    bool empty() const noexcept;

    friend bool operator==(const EventActions&, const EventActions&) = default;
};

class Event {
public:
    Event() = default;
    Event(std::string author_, Content content_);

    // ADK's rule: a response the user should see as the answer. True when skip_summarization is set or
    // a long-running tool is pending; otherwise when the event is not partial and carries no function
    // call, no function response and no trailing code execution result.
    bool is_final_response() const;

    // The non-thought text of the content, joined; empty without content.
    std::string text() const;
    std::vector<FunctionCall> function_calls() const;
    std::vector<FunctionResponse> function_responses() const;
    bool has_trailing_code_execution_result() const;

    std::string id;
    std::string invocation_id;
    std::string author;  // an agent's name, or "user"
    std::string branch;  // "parent.child" inside parallel agents; empty (absent in JSON) otherwise
    double timestamp = 0;  // seconds since the epoch
    bool partial = false;
    bool turn_complete = false;
    bool interrupted = false;
    std::optional<std::string> finish_reason;
    Boxed<std::string> error_code;  // boxed, as the rare members below (see node_info)
    Boxed<std::string> error_message;
    std::optional<UsageMetadata> usage_metadata;
    std::optional<std::string> model_version;  // the model's own name for the version that answered
    std::vector<std::string> long_running_tool_ids;
    json::object custom_metadata;
    std::optional<Content> content;
    EventActions actions;
    // ADK 2.x's workflow fields: the node that wrote the event, its structured output, and the scope that
    // keeps peer conversations apart. The rare members (these, the error, and in actions the transfer, the
    // compaction, the agent state, the rewind marker and the route) are boxed (std::optional's interface, on the
    // heap): inline they kept an Event at 1,216 bytes, then 976. A server allocates one Event per streamed chunk,
    // and a paced stream holds about a dozen (the session's, twice, the run's log, the frames of the invocation).
    Boxed<NodeInfo> node_info;
    Boxed<json::value> output;
    Boxed<std::string> isolation_scope;
    json::object extra;

    // node_info's path, or "" when the event has none.
    std::string_view node_path() const noexcept;

    friend bool operator==(const Event&, const Event&) = default;
};

static_assert(!std::is_aggregate_v<UsageMetadata>);
static_assert(!std::is_aggregate_v<EventActions> && !std::is_aggregate_v<EventCompaction>);
static_assert(!std::is_aggregate_v<NodeInfo>);
static_assert(!std::is_aggregate_v<Event>);

// Reading a timestamp accepts float seconds (ADK Python) and epoch milliseconds (the TypeScript ADK
// writes those): a value above 1e11 cannot be seconds before the year 5000, so it is taken as ms; one above
// 1e14 is neither and is refused. Reading refuses numbers that are not finite anywhere (1e400 is read as
// infinity, which no JSON can hold), so what is read can always be written back and read again.
void tag_invoke(const json::value_from_tag&, json::value& out, const UsageMetadata& v);
void tag_invoke(const json::value_from_tag&, json::value& out, const EventCompaction& v);
void tag_invoke(const json::value_from_tag&, json::value& out, const NodeInfo& v);
void tag_invoke(const json::value_from_tag&, json::value& out, const EventActions& v);
void tag_invoke(const json::value_from_tag&, json::value& out, const Event& v);
UsageMetadata tag_invoke(const json::value_to_tag<UsageMetadata>&, const json::value& v);
EventCompaction tag_invoke(const json::value_to_tag<EventCompaction>&, const json::value& v);
NodeInfo tag_invoke(const json::value_to_tag<NodeInfo>&, const json::value& v);
EventActions tag_invoke(const json::value_to_tag<EventActions>&, const json::value& v);
Event tag_invoke(const json::value_to_tag<Event>&, const json::value& v);

// The event as compact JSON text in ADK's wire form: the same text as json::serialize(json::value_from(event)),
// written without building the JSON tree (what the server writes for every streamed chunk).
std::string to_json_text(const Event& event);
// The same text, appended to `out` (a buffer reused from one event to the next allocates nothing).
void append_json_text(std::string& out, const Event& event);

// About the bytes an event holds: its strings and JSON members, and a fixed cost per member. Cheaper than
// writing it; what a bounded buffer of events (a run's log) counts. Not exact, never zero.
std::size_t approximate_bytes(const Event& event);

// An event a client imported with a session (ApiServer's create with "events") carries customMetadata
// "adk_imported": true, set by the server whatever the client sent. Its function calls are history, not calls an
// agent made here: no answer resumes them, and no run resumes its invocation.
inline constexpr std::string_view imported_event_key = "adk_imported";
bool is_imported(const Event& event);

}  // namespace adk
