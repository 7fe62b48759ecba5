// `adk run`: a chat in the terminal. Standard input is read a line at a time on the main thread; each line
// is one turn, run on the io_context until its stream ends. While a turn runs, SIGINT cancels it (the
// session keeps what was committed); at the prompt SIGINT has its default effect and ends the program.
// When a turn ends with the agent asking (a tool call to approve, a credential), the person is asked at the
// prompt and the answer goes back as the next turn. A long-running tool's answer can come later, from another
// run of the program: `--session S --answer CALL_ID --response JSON`.
#include "commands.hpp"

#include <adk/core/error.hpp>
#include <adk/core/log.hpp>
#include <adk/core/offload.hpp>
#include <adk/runner/runner.hpp>
#include <adk/tools/tool_confirmation.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <csignal>
#include <chrono>
#include <iostream>
#include <optional>
#include <type_traits>
#include <variant>

namespace adk::cli::detail {

namespace {

namespace json = boost::json;

std::string shortened(std::string text, std::size_t max = 400)
{
    if (text.size() > max) {
        text.resize(max);
        text += "...";
    }
    return text;
}

// Prints a turn's events as they come: streamed text as it arrives, the final text once, tool calls and
// their results on lines of their own.
class Printer {
public:
    explicit Printer(std::ostream& out) : out_(out) {}

    void print(const Event& ev)
    {
        if (ev.partial) {
            const std::string text = ev.text();
            if (text.empty())
                return;
            if (streaming_ != ev.author) {
                end_line();
                out_ << "[" << ev.author << "]: ";
                streaming_ = ev.author;
            }
            out_ << text << std::flush;
            return;
        }
        const bool streamed = streaming_ == ev.author;
        end_line();
        if (const std::string text = ev.text(); !text.empty() && !streamed)
            out_ << "[" << ev.author << "]: " << text << "\n";
        for (const auto& call : ev.function_calls())
            out_ << "[" << ev.author << "] calls " << call.name << "(" << shortened(json::serialize(call.args)) << ")\n";
        for (const auto& response : ev.function_responses())
            out_ << "[" << ev.author << "] " << response.name << " returned "
                 << shortened(json::serialize(response.response)) << "\n";
        if (ev.actions.transfer_to_agent)
            out_ << "[" << ev.author << "] transfers to " << *ev.actions.transfer_to_agent << "\n";
        if (ev.error_message || ev.error_code)
            out_ << "[" << ev.author << "] error " << ev.error_code.value_or("") << ": "
                 << ev.error_message.value_or("") << "\n";
        out_ << std::flush;
    }

