#include "transfer_tool.hpp"

namespace adk::detail {

std::vector<Agent*> transfer_targets(const LlmAgent& agent)
{
    std::vector<Agent*> targets;
    const LlmAgentConfig& cfg = agent.config();
    if (cfg.disable_transfer)
        return targets;
    for (const auto& sub : agent.sub_agents())
        targets.push_back(sub.get());
    if (auto* parent = dynamic_cast<LlmAgent*>(agent.parent())) {
        if (!cfg.disallow_transfer_to_parent)
            targets.push_back(parent);
        if (!cfg.disallow_transfer_to_peers)
            for (const auto& peer : parent->sub_agents())
                if (peer.get() != &agent)
                    targets.push_back(peer.get());
    }
    return targets;
}

std::string transfer_instruction(const LlmAgent& agent, const std::vector<Agent*>& targets)
{
    std::string out = "You have a list of other agents to transfer to:\n";
    for (const Agent* t : targets)
        out += "\nAgent name: " + t->name() + "\nAgent description: " + t->description() + "\n";
    out += "\nIf you are the best to answer the question according to your description, you can answer it.\n"
           "\nIf another agent is better for answering the question according to its description, call `" +
           std::string(transfer_tool_name) +
           "` function to transfer the question to that agent. When transferring, do not generate any text "
           "other than the function call.\n";
    if (agent.parent() && !agent.config().disallow_transfer_to_parent && !agent.config().disable_transfer &&
        dynamic_cast<const LlmAgent*>(agent.parent()))
        out += "\nYour parent agent is " + agent.parent()->name() +
               ". If neither the other agents nor you are best for answering the question according to the "
               "descriptions, transfer to your parent agent.\n";
    return out;
}

TransferToAgentTool::TransferToAgentTool(std::vector<Agent*> targets)
    : Tool(std::string(transfer_tool_name),
           "Transfer the question to another agent. This tool hands off control to another agent when it's more "
           "suitable to answer the user's question according to the agent's description."),
      targets_(std::move(targets))
{
}

std::optional<FunctionDeclaration> TransferToAgentTool::declaration() const
{
    json::object schema{{"type", "object"},
                        {"properties", json::object{{"agent_name", json::object{{"type", "string"},
                                                                                {"description", "the agent name to transfer to."}}}}},
                        {"required", json::array{"agent_name"}}};
    return FunctionDeclaration(name(), description(), std::move(schema));
}

asio::awaitable<json::value> TransferToAgentTool::run(ToolContext& ctx, json::object args)
{
    const json::value* target = args.if_contains("agent_name");
    std::string names;
    for (const Agent* t : targets_) {
        if (target && target->is_string() && target->get_string() == t->name()) {
            ctx.actions().transfer_to_agent = t->name();
            co_return json::object{};
        }
        names += (names.empty() ? "" : ", ") + t->name();
    }
    co_return json::object{{"error", "cannot transfer to " +
                                         (target && target->is_string() ? "'" + std::string(target->get_string()) + "'"
                                                                        : std::string("an unnamed agent")) +
                                         ": the agents you can transfer to are " + names}};
}

}  // namespace adk::detail
