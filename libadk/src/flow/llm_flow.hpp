// The LlmAgent loop: request processors, the model call, response processing and tool dispatch.
#pragma once

#include <adk/agents/llm_agent.hpp>

namespace adk::detail {

asio::awaitable<void> run_llm_flow(const LlmAgent& agent, InvocationContext& ctx, EventSink& out);

}  // namespace adk::detail
