#pragma once
// Where the tests find what CMake built or checked in: absolute paths, compiled into support/paths.cpp alone so
// that every other test file compiles the same in any clone (ccache finds it whichever folder CI clones into).
#include <string>

namespace adk::test::paths {

std::string fixtures();                  // tests/fixtures (ADK_FIXTURES_DIR)
std::string postgres_server_script();    // tests/support/postgres_server.sh
std::string session_worker();            // the programs the multi-process tests start
std::string resume_worker();
std::string workflow_worker();
std::string mcp_test_server();           // the MCP server over stdio
std::string sandbox_probe();

}  // namespace adk::test::paths
