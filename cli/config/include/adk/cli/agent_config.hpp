// Agents from ADK's agent-config YAML, laid out as ADK Python lays them out: a folder of apps, each app a
// folder holding its root_agent.yaml.
//
//   agents/weather_agent/root_agent.yaml:
//     agent_class: LlmAgent              # or SequentialAgent, ParallelAgent, LoopAgent, Workflow (LlmAgent when
//                                        # absent)
//     name: weather_agent
//     model: gemini-2.5-flash            # any id adk::make_model takes
//     description: Answers questions about the weather.
//     instruction: You answer questions about the weather in {city?}.
//     tools:
//       - name: get_weather              # a tool of the ToolRegistry
//     sub_agents:
//       - config_path: ./helper.yaml     # relative to this file; never out of the app's folder
//     output_key: last_answer
//     include_contents: default          # or none
//     generate_content_config: {temperature: 0.2, max_output_tokens: 512, top_p: 0.9, top_k: 40,
//                               stop_sequences: [END]}
//     disallow_transfer_to_parent: false
//     disallow_transfer_to_peers: false
//     max_iterations: 3                  # LoopAgent only
//
//   A graph workflow (agent_class: Workflow), as ADK spells it:
//     agent_class: Workflow
//     name: triage
//     max_concurrency: 4                 # optional
//     edges:
//       - [START, classify.yaml, route]  # a chain: START -> classify -> route
//       - - route                        # a chain whose last element is a routing map
//         - {bug: fix.yaml, __DEFAULT__: answer.yaml}
//       - {from_node: fix, to_node: done, route: null}   # one edge
//   A node is an agent's YAML file (relative, in the app's folder), {config_path: FILE}, an inline agent config
//   (a map with agent_class or name), a node of AgentConfigOptions::nodes (a C++ FunctionNode, JoinNode, ...: by
//   name, or by a Python code reference whose last segment names it, as ".agent.route" names "route"), a tool of
//   the registry (run as a ToolNode), or the name of a node an earlier edge gave. A list of nodes is a fan-out.
//
// Anything else (callbacks and schemas given as Python code, `code:` references, unknown fields) is refused:
// a YAML error is an adk::Error (invalid_argument) whose message starts with "FILE:LINE:COLUMN:" and names the
// field. Link adk::cli.
#pragma once

#include <adk/agents/agent.hpp>
#include <adk/mcp/connection.hpp>
#include <adk/mcp/oauth.hpp>
#include <adk/models/model.hpp>
#include <adk/server/api_server.hpp>
#include <adk/tools/tool.hpp>
#include <adk/tools/tool_registry.hpp>
#include <adk/workflow/workflow.hpp>

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace adk::cli {

// The tools a YAML file may name (adk/tools/tool_registry.hpp): with ValidationMode::strict (the default) a name
// the registry lacks is a YAML error at its line; with permissive it is logged and left out.
using adk::ToolRegistry;
using adk::ValidationMode;

class AgentConfigOptions {
public:
    AgentConfigOptions();
    ToolRegistry tools;
    // The workflow nodes a YAML file may name (agent_class: Workflow), by name: what ADK Python finds by a code
    // reference, written in C++.
    std::map<std::string, std::shared_ptr<workflow::Node>, std::less<>> nodes;
    // Makes the model of an id; adk::make_model by default. Called once per id.
    std::function<std::shared_ptr<Model>(const std::string& id)> make_model;
    // When set, every LlmAgent uses this model id instead of its `model:` (adk's --model flag).
    std::string model_override;
    // Whether `tools: [{name: McpToolset, args: {stdio_connection_params: ...}}]` may start processes. `adk run`
    // allows it (the person runs what they read); `adk web` and `adk api_server` only with --allow_mcp_stdio.
    bool allow_mcp_stdio = true;
    // Given to the MCP toolsets the files name: who answers a server's elicitation (McpToolsetOptions::
    // on_elicitation), and the person's step of OAuth for servers over HTTP (OAuthOptions::authorize; a 401 then
    // starts the flow). Unset: elicitation is not offered, and a server that asks for authorization fails with
    // what to give. `adk run` asks the person at the terminal.
    mcp::RequestHandler mcp_elicitation;
    mcp::AuthorizeHandler mcp_authorize;
    // Without mcp_authorize: each user authorizes for themselves through their client (OAuthOptions::per_user),
    // sent back to mcp_oauth_redirect_uri. `adk web` and `adk api_server` set both (the web UI's /dev-ui/ page).
    bool mcp_oauth_per_user = false;
    std::string mcp_oauth_redirect_uri;
};

static_assert(!std::is_aggregate_v<AgentConfigOptions>);

// The agent tree that `yaml_file` describes. Throws adk::Error (invalid_argument) naming the file, line and
// field of what is wrong; an error of a model's provider (a key not set) is named with the agent.
std::shared_ptr<Agent> load_agent_config(const std::filesystem::path& yaml_file, const AgentConfigOptions& options);

// Every app of `agents_dir`: each folder of it that holds a root_agent.yaml, named by the folder (an
// identifier), sorted by name. Throws adk::Error (invalid_argument) when the folder cannot be read, holds no
// app, or an app's YAML is wrong (as above).
std::vector<server::App> load_apps(const std::filesystem::path& agents_dir, const AgentConfigOptions& options);

}  // namespace adk::cli
