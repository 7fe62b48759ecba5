// adk::a2a::Server: every app of an adk::server::ApiServer served over A2A, mounted beside ADK's routes:
//
//   adk::server::ApiServer api(ioc.get_executor(), apps, options);
//   adk::a2a::Server a2a(api);
//   a2a.mount();   // before api.start(): GET /a2a/weather/.well-known/agent-card.json
//   api.start();
//
// The routes sit behind the ApiServer's checks (Host, origin, bearer token): a client sends the token to read the
// card too. An app's card names its endpoints by the Host the request came to (checked by the ApiServer), or by
// ServerOptions::public_url when set.
#pragma once

#include <adk/a2a/agent_card.hpp>
#include <adk/server/api_server.hpp>
#include <adk/server/routes.hpp>

#include <string>

namespace adk::a2a {

class ServerOptions {
public:
    ServerOptions() = default;
    // Where the routes are mounted on the ApiServer ("/a2a", where ADK's clients look).
    std::string path = "/a2a";
    // The URL clients reach that path at ("https://agents.example.com/a2a"); empty: the request's scheme and Host.
    std::string public_url;
    std::string agent_version = "0.1.0";
};

class Server {
public:
    // `api` must outlive the server and its routes.
    explicit Server(server::ApiServer& api, ServerOptions options = {});

    // The routes, relative to the mount path; mount() mounts them at ServerOptions::path (before the ApiServer
    // starts).
    server::Routes routes();
    void mount();

    // The card of `app` as served at `url` (the app's A2A endpoint); throws adk::Error (not_found) for an app the
    // ApiServer does not serve.
    AgentCard card(std::string_view app, const std::string& url) const;

private:
    asio::awaitable<void> serve_card(server::RouteRequest& r);
    std::string endpoint(const server::RouteRequest& r, const std::string& app) const;

    server::ApiServer& api_;
    ServerOptions options_;
};

}  // namespace adk::a2a
