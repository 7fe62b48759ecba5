// The commands of the adk command line, each given its parsed Command and what it needs: chat.cpp runs
// `run`, serve.cpp runs `web` and `api_server`. cli.cpp reads the command line and picks one.
#pragma once

#include "command_line.hpp"

#include <adk/artifacts/artifact_service.hpp>
#include <adk/mcp/connection.hpp>
#include <adk/mcp/oauth.hpp>
#include <adk/server/api_server.hpp>
#include <adk/sessions/session_service.hpp>

#include <memory>
#include <string>
#include <vector>

namespace adk::cli::detail {

class Services {
public:
    std::shared_ptr<SessionService> sessions;
    std::string session_store;  // its db.system.name, for the session store's latency metric
    std::shared_ptr<ArtifactService> artifacts;
};

// The services the flags name, SQLite and files under .adk/ by default. Throws adk::Error for a bad URL.
Services open_services(const Command& cmd);

// The person's steps that MCP servers ask for, at the terminal (on a thread of their own: the agent's io_context
// goes on meanwhile): a server's elicitation, field by field (an empty answer leaves a field to its default),
// and OAuth's authorization URL, answered with the address the browser was sent back to.
mcp::RequestHandler terminal_elicitation();
mcp::AuthorizeHandler terminal_authorization();

// `run`: a chat with the app on standard input and output. Returns the exit code.
int chat(const Command& cmd, server::App app, const Services& services);
// The socket `web` and `api_server` serve on, bound and listening on --host and --port before the apps load, so
// that what they build knows the port (the MCP OAuth redirect URI, under --port 0). Throws adk::Error when the
// address is taken or cannot be had.
class Listening {
public:
    int socket = -1;
    unsigned short port = 0;
};
Listening listen_on(const Command& cmd);

// `web` and `api_server`: serves on `listening` until SIGINT or SIGTERM. Returns the exit code.
int serve(const Command& cmd, std::vector<server::App> apps, const Services& services, Listening listening,
          std::string_view program);

}  // namespace adk::cli::detail
