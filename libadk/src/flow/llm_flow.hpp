// The LlmAgent loop (llm_flow.cpp says how it goes).
#pragma once

#include <adk/agents/llm_agent.hpp>

namespace adk::detail {

asio::awaitable<void> run_llm_flow(const LlmAgent& agent, InvocationContext& ctx, EventSink& out);

}  // namespace adk::detail
