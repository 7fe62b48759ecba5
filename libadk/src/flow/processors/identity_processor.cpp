#include "processors.hpp"

namespace adk::detail {

asio::awaitable<void> IdentityRequestProcessor::process_request(InvocationContext& ctx, LlmRequest& request,
                                                                EventSink&)
{
    const LlmAgent& agent = llm_agent_of(ctx);
    std::string si = "You are an agent. Your internal name is \"" + agent.name() + "\".";
    if (!agent.description().empty())
        si += " The description about you is \"" + agent.description() + "\".";
    request.append_instruction(si);
    co_return;
}

}  // namespace adk::detail
