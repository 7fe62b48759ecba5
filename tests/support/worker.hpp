// What the processes that tests kill and resume (resume_worker.cpp, workflow_worker.cpp) share: a model that
// answers from the request, the lines they print, and their main().
#pragma once

#include <adk/adk.hpp>
#include <adk/services/service_url.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_future.hpp>

#include <cstdio>
#include <functional>
#include <future>
#include <iostream>
#include <optional>
#include <string>

namespace adk::test {

namespace asio = boost::asio;

// Calls its tool when the conversation does not end with that tool's response, answers "<tool> done" after it:
// a new process answers as the dead one would have.
class RuleModel final : public Model {
public:
    RuleModel(std::string tool, json::object args) : tool_(std::move(tool)), args_(std::move(args)) {}
    std::string_view name() const override { return "rule-model"; }
    asio::awaitable<Stream<LlmResponse>> generate(LlmRequest request, bool) override
    {
        bool responded = false;
        if (!request.contents.empty())
            for (const Part& p : request.contents.back().parts)
                responded = responded || (p.function_response && p.function_response->name == tool_);
        LlmResponse answer = responded ? LlmResponse::text(tool_ + " done") : LlmResponse::function_call(tool_, args_);
        auto producer = [answer](Sink<LlmResponse> sink) mutable -> asio::awaitable<void> {
            co_await sink.emit(std::move(answer));
        };
        co_return spawn_stream<LlmResponse>(co_await asio::this_coro::executor, std::move(producer));
    }

private:
    std::string tool_;
    json::object args_;
};

inline void say(const std::string& line)
{
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
}

// Runs one request and reads its stream, printing "committed <event id>" for each event and "question <call id>"
// for each call of `question_function`; returns the last question asked, if any.
inline asio::awaitable<std::optional<std::string>> run_one(Runner& runner, RunRequest request,
                                                           std::string_view question_function)
{
    std::optional<std::string> question;
    auto stream = co_await runner.run(std::move(request));
    while (auto ev = co_await stream.next()) {
        if (ev->partial)
            continue;
        say("committed " + ev->id);
        for (const auto& call : ev->function_calls())
            if (call.name == question_function) {
                question = call.id;
                say("question " + call.id);
            }
    }
    co_return question;
}

// A call of `question_function` in session `id` (app "app", user "u") that has no answer yet.
inline asio::awaitable<std::optional<std::string>> unanswered_question(SessionService& sessions, const std::string& id,
                                                                       std::string_view question_function)
{
    GetSessionRequest get("app", "u", id);
    std::optional<Session> s = co_await sessions.get_session(std::move(get));
    std::optional<std::string> open;
    for (const Event& e : s->events) {
        for (const auto& call : e.function_calls())
            if (call.name == question_function)
                open = call.id;
        for (const auto& response : e.function_responses())
            if (open && response.id == *open)
                open.reset();
    }
    co_return open;
}

// A worker's app: its agent (writing to the ledger), the first message, and how it answers its questions.
struct WorkerApp {
    std::function<std::shared_ptr<Agent>(const std::string& ledger)> agent;
    std::string first_message;
    std::string_view question_function;  // the calls that ask a person
    json::object answer;                 // the answer each question gets
};

inline RunRequest answer_question(const WorkerApp& app, const std::string& session, const std::string& call_id)
{
    Content message("user", {Part::from_function_response(std::string(app.question_function), app.answer, call_id)});
    return RunRequest("u", session, std::move(message));
}

inline asio::awaitable<void> work(const WorkerApp& app, std::shared_ptr<SessionService> sessions, std::string session,
                                  std::string ledger, std::string command, std::string argument, bool approve)
{
    Runner runner({.app_name = "app",
                   .agent = app.agent(ledger),
                   .session_service = sessions,
                   .resumability = {.is_resumable = true}});
    RunRequest request("u", session);
    if (command == "start") {
        CreateSessionRequest create("app", "u", session);
        co_await sessions->create_session(std::move(create));
        request.new_message = Content::user(app.first_message);
    } else if (command == "resume") {
        request.invocation_id = argument;
    } else {
        request = answer_question(app, session, argument);
    }
    std::optional<std::string> question = co_await run_one(runner, std::move(request), app.question_function);
    if (!question)  // asked by the process that died
        question = co_await unanswered_question(*sessions, session, app.question_function);
    while (question && approve) {
        RunRequest approval = answer_question(app, session, *question);
        question = co_await run_one(runner, std::move(approval), app.question_function);
    }
    say("end");
}

// argv: URL SESSION LEDGER start|resume INVOCATION|answer CALL_ID [--approve]
inline int worker_main(const char* name, int argc, char** argv, const WorkerApp& app)
{
    if (argc < 5 || (std::string(argv[4]) != "start" && argc < 6)) {
        std::cerr << "usage: " << name << " URL SESSION LEDGER start|resume INVOCATION|answer CALL_ID [--approve]\n";
        return 2;
    }
    try {
        const std::string command = argv[4];
        const std::string argument = command == "start" ? "" : argv[5];
        const bool approve = std::string(argv[argc - 1]) == "--approve";
        auto sessions = services::open_session_service(argv[1]);
        asio::io_context ioc;
        std::future<void> done = asio::co_spawn(
            ioc, work(app, sessions, argv[2], argv[3], command, argument, approve), asio::use_future);
        ioc.run();
        done.get();
        return 0;
    } catch (const std::exception& e) {
        std::cerr << name << ": " << e.what() << "\n";
        return 1;
    }
}

}  // namespace adk::test
