#include "genai_spans.hpp"

#include <adk/detail/json_writer.hpp>

#include <adk/agents/agent.hpp>
#include <adk/tools/tool.hpp>

#include <boost/json/serialize.hpp>

#include <cctype>

namespace adk::detail {

namespace json = boost::json;

namespace {

// A request, answer, arguments or result as a span keeps it: the JSON text, or a note of its size past 256 KiB.
std::string capped(std::string text)
{
    constexpr std::size_t max_attribute_bytes = std::size_t{256} << 10;
    if (text.size() <= max_attribute_bytes) {
        // Kept while the span is open (a model call's whole stream): at its size, not at the room it was written in.
        if (text.capacity() - text.size() > 64)
            text.shrink_to_fit();
        return text;
    }
    json::value note = json::object{{"truncated", true}, {"bytes", text.size()}};
    return json::serialize(note);
}

// The request as the web UI shows it ({model, contents, config{systemInstruction, tools}}), written as JSON text
// without building its tree (the same text as serializing the tree).
std::string request_json(const LlmRequest& request)
{
    std::string out;
    out.reserve(1024);
    JsonWriter w(out);
    w.begin_object();
    w.key("model");
    w.string(request.model);
    w.key("contents");
    w.begin_array();
    for (const auto& c : request.contents) {
        w.element();
        write_content(w, c);
    }
    w.end_array();
    w.key("config");
    w.begin_object();
    if (request.system_instruction) {
        w.key("systemInstruction");
        write_content(w, *request.system_instruction);
    }
    if (!request.tools.empty()) {
        w.key("tools");
        w.begin_array();
        w.element();
        w.begin_object();
        w.key("functionDeclarations");
        w.begin_array();
        for (const auto& d : request.tools) {
            w.element();
            w.begin_object();
            w.key("name");
            w.string(d.name);
            w.key("description");
            w.string(d.description);
            w.key("parameters");
            w.value(d.parameters);
            w.end_object();
        }
        w.end_array();
        w.end_object();
        w.end_array();
    }
    w.end_object();
    w.end_object();
    return out;
}

std::string response_json(const LlmResponse& response)
{
    std::string out;
    out.reserve(256);
    JsonWriter w(out);
    w.begin_object();
    if (response.content) {
        w.key("content");
        write_content(w, *response.content);
    }
    w.member("finishReason", response.finish_reason);
    if (response.usage_metadata) {
        w.key("usageMetadata");
        write_usage(w, *response.usage_metadata);
    }
    w.member("errorCode", response.error_code);
    w.member("errorMessage", response.error_message);
    w.end_object();
    return out;
}

std::string lower(std::string s)
{
    for (char& c : s)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

void common_model_attributes(telemetry::Span& span, const InvocationContext& ctx, const LlmRequest& request,
                             const std::string& event_id)
{
    span.set("gen_ai.request.model", request.model);
    span.set("gen_ai.agent.name", ctx.agent().name());
    span.set("gen_ai.conversation.id", ctx.session_id());
    span.set("gcp.vertex.agent.invocation_id", ctx.invocation_id());
    span.set("gcp.vertex.agent.event_id", event_id);
}

}  // namespace

void trace_call_llm(telemetry::Span& span, const InvocationContext& ctx, const LlmRequest& request,
                    const std::string& event_id)
{
    if (!span.recording())
        return;
    span.set("gen_ai.system", std::string("gcp.vertex.agent"));
    common_model_attributes(span, ctx, request, event_id);
    span.set("gcp.vertex.agent.session_id", ctx.session_id());
    if (request.config.top_p)
        span.set("gen_ai.request.top_p", *request.config.top_p);
    if (request.config.max_output_tokens)
        span.set("gen_ai.request.max_tokens", static_cast<std::int64_t>(*request.config.max_output_tokens));
}

void trace_llm_request(telemetry::Span& span, const LlmRequest& request)
{
    if (span.captures_content())
        span.set_content("gcp.vertex.agent.llm_request", capped(request_json(request)));
}

void trace_generate_content(telemetry::Span& span, const InvocationContext& ctx, const LlmRequest& request,
                            const std::string& event_id)
{
    if (!span.recording())
        return;
    span.set("gen_ai.operation.name", std::string("generate_content"));
    common_model_attributes(span, ctx, request, event_id);
}

void trace_llm_response(telemetry::Span& span, const LlmResponse& response, bool with_content)
{
    if (!span.recording())
        return;
    if (response.finish_reason)
        span.set("gen_ai.response.finish_reasons", std::vector<std::string>{lower(*response.finish_reason)});
    if (response.model_version)
        span.set("gen_ai.response.model", *response.model_version);
    if (const auto& usage = response.usage_metadata) {
        if (usage->prompt_token_count)
            span.set("gen_ai.usage.input_tokens", *usage->prompt_token_count);
        if (usage->candidates_token_count || usage->thoughts_token_count)  // reasoning counts as output
            span.set("gen_ai.usage.output_tokens",
                     usage->candidates_token_count.value_or(0) + usage->thoughts_token_count.value_or(0));
        if (usage->cached_content_token_count)
            span.set("gen_ai.usage.cache_read.input_tokens", *usage->cached_content_token_count);
    }
    if (with_content && span.captures_content())
        span.set_content("gcp.vertex.agent.llm_response", capped(response_json(response)));
}

void trace_tool_call(telemetry::Span& span, const InvocationContext& ctx, const Tool& tool, const std::string& call_id,
                     const json::object& args, const std::string& event_id)
{
    if (!span.recording())
        return;
    span.set("gen_ai.operation.name", std::string("execute_tool"));
    span.set("gen_ai.tool.name", tool.name());
    span.set("gen_ai.tool.description", tool.description());
    span.set("gen_ai.tool.type", std::string("FunctionTool"));
    span.set("gen_ai.tool.call.id", call_id);
    span.set("gen_ai.agent.name", ctx.agent().name());
    span.set("gcp.vertex.agent.event_id", event_id);
    if (span.captures_content())
        span.set_content("gcp.vertex.agent.tool_call_args", capped(json::serialize(args)));
}

void trace_tool_result(telemetry::Span& span, const json::value& result)
{
    if (span.captures_content())
        span.set_content("gcp.vertex.agent.tool_response", capped(json::serialize(result)));
}

}  // namespace adk::detail
