// Tool dispatch: the model's function calls, each through its stages, their responses as one event.
//
// Each call passes, in order:
//   before-tool plugins and callbacks (the first answer stands in for the tool)
//   the confirmation gate   a tool that needs a person's approval will ask for it here (passes all for now)
//   the auth gate           a tool that needs credentials will ask for them here (passes all for now)
//   the run stage           the tool runs, within its timeout; a failure goes to on-tool-error plugins and
//                           callbacks, else to the model as {"error": ...}
//   after-tool plugins and callbacks (the first answer replaces the result)
// A gate that stops a call answers in the tool's place, or leaves the call without a response (the call
// then waits, as a long-running tool's does).
#pragma once

#include <adk/agents/invocation_context.hpp>
#include <adk/agents/llm_agent.hpp>

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
};

asio::awaitable<void> confirmation_gate(const LlmAgentConfig& cfg, ToolCall& call);
asio::awaitable<void> auth_gate(const LlmAgentConfig& cfg, ToolCall& call);
asio::awaitable<void> run_stage(const LlmAgentConfig& cfg, ToolCall& call);

// Runs every call, several at once (a slow tool does not hold up the others) but no more than
// max_concurrent_tools at a time: that many workers take the calls in order. The responses are merged into
// one event, in call order. nullopt when no call has a response yet.
asio::awaitable<std::optional<Event>> dispatch_tools(const LlmAgentConfig& cfg, const InvocationContext& ctx,
                                                     const std::vector<FunctionCall>& calls,
                                                     const std::vector<std::shared_ptr<Tool>>& tools);

}  // namespace adk::detail
