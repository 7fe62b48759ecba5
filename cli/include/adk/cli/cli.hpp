// The adk command line, as a library for the user's own main (as adk-go's launcher is):
//
//   int main(int argc, char** argv)
//   {
//       return adk::cli::main(argc, argv, {{"weather", make_weather_agent()}});   // apps written in C++
//   }
//
//   prog run weather                 a chat in the terminal: tokens stream as they arrive, tool calls show,
//                                    Ctrl-C cancels the current turn (and at the prompt, quits)
//   prog web [--port 8000]           ADK's HTTP API and the ADK web UI at http://127.0.0.1:8000/dev-ui/
//   prog api_server                  the HTTP API alone
//   prog --help, prog COMMAND --help
//
// Or with apps described in ADK's agent-config YAML (adk/cli/agent_config.hpp), whose tools the program
// registers; the stand-alone `adk` program is this with the built-in tools:
//
//   adk::cli::ToolRegistry tools;
//   tools.add(my_tool);
//   return adk::cli::main(argc, argv, tools);   // prog web AGENTS_DIR, prog run AGENTS_DIR/APP
//
// Flags are ADK's: --host, --port, --session_service_uri, --artifact_service_uri, --allow_origins,
// --log_level; and adk-cpp's: --ui_dir, --run_grace, --model, --session, --resume, --user. Sessions are kept
// in .adk/sessions.db under the working directory unless --session_service_uri says otherwise. A bearer
// token for the API is read from the environment variable ADK_API_TOKEN.
//
// Exit codes: 0 done, 1 a failure at run time (the message says what to do), 2 a usage error, 130 Ctrl-C at
// the prompt.
#pragma once

#include <adk/cli/agent_config.hpp>
#include <adk/server/api_server.hpp>

#include <iosfwd>
#include <vector>

namespace adk::cli {

int main(int argc, char** argv, std::vector<server::App> apps);
int main(int argc, char** argv, const AgentConfigOptions& config);
int main(int argc, char** argv, const ToolRegistry& tools);

}  // namespace adk::cli