    void end_line()
    {
        if (!streaming_.empty())
            out_ << "\n";
        streaming_.clear();
    }

private:
    std::ostream& out_;
    std::string streaming_;  // the author whose streamed text the current line holds
};

// What a turn left waiting for the person: the agent's questions, and long-running calls with no answer.
class Waiting {
public:
    std::vector<FunctionCall> questions;  // adk_request_confirmation and adk_request_credential calls
    std::vector<FunctionCall> long_running;
};

void note_waiting(const Event& ev, Waiting& waiting)
{
    if (ev.partial)
        return;
    for (const auto& call : ev.function_calls()) {
        const bool pending = std::find(ev.long_running_tool_ids.begin(), ev.long_running_tool_ids.end(), call.id) !=
                             ev.long_running_tool_ids.end();
        if (is_question(call.name))
            waiting.questions.push_back(call);
        else if (pending)
            waiting.long_running.push_back(call);
    }
}

asio::awaitable<Waiting> turn(Runner& runner, const std::string& user, const std::string& session, Content message)
{
    auto executor = co_await asio::this_coro::executor;
    asio::signal_set interrupt(executor, SIGINT);
    bool interrupted = false;
    std::optional<Canceller> cancel;
    interrupt.async_wait([&](boost::system::error_code ec, int) {
        if (ec)
            return;
        interrupted = true;
        if (cancel)
            cancel->cancel("cancelled by Ctrl-C");
    });
    RunRequest request(user, session, std::move(message));
    request.run_config.streaming_mode = StreamingMode::sse;
    EventStream events = co_await runner.run(std::move(request));
    cancel = events.canceller();
    if (interrupted)
        cancel->cancel("cancelled by Ctrl-C");
    Printer printer(std::cout);
    Waiting waiting;
    try {
        while (auto ev = co_await events.next()) {
            printer.print(*ev);
            note_waiting(*ev, waiting);
        }
    } catch (const Error& e) {
        printer.end_line();
        if (!interrupted)
            throw;
    }
    interrupt.cancel();
    if (interrupted) {
        std::cout << "[cancelled: what the agent had finished is kept in the session]\n" << std::flush;
        co_return Waiting();
    }
    co_return waiting;
}

std::optional<std::string> read_line(const std::string& prompt)
{
    std::cout << prompt << std::flush;
    std::string line;
    if (!std::getline(std::cin, line))
        return std::nullopt;
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos)
        return std::string();
    return line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
}

// A line read on the terminal's own thread: the agent's io_context goes on meanwhile (an MCP call waits for it).
asio::awaitable<std::optional<std::string>> ask_line(std::string prompt)
{
    static asio::thread_pool terminal(1);
    auto read = [prompt = std::move(prompt)] { return read_line(prompt); };
    co_return co_await offload(terminal.get_executor(), std::move(read));
}

// One field of an elicitation's schema, asked until the answer fits its type: nullopt to leave it out.
asio::awaitable<std::optional<json::value>> ask_field(const std::string& name, const json::object& property)
{
    const std::string type = property.contains("type") && property.at("type").is_string()
                                 ? std::string(property.at("type").get_string())
                                 : "string";
    std::string label = name;
    for (const char* key : {"title", "description"})
        if (property.contains(key) && property.at(key).is_string())
            label += " (" + std::string(property.at(key).get_string()) + ")";
    if (property.contains("enum"))
        label += " one of " + json::serialize(property.at("enum"));
    if (property.contains("default"))
        label += " [" + json::serialize(property.at("default")) + "]";
    for (;;) {
        std::optional<std::string> line = co_await ask_line("[mcp]   " + label + ": ");
        if (!line)
            throw Error(errc::cancelled, "input ended");
        if (line->empty())
            co_return std::nullopt;
        json::value value;
        if (type == "boolean") {
            if (*line == "y" || *line == "yes" || *line == "true")
                value = true;
            else if (*line == "n" || *line == "no" || *line == "false")
                value = false;
        } else if (type == "integer" || type == "number") {
            boost::system::error_code ec;
            json::value number = json::parse(*line, ec);
            if (!ec && (type == "number" ? number.is_number() : (number.is_int64() || number.is_uint64())))
                value = number;
        } else {
            value = json::string(*line);
        }
        const json::value* choices = property.if_contains("enum");
        const bool allowed = !choices || !choices->is_array() ||
                             std::find(choices->get_array().begin(), choices->get_array().end(), value) !=
                                 choices->get_array().end();
        if (!value.is_null() && allowed)
            co_return value;
        std::cout << "[mcp]   that is not a " << type << (allowed ? "" : " of the choices") << "\n";
    }
}

asio::awaitable<json::value> elicit_at_terminal(mcp::jsonrpc::Request request)
{
    const json::object params = request.params && request.params->is_object() ? request.params->get_object()
                                                                               : json::object();
    const std::string message = params.contains("message") && params.at("message").is_string()
                                    ? std::string(params.at("message").get_string())
                                    : "a tool asks for input";
    std::cout << "[mcp] " << message << "\n";
    std::optional<std::string> go;
    while (!go || (*go != "y" && *go != "n" && *go != "c")) {
        go = co_await ask_line("[mcp] answer? [y/n/c] (n declines, c cancels): ");
        if (!go)
            co_return json::object{{"action", "cancel"}};
    }
    if (*go != "y")
        co_return json::object{{"action", *go == "n" ? "decline" : "cancel"}};
    json::object content;
    const json::value* schema = params.if_contains("requestedSchema");
    const json::value* properties = schema && schema->is_object() ? schema->get_object().if_contains("properties") : nullptr;
    try {
        if (properties && properties->is_object())
            for (const auto& [name, property] : properties->get_object())
                if (property.is_object())
                    if (std::optional<json::value> v = co_await ask_field(name, property.get_object()))
                        content[name] = std::move(*v);
    } catch (const Error&) {
        co_return json::object{{"action", "cancel"}};
    }
    co_return json::object{{"action", "accept"}, {"content", std::move(content)}};
}

asio::awaitable<std::string> authorize_at_terminal(std::string url)
{
    std::cout << "[authorize] an MCP server asks for authorization. Open this address in a browser:\n  " << url
              << "\n";
    std::optional<std::string> back =
        co_await ask_line("[authorize] then paste the address the browser was sent back to: ");
    if (!back || back->empty())
        throw Error(errc::cancelled, "no authorization was given");
    co_return *back;
}

// Asks the person each question of the turn; the answers as one message, or nullopt when input ended.
std::optional<Content> ask_person(const Waiting& waiting, const std::string& session)
{
    Content answers("user", {});
    for (const FunctionCall& q : waiting.questions) {
        json::object response;
        if (q.name == request_confirmation_function) {
            const json::value& original = q.args.contains("originalFunctionCall") ? q.args.at("originalFunctionCall")
                                                                                  : json::value();
            std::string what = original.is_object() ? json::serialize(original.at("name")) + " with " +
                                                          shortened(json::serialize(original.as_object().contains("args")
                                                                                        ? original.at("args")
                                                                                        : json::value()))
                                                    : std::string("a tool call");
            std::optional<std::string> yes;
            while (true) {
                yes = read_line("[approve] " + what + "? [y/n]: ");
                if (!yes || *yes == "y" || *yes == "yes" || *yes == "n" || *yes == "no")
                    break;
            }
            if (!yes)
                return std::nullopt;
            response = json::object{{"confirmed", *yes == "y" || *yes == "yes"}};
        } else {
            std::cout << "[credential] " << (q.args.contains("message") && q.args.at("message").is_string()
                                                 ? std::string(q.args.at("message").get_string())
                                                 : std::string("a tool needs a credential"))
                      << "\n";
            std::optional<std::string> token = read_line("[credential] a bearer token (it is not stored in the session): ");
            if (!token)
                return std::nullopt;
            json::object auth_config = q.args.contains("authConfig") && q.args.at("authConfig").is_object()
                                           ? q.args.at("authConfig").get_object()
                                           : json::object();
            auth_config["rawAuthCredential"] = json::object{
                {"authType", "http"}, {"http", json::object{{"scheme", "bearer"}, {"credentials", {{"token", *token}}}}}};
            response = std::move(auth_config);
        }
        answers.parts.push_back(Part::from_function_response(q.name, std::move(response), q.id));
    }
    for (const FunctionCall& c : waiting.long_running)
        std::cout << "[waiting] " << c.name << " answers later; answer it with:\n  --session " << session
                  << " --answer " << c.id << " --response '{...}'\n";
    if (answers.parts.empty())
        return std::nullopt;
    return answers;
}

// An answer given on the command line: the pending call's name is read from the session.
asio::awaitable<Content> answer_from_command_line(SessionService& sessions, const std::string& app,
                                                  const std::string& user, const std::string& session,
                                                  const std::string& call_id, const std::string& response_text)
{
    boost::system::error_code ec;
    json::value response = json::parse(response_text, ec);
    if (ec || !response.is_object())
        throw Error(errc::invalid_argument, "--response must be a JSON object, e.g. '{\"status\": \"approved\"}'");
    GetSessionRequest get(app, user, session);
    std::optional<Session> s = co_await sessions.get_session(std::move(get));
    std::string name;
    if (s)
        for (const Event& e : s->events)
            for (const FunctionCall& c : e.function_calls())
                if (c.id == call_id)
                    name = c.name;
    if (name.empty())
        throw Error(errc::invalid_argument, "session " + session + " has no function call '" + call_id +
                                                "': give the id that the [waiting] line printed");
    co_return Content("user", {Part::from_function_response(name, std::move(response.as_object()), call_id)});
}

// The session to talk in: --session ID (made when missing), --resume (the user's latest), or a new one.
asio::awaitable<std::string> open_session(const Command& cmd, SessionService& sessions, const std::string& app,
                                          const std::string& user)
{
    std::optional<Session> session;
    if (auto id = cmd.value("--session")) {
        GetSessionRequest get(app, user, *id);
        session = co_await sessions.get_session(std::move(get));
        if (!session) {
            CreateSessionRequest create(app, user, *id);
            session = co_await sessions.create_session(std::move(create));
        }
    } else if (cmd.has("--resume")) {
        ListSessionsRequest list(app, user);
        std::vector<Session> all = co_await sessions.list_sessions(std::move(list));
        auto latest = std::max_element(all.begin(), all.end(), [](const Session& a, const Session& b) {
            return a.last_update_time < b.last_update_time;
        });
        if (latest != all.end()) {
            GetSessionRequest get(app, user, latest->id);
            session = co_await sessions.get_session(std::move(get));
        }
        if (!session)
            std::cout << "(no session of " << user << " to resume: a new one)\n";
    }
    if (!session) {
        CreateSessionRequest create(app, user);
        session = co_await sessions.create_session(std::move(create));
    }
    if (!session->events.empty()) {
        std::cout << "(continuing; the conversation so far:)\n";
        Printer printer(std::cout);
        for (const auto& ev : session->events)
            if (!ev.text().empty() || !ev.function_calls().empty())
                printer.print(ev);
    }
    co_return session->id;
}

// Runs `work` on the io_context until it ends, and rethrows what it threw. What else runs there (an MCP server's
// connection, which never runs out of work) is left for the next call.
template <class Awaitable>
auto run_until_done(asio::io_context& ioc, Awaitable work)
{
    using Result = typename Awaitable::value_type;
    std::exception_ptr failure;
    std::optional<std::conditional_t<std::is_void_v<Result>, std::monostate, Result>> result;
    bool done = false;
    ioc.restart();
    asio::co_spawn(ioc, std::move(work), [&](std::exception_ptr e, auto... value) {
        failure = e;
        if constexpr (sizeof...(value) == 1)
            result.emplace(std::move(value)...);
        done = true;
        ioc.stop();
    });
    while (!done) {
        ioc.restart();
        ioc.run();
    }
    if (failure)
        std::rethrow_exception(failure);
    if constexpr (!std::is_void_v<Result>)
        return std::move(*result);
}

}  // namespace

