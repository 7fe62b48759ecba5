// The in-process MCP test server (mcp_http_server.hpp) as a program of its own, for tests that drive a real client
// against it from outside (the web UI's OAuth step in tests/interop/run_web_ui.sh):
//   adk_mcp_http_test_server [--oauth]
// Prints "listening on URL" (its /mcp endpoint), then serves until it is killed.
#include "support/mcp_http_server.hpp"

#include <boost/asio/io_context.hpp>

#include <iostream>
#include <string_view>

int main(int argc, char** argv)
{
    boost::asio::io_context ioc;
    adk::test::McpHttpServer server(ioc.get_executor());
    for (int i = 1; i < argc; ++i) {
        if (std::string_view(argv[i]) == "--oauth") {
            server.oauth = true;
        } else {
            std::cerr << "usage: adk_mcp_http_test_server [--oauth]\n";
            return 2;
        }
    }
    std::cout << "listening on " << server.url() << std::endl;
    ioc.run();
    return 0;
}
