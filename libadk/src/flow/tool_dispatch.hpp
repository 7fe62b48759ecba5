// Tool dispatch: the model's function calls, each through its stages, their responses as one event.
//
// Each call passes, in order:
//   before-tool plugins and callbacks (the first answer stands in for the tool)
//   the confirmation gate   a tool that needs a person's approval asks for it (Tool::set_require_confirmation)
//   the auth gate           a tool that needs a credential the user has not given asks for it
//   the run stage           the tool runs, within its timeout; a failure goes to on-tool-error plugins and
//                           callbacks, else to the model as {"error": ...}. A tool may ask for approval or a
//                           credential itself (ToolContext); what it returned then is dropped.
//   after-tool plugins and callbacks (the first answer replaces the result)
// A call that asked a person has no response: it waits, and the requests go out as one event of
// adk_request_confirmation / adk_request_credential calls (adk/tools/tool_confirmation.hpp). So does a
// long-running tool that returned null; one that returned a value has that as its first response.
#pragma once

#include <adk/agents/invocation_context.hpp>
#include <adk/agents/llm_agent.hpp>

#include <exception>
#include <memory>
#include <optional>
#include <vector>

namespace adk::detail {

// One function call on its way through the stages.
class ToolCall {
public:
    ToolCall(const InvocationContext& ctx, const FunctionCall& call_, Tool& tool_)
        : call(call_), tool(tool_), context(ctx, call_.id), args(call_.args)
    {
    }

    const FunctionCall& call;
    Tool& tool;
    ToolContext context;
    json::object args;                  // as before-tool callbacks left them
    std::optional<json::value> result;  // set by the stage that answers
    bool stopped = false;               // a gate stopped the call: later stages do not run
    std::exception_ptr failure;         // the tool threw (its result is then a callback's answer or the error)
};

asio::awaitable<void> confirmation_gate(const LlmAgentConfig& cfg, ToolCall& call);
asio::awaitable<void> auth_gate(const LlmAgentConfig& cfg, ToolCall& call);
asio::awaitable<void> run_stage(const LlmAgentConfig& cfg, ToolCall& call);

// A function call and what to do with it: run it through the stages; run it once a person approved it
// (the confirmation gate passes, ToolContext::tool_confirmation() holds the answer); or answer that the
// person rejected it.
class PlannedCall {
public:
    enum class Step { run, run_approved, reject };
    PlannedCall(FunctionCall call_, Step step_ = Step::run, std::optional<ToolConfirmation> confirmation_ = {})
        : call(std::move(call_)), step(step_), confirmation(std::move(confirmation_))
    {
    }
    FunctionCall call;
    Step step;
    std::optional<ToolConfirmation> confirmation;
};

class Dispatched {
public:
    Dispatched() = default;
    std::optional<Event> responses;  // the calls' responses, in call order, as one event
    std::optional<Event> requests;   // what the calls ask a person, as one event of long-running calls
    bool waits = false;              // a call waits for a person or a long-running tool: the invocation pauses
};

// Runs every call, several at once (a slow tool does not hold up the others) but no more than
// max_concurrent_tools at a time: that many workers take the calls in order.
asio::awaitable<Dispatched> dispatch_tools(const LlmAgentConfig& cfg, const InvocationContext& ctx,
                                           const std::vector<PlannedCall>& calls,
                                           const std::vector<std::shared_ptr<Tool>>& tools);

// Adds to `event` one long-running adk_request_credential call asking for `auth_config` about the call `about` (a
// tool's call, or a toolset's), and the auth config to the event's requested_auth_configs.
void ask_credential(Event& event, const std::string& about, json::object auth_config, std::string message);

// The response that tells the model a person rejected a call.
json::object rejected_response();

}  // namespace adk::detail
