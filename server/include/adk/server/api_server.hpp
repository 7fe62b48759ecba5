// ApiServer: ADK's HTTP API (the one ADK's web UI and ADK's own tools call) over adk-cpp's HTTP server core,
// started on the caller's io_context with the caller's apps and services. ../shared/fixtures/adk/API.md is
// the contract, Python's JSON the form (camelCase, times in float seconds).
//
//   adk::server::ApiServerOptions options;
//   options.session_service = adk::services::open_session_service("sqlite:///agents.db");
//   adk::server::ApiServer server(ioc.get_executor(), {{"weather", weather_agent}}, options);
//   server.start();   // http://127.0.0.1:8000 unless options.http says otherwise
//
// Routes: GET /list-apps (a sorted array of names), /version, /health; sessions: POST
// /apps/{app}/users/{user}/sessions (body null, {"state"}, {"sessionId"}, {"events"} to import), POST
// .../sessions/{id}, GET .../sessions (a bare array), GET/PATCH ({"stateDelta"})/DELETE .../sessions/{id}.
// Runs: POST /run (the events as an array), POST /run_sse (one "id:" and "data:" frame per event, partial
// text as deltas when "streaming"), and a session's runs under .../sessions/{id}/runs: GET (the runs the
// server holds), GET runs/{run}/events (follow again; Last-Event-ID), POST runs/{run}/cancel.
// Runs belong to the server: a client that drops its /run_sse stream can reconnect with Last-Event-ID
// (POST /run_sse again, or GET .../events) and gets what it missed; a run that nobody follows is cancelled
// after run_grace. A /run is such a run too (counted against max_runs, listed, cancelled by the cancel route or
// when its client leaves and run_grace passes); its answer (header x-adk-run-id) gathers the events. Artifacts: GET .../sessions/{id}/artifacts, GET/DELETE artifacts/{name}, GET
// artifacts/{name}/versions, GET artifacts/{name}/versions/{v}. The web UI's /dev/apps/{app}/build_graph,
// build_graph_image (graphviz DOT), event graphs, and debug traces (of the model and tool calls of the runs
// this server made, kept in memory).
// With web_ui_dir, the ADK web UI at /dev-ui/ (GET / redirects there), its runtime config made here.
// The routes are a table (adk/server/routes.hpp) that mount() extends. A path the table has with another method:
// 405 with Allow; anything else: 404 Not Found with {"error": "..."}.
//
// Errors are {"error": "<what was wrong, and what to do>"}: 400 for a body or path that is not what the
// route takes, 401 without the bearer token, 403 for an origin not allowed, 421 for a Host not served, 404 for an unknown app, session
// or route, 409 for a session id that is taken, 413/431 for a request over the limits (HttpServerOptions, and
// max_inline_data_bytes), 503 past max_runs, 500 for a failure of the server's own (a database's).
#pragma once

#include <adk/agents/agent.hpp>
#include <adk/net/http_server.hpp>
#include <adk/plugins/plugin.hpp>
#include <adk/runner/runner.hpp>
#include <adk/server/routes.hpp>
#include <adk/sessions/session_service.hpp>
#include <adk/telemetry/metrics.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace adk {
class ArtifactService;
class CredentialService;
class MemoryService;
}  // namespace adk

namespace adk::server {

class RunRegistry;

// One app: the {app} of the API's paths, and its root agent.
class App {
public:
    App(std::string name_, std::shared_ptr<Agent> root_agent_, ResumabilityConfig resumability_ = {});

    std::string name;
    std::shared_ptr<Agent> root_agent;
    // Resumable apps continue a paused or interrupted invocation (/run_sse with "invocationId", or an answer to
    // one of its calls) where it stopped: adk/runner/runner.hpp.
    ResumabilityConfig resumability;
    // The app's event compaction (adk/compaction/compaction.hpp); off when unset.
    std::optional<EventsCompactionConfig> compaction;

    // The options of a Runner of this app: its name, root agent, resumability and compaction. The caller adds
    // the services, plugins and tracer.
    RunnerOptions runner_options() const;
};

class ApiServerOptions {
public:
    ApiServerOptions();

    net::HttpServerOptions http;  // host, port, TLS, limits, timeouts; port 8000 unless set
    std::shared_ptr<SessionService> session_service;  // every app's sessions; required
    std::shared_ptr<ArtifactService> artifact_service;
    std::shared_ptr<MemoryService> memory_service;
    // Where credentials that users give to tools are kept (adk/auth/credential_service.hpp); one in memory,
    // shared by the apps, when none is given.
    std::shared_ptr<CredentialService> credential_service;
    std::vector<std::shared_ptr<Plugin>> plugins;
    std::string version = "adk-cpp 0.1";  // GET /version's "version"

