#include <adk/core/error.hpp>
#include <adk/core/event.hpp>
#include <adk/core/json_fields.hpp>

#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <algorithm>
#include <utility>

namespace adk {

using json_fields::FieldReader;
using json_fields::put;
using json_fields::put_extra;
using json_fields::put_nonempty;
using json_fields::put_true;

std::int64_t total_tokens(const UsageMetadata& usage)
{
    auto count = [](const std::optional<std::int64_t>& v) { return v && *v > 0 ? *v : 0; };
    if (usage.total_token_count && *usage.total_token_count > 0)
        return *usage.total_token_count;
    return count(usage.prompt_token_count) + count(usage.candidates_token_count) + count(usage.thoughts_token_count);
}

Event::Event(std::string author_, Content content_) : author(std::move(author_)), content(std::move(content_)) {}

std::string Event::text() const
{
    return content ? content->text() : std::string();
}

std::vector<FunctionCall> Event::function_calls() const
{
    std::vector<FunctionCall> out;
    if (content)
        for (const Part& p : content->parts)
            if (p.function_call)
                out.push_back(*p.function_call);
    return out;
}

std::vector<FunctionResponse> Event::function_responses() const
{
    std::vector<FunctionResponse> out;
    if (content)
        for (const Part& p : content->parts)
            if (p.function_response)
                out.push_back(*p.function_response);
    return out;
}

bool Event::has_trailing_code_execution_result() const
{
    return content && !content->parts.empty() && content->parts.back().code_execution_result.has_value();
}

std::string_view Event::node_path() const noexcept
{
    return node_info && node_info->path ? std::string_view(*node_info->path) : std::string_view();
}

bool is_imported(const Event& event)
{
    const json::value* mark = event.custom_metadata.if_contains(imported_event_key);
    return mark && mark->is_bool() && mark->get_bool();
}

bool EventActions::empty() const noexcept
{
    static_assert(sizeof(void*) != 8 || sizeof(EventActions) == 208, "EventActions changed: check empty()");
    return state_delta.empty() && artifact_delta.empty() && !skip_summarization && !transfer_to_agent && !escalate &&
           requested_tool_confirmations.empty() && requested_auth_configs.empty() && !compaction && !end_of_agent &&
           !agent_state && !rewind_before_invocation_id && !route && extra.empty();
}

bool Event::is_final_response() const
{
    if (actions.skip_summarization || !long_running_tool_ids.empty())
        return true;
    bool has_calls = false;
    if (content)
        for (const Part& p : content->parts)
            has_calls = has_calls || p.function_call || p.function_response;
    return !has_calls && !partial && !has_trailing_code_execution_result();
}

// ---- JSON out ---------------------------------------------------------------------------------------
// Every value is built in the storage of `out` (json::value_from(x, storage)), so that a caller can build
// a whole document in one monotonic buffer.

namespace {
void put_count(json::object& o, std::string_view key, const std::optional<std::int64_t>& v)
{
    if (v)
        o.emplace(key, *v);
}
}  // namespace

void tag_invoke(const json::value_from_tag&, json::value& out, const UsageMetadata& v)
{
    json::object o(out.storage());
    put_count(o, "promptTokenCount", v.prompt_token_count);
    put_count(o, "candidatesTokenCount", v.candidates_token_count);
    put_count(o, "totalTokenCount", v.total_token_count);
    put_count(o, "thoughtsTokenCount", v.thoughts_token_count);
    put_count(o, "cachedContentTokenCount", v.cached_content_token_count);
    put_extra(o, v.extra);
    out = std::move(o);
}

void tag_invoke(const json::value_from_tag&, json::value& out, const EventCompaction& v)
{
    json::object o(out.storage());
    if (v.start_timestamp)
        o.emplace("startTimestamp", *v.start_timestamp);
    if (v.end_timestamp)
        o.emplace("endTimestamp", *v.end_timestamp);
    if (v.compacted_content)
        o.emplace("compactedContent", json::value_from(*v.compacted_content, o.storage()));
    put_extra(o, v.extra);
    out = std::move(o);
}

void tag_invoke(const json::value_from_tag&, json::value& out, const NodeInfo& v)
{
    json::object o(out.storage());
    put(o, "path", v.path);
    if (!v.output_for.empty()) {
        json::array paths(o.storage());
        for (const auto& path : v.output_for)
            paths.emplace_back(path);
        o.emplace("outputFor", std::move(paths));
    }
    put_true(o, "messageAsOutput", v.message_as_output);
    put_extra(o, v.extra);
    out = std::move(o);
}

void tag_invoke(const json::value_from_tag&, json::value& out, const EventActions& v)
{
    json::object o(out.storage());
    o.emplace("stateDelta", v.state_delta);
    json::object artifacts;
    for (const auto& [name, version] : v.artifact_delta)
        artifacts.emplace(name, version);
    o.emplace("artifactDelta", std::move(artifacts));
    put_true(o, "skipSummarization", v.skip_summarization);
    put(o, "transferToAgent", v.transfer_to_agent);
    put_true(o, "escalate", v.escalate);
    o.emplace("requestedAuthConfigs", v.requested_auth_configs);
    o.emplace("requestedToolConfirmations", v.requested_tool_confirmations);
    if (v.compaction)
        o.emplace("compaction", json::value_from(*v.compaction, o.storage()));
    put_true(o, "endOfAgent", v.end_of_agent);
    if (v.agent_state)
        o.emplace("agentState", *v.agent_state);
    put(o, "rewindBeforeInvocationId", v.rewind_before_invocation_id);
    if (v.route)
        o.emplace("route", *v.route);
    put_extra(o, v.extra);
    out = std::move(o);
}

void tag_invoke(const json::value_from_tag&, json::value& out, const Event& v)
{
    json::object o(out.storage());
    put_nonempty(o, "id", v.id);
    put_nonempty(o, "invocationId", v.invocation_id);
    o.emplace("author", v.author);
    put_nonempty(o, "branch", v.branch);
    o.emplace("timestamp", v.timestamp);
    if (v.content)
        o.emplace("content", json::value_from(*v.content, o.storage()));
    o.emplace("actions", json::value_from(v.actions, o.storage()));
    put_true(o, "partial", v.partial);
    put_true(o, "turnComplete", v.turn_complete);
    put_true(o, "interrupted", v.interrupted);
    put(o, "finishReason", v.finish_reason);
    put(o, "errorCode", v.error_code);
    put(o, "errorMessage", v.error_message);
    if (v.usage_metadata)
        o.emplace("usageMetadata", json::value_from(*v.usage_metadata, o.storage()));
    put(o, "modelVersion", v.model_version);
    if (!v.long_running_tool_ids.empty()) {
        json::array ids(o.storage());
        for (const auto& id : v.long_running_tool_ids)
            ids.emplace_back(id);
        o.emplace("longRunningToolIds", std::move(ids));
    }
    if (!v.custom_metadata.empty())
        o.emplace("customMetadata", v.custom_metadata);
    if (v.node_info)
        o.emplace("nodeInfo", json::value_from(*v.node_info, o.storage()));
    if (v.output)
        o.emplace("output", *v.output);
    put(o, "isolationScope", v.isolation_scope);
    put_extra(o, v.extra);
    out = std::move(o);
}

// ---- JSON in ----------------------------------------------------------------------------------------

UsageMetadata tag_invoke(const json::value_to_tag<UsageMetadata>&, const json::value& v)
{
    FieldReader r(v, "usageMetadata");
    UsageMetadata u;
    u.prompt_token_count = r.integer("promptTokenCount");
    u.candidates_token_count = r.integer("candidatesTokenCount");
    u.total_token_count = r.integer("totalTokenCount");
    u.thoughts_token_count = r.integer("thoughtsTokenCount");
    u.cached_content_token_count = r.integer("cachedContentTokenCount");
    u.extra = r.rest();
    return u;
}

EventCompaction tag_invoke(const json::value_to_tag<EventCompaction>&, const json::value& v)
{
    FieldReader r(v, "actions.compaction");
    EventCompaction c;
    c.start_timestamp = r.timestamp("startTimestamp");
    c.end_timestamp = r.timestamp("endTimestamp");
    if (auto* content = r.find("compactedContent"))
        c.compacted_content = json::value_to<Content>(*content);
    c.extra = r.rest();
    return c;
}

namespace {

// A route: a string, a number or a boolean, or an array of them.
json::value read_route(FieldReader& r, const json::value& v)
{
    auto key = [](const json::value& x) { return x.is_string() || x.is_bool() || x.is_number(); };
    bool fits = key(v);
    if (const json::array* list = v.if_array())
        fits = std::all_of(list->begin(), list->end(), key);
    if (!fits)
        r.fail("route", "a string, a number, a boolean, or an array of them");
    json_fields::check_finite(v, "actions.route");
    return v;
}

}  // namespace

NodeInfo tag_invoke(const json::value_to_tag<NodeInfo>&, const json::value& v)
{
    FieldReader r(v, "Event.nodeInfo");
    NodeInfo n;
    n.path = r.string("path");
    if (const json::array* paths = r.array("outputFor")) {
        for (const json::value& path : *paths) {
            if (!path.is_string())
                r.fail("outputFor", "an array of node paths (strings)");
            n.output_for.emplace_back(path.get_string());
        }
    }
    n.message_as_output = r.boolean("messageAsOutput").value_or(false);
    n.extra = r.rest();
    return n;
}

EventActions tag_invoke(const json::value_to_tag<EventActions>&, const json::value& v)
{
    FieldReader r(v, "Event.actions");
    EventActions a;
    a.state_delta = r.object("stateDelta").value_or(json::object{});
    if (auto artifacts = r.object("artifactDelta")) {
        for (const auto& kv : *artifacts) {
            const json::value& version = kv.value();
            const bool fits = (version.is_int64() && version.get_int64() >= 0) ||
                              (version.is_uint64() && version.get_uint64() <= static_cast<std::uint64_t>(INT64_MAX));
            if (!fits)
                r.fail("artifactDelta." + std::string(kv.key()), "a version: a whole number from 0 to 2^63-1");
            a.artifact_delta[std::string(kv.key())] = version.to_number<std::int64_t>();
        }
    }
    a.skip_summarization = r.boolean("skipSummarization").value_or(false);
    a.transfer_to_agent = r.string("transferToAgent");
    a.escalate = r.boolean("escalate").value_or(false);
    a.requested_auth_configs = r.object("requestedAuthConfigs").value_or(json::object{});
    a.requested_tool_confirmations = r.object("requestedToolConfirmations").value_or(json::object{});
    if (auto* compaction = r.find("compaction"))
        a.compaction = json::value_to<EventCompaction>(*compaction);
    a.end_of_agent = r.boolean("endOfAgent").value_or(false);
    a.agent_state = r.object("agentState");
    a.rewind_before_invocation_id = r.string("rewindBeforeInvocationId");
    if (const json::value* route = r.find("route"))
        a.route = read_route(r, *route);
    a.extra = r.rest();
    return a;
}

Event tag_invoke(const json::value_to_tag<Event>&, const json::value& v)
{
    FieldReader r(v, "Event");
    Event e;
    e.id = r.string("id").value_or("");
    e.invocation_id = r.string("invocationId").value_or("");
    e.author = r.string("author").value_or("");
    e.branch = r.string("branch").value_or("");
    if (auto ts = r.timestamp("timestamp"))
        e.timestamp = *ts;
    if (auto* c = r.find("content"))
        e.content = json::value_to<Content>(*c);
    if (auto* a = r.find("actions"))
        e.actions = json::value_to<EventActions>(*a);
    e.partial = r.boolean("partial").value_or(false);
    e.turn_complete = r.boolean("turnComplete").value_or(false);
    e.interrupted = r.boolean("interrupted").value_or(false);
    e.finish_reason = r.string("finishReason");
    e.error_code = r.string("errorCode");
    e.error_message = r.string("errorMessage");
    if (auto* u = r.find("usageMetadata"))
        e.usage_metadata = json::value_to<UsageMetadata>(*u);
    e.model_version = r.string("modelVersion");
    if (const json::array* ids = r.array("longRunningToolIds")) {
        for (const json::value& id : *ids) {
            if (!id.is_string())
                r.fail("longRunningToolIds", "an array of strings");
            e.long_running_tool_ids.emplace_back(id.get_string());
        }
    }
    e.custom_metadata = r.object("customMetadata").value_or(json::object{});
    if (const json::value* node = r.find("nodeInfo"))
        e.node_info = json::value_to<NodeInfo>(*node);
    if (const json::value* output = r.find("output")) {
        json_fields::check_finite(*output, "output");
        e.output = *output;
    }
    e.isolation_scope = r.string("isolationScope");
    // ADK TypeScript writes a node's route at the top of the event; ADK Python (and adk-cpp) in its actions.
    if (!e.actions.route && r.unread() > 0)  // most events hold nothing more: no lookup for them
        if (const json::value* route = r.find("route"))
            e.actions.route = read_route(r, *route);
    e.extra = r.rest();
    return e;
}

}  // namespace adk
