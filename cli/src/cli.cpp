// adk::cli::main: reads the command line, finds the apps (given in C++, or read from agent-config YAML),
// opens the services and runs the command; every failure becomes a message and an exit code.
#include <adk/cli/cli.hpp>

#include "commands.hpp"

#include <adk/core/error.hpp>
#include <adk/core/log.hpp>
#include <adk/services/service_url.hpp>

#include <filesystem>
#include <functional>
#include <iostream>

namespace adk::cli {

namespace fs = std::filesystem;
using detail::AppSource;
using detail::Command;

namespace detail {

Services open_services(const Command& cmd)
{
    auto sessions_uri = cmd.value("--session_service_uri");
    auto artifacts_uri = cmd.value("--artifact_service_uri");
    if (!sessions_uri || !artifacts_uri)
        fs::create_directories(".adk");
    Services services;
    const std::string url = sessions_uri.value_or("sqlite:///.adk/sessions.db");
    services.sessions = services::open_session_service(url);
    services.session_store = services::session_store_system(url);
    services.artifacts = services::open_artifact_service(artifacts_uri.value_or("file:///.adk/artifacts"));
    return services;
}

}  // namespace detail

namespace {

LogLevel log_level(const std::string& name)
{
    std::string lower;
    for (char c : name)
        lower.push_back(static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c));
    if (lower == "debug")
        return LogLevel::debug;
    if (lower == "info")
        return LogLevel::info;
    if (lower == "warning")
        return LogLevel::warning;
    if (lower == "error" || lower == "critical")
        return LogLevel::error;
    throw Error(errc::invalid_argument, "--log_level takes debug, info, warning, error or critical, not '" +
                                            name.substr(0, 40) + "'");
}

// The app `run` talks to, of the apps given in code: the one named, or the only one.
server::App pick_app(const Command& cmd, std::vector<server::App> apps, std::string_view program)
{
    std::string names;
    for (const auto& app : apps)
        names += (names.empty() ? "" : ", ") + app.name;
    if (cmd.positional.empty()) {
        if (apps.size() == 1)
            return std::move(apps.front());
        throw detail::UsageError("name the app to run (" + names + ")", detail::usage(AppSource::code, program, "run"));
    }
    for (auto& app : apps)
        if (app.name == cmd.positional.front())
            return std::move(app);
    throw Error(errc::not_found, "no app is named '" + cmd.positional.front().substr(0, 100) + "' (apps: " + names + ")");
}

using Dispatch = std::function<int(const Command&, std::string_view program)>;

int run_main(int argc, char** argv, AppSource source, const Dispatch& dispatch)
{
    const std::string program = argc > 0 ? fs::path(argv[0]).filename().string() : "adk";
    std::vector<std::string> args(argv + std::min(argc, 1), argv + argc);
    try {
        Command cmd = detail::parse_command_line(args, source, program);
        if (cmd.help) {
            std::cout << detail::usage(source, program, cmd.name);
            return 0;
        }
        if (auto level = cmd.value("--log_level"))
            set_log_level(log_level(*level));
        if (auto format = cmd.value("--log_format")) {
            if (*format != "json" && *format != "text")
                throw Error(errc::invalid_argument, "--log_format takes text or json, not '" + *format + "'");
            set_log_format(*format == "json" ? LogFormat::json : LogFormat::text);
        }
        return dispatch(cmd, program);
    } catch (const detail::UsageError& e) {
        std::cerr << program << ": " << e.what() << "\n\n" << e.usage;
        return 2;
    } catch (const Error& e) {
        std::cerr << program << ": " << e.message() << "\n";
        return 1;
    } catch (const std::exception& e) {
        std::cerr << program << ": " << e.what() << "\n";
        return 1;
    }
}

// The --compaction_* flags, for an app that has no compaction of its own.
void apply_compaction_flags(const Command& cmd, server::App& app)
{
    const bool interval = cmd.has("--compaction_interval");
    const bool threshold = cmd.has("--compaction_token_threshold");
    if (!interval && !threshold) {
        if (cmd.has("--compaction_overlap") || cmd.has("--compaction_retention"))
            throw Error(errc::invalid_argument, "--compaction_overlap and --compaction_retention go with "
                                                "--compaction_interval or --compaction_token_threshold: give one");
        return;
    }
    if (app.compaction)
        return;
    EventsCompactionConfig config;
    config.compaction_interval = static_cast<int>(cmd.number("--compaction_interval", 0, 1000000));
    config.overlap_size = static_cast<int>(cmd.number("--compaction_overlap", 1, 1000000));
    if (threshold)
        config.token_threshold = cmd.number("--compaction_token_threshold", 0, 1LL << 40);
    config.event_retention_size = static_cast<int>(cmd.number("--compaction_retention", 4, 1000000));
    if (config.compaction_interval == 0 && (!config.token_threshold || *config.token_threshold == 0))
        throw Error(errc::invalid_argument, "--compaction_interval and --compaction_token_threshold are 0: give one "
                                            "above 0 to compact, or leave both out");
    if (config.token_threshold == 0)
        config.token_threshold.reset();
    app.compaction = std::move(config);
}

}  // namespace

