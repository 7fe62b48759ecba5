// AgentTool: an agent that another agent's model calls as a tool.
#pragma once

#include <adk/agents/agent.hpp>
#include <adk/tools/tool.hpp>

#include <memory>

namespace adk {

// An agent used as a tool. The model calls it with {"request": "..."}, or with arguments that fit the
// agent's input_schema when it is an LlmAgent that has one. The agent runs in a session of its own that
// starts with a copy of the caller's state; its state changes flow back to the caller. The result is its
// final text, or the parsed JSON with an output_schema. skip_summarization makes that result the answer.
class AgentTool final : public Tool {
public:
    explicit AgentTool(std::shared_ptr<Agent> agent, bool skip_summarization = false);

    const std::shared_ptr<Agent>& agent() const noexcept { return agent_; }

    std::optional<FunctionDeclaration> declaration() const override;
    asio::awaitable<json::value> run(ToolContext& ctx, json::object args) override;

private:
    std::shared_ptr<Agent> agent_;
    bool skip_summarization_;
};

}  // namespace adk
