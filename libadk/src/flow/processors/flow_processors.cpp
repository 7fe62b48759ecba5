#include "processors.hpp"

#include <adk/agents/invocation_context.hpp>

#include <typeinfo>

namespace adk::detail {

const LlmAgent& llm_agent_of(const InvocationContext& ctx)
{
    // LlmAgent is final: comparing the type is exact, and cheaper than a dynamic_cast at every step.
    const Agent& agent = ctx.agent();
    if (typeid(agent) == typeid(LlmAgent))
        return static_cast<const LlmAgent&>(agent);
    throw Error(errc::invalid_argument, "agent '" + ctx.agent().name() +
                                                "' is not an LlmAgent: request processors run in an LlmAgent's flow");
}

const std::vector<RequestProcessor*>& flow_request_processors()
{
    static BasicRequestProcessor basic;
    // An empty slot: the confirmation resume processor goes here.
    static InstructionsRequestProcessor instructions;
    static IdentityRequestProcessor identity;
    static ContentsRequestProcessor contents;
    static ToolsRequestProcessor tools;
    static TransferRequestProcessor transfer;
    static const std::vector<RequestProcessor*> all{&basic, &instructions, &identity, &contents, &tools, &transfer};
    return all;
}

}  // namespace adk::detail
