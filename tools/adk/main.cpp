// The stand-alone adk program: apps from agent-config YAML, with the tools that come with adk-cpp.
//   adk web AGENTS_DIR         adk api_server AGENTS_DIR         adk run AGENTS_DIR/APP
// A program with tools of its own calls adk::cli::main with a ToolRegistry that holds them
// (adk/cli/cli.hpp).
#include <adk/cli/cli.hpp>

int main(int argc, char** argv)
{
    const adk::cli::ToolRegistry tools;
    return adk::cli::main(argc, argv, tools);
}
