// ToolRegistry: tools bound by name, for apps whose agents name their tools (agent-config YAML, a C++ app that
// reads its tool names from configuration). It holds the built-in tools (exit_loop, load_memory, preload_memory,
// load_artifacts) and those the program adds.
//
// ValidationMode decides what a name the registry lacks does, as adk-core describes it: strict (the default)
// refuses the agent, saying which names are missing and which exist; permissive binds what exists and logs each
// missing name. Either way the agent declares to its model exactly the tools bound: none it cannot call.
#pragma once

#include <adk/tools/tool.hpp>

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace adk {

enum class ValidationMode { strict, permissive };

class ToolRegistry {
public:
    explicit ToolRegistry(ValidationMode mode = ValidationMode::strict);
    // Adds the tool under its own name, replacing one of that name.
    void add(std::shared_ptr<Tool> tool);
    std::shared_ptr<Tool> find(std::string_view name) const;
    std::vector<std::string> names() const;
    // The names, comma-separated, for messages.
    std::string known() const;

    ValidationMode validation_mode() const noexcept { return mode_; }
    void set_validation_mode(ValidationMode mode) noexcept { mode_ = mode; }

    // The tools of `names`, in order, for agent `agent_name`. Strict: throws adk::Error (invalid_argument) that
    // names every missing tool, the agent and the known tools. Permissive: leaves each missing one out and logs
    // a warning that names it.
    std::vector<std::shared_ptr<Tool>> bind(const std::vector<std::string>& names, std::string_view agent_name) const;

private:
    ValidationMode mode_;
    std::map<std::string, std::shared_ptr<Tool>, std::less<>> tools_;
};

}  // namespace adk
