// Agent-config YAML (cli/include/adk/cli/agent_config.hpp): any root_agent.yaml, with sub-agent files beside
// it that a config_path may name (one valid, one that names the root again), and C++ nodes a Workflow's edges may
// name, either becomes an agent tree of identifiers (a workflow's nodes named too) or is refused with adk::Error;
// nothing else escapes, nothing crashes or loops.
#include <adk/cli/agent_config.hpp>
#include <adk/testing/scripted_model.hpp>
#include <adk/workflow/workflow.hpp>

#include "fuzz.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace {

namespace fs = std::filesystem;

// The agent files the configs may name, in a directory that goes when the fuzzer exits.
struct AppDir {
    fs::path path;
    AppDir()
    {
        std::string pattern = (fs::temp_directory_path() / "adk-fuzz-config-XXXXXX").string();
        if (!::mkdtemp(pattern.data()))
            std::abort();
        path = pattern;
        std::ofstream(path / "a.yaml") << "name: helper\nmodel: m\ntools: [exit_loop]\n";
        std::ofstream(path / "b.yaml") << "name: b\nmodel: m\nsub_agents: [{config_path: root_agent.yaml}]\n";
    }
    AppDir(const AppDir&) = delete;
    AppDir& operator=(const AppDir&) = delete;
    ~AppDir()
    {
        std::error_code ignored;
        fs::remove_all(path, ignored);
    }
};

const fs::path& app_dir()
{
    static const AppDir dir;
    return dir.path;
}

void check_tree(const adk::Agent& agent, int depth)
{
    adk::fuzz::check(depth < 64, "a tree as deep as the files allow, no deeper");
    adk::fuzz::check(!agent.name().empty() && agent.name() != "user", "every agent has a name, never 'user'");
    for (const auto& sub : agent.sub_agents())
        check_tree(*sub, depth + 1);
    if (const auto* flow = dynamic_cast<const adk::workflow::Workflow*>(&agent)) {
        adk::fuzz::check(!flow->edges().empty(), "a workflow has edges");
        for (const auto& node : flow->nodes())
            adk::fuzz::check(!node->name().empty(), "every node has a name");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size)
{
    const fs::path yaml = app_dir() / "root_agent.yaml";
    std::ofstream(yaml, std::ios::binary | std::ios::trunc) << adk::fuzz::as_text(data, size);
    adk::cli::AgentConfigOptions options;
    options.make_model = [](const std::string& id) {
        return std::make_shared<adk::testing::ScriptedModel>(std::vector<adk::testing::ScriptedModel::Turn>{}, id);
    };
    static const auto route = adk::workflow::function_node(
        "route", [](adk::workflow::NodeContext&, boost::json::value in) -> boost::asio::awaitable<boost::json::value> {
            co_return in;
        });
    options.nodes.emplace("route", route);
    options.nodes.emplace("done", adk::workflow::join_node("done"));
    std::shared_ptr<adk::Agent> agent;
    if (adk::fuzz::only_adk_errors([&] { agent = adk::cli::load_agent_config(yaml, options); }))
        check_tree(*agent, 0);
    return 0;
}