int main(int argc, char** argv, std::vector<server::App> apps)
{
    return run_main(argc, argv, AppSource::code, [&](const Command& cmd, std::string_view program) {
        const detail::Services services = detail::open_services(cmd);
        for (server::App& app : apps)
            apply_compaction_flags(cmd, app);
        if (cmd.name == "run")
            return detail::chat(cmd, pick_app(cmd, std::move(apps), program), services);
        return detail::serve(cmd, std::move(apps), services, detail::listen_on(cmd), program);
    });
}

int main(int argc, char** argv, const AgentConfigOptions& config)
{
    return run_main(argc, argv, AppSource::yaml, [&](const Command& cmd, std::string_view program) {
        AgentConfigOptions options = config;
        if (auto model = cmd.value("--model"))
            options.model_override = *model;
        if (cmd.name == "run") {
            options.mcp_elicitation = detail::terminal_elicitation();
            options.mcp_authorize = detail::terminal_authorization();
            fs::path app_dir = cmd.positional.front();
            if (app_dir.filename() == "root_agent.yaml")
                app_dir = app_dir.parent_path();
            const fs::path yaml = app_dir / "root_agent.yaml";
            std::error_code ec;
            if (!fs::is_regular_file(yaml, ec))
                throw Error(errc::invalid_argument, yaml.string() + " does not exist: name an app's folder, which "
                                                                    "holds its root_agent.yaml");
            const std::string name = fs::absolute(app_dir).lexically_normal().filename().string();
            server::App app(name.empty() ? fs::absolute(app_dir).parent_path().filename().string() : name,
                            load_agent_config(yaml, options));
            app.resumability.is_resumable = cmd.has("--resumable");
            apply_compaction_flags(cmd, app);
            const detail::Services services = detail::open_services(cmd);
            return detail::chat(cmd, std::move(app), services);
        }
        options.allow_mcp_stdio = cmd.has("--allow_mcp_stdio");
        // Each user of the server authorizes MCP servers for themselves, through the web UI.
        options.mcp_oauth_per_user = true;
        std::string host = cmd.value("--host").value_or("127.0.0.1");
        if (host == "0.0.0.0" || host == "::")
            host = "127.0.0.1";
        else if (host.find(':') != std::string::npos)
            host = "[" + host + "]";
        // Bound before the apps load: their MCP OAuth redirect URI names the port the server has (--port 0 too).
        const detail::Listening listening = detail::listen_on(cmd);
        options.mcp_oauth_redirect_uri = cmd.value("--mcp_oauth_redirect_uri")
                                             .value_or("http://" + host + ":" + std::to_string(listening.port) +
                                                       "/dev-ui/");
        std::vector<server::App> apps = load_apps(cmd.positional.empty() ? "." : cmd.positional.front(), options);
        for (server::App& app : apps) {
            app.resumability.is_resumable = cmd.has("--resumable");
            apply_compaction_flags(cmd, app);
        }
        const detail::Services services = detail::open_services(cmd);
        return detail::serve(cmd, std::move(apps), services, listening, program);
    });
}

int main(int argc, char** argv, const ToolRegistry& tools)
{
    AgentConfigOptions config;
    config.tools = tools;
    return main(argc, argv, config);
}

}  // namespace adk::cli
