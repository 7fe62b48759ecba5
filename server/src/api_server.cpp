// ApiServer: its options, the checks of its apps, and the router that hands each request to its route.
#include "api_impl.hpp"
#include "debug_traces.hpp"

#include <adk/net/http_stats.hpp>
#include <adk/telemetry/prometheus.hpp>

#include <adk/agents/llm_agent.hpp>
#include <adk/auth/credential_service.hpp>
#include <adk/core/identifier.hpp>
#include <adk/core/json_limits.hpp>
#include <adk/net/sse_parser.hpp>
#include <adk/sessions/session_service.hpp>
#include <adk/tools/toolset.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/address.hpp>

#include <boost/json/error.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>

namespace adk::server {

namespace json = boost::json;
using detail::RequestTarget;

namespace {

// A version in a path or a query: a non-negative integer, or none.
std::optional<std::int64_t> version_param(std::optional<std::string_view> text)
{
    if (!text)
        return std::nullopt;
    std::int64_t v = -1;
    auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
    if (ec != std::errc() || end != text->data() + text->size() || v < 0)
        throw Error(errc::invalid_argument, "the artifact version '" + std::string(text->substr(0, 40)) +
                                                "' is not a non-negative integer");
    return v;
}

}  // namespace

namespace detail {

asio::awaitable<void> reply_json(ResponseWriter& res, unsigned status, const json::value& value,
                                 const net::HeaderList& headers)
{
    std::string body = json::serialize(value);
    co_await res.send(status, "application/json", body, headers);
}

asio::awaitable<void> reply_json(ResponseWriter& res, unsigned status, const json::value& value)
{
    const net::HeaderList none;
    co_await reply_json(res, status, value, none);
}

asio::awaitable<void> reply_error(ResponseWriter& res, unsigned status, std::string_view message,
                                  const net::HeaderList& headers)
{
    // A message may quote what the client sent (a header, a path): JSON must stay UTF-8.
    json::value body = json::object{{"error", net::to_valid_utf8(message)}};
    co_await reply_json(res, status, body, headers);
}

asio::awaitable<void> reply_error(ResponseWriter& res, unsigned status, std::string_view message)
{
    const net::HeaderList none;
    co_await reply_error(res, status, message, none);
}

json::value body_json(const IncomingRequest& req)
{
    if (req.body.empty())
        return nullptr;
    boost::system::error_code ec;
    json::value v = parse_json(req.body, ec);
    if (ec == json::error::too_deep)
        throw Error(errc::invalid_argument, "the request body nests deeper than " +
                                                std::to_string(max_read_json_depth) +
                                                " levels of JSON: this server stores at most " +
                                                std::to_string(max_json_depth));
    if (ec)
        throw Error(errc::invalid_argument, "the request body is not JSON (" + ec.message() + "): send a JSON object");
    check_json(v, "the request body", max_read_json_depth);  // numbers JSON cannot hold (1e400)
    return v;
}

const json::value* member(const json::value& body, std::string_view name, json::kind kind, std::string_view what)
{
    if (!body.is_object())
        return nullptr;
    const json::value* v = body.get_object().if_contains(name);
    if (!v || v->is_null())
        return nullptr;
    if (v->kind() != kind)
        throw Error(errc::invalid_argument, "\"" + std::string(name) + "\" must be " + std::string(what));
    return v;
}

void check_id(std::string_view field, std::string_view id)
{
    if (std::optional<std::string> why = id_refusal(id))
        throw Error(errc::invalid_argument, "\"" + std::string(field) + "\" " + *why +
                                                ": it names a segment of the paths that read it back "
                                                "(/apps/{app}/users/{user}/sessions/{session})");
}

Error session_not_found(const std::string& id)
{
    return Error(errc::not_found, "Session not found: " + id);
}

}  // namespace detail

App::App(std::string name_, std::shared_ptr<Agent> root_agent_, ResumabilityConfig resumability_)
    : name(std::move(name_)), root_agent(std::move(root_agent_)), resumability(resumability_)
{
}

RunnerOptions App::runner_options() const
{
    RunnerOptions options;
    options.app_name = name;
    options.agent = root_agent;
    options.resumability = resumability;
    options.compaction = compaction;
    return options;
}

ApiServerOptions::ApiServerOptions()
{
    http.port = 8000;
}

ApiServer::Impl::Impl(asio::any_io_executor executor, std::vector<App> app_list, ApiServerOptions opts)
    : server_executor(executor), options(std::move(opts)), web_ui_root(detail::web_ui_root(options.web_ui_dir)),
      traces(std::make_shared<detail::DebugTraces>())
{
    if (!options.session_service)
        throw Error(errc::invalid_argument, "ApiServerOptions::session_service is null: give the server one "
                                            "(adk::services::open_session_service(\"sqlite:///sessions.db\"))");
    if (options.max_inline_data_bytes > adk::max_inline_data_bytes)
        throw Error(errc::invalid_argument, "ApiServerOptions::max_inline_data_bytes is " +
                                                std::to_string(options.max_inline_data_bytes) + ", over " +
                                                std::to_string(adk::max_inline_data_bytes) +
                                                ", the bound of every Part: give a smaller one, and larger files "
                                                "to an artifact service");
    if (!options.credential_service)
        options.credential_service = std::make_shared<InMemoryCredentialService>();  // one for every app
    std::vector<std::shared_ptr<telemetry::SpanSink>> sinks = options.span_sinks;
    if (options.record_traces)
        sinks.insert(sinks.begin(), traces);
    if (options.metrics) {
        meter = options.meter ? options.meter : std::make_shared<telemetry::Meter>();
        sinks.push_back(std::make_shared<telemetry::GenAiMetrics>(meter));
    }
    if (!sinks.empty())
        tracer = std::make_shared<const telemetry::Tracer>(std::move(sinks), options.tracing);
    for (auto& app : app_list) {
        if (!is_identifier(app.name))
            throw Error(errc::invalid_argument, "the app name '" + app.name +
                                                    "' is not an identifier ([A-Za-z_][A-Za-z0-9_]*)");
        if (!app.root_agent)
            throw Error(errc::invalid_argument, "the app '" + app.name + "' has no root agent");
        RunnerOptions runner = app.runner_options();
        runner.session_service = options.session_service;
        runner.artifact_service = options.artifact_service;
        runner.memory_service = options.memory_service;
        runner.credential_service = options.credential_service;
        runner.plugins = options.plugins;
        runner.tracer = tracer;
        runner.single_threaded = options.http.single_threaded;
        std::string name = app.name;
        AppEntry entry(std::move(app), std::make_unique<Runner>(std::move(runner)));
        if (!apps.emplace(name, std::move(entry)).second)
            throw Error(errc::invalid_argument, "two apps are named '" + name + "'");
    }
    boost::system::error_code ec;
    const auto address = asio::ip::make_address(options.http.host, ec);
    const bool loopback = options.http.host == "localhost" || (!ec && address.is_loopback());
    if (!loopback && options.bearer_token.empty() && !options.allow_unauthenticated)
        throw Error(errc::invalid_argument,
                    "the server would listen on " + options.http.host +
                        ", off loopback, where anyone who reaches it could run the agents: give it a bearer token "
                        "(ApiServerOptions::bearer_token), or allow requests without one explicitly "
                        "(ApiServerOptions::allow_unauthenticated)");
    RunLimits limits;
    limits.grace = options.run_grace;
    limits.max_log_bytes = options.max_run_log_bytes;
    limits.max_partial_bytes = options.max_run_partial_bytes;
    limits.max_total_log_bytes = options.max_total_run_log_bytes;
    runs = std::make_shared<RunRegistry>(std::move(executor), limits, options.max_runs,
                                                 options.http.single_threaded);
    if (meter) {
        runs_held = meter->gauge("adk.server.runs.held", "{run}",
                                 "Runs the server holds: running, or finished within the grace period.",
                                 [weak = std::weak_ptr(runs)] {
                                     auto r = weak.lock();
                                     return r ? static_cast<double>(r->size()) : 0.0;
                                 });
        run_log_bytes = meter->gauge("adk.server.run_log.size", "By", "Bytes the held runs' logs add up to.",
                                     [weak = std::weak_ptr(runs)] {
                                         auto r = weak.lock();
                                         return r ? static_cast<double>(r->log_bytes()) : 0.0;
                                     });
        stream_queue_depth = meter->gauge(
            "adk.server.stream.queue_depth", "{frame}",
            "Frames of the held runs that their clients have not read yet: what slow clients leave waiting.",
            [weak = std::weak_ptr(runs)] {
                auto r = weak.lock();
                return r ? static_cast<double>(r->unread_frames()) : 0.0;
            });
        // The process's HTTP clients (the models' providers, MCP servers), as OpenTelemetry's HTTP conventions name
        // them.
        http_active = meter->gauge(
            "http.client.open_connections", "{connection}", "Connections of the process's HTTP clients.",
            [] { return static_cast<double>(net::http_client_stats().connections_active); },
            {{"http.connection.state", "active"}});
        http_idle = meter->gauge(
            "http.client.open_connections", "{connection}", "Connections of the process's HTTP clients.",
            [] {
                const net::HttpClientStats s = net::http_client_stats();
                return static_cast<double>(std::max<std::int64_t>(s.connections_open - s.connections_active, 0));
            },
            {{"http.connection.state", "idle"}});
    }
    routes = adk_routes();
}

asio::awaitable<void> ApiServer::Impl::metrics(ResponseWriter& res)
{
    const std::string body = telemetry::prometheus_text(meter->collect());
    co_await res.send(200, telemetry::prometheus_content_type, body);
}

const ApiServer::Impl::AppEntry& ApiServer::Impl::app(std::string_view name) const
{
    auto it = apps.find(name);
    if (it == apps.end())
        throw Error(errc::not_found, "App not found: " + std::string(name) + " (GET /list-apps lists the apps)");
    return it->second;
}

asio::awaitable<Session> ApiServer::Impl::read_session(const std::string& app_name, const std::string& user,
                                                       const std::string& id)
{
    GetSessionRequest read(SessionKey(app_name, user, id));
    std::optional<Session> s = co_await options.session_service->get_session(std::move(read));
    if (!s)
        throw detail::session_not_found(id);
    co_return std::move(*s);
}

namespace {

// "host" or "host:port", "[v6]" or "[v6]:port": the host alone.
std::string_view host_of(std::string_view host_header)
{
    if (!host_header.empty() && host_header.front() == '[') {
        const auto close = host_header.find(']');
        return close == std::string_view::npos ? std::string_view() : host_header.substr(0, close + 1);
    }
    return host_header.substr(0, host_header.find(':'));
}

bool is_ip_literal(std::string_view host)
{
    if (host.size() > 2 && host.front() == '[' && host.back() == ']')
        host = host.substr(1, host.size() - 2);
    boost::system::error_code ec;
    asio::ip::make_address(std::string(host), ec);
    return !ec;
}

bool iequal(std::string_view a, std::string_view b)
{
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
}

std::optional<net::Refusal> refuse(unsigned status, std::string_view message, net::HeaderList headers = {})
{
    const json::value body = json::object{{"error", net::to_valid_utf8(message)}};
    return net::Refusal(status, json::serialize(body), std::move(headers));
}

}  // namespace

bool ApiServer::Impl::host_allowed(std::string_view host_header) const
{
    const std::string_view host = host_of(host_header);
    if (host.empty())
        return false;
    // An address cannot be rebound: a page that names one is served from it. Names can: a page of the
    // attacker's whose name resolves to this machine sends its own name.
    if (is_ip_literal(host) || iequal(host, "localhost") || iequal(host, options.http.host))
        return true;
    return std::any_of(options.allow_hosts.begin(), options.allow_hosts.end(),
                       [&](const std::string& allowed) { return allowed == "*" || iequal(allowed, host); });
}

bool ApiServer::Impl::origin_allowed(std::string_view origin, std::string_view host_header) const
{
    const std::string own_origin = (options.http.cert_file.empty() ? "http://" : "https://") + std::string(host_header);
    return origin.empty() || origin == own_origin ||
           std::any_of(options.allow_origins.begin(), options.allow_origins.end(),
                       [&](const std::string& o) { return o == "*" || o == origin; });
}

// Before a request's body is read: the Host it names (DNS rebinding), its origin, and the bearer token. A
// refused request's body is never read.
std::optional<net::Refusal> ApiServer::Impl::check_head(const IncomingRequest& req) const
{
    const std::string_view host = req.header("host");
    if (!host_allowed(host))
        return refuse(421, "the Host '" + std::string(host.substr(0, 200)) +
                               "' is not one this server answers to (its addresses, localhost, and the names it "
                               "was started with --allow_hosts): a page of another name cannot reach it");
    const std::string_view origin = req.header("origin");
    if (!origin_allowed(origin, host))
        return refuse(403, "a request from the origin " + std::string(origin.substr(0, 200)) +
                               " is refused: start the server with that origin allowed (--allow_origins)");
    if (options.bearer_token.empty())
        return std::nullopt;
    if (req.method == "OPTIONS" && !origin.empty() && !req.header("access-control-request-method").empty())
        return std::nullopt;  // a preflight carries no credentials
    const std::string_view given = req.header("authorization");
    const std::string expected = "Bearer " + options.bearer_token;
    // The comparison takes as long whatever the given value shares with the token.
    unsigned char differ = given.size() != expected.size();
    for (std::size_t i = 0; i < expected.size(); ++i)
        differ |= static_cast<unsigned char>(expected[i] ^ (i < given.size() ? given[i] : 0));
    if (differ == 0)
        return std::nullopt;
    std::string refused;  // a route anyone may read (an A2A agent card) needs no token
    if (const RequestTarget target = RequestTarget::parse(req.target, refused);
        refused.empty() && routes.open(req.method, target.segments))
        return std::nullopt;
    net::HeaderList headers{{"www-authenticate", "Bearer"}};
    if (!origin.empty()) {
        headers.emplace_back("access-control-allow-origin", std::string(origin));
        headers.emplace_back("vary", "Origin");
    }
    return refuse(401, "this server needs the header 'Authorization: Bearer <token>' (the token it was started with)",
                  std::move(headers));
}

// Cross-origin requests that passed check_head: their CORS headers, and preflights answered here. True when the
// request goes on to its route.
asio::awaitable<bool> ApiServer::Impl::admit(const IncomingRequest& req, ResponseWriter& res)
{
    const std::string_view origin = req.header("origin");
    const std::string own_origin = (options.http.cert_file.empty() ? "http://" : "https://") + std::string(req.header("host"));
    if (origin.empty() || origin == own_origin)
        co_return true;
    res.add_header("access-control-allow-origin", std::string(origin));
    res.add_header("vary", "Origin");
    if (req.method == "OPTIONS" && !req.header("access-control-request-method").empty()) {
        net::HeaderList preflight{{"access-control-allow-methods", "GET, POST, PATCH, DELETE, OPTIONS"},
                                  {"access-control-max-age", "600"}};
        if (const std::string_view asked = req.header("access-control-request-headers"); !asked.empty())
            preflight.emplace_back("access-control-allow-headers", std::string(asked));
        co_await res.send(204, "text/plain", "", preflight);  // a bad header value is refused by send()
        co_return false;
    }
    co_return true;
}

// ADK's HTTP API (../shared/fixtures/adk/API.md), as a table: each route hands its parameters to its function.
Routes ApiServer::Impl::adk_routes()
{
    using R = RouteRequest;
    Routes r;
    r.add("GET", "/list-apps", [this](R& q) { return list_apps(q.response); });
    r.add("GET", "/version", [this](R& q) -> asio::awaitable<void> {
        json::value version = json::object{{"version", options.version}, {"language", "c++"}};
        co_await detail::reply_json(q.response, 200, version);
    });
    if (meter)
        r.add("GET", "/metrics", [this](R& q) { return metrics(q.response); });
    r.add("GET", "/health", [](R& q) -> asio::awaitable<void> {
        json::value ok = json::object{{"status", "ok"}};
        co_await detail::reply_json(q.response, 200, ok);
    });
    r.add("POST", "/run", [this](R& q) { return run(q.http, q.response); });
    r.add("POST", "/run_sse", [this](R& q) { return run_sse(q.http, q.response); });

    const std::string sessions = "/apps/{}/users/{}/sessions";
    r.add("POST", sessions, [this](R& q) -> asio::awaitable<void> {
        const std::string no_id;  // the server makes one
        co_await create_session(q.http, q.response, q.params[0], q.params[1], no_id);
    });
    r.add("GET", sessions, [this](R& q) { return list_sessions(q.response, q.params[0], q.params[1]); });
    const std::string session = sessions + "/{}";
    r.add("POST", session, [this](R& q) {
        return create_session(q.http, q.response, q.params[0], q.params[1], q.params[2]);
    });
    r.add("GET", session, [this](R& q) { return get_session(q.response, q.params[0], q.params[1], q.params[2]); });
    r.add("DELETE", session,
          [this](R& q) { return delete_session(q.response, q.params[0], q.params[1], q.params[2]); });
    r.add("PATCH", session,
          [this](R& q) { return patch_session(q.http, q.response, q.params[0], q.params[1], q.params[2]); });

    // (Coroutines that name what they pass by reference: a temporary would end before the call's frame.)
    r.add("GET", session + "/runs", [this](R& q) -> asio::awaitable<void> {
        const RunOwner owner(q.params[0], q.params[1], q.params[2]);
        co_await list_runs(q.response, owner);
    });
    r.add("GET", session + "/runs/{}/events", [this](R& q) -> asio::awaitable<void> {
        const RunOwner owner(q.params[0], q.params[1], q.params[2]);
        co_await follow_run(q.http, q.response, owner, q.params[3]);
    });
    r.add("POST", session + "/runs/{}/cancel", [this](R& q) -> asio::awaitable<void> {
        const RunOwner owner(q.params[0], q.params[1], q.params[2]);
        co_await cancel_run(q.response, owner, q.params[3]);
    });

    const std::string artifacts = session + "/artifacts";
    r.add("GET", artifacts, [this](R& q) { return list_artifacts(q.response, q.params); });
    r.add("GET", artifacts + "/{}", [this](R& q) {
        return load_artifact(q.response, q.params, version_param(q.query("version")));
    });
    r.add("DELETE", artifacts + "/{}", [this](R& q) { return delete_artifact(q.response, q.params); });
    r.add("GET", artifacts + "/{}/versions", [this](R& q) { return list_artifact_versions(q.response, q.params); });
    r.add("GET", artifacts + "/{}/versions/{}", [this](R& q) {
        const std::optional<std::int64_t> version = version_param(q.params.back());
        q.params.pop_back();
        return load_artifact(q.response, q.params, version);
    });

    // The web UI's.
    r.add("GET", "/dev/apps/{}/build_graph", [this](R& q) { return build_graph(q.response, q.params[0]); });
    r.add("GET", "/dev/apps/{}/build_graph_image",
          [this](R& q) { return build_graph_image(q.response, q.params[0], q.target); });
    for (const char* graph : {"/dev/apps/{}/users/{}/sessions/{}/events/{}/graph",
                              "/apps/{}/users/{}/sessions/{}/events/{}/graph"})
        r.add("GET", graph, [this](R& q) { return event_graph(q.response, q.params); });
    // The trace routes with an app ("/dev/apps/{app}/debug/...") and without (any app).
    r.add("GET", "/dev/apps/{}/debug/trace/session/{}",
          [this](R& q) { return session_trace(q.response, q.params[0], q.target, q.params[1]); });
    r.add("GET", "/debug/trace/session/{}", [this](R& q) -> asio::awaitable<void> {
        const std::string any_app;
        co_await session_trace(q.response, any_app, q.target, q.params[0]);
    });
    r.add("GET", "/dev/apps/{}/debug/trace/{}",
          [this](R& q) { return event_trace(q.response, q.params[0], q.target, q.params[1]); });
    r.add("GET", "/debug/trace/{}", [this](R& q) -> asio::awaitable<void> {
        const std::string any_app;
        co_await event_trace(q.response, any_app, q.target, q.params[0]);
    });
    return r;
}

asio::awaitable<void> ApiServer::Impl::handle(IncomingRequest& req, ResponseWriter& res)
{
    if (!co_await admit(req, res))
        co_return;
    std::string refused;
    RequestTarget target = RequestTarget::parse(req.target, refused);
    if (!refused.empty()) {
        co_await detail::reply_error(res, 400, refused);
        co_return;
    }
    if (is_web_ui_target(target)) {
        co_await web_ui(req, res, target);
        co_return;
    }
    RouteRequest route(req, res, target);
    std::optional<Error> failure;
    try {
        if (const Routes::Handler* handler = routes.find(req.method, target.segments, route.params)) {
            co_await (*handler)(route);
        } else {
            // What a refusal quotes of the request: its method and path, bounded; never the query.
            const std::string method = req.method.substr(0, 20);
            const std::string path = req.target.substr(0, req.target.find('?')).substr(0, 200);
            const std::string allowed = routes.methods_of(target.segments);
            if (allowed.empty())
                throw Error(errc::not_found,
                            "no route for " + method + " " + path + " in this server (see ADK's HTTP API)");
            const net::HeaderList headers{{"allow", allowed}};
            const std::string message = method + " is not a method of " + path + ": it takes " + allowed;
            co_await detail::reply_error(res, 405, message, headers);
        }
    } catch (const Error& e) {
        if (res.answered())
            throw;  // the answer was under way: the connection is cut
        failure = e;
    }
    if (failure)
        co_await detail::reply_error(res, http_status(*failure), failure->message());
}

ApiServer::ApiServer(asio::any_io_executor executor, std::vector<App> apps, ApiServerOptions options)
{
    auto impl = std::make_shared<Impl>(executor, std::move(apps), std::move(options));
    net::HttpServerOptions http = impl->options.http;
    // The handler shares the Impl: a connection that outlives this object still finds it.
    auto handler = [impl](IncomingRequest& req, ResponseWriter& res) { return impl->handle(req, res); };
    auto head_check = [raw = impl.get()](const IncomingRequest& req) { return raw->check_head(req); };
    http_ = std::make_unique<net::HttpServer>(std::move(executor), std::move(http), std::move(handler),
                                              std::move(head_check));
    impl_ = std::move(impl);
}

ApiServer::~ApiServer() = default;

void ApiServer::mount(std::string_view prefix, const Routes& routes)
{
    if (started_)
        throw Error(errc::invalid_argument, "ApiServer::mount after start(): mount routes before the server serves");
    impl_->routes.mount(prefix, routes);
}

void ApiServer::start()
{
    started_ = true;
    http_->start();
}

void ApiServer::stop()
{
    http_->stop();
    impl_->runs->stop("the server stopped");
    // The apps' toolsets close on the server's executor: its io_context's run() returns once they have.
    std::vector<std::shared_ptr<Toolset>> toolsets;
    std::vector<std::shared_ptr<Model>> models;  // Gemini's context caches are deleted
    for (const auto& [name, entry] : impl_->apps) {
        for (auto& toolset : toolsets_in(*entry.app.root_agent))
            toolsets.push_back(std::move(toolset));
        for (auto& model : models_in(*entry.app.root_agent))
            models.push_back(std::move(model));
    }
    asio::co_spawn(impl_->server_executor, close_toolsets(std::move(toolsets)), asio::detached);
    asio::co_spawn(impl_->server_executor, close_models(std::move(models)), asio::detached);
}

unsigned short ApiServer::port() const noexcept
{
    return http_->port();
}

std::string ApiServer::base_url() const
{
    return http_->base_url();
}

std::vector<std::string> ApiServer::app_names() const
{
    std::vector<std::string> names;
    for (const auto& [name, entry] : impl_->apps)
        names.push_back(name);
    return names;
}

const App& ApiServer::app(std::string_view name) const
{
    return impl_->app(name).app;
}

Runner& ApiServer::runner(std::string_view name) const
{
    return *impl_->app(name).runner;
}

RunRegistry& ApiServer::runs() const
{
    return *impl_->runs;
}

const ApiServerOptions& ApiServer::options() const
{
    return impl_->options;
}

}  // namespace adk::server
