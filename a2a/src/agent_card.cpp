#include <adk/a2a/agent_card.hpp>

#include <adk/agents/llm_agent.hpp>
#include <adk/tools/tool.hpp>

namespace adk::a2a {

namespace {

std::string or_default(const std::string& description, const std::string& name)
{
    return description.empty() ? "The agent " + name + "." : description;
}

}  // namespace

AgentCard agent_card(const Agent& root, const CardOptions& options)
{
    AgentCard card;
    card.name = root.name();
    card.description = or_default(root.description(), root.name());
    card.supported_interfaces.emplace_back(options.url, "JSONRPC");
    card.supported_interfaces.emplace_back(options.url, "HTTP+JSON");
    card.version = options.version;
    card.capabilities.streaming = options.streaming;
    card.capabilities.push_notifications = options.push_notifications;
    if (options.bearer) {
        card.security_schemes["bearer"] =
            json::object{{"httpAuthSecurityScheme", json::object{{"scheme", "Bearer"}}}};
        card.security_requirements.push_back(
            json::object{{"schemes", json::object{{"bearer", json::object{{"list", json::array{}}}}}}});
    }
    card.default_input_modes = {"text/plain"};
    card.default_output_modes = {"text/plain"};

    AgentSkill main;
    main.id = root.name();
    main.name = root.name();
    main.description = card.description;
    main.tags = {"agent"};
    card.skills.push_back(std::move(main));
    if (const auto* llm = dynamic_cast<const LlmAgent*>(&root)) {
        for (const auto& tool : llm->config().tools) {
            AgentSkill skill;
            skill.id = root.name() + "-" + tool->name();
            skill.name = tool->name();
            skill.description = or_default(tool->description(), tool->name());
            skill.tags = {"tool"};
            card.skills.push_back(std::move(skill));
        }
    }
    for (const auto& sub : root.sub_agents()) {
        AgentSkill skill;
        skill.id = root.name() + "-" + sub->name();
        skill.name = sub->name();
        skill.description = or_default(sub->description(), sub->name());
        skill.tags = {"sub_agent"};
        card.skills.push_back(std::move(skill));
    }
    return card;
}

}  // namespace adk::a2a