    // Runs belong to the server (see run_sse below). How long a run whose client left goes on without one
    // before it is cancelled, and how long a finished run's frames stay for a client that comes back. 0:
    // cancel at once, as ADK Python does.
    std::chrono::milliseconds run_grace{std::chrono::seconds(30)};
    // The frames a run keeps for clients that come back; past it, partial frames go first.
    std::size_t max_run_log_bytes = std::size_t{1} << 20;
    // Of that, what partial frames (a streamed answer's deltas) may take: a client that comes back gets the
    // newest deltas, then the whole answer, which repeats them all.
    std::size_t max_run_partial_bytes = std::size_t{16} << 10;
    // What the frames of all runs held may add up to; past it, the oldest finished runs are forgotten first
    // (before their grace period ends).
    std::size_t max_total_run_log_bytes = std::size_t{256} << 20;
    // Runs held at once (running, or finished within the grace period); past it /run_sse answers 503.
    std::size_t max_runs = 100000;
    // The largest inline file (inlineData, decoded) a message may carry; a larger one is answered 413. At most
    // adk::max_inline_data_bytes (10,000,000), the bound of every Part (larger files go to an artifact service).
    std::size_t max_inline_data_bytes = adk::max_inline_data_bytes;

    // The ADK web UI: the dist/browser folder of the npm package @google/adk-devtools, served at /dev-ui/
    // (with / leading there) and talking to this server's API. Empty: no web UI.
    std::string web_ui_dir;

    // Keep the spans of the runs' model and tool calls for the web UI's trace view (in memory, bounded); off,
    // the trace routes find none and runs skip the bookkeeping.
    bool record_traces = true;
    // Where else the runs' spans go (adk/telemetry/tracer.hpp: an OTLP exporter, your own sink), and how they are
    // sampled. A request's W3C traceparent header is the parent of its run's spans.
    std::vector<std::shared_ptr<telemetry::SpanSink>> span_sinks;
    telemetry::TracerOptions tracing;
    // The runs' metrics (adk/telemetry/metrics.hpp: GenAI durations and tokens, agents, tools, invocations, runs
    // held), served at GET /metrics in Prometheus' text format, behind the bearer token when one is set. Null: the
    // server keeps its own Meter; give one to export it elsewhere too (adk::otel's OtlpMetricExporter). Off: no
    // metrics are recorded and /metrics is not found.
    bool metrics = true;
    std::shared_ptr<telemetry::Meter> meter;

    // When set, every request but a CORS preflight must carry "Authorization: Bearer <token>" (401 without).
    // A server that listens off loopback refuses to start without one, unless allow_unauthenticated is set.
    std::string bearer_token;
    bool allow_unauthenticated = false;
    // The origins (e.g. "http://localhost:4200", or "*") whose browser pages may call the API. A request from
    // another origin than the server's own is refused (403) unless its Origin is listed; preflights of listed
    // origins are answered.
    std::vector<std::string> allow_origins;
    // The names (e.g. "agents.example.com", or "*" for any) a request's Host may give besides the server's
    // addresses, localhost and the host it listens on. Others are refused (421) before anything is read, so
    // that a page whose name was rebound to this machine's address (DNS rebinding) cannot reach it.
    std::vector<std::string> allow_hosts;
    // A session imported with its events (POST .../sessions with "events") may not hold an agent's function call
    // that the import leaves unanswered (a confirmation request, a long-running call): a client cannot make
    // calls for the agent. Allowed, such calls are kept as history; either way imported events are marked
    // (adk::is_imported) and no answer resumes their calls.
    bool allow_imported_calls = false;
};

static_assert(!std::is_aggregate_v<ApiServerOptions>);

class ApiServer {
public:
    // Throws adk::Error (invalid_argument) for an app name that is not an identifier, two apps of one name,
    // an app without a root agent, no session service, or a host off loopback with neither a bearer token
    // nor allow_unauthenticated.
    ApiServer(asio::any_io_executor executor, std::vector<App> apps, ApiServerOptions options);
    ~ApiServer();
    ApiServer(const ApiServer&) = delete;
    ApiServer& operator=(const ApiServer&) = delete;

    // Adds `routes` under `prefix` ("/a2a"; "/" for none), after ADK's: a component's routes served beside the API,
    // behind the same checks (Host, origin, bearer token). Before start(); throws adk::Error (invalid_argument)
    // after it.
    void mount(std::string_view prefix, const Routes& routes);
    // Binds and serves; throws boost::system::system_error when the address is taken.
    void start();
    // Closes the listener and every connection, cancels the runs, and closes the apps' toolsets on the server's
    // executor (its io_context's run() returns once they have closed). Safe from any thread.
    void stop();
    unsigned short port() const noexcept;
    std::string base_url() const;

    // What a component mounted beside ADK's routes (adk::a2a) reaches: the apps served (sorted by name), an app's
    // runner (throws adk::Error, not_found, for a name the server does not serve), the runs the server holds, and
    // its options. Valid while the server lives.
    std::vector<std::string> app_names() const;
    const App& app(std::string_view name) const;
    Runner& runner(std::string_view name) const;
    RunRegistry& runs() const;
    const ApiServerOptions& options() const;

    class Impl;

private:
    std::shared_ptr<Impl> impl_;
    std::unique_ptr<net::HttpServer> http_;
    bool started_ = false;
};

}  // namespace adk::server
