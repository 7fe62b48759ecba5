// The attributes of ADK's spans, as ADK Python names them (OpenTelemetry's GenAI conventions, and the
// gcp.vertex.agent.* ones the web UI reads): call_llm and generate_content {model} for a model call, execute_tool
// {tool} for a tool. Content (the request, the answer, a tool's arguments and result) only when a sink keeps it.
#pragma once

#include <adk/agents/invocation_context.hpp>
#include <adk/models/llm_request.hpp>
#include <adk/models/llm_response.hpp>
#include <adk/telemetry/tracer.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <string>

namespace adk {
class Tool;
}

namespace adk::detail {

// A model call's spans, once the request is final: `call_llm` (ADK's) and `generate_content {model}` (the GenAI
// convention's inference span). `event_id` is the event the answer becomes.
void trace_call_llm(telemetry::Span& span, const InvocationContext& ctx, const LlmRequest& request,
                    const std::string& event_id);
// The request as JSON on call_llm, as the call ends however it ends: a model's stream can take minutes, and a long
// conversation's JSON held by every open stream for all of it would cost more than the stream itself.
void trace_llm_request(telemetry::Span& span, const LlmRequest& request);
void trace_generate_content(telemetry::Span& span, const InvocationContext& ctx, const LlmRequest& request,
                            const std::string& event_id);
// The answer: finish reason, token usage, the model that answered; on call_llm the answer as JSON too.
void trace_llm_response(telemetry::Span& span, const LlmResponse& response, bool with_content);

// A tool call's span; `event_id` is the event its response goes out in.
void trace_tool_call(telemetry::Span& span, const InvocationContext& ctx, const Tool& tool, const std::string& call_id,
                     const json::object& args, const std::string& event_id);
void trace_tool_result(telemetry::Span& span, const json::value& result);

}  // namespace adk::detail
