// approximate_bytes: what an event holds, counted without writing it. Each string counts its size, each JSON
// member or element a fixed cost beside its contents, each part and optional member a fixed cost.
#include <adk/core/event.hpp>

namespace adk {

namespace {

constexpr std::size_t member_cost = 16;  // a JSON value, a key, an optional's flag: about one slot

std::size_t json_bytes(const json::value& v);

std::size_t members_bytes(const json::object& o)
{
    std::size_t n = member_cost;
    for (const auto& kv : o)
        n += member_cost + kv.key().size() + json_bytes(kv.value());
    return n;
}

// Most of an event's objects are empty (nine of them in a streamed delta): those cost no call.
inline std::size_t json_bytes(const json::object& o)
{
    return o.empty() ? member_cost : members_bytes(o);
}

std::size_t json_bytes(const json::value& v)
{
    switch (v.kind()) {
    case json::kind::string:
        return member_cost + v.get_string().size();
    case json::kind::object:
        return json_bytes(v.get_object());
    case json::kind::array: {
        std::size_t n = member_cost;
        for (const auto& e : v.get_array())
            n += json_bytes(e);
        return n;
    }
    default:
        return member_cost;
    }
}

// `s` a std::optional<std::string> or a Boxed<std::string>.
template <class Optional>
std::size_t text_bytes(const Optional& s)
{
    return s ? member_cost + s->size() : 0;
}

std::size_t content_bytes(const Content& c)
{
    std::size_t n = member_cost + c.role.size() + json_bytes(c.extra);
    for (const Part& p : c.parts) {
        n += sizeof(Part) + text_bytes(p.text) + text_bytes(p.thought_signature) + json_bytes(p.extra);
        if (p.inline_data)
            n += p.inline_data->mime_type.size() + p.inline_data->data.size() +
                 text_bytes(p.inline_data->display_name) + json_bytes(p.inline_data->extra);
        if (p.file_data)
            n += p.file_data->mime_type.size() + p.file_data->file_uri.size() +
                 text_bytes(p.file_data->display_name) + json_bytes(p.file_data->extra);
        if (p.function_call)
            n += p.function_call->id.size() + p.function_call->name.size() + json_bytes(p.function_call->args) +
                 json_bytes(p.function_call->extra);
        if (p.function_response)
            n += p.function_response->id.size() + p.function_response->name.size() +
                 json_bytes(p.function_response->response) + json_bytes(p.function_response->extra);
        if (p.executable_code)
            n += p.executable_code->language.size() + p.executable_code->code.size() +
                 json_bytes(p.executable_code->extra);
        if (p.code_execution_result)
            n += p.code_execution_result->outcome.size() + p.code_execution_result->output.size() +
                 json_bytes(p.code_execution_result->extra);
    }
    return n;
}

std::size_t actions_bytes(const EventActions& a)
{
    std::size_t n = json_bytes(a.state_delta) + json_bytes(a.requested_tool_confirmations) +
                    json_bytes(a.requested_auth_configs) + text_bytes(a.transfer_to_agent) +
                    text_bytes(a.rewind_before_invocation_id) + json_bytes(a.extra);
    for (const auto& [name, version] : a.artifact_delta)
        n += member_cost + name.size();
    if (a.compaction) {
        n += sizeof(EventCompaction) + json_bytes(a.compaction->extra);
        if (a.compaction->compacted_content)
            n += content_bytes(*a.compaction->compacted_content);
    }
    if (a.agent_state)
        n += json_bytes(*a.agent_state);
    if (a.route)
        n += json_bytes(*a.route);
    return n;
}

}  // namespace

std::size_t approximate_bytes(const Event& e)
{
    std::size_t n = sizeof(Event) + e.id.size() + e.invocation_id.size() + e.author.size() + e.branch.size() +
                    text_bytes(e.finish_reason) + text_bytes(e.error_code) + text_bytes(e.error_message) +
                    text_bytes(e.model_version) + text_bytes(e.isolation_scope) + json_bytes(e.custom_metadata) +
                    json_bytes(e.extra) + actions_bytes(e.actions);
    for (const auto& id : e.long_running_tool_ids)
        n += member_cost + id.size();
    if (e.usage_metadata)
        n += json_bytes(e.usage_metadata->extra);
    if (e.content)
        n += content_bytes(*e.content);
    if (e.node_info) {
        n += sizeof(NodeInfo) + text_bytes(e.node_info->path) + json_bytes(e.node_info->extra);
        for (const auto& path : e.node_info->output_for)
            n += member_cost + path.size();
    }
    if (e.output)
        n += json_bytes(*e.output);
    return n;
}

}  // namespace adk
