#include "processors.hpp"

#include <adk/agents/invocation_context.hpp>
#include <adk/flow/instruction_template.hpp>

#include <typeinfo>

namespace adk::detail {

asio::awaitable<void> InstructionsRequestProcessor::process_request(InvocationContext& ctx, LlmRequest& request,
                                                                    EventSink&)
{
    const LlmAgent& agent = llm_agent_of(ctx);
    const LlmAgentConfig& cfg = agent.config();
    ReadonlyContext ro(ctx);
    std::string dynamic;
    Agent* root = ctx.root_agent() ? ctx.root_agent().get() : &const_cast<LlmAgent&>(agent).root_agent();
    if (typeid(*root) == typeid(LlmAgent)) {
        const auto& root_llm = static_cast<const LlmAgent&>(*root);
        if (!root_llm.config().global_instruction.empty())
            dynamic = co_await inject_session_state(root_llm.config().global_instruction, ro);
    }
    // Not a conditional expression with co_await in both arms: g++ 12 frees a wrong pointer for that.
    std::string own;
    if (cfg.instruction_provider)
        own = co_await cfg.instruction_provider(ro);
    else
        own = co_await inject_session_state(cfg.instruction, ro);
    if (!own.empty())
        dynamic += (dynamic.empty() ? "" : "\n\n") + own;

    if (!cfg.static_instruction) {
        request.append_instruction(dynamic);
        co_return;
    }
    request.system_instruction = *cfg.static_instruction;  // verbatim, byte for byte, every turn
    if (!dynamic.empty())
        request.contents.emplace_back("user", std::vector<Part>{Part::from_text(std::move(dynamic))});
}

}  // namespace adk::detail
