#include <adk/tools/tool_registry.hpp>

#include <adk/core/error.hpp>
#include <adk/core/log.hpp>
#include <adk/tools/builtin_tools.hpp>

namespace adk {

ToolRegistry::ToolRegistry(ValidationMode mode) : mode_(mode)
{
    add(exit_loop_tool());
    add(load_memory_tool());
    add(preload_memory_tool());
    add(load_artifacts_tool());
}

void ToolRegistry::add(std::shared_ptr<Tool> tool)
{
    if (!tool)
        throw Error(errc::invalid_argument, "ToolRegistry::add was given a null tool");
    std::string name = tool->name();
    tools_.insert_or_assign(std::move(name), std::move(tool));
}

std::shared_ptr<Tool> ToolRegistry::find(std::string_view name) const
{
    auto it = tools_.find(name);
    return it == tools_.end() ? nullptr : it->second;
}

std::vector<std::string> ToolRegistry::names() const
{
    std::vector<std::string> out;
    for (const auto& [name, tool] : tools_)
        out.push_back(name);
    return out;
}

std::string ToolRegistry::known() const
{
    std::string out;
    for (const auto& [name, tool] : tools_)
        out += (out.empty() ? "" : ", ") + name;
    return out;
}

std::vector<std::shared_ptr<Tool>> ToolRegistry::bind(const std::vector<std::string>& names,
                                                      std::string_view agent_name) const
{
    std::vector<std::shared_ptr<Tool>> out;
    std::string missing;
    for (const std::string& name : names) {
        if (auto tool = find(name)) {
            out.push_back(std::move(tool));
            continue;
        }
        const std::string shown = "'" + name.substr(0, 100) + "'";
        if (mode_ == ValidationMode::permissive)
            log(LogLevel::warning, "agent '" + std::string(agent_name) + "' names tool " + shown +
                                       ", which is not registered: it is left out (ValidationMode::permissive)");
        else
            missing += (missing.empty() ? "" : ", ") + shown;
    }
    if (!missing.empty())
        throw Error(errc::invalid_argument, "agent '" + std::string(agent_name) + "' names tools that are not "
                                            "registered: " + missing + " (known: " + known() +
                                            "); register them, or bind with ValidationMode::permissive to leave "
                                            "them out");
    return out;
}

}  // namespace adk
