#include "command_line.hpp"

#include <adk/core/error.hpp>

#include <algorithm>
#include <array>
#include <charconv>

namespace adk::cli::detail {

namespace {

struct Flag {
    std::string_view name;
    bool takes_value;
    std::string_view help;
};

// The flags of the server commands (web, api_server), ADK's names first.
constexpr std::array server_flags{
    Flag{"--host", true, "the address to listen on (default 127.0.0.1; off loopback the API needs a bearer\n"
                         "                          token in ADK_API_TOKEN, or --allow_unauthenticated)"},
    Flag{"--port", true, "the port (default 8000; 0 picks a free one)"},
    Flag{"--session_service_uri", true, "where sessions live: sqlite:///PATH.db (default sqlite:///.adk/sessions.db),\n"
                                        "                          memory://, postgresql://user@host/db"},
    Flag{"--artifact_service_uri", true, "where artifacts live: file:///FOLDER (default file:///.adk/artifacts), memory://"},
    Flag{"--allow_origins", true, "an origin whose pages may call the API (repeat it, or separate by commas; * for any)"},
    Flag{"--allow_hosts", true, "a name the Host header may give besides the server's own addresses and\n"
                                "                          localhost (repeat it, or separate by commas; * for any)"},
    Flag{"--log_level", true, "debug, info, warning (default), error or critical"},
    Flag{"--log_format", true, "text (default) or json: one JSON object per line, with trace and span ids\n"
                               "                          (or ADK_LOG_FORMAT=json)"},
    Flag{"--run_grace", true, "seconds a run goes on after its client left, for it to reconnect (default 30; 0: cancel)"},
    Flag{"--allow_unauthenticated", false, "serve off loopback without a bearer token"},
    Flag{"--a2a", false, "serve each app over A2A 1.0 too, at /a2a/APP (its card at\n"
                         "                          /a2a/APP/.well-known/agent-card.json)"},
    Flag{"--a2a_push_allowed_urls", true, "a URL prefix A2A clients' webhooks may be under (push notifications;\n"
                                          "                          repeat it, or separate by commas; none: off)"},
};
constexpr Flag mcp_stdio_flag{"--allow_mcp_stdio", false, "let the apps' YAML start MCP servers as processes\n"
                                                          "                          (McpToolset over stdio)"};
constexpr Flag mcp_redirect_flag{"--mcp_oauth_redirect_uri", true,
                                 "where MCP servers' OAuth sends a person back (default: the web UI's page,\n"
                                 "                          http://HOST:PORT/dev-ui/)"};
constexpr Flag ui_dir_flag{"--ui_dir", true, "the ADK web UI's files (default: what tools/fetch_web_ui.sh fetched,\n"
                                             "                          or ADK_WEB_UI_DIR)"};
constexpr std::array run_flags{
    Flag{"--session", true, "continue this session (made when it does not exist)"},
    Flag{"--resume", false, "continue the user's most recent session of the app"},
    Flag{"--user", true, "the user id (default user)"},
    Flag{"--answer", true, "answer the agent's pending call with this id (a long-running tool's, say) first;\n"
                           "                          needs --session and --response"},
    Flag{"--response", true, "the answer's JSON object, e.g. '{\"status\": \"approved\"}'"},
    Flag{"--session_service_uri", true, "as for web"},
    Flag{"--artifact_service_uri", true, "as for web"},
    Flag{"--log_level", true, "as for web"},
    Flag{"--log_format", true, "as for web"},
};
// Event compaction (adk/compaction/compaction.hpp), for every app the command serves or runs.
constexpr std::array compaction_flags{
    Flag{"--compaction_interval", true, "summarize the older events every N invocations of a session (ADK's\n"
                                        "                          events_compaction_config; the root agent's model summarizes)"},
    Flag{"--compaction_overlap", true, "invocations summarized again with the new ones, for context (default 1)"},
    Flag{"--compaction_token_threshold", true, "summarize once a prompt reaches N tokens"},
    Flag{"--compaction_retention", true, "events a token-threshold compaction leaves as they are (default 4)"},
};
constexpr Flag model_flag{"--model", true, "use this model for every LlmAgent instead of the YAML's `model:`"};
constexpr Flag resumable_flag{"--resumable", false, "make the apps resumable: a paused or interrupted invocation\n"
                                                    "                          continues where it stopped"};

std::vector<Flag> flags_of(AppSource source, std::string_view command)
{
    std::vector<Flag> out;
    if (command == "run")
        out.assign(run_flags.begin(), run_flags.end());
    else
        out.assign(server_flags.begin(), server_flags.end());
    if (command == "web")
        out.push_back(ui_dir_flag);
    out.insert(out.end(), compaction_flags.begin(), compaction_flags.end());
    if (source == AppSource::yaml) {
        out.push_back(model_flag);
        if (command != "run")
            out.push_back(mcp_redirect_flag);
        out.push_back(resumable_flag);
        if (command != "run")
            out.push_back(mcp_stdio_flag);
    }
    return out;
}

std::string_view argument_of(AppSource source, std::string_view command)
{
    if (source == AppSource::code)
        return command == "run" ? "APP" : "";
    return command == "run" ? "AGENTS_DIR/APP" : "[AGENTS_DIR]";
}

std::string_view summary_of(std::string_view command)
{
    if (command == "run")
        return "chat with an app in the terminal: answers stream as they come, tool calls show, Ctrl-C\n"
               "  cancels the current answer (at the prompt it quits; so does an empty input's end)";
    if (command == "web")
        return "serve ADK's HTTP API and the ADK web UI (http://HOST:PORT/dev-ui/)";
    return "serve ADK's HTTP API (/list-apps, sessions, /run, /run_sse, artifacts, ...)";
}

}  // namespace

std::optional<std::string> Command::value(std::string_view flag) const
{
    auto it = flags.find(flag);
    if (it == flags.end() || it->second.empty())
        return std::nullopt;
    return it->second.back();
}

std::vector<std::string> Command::list(std::string_view flag) const
{
    std::vector<std::string> out;
    auto it = flags.find(flag);
    if (it == flags.end())
        return out;
    for (const auto& v : it->second) {
        std::size_t start = 0;
        while (start <= v.size()) {
            const auto comma = std::min(v.find(',', start), v.size());
            if (comma > start)
                out.push_back(v.substr(start, comma - start));
            start = comma + 1;
        }
    }
    return out;
}

long long Command::number(std::string_view flag, long long fallback, long long max) const
{
    auto text = value(flag);
    if (!text)
        return fallback;
    long long v = -1;
    auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
    if (ec != std::errc() || end != text->data() + text->size() || v < 0 || v > max)
        throw Error(errc::invalid_argument, std::string(flag) + " takes a whole number from 0 to " +
                                                std::to_string(max) + ", not '" + text->substr(0, 40) + "'");
    return v;
}

std::string usage(AppSource source, std::string_view program, std::string_view command)
{
    const std::string prog(program);
    if (command.empty()) {
        std::string text = "usage: " + prog + " COMMAND [FLAGS]" +
                           (source == AppSource::yaml ? " PATH" : "") + "\n\ncommands:\n";
        for (std::string_view c : {"run", "web", "api_server"})
            text += "  " + std::string(c) + " " + std::string(argument_of(source, c)) + "\n  " +
                    std::string(summary_of(c)) + "\n";
        text += "\n" + prog + " COMMAND --help lists a command's flags.\n";
        if (source == AppSource::yaml)
            text += "AGENTS_DIR holds the apps: each a folder with a root_agent.yaml (ADK's agent config).\n";
        return text;
    }
    std::string text = "usage: " + prog + " " + std::string(command) + " [FLAGS] " +
                       std::string(argument_of(source, command)) + "\n  " + std::string(summary_of(command)) +
                       "\n\nflags:\n";
    for (const Flag& f : flags_of(source, command)) {
        std::string head = "  " + std::string(f.name) + (f.takes_value ? " V" : "");
        head.resize(std::max<std::size_t>(head.size() + 1, 26), ' ');
        text += head + std::string(f.help) + "\n";
    }
    text += "  --help                  this text\n";
    return text;
}

Command parse_command_line(const std::vector<std::string>& args, AppSource source, std::string_view program)
{
    Command cmd;
    std::size_t i = 0;
    if (args.empty())
        throw UsageError("give a command", usage(source, program));
    if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
        cmd.help = true;
        if (args.size() > 1)
            cmd.name = args[1];
        if (!cmd.name.empty() && cmd.name != "run" && cmd.name != "web" && cmd.name != "api_server")
            throw UsageError("unknown command '" + cmd.name + "'", usage(source, program));
        return cmd;
    }
    cmd.name = args[i++];
    if (cmd.name != "run" && cmd.name != "web" && cmd.name != "api_server")
        throw UsageError("unknown command '" + cmd.name.substr(0, 100) + "'", usage(source, program));
    const std::vector<Flag> known = flags_of(source, cmd.name);
    const std::string command_usage = usage(source, program, cmd.name);
    for (; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (arg == "--help" || arg == "-h") {
            cmd.help = true;
            continue;
        }
        if (!arg.starts_with("--")) {
            if (!cmd.positional.empty() || argument_of(source, cmd.name).empty())
                throw UsageError("unexpected argument '" + arg.substr(0, 200) + "'", command_usage);
            cmd.positional.push_back(arg);
            continue;
        }
        const auto eq = arg.find('=');
        const std::string name = arg.substr(0, eq);
        auto flag = std::find_if(known.begin(), known.end(), [&](const Flag& f) { return f.name == name; });
        if (flag == known.end())
            throw UsageError("unknown flag '" + name.substr(0, 100) + "' for " + cmd.name, command_usage);
        std::string value;
        if (flag->takes_value) {
            if (eq != std::string::npos)
                value = arg.substr(eq + 1);
            else if (i + 1 < args.size())
                value = args[++i];
            else
                throw UsageError(name + " needs a value", command_usage);
        } else if (eq != std::string::npos) {
            throw UsageError(name + " takes no value", command_usage);
        }
        cmd.flags[name].push_back(std::move(value));
    }
    if (cmd.name == "run" && cmd.positional.empty() && !cmd.help && source == AppSource::yaml)
        throw UsageError("name the app: " + std::string(program) + " run AGENTS_DIR/APP", command_usage);
    if (cmd.has("--answer") != cmd.has("--response") || (cmd.has("--answer") && !cmd.has("--session")))
        throw UsageError("--answer needs --session (the session of the call) and --response (the answer's JSON), "
                         "and --response needs --answer", command_usage);
    return cmd;
}

}  // namespace adk::cli::detail
