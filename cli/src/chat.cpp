// `adk run`: a chat in the terminal. Standard input is read a line at a time on the main thread; each line
// is one turn, run on the io_context until its stream ends. While a turn runs, SIGINT cancels it (the
// session keeps what was committed); at the prompt SIGINT has its default effect and ends the program.
#include "commands.hpp"

#include <adk/core/error.hpp>
#include <adk/runner/runner.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <csignal>
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

asio::awaitable<void> turn(Runner& runner, const std::string& user, const std::string& session, std::string text)
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
    RunConfig config;
    config.streaming_mode = StreamingMode::sse;
    Content message = Content::user(std::move(text));
    EventStream events = co_await runner.run(user, session, std::move(message), config);
    cancel = events.canceller();
    if (interrupted)
        cancel->cancel("cancelled by Ctrl-C");
    Printer printer(std::cout);
    try {
        while (auto ev = co_await events.next())
            printer.print(*ev);
    } catch (const Error& e) {
        printer.end_line();
        if (!interrupted)
            throw;
    }
    interrupt.cancel();
    if (interrupted)
        std::cout << "[cancelled: what the agent had finished is kept in the session]\n" << std::flush;
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

// Runs `work` on the io_context until it ends, and rethrows what it threw.
template <class Awaitable>
auto run_until_done(asio::io_context& ioc, Awaitable work)
{
    using Result = typename Awaitable::value_type;
    std::exception_ptr failure;
    std::optional<std::conditional_t<std::is_void_v<Result>, std::monostate, Result>> result;
    ioc.restart();
    asio::co_spawn(ioc, std::move(work), [&](std::exception_ptr e, auto... value) {
        failure = e;
        if constexpr (sizeof...(value) == 1)
            result.emplace(std::move(value)...);
    });
    ioc.run();
    if (failure)
        std::rethrow_exception(failure);
    if constexpr (!std::is_void_v<Result>)
        return std::move(*result);
}

}  // namespace

int chat(const Command& cmd, server::App app, const Services& services)
{
    asio::io_context ioc(1);
    RunnerOptions options;
    options.app_name = app.name;
    options.agent = app.root_agent;
    options.session_service = services.sessions;
    options.artifact_service = services.artifacts;
    options.single_threaded = true;
    Runner runner(std::move(options));
    const std::string user = cmd.value("--user").value_or("user");
    const std::string session = run_until_done(ioc, open_session(cmd, *services.sessions, app.name, user));
    std::cout << "Chatting with " << app.name << " in session " << session << " (continue it later with --session "
              << session << "). Ctrl-C cancels an answer; an empty input's end (Ctrl-D) or 'exit' quits.\n";
    std::string line;
    while (true) {
        std::cout << "[" << user << "]: " << std::flush;
        if (!std::getline(std::cin, line))
            break;
        const auto first = line.find_first_not_of(" \t\r");
        if (first == std::string::npos)
            continue;
        line = line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
        if (line == "exit" || line == "quit")
            break;
        try {
            run_until_done(ioc, turn(runner, user, session, line));
        } catch (const Error& e) {
            std::cout << "[error] " << e.message() << "\n" << std::flush;
        }
    }
    std::cout << "\n";
    return 0;
}

}  // namespace adk::cli::detail
