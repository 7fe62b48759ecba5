#include "processors.hpp"

#include "../transfer_tool.hpp"

namespace adk::detail {

asio::awaitable<void> TransferRequestProcessor::process_request(InvocationContext& ctx, LlmRequest& request,
                                                                EventSink&)
{
    const LlmAgent& agent = llm_agent_of(ctx);
    std::vector<Agent*> targets = transfer_targets(agent);
    if (targets.empty())
        co_return;
    request.append_instruction(transfer_instruction(agent, targets));
    auto tool = std::make_shared<TransferToAgentTool>(std::move(targets));
    if (auto declaration = tool->declaration())
        request.tools.push_back(std::move(*declaration));
    request.callable_tools.push_back(std::move(tool));
}

}  // namespace adk::detail
