// What the ApiServer's routes share: the apps and their runners, the services, the run registry, and the
// helpers that read a body and answer with JSON. Each group of routes has its file: session_routes.cpp,
// run_routes.cpp, artifact_routes.cpp, dev_routes.cpp; api_server.cpp routes a request to them.
#pragma once

#include <adk/core/error.hpp>
#include <adk/runner/runner.hpp>
#include <adk/server/api_server.hpp>
#include <adk/server/routes.hpp>

#include "request_target.hpp"
#include <adk/server/runs.hpp>

#include <boost/json/value.hpp>

#include <filesystem>
#include <map>
#include <memory>
#include <string>

namespace adk {
class ArtifactService;
}

namespace adk::server {

namespace json = boost::json;
using net::IncomingRequest;
using net::ResponseWriter;

namespace detail {

class DebugTraces;

asio::awaitable<void> reply_json(ResponseWriter& res, unsigned status, const json::value& value);
asio::awaitable<void> reply_json(ResponseWriter& res, unsigned status, const json::value& value,
                                 const net::HeaderList& headers);
// {"error": message}
asio::awaitable<void> reply_error(ResponseWriter& res, unsigned status, std::string_view message);
asio::awaitable<void> reply_error(ResponseWriter& res, unsigned status, std::string_view message,
                                  const net::HeaderList& headers);
// The body as JSON: null when empty. Throws adk::Error (invalid_argument) when it does not parse.
json::value body_json(const IncomingRequest& req);
// A member of the body that must be of one kind when present; nullptr when absent or null. Throws adk::Error
// (invalid_argument) that names it when it is of another kind.
const json::value* member(const json::value& body, std::string_view name, json::kind kind, std::string_view what);
// Throws adk::Error (invalid_argument) naming `field` when `id`, read from a body, could not be a path
// segment of the routes that read back what it names (detail::id_refusal).
void check_id(std::string_view field, std::string_view id);
Error session_not_found(const std::string& id);
// The web UI's folder made canonical, or empty when `dir` is; throws adk::Error (invalid_argument) when it
// holds no index.html.
std::filesystem::path web_ui_root(const std::string& dir);

}  // namespace detail

class ApiServer::Impl {
public:
    Impl(asio::any_io_executor executor, std::vector<App> app_list, ApiServerOptions opts);

    // ADK's routes; `routes` holds them and what was mounted beside them (ApiServer::mount).
    Routes adk_routes();
    asio::awaitable<void> handle(IncomingRequest& req, ResponseWriter& res);
    // Before the body is read (HttpServer's head check): Host, origin, bearer token.
    std::optional<net::Refusal> check_head(const IncomingRequest& req) const;
    bool host_allowed(std::string_view host_header) const;
    bool origin_allowed(std::string_view origin, std::string_view host_header) const;
    asio::awaitable<bool> admit(const IncomingRequest& req, ResponseWriter& res);

    class AppEntry {
    public:
        AppEntry(App app_, std::unique_ptr<Runner> runner_) : app(std::move(app_)), runner(std::move(runner_)) {}
        App app;
        std::unique_ptr<Runner> runner;
    };

    // The app of that name; throws not_found.
    const AppEntry& app(std::string_view name) const;
    // The session as stored; throws not_found.
    asio::awaitable<Session> read_session(const std::string& app_name, const std::string& user, const std::string& id);

    // session_routes.cpp
    asio::awaitable<void> list_apps(ResponseWriter& res);
    asio::awaitable<void> create_session(const IncomingRequest& req, ResponseWriter& res, const std::string& app_name,
                                         const std::string& user, const std::string& path_id);
    asio::awaitable<void> list_sessions(ResponseWriter& res, const std::string& app_name, const std::string& user);
    asio::awaitable<void> get_session(ResponseWriter& res, const std::string& app_name, const std::string& user,
                                      const std::string& id);
    asio::awaitable<void> patch_session(const IncomingRequest& req, ResponseWriter& res, const std::string& app_name,
                                        const std::string& user, const std::string& id);
    asio::awaitable<void> delete_session(ResponseWriter& res, const std::string& app_name, const std::string& user,
                                         const std::string& id);

    // run_routes.cpp
    asio::awaitable<void> run(const IncomingRequest& req, ResponseWriter& res);
    asio::awaitable<void> run_sse(const IncomingRequest& req, ResponseWriter& res);
    asio::awaitable<void> list_runs(ResponseWriter& res, const RunOwner& owner);
    asio::awaitable<void> follow_run(const IncomingRequest& req, ResponseWriter& res, const RunOwner& owner,
                                     const std::string& run_id);
    asio::awaitable<void> cancel_run(ResponseWriter& res, const RunOwner& owner, const std::string& run_id);

    // artifact_routes.cpp; `p` holds app, user, session[, name]
    ArtifactService& artifacts(const std::vector<std::string>& p) const;
    asio::awaitable<void> list_artifacts(ResponseWriter& res, const std::vector<std::string>& p);
    asio::awaitable<void> load_artifact(ResponseWriter& res, const std::vector<std::string>& p,
                                        std::optional<std::int64_t> version);
    asio::awaitable<void> list_artifact_versions(ResponseWriter& res, const std::vector<std::string>& p);
    asio::awaitable<void> delete_artifact(ResponseWriter& res, const std::vector<std::string>& p);

    asio::awaitable<void> metrics(ResponseWriter& res);

    // dev_routes.cpp
    asio::awaitable<void> build_graph(ResponseWriter& res, const std::string& app_name);
    asio::awaitable<void> build_graph_image(ResponseWriter& res, const std::string& app_name,
                                            const detail::RequestTarget& target);
    asio::awaitable<void> event_graph(ResponseWriter& res, const std::vector<std::string>& p);
    // `app` empty for the routes without one; ?user_id= names the user (needed when several have the session).
    asio::awaitable<void> session_trace(ResponseWriter& res, const std::string& app, const detail::RequestTarget& target,
                                        const std::string& session_id);
    asio::awaitable<void> event_trace(ResponseWriter& res, const std::string& app, const detail::RequestTarget& target,
                                      const std::string& event_id);

    // web_ui_routes.cpp
    bool is_web_ui_target(const detail::RequestTarget& target) const;
    asio::awaitable<void> web_ui(const IncomingRequest& req, ResponseWriter& res, const detail::RequestTarget& target);

    asio::any_io_executor server_executor;  // the server's own (not a strand)
    Routes routes;  // read by every connection: changed only before the server starts
    ApiServerOptions options;
    std::filesystem::path web_ui_root;  // empty: no web UI
    std::map<std::string, AppEntry, std::less<>> apps;
    std::shared_ptr<RunRegistry> runs;
    std::shared_ptr<detail::DebugTraces> traces;  // a sink of `tracer`, for the web UI's trace view
    std::shared_ptr<const telemetry::Tracer> tracer;  // every app's runner's; null when no span is kept
    std::shared_ptr<telemetry::Meter> meter;           // null when options.metrics is off
    telemetry::GaugeRegistration runs_held;          // adk.server.runs.held, read from `runs`
    telemetry::GaugeRegistration run_log_bytes;      // adk.server.run_log.size
    telemetry::GaugeRegistration stream_queue_depth;  // adk.server.stream.queue_depth
    telemetry::GaugeRegistration http_active, http_idle;  // http.client.open_connections
};

}  // namespace adk::server
