// to_json_text(Event): an event's JSON written straight into a string, without building the json::value tree
// that tag_invoke(value_from_tag, Event) builds. The server writes one per streamed chunk, where the tree cost
// more than a quarter of the chunk's instructions (callgrind, tools/bench/pace.sh).
//
// The text is the same, byte for byte, as json::serialize(json::value_from(event)): the same members in the
// same order, omitted when tag_invoke omits them, strings escaped and numbers formatted as Boost.JSON's
// serializer does them, and an extra member skipped when a known one of that name was written (json::object's
// emplace keeps the first). tag_invoke stays the one mapping for everything else: parts other than text are
// written through it. The JSON fuzzer (tests/fuzz/json_decode_fuzz.cpp) checks the two agree on every event it
// reads, and so does tests/unit/event_text_test.cpp.
#include <adk/detail/json_writer.hpp>

#include <boost/json/value_from.hpp>

namespace adk {

namespace {

using Writer = detail::JsonWriter;

void write_nonempty(Writer& w, std::string_view key, const std::string& v)
{
    if (!v.empty()) {
        w.key(key);
        w.string(v);
    }
}

void write_true(Writer& w, std::string_view key, bool v)
{
    if (v) {
        w.key(key);
        w.boolean(true);
    }
}

void write_value(Writer& w, std::string_view key, const json::value& v)
{
    w.key(key);
    w.value(v);
}

void write_value(Writer& w, std::string_view key, const json::object& o)
{
    w.key(key);
    w.value(o);
}

void write_extra(Writer& w, const json::object& extra)
{
    for (const auto& kv : extra)
        if (w.extra_key(kv.key()))
            w.value(kv.value());
}

// A part that holds text only (what a streamed chunk is), written here; any other through tag_invoke.
bool text_only(const Part& p)
{
    return !p.thought_signature && !p.inline_data && !p.file_data && !p.function_call && !p.function_response &&
           !p.executable_code && !p.code_execution_result;
}

void write_actions(Writer& w, const EventActions& a)
{
    w.begin_object();
    write_value(w, "stateDelta", a.state_delta);
    w.key("artifactDelta");
    w.begin_object();
    for (const auto& [name, version] : a.artifact_delta)
        if (w.extra_key(name))  // names of files: escaped
            w.integer(version);
    w.end_object();
    write_true(w, "skipSummarization", a.skip_summarization);
    w.member("transferToAgent", a.transfer_to_agent);
    write_true(w, "escalate", a.escalate);
    write_value(w, "requestedAuthConfigs", a.requested_auth_configs);
    write_value(w, "requestedToolConfirmations", a.requested_tool_confirmations);
    if (a.compaction) {
        const EventCompaction& c = *a.compaction;
        w.key("compaction");
        w.begin_object();
        w.member("startTimestamp", c.start_timestamp);
        w.member("endTimestamp", c.end_timestamp);
        if (c.compacted_content) {
            w.key("compactedContent");
            detail::write_content(w, *c.compacted_content);
        }
        write_extra(w, c.extra);
        w.end_object();
    }
    write_true(w, "endOfAgent", a.end_of_agent);
    if (a.agent_state)
        write_value(w, "agentState", *a.agent_state);
    w.member("rewindBeforeInvocationId", a.rewind_before_invocation_id);
    if (a.route)
        write_value(w, "route", *a.route);
    write_extra(w, a.extra);
    w.end_object();
}

}  // namespace

namespace detail {

void write_content(JsonWriter& w, const Content& c, std::string_view default_role, bool with_role)
{
    w.begin_object();
    w.key("parts");
    w.begin_array();
    for (const Part& p : c.parts) {
        w.element();
        if (!text_only(p)) {
            w.value(json::value_from(p));
            continue;
        }
        w.begin_object();
        w.member("text", p.text);
        write_true(w, "thought", p.thought);
        write_extra(w, p.extra);
        w.end_object();
    }
    w.end_array();
    if (!with_role) {
        write_extra(w, c.extra);
        w.end_object();
        return;
    }
    if (!c.role.empty() || default_role.empty()) {
        write_nonempty(w, "role", c.role);
        write_extra(w, c.extra);
        w.end_object();
        return;
    }
    bool role_written = false;
    for (const auto& kv : c.extra) {
        if (kv.key() == "role") {
            if (!role_written && w.extra_key("role"))
                w.string(default_role);
            role_written = true;
        } else if (w.extra_key(kv.key())) {
            w.value(kv.value());
        }
    }
    if (!role_written) {
        w.key("role");
        w.string(default_role);
    }
    w.end_object();
}

void write_usage(JsonWriter& w, const UsageMetadata& u)
{
    w.begin_object();
    w.member("promptTokenCount", u.prompt_token_count);
    w.member("candidatesTokenCount", u.candidates_token_count);
    w.member("totalTokenCount", u.total_token_count);
    w.member("thoughtsTokenCount", u.thoughts_token_count);
    w.member("cachedContentTokenCount", u.cached_content_token_count);
    write_extra(w, u.extra);
    w.end_object();
}

DeltaJson::DeltaJson(const Event& base)
{
    if (!base.partial || base.turn_complete || base.interrupted || base.error_code || base.error_message ||
        !base.content || base.content->parts.size() != 1 || !base.content->parts.front().text)
        return;
    // The event with an empty text and neither usage nor finish reason; append_json_text writes "finishReason",
    // "errorCode", "errorMessage" and "usageMetadata" in that order right after "interrupted" (absent here), so
    // that what a delta adds goes after "partial":true. Keys are written bare and strings escaped, so neither
    // sequence looked for below can come from a value: each is found once or the pieces are not used.
    Event e = base;
    e.content->parts.front().text.emplace();
    e.usage_metadata.reset();
    e.finish_reason.reset();
    std::string text;
    append_json_text(text, e);
    constexpr std::string_view text_at = R"(,"content":{"parts":[{"text":")";
    constexpr std::string_view partial_at = R"(,"partial":true)";
    const auto t = text.find(text_at);
    const auto p = text.find(partial_at);
    if (t == std::string::npos || p == std::string::npos || p < t || text.find(text_at, t + 1) != std::string::npos ||
        text.find(partial_at, p + 1) != std::string::npos)
        return;
    const std::size_t quotes = t + text_at.size() - 1;  // the empty text's two quotes
    const std::size_t after_partial = p + partial_at.size();
    head_ = text.substr(0, quotes);
    middle_ = text.substr(quotes + 2, after_partial - quotes - 2);
    tail_ = text.substr(after_partial);
    usable_ = true;
}

void DeltaJson::append(std::string& out, std::string_view text, const UsageMetadata* usage,
                       const std::string* finish_reason) const
{
    JsonWriter w(out);
    out += head_;
    w.string(text);
    out += middle_;
    if (finish_reason) {
        out += R"(,"finishReason":)";
        w.string(*finish_reason);
    }
    if (usage) {
        out += R"(,"usageMetadata":)";
        write_usage(w, *usage);
    }
    out += tail_;
}

}  // namespace detail

