// The apps of samples/agents/ (ADK agent-config YAML) served by the adk command line, with tools and workflow
// nodes written in C++: what a program with tools of its own does. It is the stand-alone `adk` program plus
// get_weather, the bank's tools and refund_desk's nodes.
//
//   tools/web.sh                                           the web UI on these apps, against mock-llm
//   build/release/samples/sample_agents web samples/agents  the same, with a provider's key set
//   build/release/samples/sample_agents run samples/agents/weather_agent
//   build/release/samples/sample_agents run --resumable samples/agents/bank_agent   (approvals: bank_agent/)
//   build/release/samples/sample_agents run --resumable samples/agents/refund_desk  (a graph workflow)
#include <adk/cli/cli.hpp>

#include "../weather_agent/get_weather.hpp"
#include "bank_tools.hpp"
#include "refund_nodes.hpp"

int main(int argc, char** argv)
{
    adk::cli::AgentConfigOptions options;  // tools: exit_loop, load_memory, preload_memory, load_artifacts ...
    options.tools.add(samples::get_weather_tool());  // ... and the samples' own
    options.tools.add(samples::transfer_money_tool());
    options.tools.add(samples::request_approval_tool());
    options.nodes = samples::refund_nodes();  // the C++ nodes refund_desk/root_agent.yaml names
    return adk::cli::main(argc, argv, options);
}
