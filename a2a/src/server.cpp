#include <adk/a2a/server.hpp>

#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>

namespace adk::a2a {

Server::Server(server::ApiServer& api, ServerOptions options) : api_(api), options_(std::move(options))
{
    if (options_.path.empty() || options_.path.front() != '/')
        throw Error(errc::invalid_argument, "a2a::ServerOptions::path must start with '/' (\"/a2a\")");
    while (options_.path.size() > 1 && options_.path.back() == '/')
        options_.path.pop_back();
    while (!options_.public_url.empty() && options_.public_url.back() == '/')
        options_.public_url.pop_back();
}

server::Routes Server::routes()
{
    server::Routes r;
    r.add("GET", "/{}/.well-known/agent-card.json", [this](server::RouteRequest& req) { return serve_card(req); });
    return r;
}

void Server::mount()
{
    api_.mount(options_.path, routes());
}

AgentCard Server::card(std::string_view app, const std::string& url) const
{
    CardOptions o;
    o.url = url;
    o.version = options_.agent_version;
    o.bearer = !api_.options().bearer_token.empty();
    return agent_card(*api_.app(app).root_agent, o);
}

std::string Server::endpoint(const server::RouteRequest& r, const std::string& app) const
{
    if (!options_.public_url.empty())
        return options_.public_url + "/" + app;
    // The Host was checked by the ApiServer before the route ran (a name it serves).
    const bool tls = !api_.options().http.cert_file.empty();
    const std::string mount = options_.path == "/" ? "" : options_.path;
    return std::string(tls ? "https://" : "http://") + std::string(r.http.header("host")) + mount + "/" + app;
}

asio::awaitable<void> Server::serve_card(server::RouteRequest& r)
{
    const std::string& app = r.params.at(0);
    const json::value card_json = json::value_from(card(app, endpoint(r, app)));
    const std::string body = json::serialize(card_json);
    co_await r.response.send(200, "application/json", body);
}

}  // namespace adk::a2a