std::string to_json_text(const Event& e)
{
    std::string out;
    out.reserve(512);
    append_json_text(out, e);
    return out;
}

void append_json_text(std::string& out, const Event& e)
{
    Writer w(out);
    w.begin_object();
    write_nonempty(w, "id", e.id);
    write_nonempty(w, "invocationId", e.invocation_id);
    w.key("author");
    w.string(e.author);
    write_nonempty(w, "branch", e.branch);
    w.key("timestamp");
    w.number(e.timestamp);
    if (e.content) {
        w.key("content");
        detail::write_content(w, *e.content);
    }
    w.key("actions");
    if (e.actions.empty())  // what every streamed chunk has: the members tag_invoke writes even when empty
        w.raw(R"({"stateDelta":{},"artifactDelta":{},"requestedAuthConfigs":{},"requestedToolConfirmations":{}})");
    else
        write_actions(w, e.actions);
    write_true(w, "partial", e.partial);
    write_true(w, "turnComplete", e.turn_complete);
    write_true(w, "interrupted", e.interrupted);
    w.member("finishReason", e.finish_reason);
    w.member("errorCode", e.error_code);
    w.member("errorMessage", e.error_message);
    if (e.usage_metadata) {
        w.key("usageMetadata");
        detail::write_usage(w, *e.usage_metadata);
    }
    w.member("modelVersion", e.model_version);
    if (!e.long_running_tool_ids.empty()) {
        w.key("longRunningToolIds");
        w.begin_array();
        for (const auto& id : e.long_running_tool_ids) {
            w.element();
            w.string(id);
        }
        w.end_array();
    }
    if (!e.custom_metadata.empty())
        write_value(w, "customMetadata", e.custom_metadata);
    if (e.node_info) {
        const NodeInfo& n = *e.node_info;
        w.key("nodeInfo");
        w.begin_object();
        w.member("path", n.path);
        if (!n.output_for.empty()) {
            w.key("outputFor");
            w.begin_array();
            for (const auto& path : n.output_for) {
                w.element();
                w.string(path);
            }
            w.end_array();
        }
        write_true(w, "messageAsOutput", n.message_as_output);
        write_extra(w, n.extra);
        w.end_object();
    }
    if (e.output)
        write_value(w, "output", *e.output);
    w.member("isolationScope", e.isolation_scope);
    write_extra(w, e.extra);
    w.end_object();
}

}  // namespace adk