mcp::RequestHandler terminal_elicitation()
{
    return [](const mcp::jsonrpc::Request& request) { return elicit_at_terminal(request); };
}

mcp::AuthorizeHandler terminal_authorization()
{
    return [](std::string url) { return authorize_at_terminal(std::move(url)); };
}

int chat(const Command& cmd, server::App app, const Services& services)
{
    asio::io_context ioc(1);
    RunnerOptions options = app.runner_options();
    options.session_service = services.sessions;
    options.artifact_service = services.artifacts;
    options.single_threaded = true;
    Runner runner(std::move(options));
    // On every way out (the person quits, an error, an exception), the agents' toolsets are closed: no server
    // process they started outlives the command.
    class CloseToolsets {
    public:
        CloseToolsets(asio::io_context& ioc, Runner& runner) : ioc_(ioc), runner_(runner) {}
        CloseToolsets(const CloseToolsets&) = delete;
        CloseToolsets& operator=(const CloseToolsets&) = delete;
        ~CloseToolsets()
        {
            try {
                run_until_done(ioc_, runner_.close());
            } catch (const std::exception& e) {
                log(LogLevel::warning, std::string("closing the toolsets: ") + e.what());
            }
            // run_until_done stops the io_context as soon as its result comes, which may be before a session
            // service's worker thread let go of the work it held on it (adk::offload): the io_context is not
            // destroyed until that work is let go (run_for returns once no work is left).
            ioc_.restart();
            ioc_.run_for(std::chrono::seconds(2));
        }

    private:
        asio::io_context& ioc_;
        Runner& runner_;
    } close_toolsets(ioc, runner);
    const std::string user = cmd.value("--user").value_or("user");
    const std::optional<std::string> answer_id = cmd.value("--answer");  // with --session and --response
    const std::string session = run_until_done(ioc, open_session(cmd, *services.sessions, app.name, user));
    // One turn, then the questions it asked, until none is left or the person stops answering.
    auto converse = [&](Content message) {
        while (true) {
            Waiting waiting = run_until_done(ioc, turn(runner, user, session, std::move(message)));
            std::optional<Content> answers = ask_person(waiting, session);
            if (!answers)
                return;
            message = std::move(*answers);
        }
    };
    if (answer_id) {
        try {
            converse(run_until_done(ioc, answer_from_command_line(*services.sessions, app.name, user, session,
                                                                   *answer_id, *cmd.value("--response"))));
        } catch (const Error& e) {
            std::cout << "[error] " << e.message() << "\n" << std::flush;
            return 1;
        }
    }
    std::cout << "Chatting with " << app.name << " in session " << session << " (continue it later with --session "
              << session << "). Ctrl-C cancels an answer; an empty input's end (Ctrl-D) or 'exit' quits.\n";
    while (true) {
        std::optional<std::string> line = read_line("[" + user + "]: ");
        if (!line)
            break;
        if (line->empty())
            continue;
        if (*line == "exit" || *line == "quit")
            break;
        try {
            converse(Content::user(std::move(*line)));
        } catch (const Error& e) {
            std::cout << "[error] " << e.message() << "\n" << std::flush;
        }
    }
    std::cout << "\n";
    return 0;
}

}  // namespace adk::cli::detail
