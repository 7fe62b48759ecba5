// `web` and `api_server`: the ApiServer on an io_context of one thread, until SIGINT or SIGTERM.
#include "commands.hpp"

#include <adk/a2a/server.hpp>
#include <adk/core/clock.hpp>
#include <adk/core/error.hpp>
#include <adk/otel/otlp_exporter.hpp>
#include <adk/otel/otlp_metric_exporter.hpp>
#include <adk/telemetry/metered_session_service.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>

#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>

namespace adk::cli::detail {

namespace {

namespace fs = std::filesystem;

// Where tools/fetch_web_ui.sh puts the UI: ${ADK_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/adk-cpp}
// /adk-devtools-2.0.0/browser (the version the script fetches).
fs::path default_ui_dir()
{
    if (const char* dir = std::getenv("ADK_WEB_UI_DIR"); dir && *dir)
        return dir;
    fs::path cache;
    if (const char* c = std::getenv("ADK_CACHE_DIR"); c && *c)
        cache = c;
    else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
        cache = fs::path(x) / "adk-cpp";
    else if (const char* home = std::getenv("HOME"); home && *home)
        cache = fs::path(home) / ".cache" / "adk-cpp";
    else
        cache = fs::path("/tmp") / ".cache" / "adk-cpp";
    return cache / "adk-devtools-2.0.0" / "browser";
}

}  // namespace

Listening listen_on(const Command& cmd)
{
    const std::string host = cmd.value("--host").value_or("127.0.0.1");
    const auto port = static_cast<unsigned short>(cmd.number("--port", 8000, 65535));
    asio::io_context ioc(1);
    asio::ip::tcp::acceptor acceptor(ioc);
    try {
        const asio::ip::tcp::endpoint at(asio::ip::make_address(host), port);
        acceptor.open(at.protocol());
        acceptor.set_option(asio::ip::tcp::acceptor::reuse_address(true));
        acceptor.bind(at);
        acceptor.listen();
        Listening listening;
        listening.port = acceptor.local_endpoint().port();
        listening.socket = acceptor.release();
        return listening;
    } catch (const boost::system::system_error& e) {
        throw Error(errc::invalid_argument, "cannot listen on " + host + ":" + std::to_string(port) + " (" +
                                                e.code().message() +
                                                "): choose another --host or --port, or stop what listens there");
    }
}

int serve(const Command& cmd, std::vector<server::App> apps, const Services& services, Listening listening,
          std::string_view program)
{
    server::ApiServerOptions options;
    options.http.host = cmd.value("--host").value_or("127.0.0.1");
    options.http.port = listening.port;
    options.http.listening_socket = listening.socket;
    options.http.single_threaded = true;
    // Metrics: served at /metrics for Prometheus, and pushed over OTLP when the environment names a collector; the
    // session store's operations timed (db.client.operation.duration).
    options.meter = std::make_shared<telemetry::Meter>();
    options.session_service =
        std::make_shared<telemetry::MeteredSessionService>(services.sessions, options.meter, services.session_store);
    options.artifact_service = services.artifacts;
    options.allow_origins = cmd.list("--allow_origins");
    options.allow_hosts = cmd.list("--allow_hosts");
    options.run_grace = std::chrono::seconds(cmd.number("--run_grace", 30, 86400));
    options.allow_unauthenticated = cmd.has("--allow_unauthenticated");
    if (const char* token = std::getenv("ADK_API_TOKEN"); token && *token)
        options.bearer_token = token;
    if (cmd.name == "web") {
        const fs::path ui = cmd.value("--ui_dir").value_or(default_ui_dir().string());
        std::error_code ec;
        if (!fs::is_regular_file(ui / "index.html", ec))
            throw Error(errc::invalid_argument,
                        "the ADK web UI's files are not in " + ui.string() +
                            ": run tools/fetch_web_ui.sh (it fetches @google/adk-devtools from the npm registry into "
                            "that folder), or give the package's dist/browser folder with --ui_dir");
        options.web_ui_dir = ui.string();
    }
    std::string names;
    for (const auto& app : apps)
        names += (names.empty() ? "" : ", ") + app.name;

    asio::io_context ioc(1);
    // Traces to an OpenTelemetry collector when the OTEL_* environment names one (docs/observability.md).
    std::shared_ptr<otel::OtlpSpanExporter> otlp = otel::OtlpSpanExporter::from_env(ioc.get_executor());
    if (otlp) {
        options.span_sinks.push_back(otlp);
        options.tracing = otlp->options().tracer;
    }
    std::shared_ptr<otel::OtlpMetricExporter> otlp_metrics =
        otel::OtlpMetricExporter::from_env(ioc.get_executor(), options.meter);
    server::ApiServer server(ioc.get_executor(), std::move(apps), std::move(options));
    std::optional<a2a::Server> a2a_server;  // adk::a2a: every app over A2A too, at /a2a/{app}
    if (cmd.has("--a2a_push_allowed_urls") && !cmd.has("--a2a"))
        throw Error(errc::invalid_argument, "--a2a_push_allowed_urls is for the A2A server: add --a2a");
    if (cmd.has("--a2a")) {
        a2a::ServerOptions a2a_options;
        a2a_options.push_allowed_urls = cmd.list("--a2a_push_allowed_urls");
        a2a_server.emplace(server, std::move(a2a_options));
        a2a_server->mount();
    }
    server.start();
    const std::string where = server.base_url() + (cmd.name == "web" ? "/dev-ui/" : "/");
    std::cout << program << " " << cmd.name << ": serving " << names << " at " << where
              << (a2a_server ? ", and over A2A at " + server.base_url() + "/a2a/APP" : std::string())
              << " (Ctrl-C stops)" << std::endl;

    asio::signal_set stop_signals(ioc, SIGINT, SIGTERM);
    adk::Timer last_call(ioc);
    stop_signals.async_wait([&](boost::system::error_code ec, int) {
        if (ec)
            return;
        std::cout << program << " " << cmd.name << ": stopping" << std::endl;
        server.stop();
        if (otlp)  // the spans still waiting go out, within the same moment
            asio::co_spawn(ioc, otlp->shutdown(std::chrono::milliseconds(1500)), asio::detached);
        if (otlp_metrics)  // and the metrics' last values
            asio::co_spawn(ioc, otlp_metrics->shutdown(std::chrono::milliseconds(1500)), asio::detached);
        // What the runs were awaiting ends within a moment; past it the io_context stops anyway.
        last_call.expires_after(std::chrono::seconds(2));
        last_call.async_wait([&](boost::system::error_code) { ioc.stop(); });
    });
    ioc.run();
    return 0;
}

}  // namespace adk::cli::detail
