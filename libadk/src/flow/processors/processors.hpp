// The flow's own request processors, one file each; adk/flow/processor.hpp lists them and their order.
// Each takes the LlmAgent that ctx.agent() names.
#pragma once

#include <adk/agents/llm_agent.hpp>
#include <adk/flow/processor.hpp>

#include <vector>

namespace adk::detail {

// ctx.agent() as the LlmAgent it must be; throws adk::Error when it is another kind of agent.
const LlmAgent& llm_agent_of(const InvocationContext& ctx);

// The model's name, the agent's generation config, and its output schema (JSON out).
class BasicRequestProcessor final : public RequestProcessor {
public:
    asio::awaitable<void> process_request(InvocationContext& ctx, LlmRequest& request, EventSink& out) override;
};

// The root's global instruction, then the agent's instruction (or its provider's), templated with state,
// a blank line apart, into the system instruction. With a static instruction, that goes into the system
// instruction verbatim and the dynamic text becomes a user message after the history.
class InstructionsRequestProcessor final : public RequestProcessor {
public:
    asio::awaitable<void> process_request(InvocationContext& ctx, LlmRequest& request, EventSink& out) override;
};

// Tells the model which agent it is.
class IdentityRequestProcessor final : public RequestProcessor {
public:
    asio::awaitable<void> process_request(InvocationContext& ctx, LlmRequest& request, EventSink& out) override;
};

// The session's history as this agent and branch see it (adk/flow/contents.hpp), before whatever the
// processors before it put in request.contents.
class ContentsRequestProcessor final : public RequestProcessor {
public:
    asio::awaitable<void> process_request(InvocationContext& ctx, LlmRequest& request, EventSink& out) override;
};

// Each of request.callable_tools (the flow puts the agent's tools there) declares itself to the model
// through Tool::process_request.
class ToolsRequestProcessor final : public RequestProcessor {
public:
    asio::awaitable<void> process_request(InvocationContext& ctx, LlmRequest& request, EventSink& out) override;
};

// When the agent may transfer: the roster of agents it may transfer to, in the system instruction, and
// the transfer_to_agent tool.
class TransferRequestProcessor final : public RequestProcessor {
public:
    asio::awaitable<void> process_request(InvocationContext& ctx, LlmRequest& request, EventSink& out) override;
};

// The flow's request processors, in their order.
const std::vector<RequestProcessor*>& flow_request_processors();

}  // namespace adk::detail
