#include <adk/core/error.hpp>
#include <adk/core/event.hpp>
#include <adk/core/json_limits.hpp>

#include <boost/json/parse.hpp>

#include <cmath>
#include <string>

namespace adk {

namespace {

std::size_t digits(std::uint64_t n)
{
    std::size_t d = 1;
    while (n >= 10) {
        n /= 10;
        ++d;
    }
    return d;
}

std::size_t string_bytes(std::string_view s)
{
    std::size_t n = 2;
    for (unsigned char c : s)
        n += c < 0x20 ? 6 : (c == '"' || c == '\\') ? 2 : 1;
    return n;
}

// One check of a tree: its depth against the limit, its numbers, its size.
class Walk {
public:
    Walk(std::string_view where, std::size_t max_depth) : where_(where), max_depth_(max_depth) {}

    // `depth`: how deep `v` stands when it is a container (1 for a document's root).
    std::size_t value(const json::value& v, std::size_t depth)
    {
        switch (v.kind()) {
        case json::kind::null: return 4;
        case json::kind::bool_: return 5;
        case json::kind::int64: {
            const std::int64_t i = v.get_int64();
            return i < 0 ? 1 + digits(0 - static_cast<std::uint64_t>(i)) : digits(static_cast<std::uint64_t>(i));
        }
        case json::kind::uint64: return digits(v.get_uint64());
        case json::kind::double_:
            if (!std::isfinite(v.get_double()))
                throw Error(errc::invalid_argument, "'" + std::string(where_) +
                                                        "' holds a number too large for JSON (such as 1e400): write "
                                                        "it as a string, or a smaller number");
            return 25;
        case json::kind::string: return string_bytes(v.get_string());
        case json::kind::array: {
            enter(depth);
            std::size_t n = 2;
            for (const auto& x : v.get_array())
                n += value(x, depth + 1) + 1;
            return n;
        }
        case json::kind::object: return object(v.get_object(), depth);
        }
        return 0;
    }

    std::size_t object(const json::object& o, std::size_t depth)
    {
        enter(depth);
        std::size_t n = 2;
        for (const auto& kv : o)
            n += string_bytes(kv.key()) + 2 + value(kv.value(), depth + 1);
        return n;
    }

private:
    void enter(std::size_t depth) const
    {
        if (depth > max_depth_)
            throw Error(errc::invalid_argument, "'" + std::string(where_) + "' nests deeper than " +
                                                    std::to_string(max_depth_) +
                                                    " levels of JSON, which adk-cpp does not store: flatten it, or "
                                                    "send it as a string");
    }

    std::string_view where_;
    std::size_t max_depth_;
};

// A member object of an event, `depth` deep in the event's JSON (the event itself is 1).
void check_member(const json::object& o, std::size_t depth, std::string_view where)
{
    if (!o.empty())
        Walk(where, max_json_depth).object(o, depth);
}

// Where a content's members are, in the words of a refusal (literals: no allocation per check).
struct ContentPlace {
    std::string_view content, parts, args, call, response, function_response, inline_data, file_data, code, result;
};
#define ADK_CONTENT_PLACE(prefix)                                                                              \
    ContentPlace                                                                                               \
    {                                                                                                          \
        prefix, prefix ".parts[]", prefix ".parts[].functionCall.args", prefix ".parts[].functionCall",        \
            prefix ".parts[].functionResponse.response", prefix ".parts[].functionResponse",                   \
            prefix ".parts[].inlineData", prefix ".parts[].fileData", prefix ".parts[].executableCode",        \
            prefix ".parts[].codeExecutionResult"                                                              \
    }
constexpr ContentPlace event_content = ADK_CONTENT_PLACE("content");
constexpr ContentPlace compacted_content = ADK_CONTENT_PLACE("actions.compaction.compactedContent");
#undef ADK_CONTENT_PLACE

// A content object `depth` deep in the event's JSON; its parts are two levels below it (content.parts[]).
void check_content(const Content& content, std::size_t depth, const ContentPlace& where)
{
    check_member(content.extra, depth, where.content);
    for (const Part& part : content.parts) {
        check_member(part.extra, depth + 2, where.parts);
        if (part.function_call) {
            check_member(part.function_call->args, depth + 4, where.args);
            check_member(part.function_call->extra, depth + 3, where.call);
        }
        if (part.function_response) {
            check_member(part.function_response->response, depth + 4, where.response);
            check_member(part.function_response->extra, depth + 3, where.function_response);
        }
        if (part.inline_data)
            check_member(part.inline_data->extra, depth + 3, where.inline_data);
        if (part.file_data)
            check_member(part.file_data->extra, depth + 3, where.file_data);
        if (part.executable_code)
            check_member(part.executable_code->extra, depth + 3, where.code);
        if (part.code_execution_result)
            check_member(part.code_execution_result->extra, depth + 3, where.result);
    }
}

}  // namespace

json::value parse_json(std::string_view text, boost::system::error_code& ec)
{
    json::parse_options options;
    options.max_depth = max_read_json_depth;
    return json::parse(text, ec, {}, options);
}

std::size_t check_json(const json::value& v, std::string_view where, std::size_t max_depth)
{
    return Walk(where, max_depth).value(v, 1);
}

void check_event_json(const Event& event)
{
    // "extra" members are written into the object that holds them: their values stand one level below it.
    check_member(event.extra, 1, "the event's fields");
    check_member(event.custom_metadata, 2, "customMetadata");
    if (event.usage_metadata)
        check_member(event.usage_metadata->extra, 2, "usageMetadata");
    const EventActions& actions = event.actions;
    check_member(actions.extra, 2, "actions");
    check_member(actions.state_delta, 3, "actions.stateDelta");
    check_member(actions.requested_tool_confirmations, 3, "actions.requestedToolConfirmations");
    check_member(actions.requested_auth_configs, 3, "actions.requestedAuthConfigs");
    if (actions.compaction) {
        check_member(actions.compaction->extra, 3, "actions.compaction");
        if (actions.compaction->compacted_content)
            check_content(*actions.compaction->compacted_content, 4, compacted_content);
    }
    if (actions.agent_state)
        check_member(*actions.agent_state, 3, "actions.agentState");
    if (actions.route)
        Walk("actions.route", max_json_depth).value(*actions.route, 3);
    if (event.node_info)
        check_member(event.node_info->extra, 2, "nodeInfo");
    if (event.output)
        Walk("output", max_json_depth).value(*event.output, 2);
    if (event.content)
        check_content(*event.content, 2, event_content);
}

}  // namespace adk
