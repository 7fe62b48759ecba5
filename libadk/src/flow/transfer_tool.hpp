// transfer_to_agent: the tool an LlmAgent with sub-agents (or a parent, or peers) gets, and the roster
// of targets it adds to the system instruction.
#pragma once

#include <adk/agents/llm_agent.hpp>
#include <adk/tools/tool.hpp>

#include <string>
#include <vector>

namespace adk::detail {

inline constexpr std::string_view transfer_tool_name = "transfer_to_agent";

// Where `agent` may transfer: its sub-agents; its parent unless disallowed; its peers unless disallowed
// (parent and peers only when the parent is an LlmAgent). Empty with disable_transfer.
std::vector<Agent*> transfer_targets(const LlmAgent& agent);

// The roster text for the system instruction.
std::string transfer_instruction(const LlmAgent& agent, const std::vector<Agent*>& targets);

class TransferToAgentTool final : public Tool {
public:
    explicit TransferToAgentTool(std::vector<Agent*> targets);
    std::optional<FunctionDeclaration> declaration() const override;
    // Sets actions.transfer_to_agent; a name outside the targets gets an error the model can read.
    asio::awaitable<json::value> run(ToolContext& ctx, json::object args) override;

private:
    std::vector<Agent*> targets_;
};

}  // namespace adk::detail
