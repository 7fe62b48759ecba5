#include "support/paths.hpp"

namespace adk::test::paths {

std::string fixtures() { return ADK_SHARED_FIXTURES; }
std::string postgres_server_script() { return ADK_POSTGRES_SERVER_SCRIPT; }
std::string session_worker() { return ADK_SESSION_WORKER; }
std::string resume_worker() { return ADK_RESUME_WORKER; }
std::string workflow_worker() { return ADK_WORKFLOW_WORKER; }
std::string mcp_test_server() { return ADK_MCP_TEST_SERVER; }
std::string sandbox_probe() { return ADK_SANDBOX_PROBE; }

}  // namespace adk::test::paths
