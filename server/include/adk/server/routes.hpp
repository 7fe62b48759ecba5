// Routes: the table an ApiServer answers from. A route is a method, a path pattern and a handler; a component adds
// its own beside ADK's, or mounts a table of its own under a prefix (ApiServer::mount):
//
//   adk::server::Routes a2a;
//   a2a.add("GET", "/{}/.well-known/agent-card.json", [&](adk::server::RouteRequest& r) { return card(r); });
//   a2a.add("POST", "/{}/tasks/{}:cancel", ...);   // r.params: the app, the task id
//   server.mount("/a2a", std::move(a2a));           // GET /a2a/weather/.well-known/agent-card.json
//
// A pattern's segments are literals ("sessions", "message:send"), "{}" for any one segment, or "{}:verb" for a
// segment that ends in ":verb" (what comes before is the parameter). The segments of the request's path are
// percent-decoded and checked before they are matched (no "..", no '/', no control character): a parameter is a
// safe path segment. Routes are tried in the order they were added; the first that fits answers.
//
// A handler that throws adk::Error before it answers gets {"error": message} with the status http_status() gives
// its code; one that throws after has its connection cut (the answer was under way).
#pragma once

#include <adk/core/error.hpp>
#include <adk/net/http_server.hpp>

#include <boost/asio/awaitable.hpp>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace adk::server {

namespace asio = boost::asio;

namespace detail {
class RequestTarget;
}

// The HTTP status an adk::Error is answered with: 400 invalid_argument, 404 not_found, 409 already_exists,
// 413 too_large, 503 unavailable, 504 timed_out, 500 for anything else (a store's failure, an agent's).
unsigned http_status(const Error& e) noexcept;

// A request as its route sees it.
class RouteRequest {
public:
    RouteRequest(net::IncomingRequest& http_, net::ResponseWriter& response_, const detail::RequestTarget& target_)
        : http(http_), response(response_), target(target_)
    {
    }

    net::IncomingRequest& http;
    net::ResponseWriter& response;
    const detail::RequestTarget& target;
    // The segments the pattern's "{}" matched, in order (a mount's prefix's first).
    std::vector<std::string> params;

    // A query parameter, percent-decoded (the last of a repeated name); nullopt when absent.
    std::optional<std::string_view> query(std::string_view name) const;
};

class Routes {
public:
    using Handler = std::function<asio::awaitable<void>(RouteRequest&)>;

    // A route: `methods` one method or several separated by spaces ("GET POST"), `pattern` a path ("/run_sse",
    // "/apps/{}/users/{}/sessions"). Throws adk::Error (invalid_argument) for a pattern that does not start with
    // '/' or has an empty segment.
    Routes& add(std::string_view methods, std::string_view pattern, Handler handler);
    // A route the server answers without its bearer token: what anyone may read (an A2A agent card, public by
    // the A2A specification). Host and origin are checked as for every route.
    Routes& add_open(std::string_view methods, std::string_view pattern, Handler handler);
    // Every route of `routes` under `prefix` (a pattern itself: "/a2a", "/tenants/{}"; "/" for none).
    Routes& mount(std::string_view prefix, const Routes& routes);

    // The handler of the first route that fits (its parameters in `params`), or null.
    const Handler* find(std::string_view method, const std::vector<std::string>& segments,
                        std::vector<std::string>& params) const;
    // Whether the route that answers is open (add_open).
    bool open(std::string_view method, const std::vector<std::string>& segments) const;
    // The methods of the routes that have that path, separated by ", " (a 405's Allow header); empty for none.
    std::string methods_of(const std::vector<std::string>& segments) const;
    std::size_t size() const noexcept { return routes_.size(); }

private:
    class Segment {
    public:
        enum Kind { literal, any, verb };
        Kind kind = literal;
        std::string text;  // the literal, or the verb's suffix (":cancel")
    };
    class Route {
    public:
        std::vector<std::string> methods;
        std::vector<Segment> pattern;
        Handler handler;
        bool open = false;
    };
    static std::vector<Segment> parse_pattern(std::string_view pattern);
    const Route* route_for(std::string_view method, const std::vector<std::string>& segments,
                           std::vector<std::string>* params) const;
    static bool fits(const std::vector<Segment>& pattern, const std::vector<std::string>& segments,
                     std::vector<std::string>* params);

    std::vector<Route> routes_;
};

}  // namespace adk::server
