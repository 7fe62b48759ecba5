// A process that runs a resumable app on a session service picked by URL, for the tests that kill it (SIGKILL)
// at some point of an invocation and resume the invocation in another process.
//
//   adk_resume_worker URL SESSION LEDGER start             a new invocation ("pay 5"); the session is made
//   adk_resume_worker URL SESSION LEDGER resume INVOCATION  resumes the invocation
//   adk_resume_worker URL SESSION LEDGER answer CALL_ID     approves the confirmation question CALL_ID
// With --approve after the command, the process answers each confirmation question itself, at once.
//
// The app: pipeline (SequentialAgent, resumable) of
//   payer     an LlmAgent whose model calls charge(amount), a tool that needs a person's approval, then answers
//   steps     a LoopAgent of 3 rounds over `stepper`, a custom agent that emits two events 5 ms apart
//   notifier  an LlmAgent whose model calls notify(), then answers
// The models answer from the request (a call when the last content is the user's, a text after a response),
// so a new process answers as the dead one would have. Each tool run appends "<tool> <call id>" to LEDGER
// before it returns. Printed, one line each, flushed: "committed <event id>" for every event read from the
// stream (so a parent that kills the process knows what is stored), "question <call id>", and "end".
#include <adk/adk.hpp>
#include <adk/services/service_url.hpp>

#include "support/agents.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/parse.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

// Calls its tool when the conversation ends with the user's turn (or a question's answer), answers in text
// after the tool's response.
class RuleModel final : public adk::Model {
public:
    RuleModel(std::string tool, json::object args) : tool_(std::move(tool)), args_(std::move(args)) {}
    std::string_view name() const override { return "rule-model"; }
    asio::awaitable<adk::Stream<adk::LlmResponse>> generate(adk::LlmRequest request, bool) override
    {
        bool responded = false;
        if (!request.contents.empty())
            for (const adk::Part& p : request.contents.back().parts)
                responded = responded || (p.function_response && p.function_response->name == tool_);
        adk::LlmResponse answer = responded ? adk::LlmResponse::text(tool_ + " done")
                                            : adk::LlmResponse::function_call(tool_, args_);
        auto producer = [answer](adk::Sink<adk::LlmResponse> sink) mutable -> asio::awaitable<void> {
            co_await sink.emit(std::move(answer));
        };
        co_return adk::spawn_stream<adk::LlmResponse>(co_await asio::this_coro::executor, std::move(producer));
    }

private:
    std::string tool_;
    json::object args_;
};

std::shared_ptr<adk::FunctionTool> ledger_tool(std::string name, std::string ledger)
{
    return adk::FunctionTool::create(
        name, "Does " + name + ".", json::parse(R"({"type":"object","properties":{}})"),
        [name, ledger](adk::ToolContext& ctx, json::object) -> asio::awaitable<json::value> {
            std::ofstream(ledger, std::ios::app) << name << " " << ctx.function_call_id() << "\n" << std::flush;
            co_return json::object{{"ok", true}};
        });
}

std::shared_ptr<adk::Agent> app(const std::string& ledger)
{
    auto charge = ledger_tool("charge", ledger);
    charge->set_require_confirmation(true);
    auto payer = adk::LlmAgent::builder("payer")
                     .model(std::make_shared<RuleModel>("charge", json::object{{"amount", 5}}))
                     .tool(charge)
                     .build();
    auto stepper = std::make_shared<adk::test::FnAgent>(
        "stepper", [](adk::InvocationContext& ctx, adk::EventSink& out) -> asio::awaitable<void> {
            asio::steady_timer pause(ctx.executor());
            for (int i = 0; i < 2; ++i) {
                pause.expires_after(std::chrono::milliseconds(5));
                co_await pause.async_wait(asio::use_awaitable);
                adk::Event step = ctx.make_event(adk::Content::model("step"));
                co_await out.emit(std::move(step));
            }
        });
    auto steps = std::make_shared<adk::LoopAgent>("steps", "Three rounds.",
                                                  std::vector<std::shared_ptr<adk::Agent>>{stepper}, 3);
    auto notifier = adk::LlmAgent::builder("notifier")
                        .model(std::make_shared<RuleModel>("notify", json::object{}))
                        .tool(ledger_tool("notify", ledger))
                        .build();
    return std::make_shared<adk::SequentialAgent>("pipeline", "Pays, steps, notifies.",
                                                  std::vector<std::shared_ptr<adk::Agent>>{payer, steps, notifier});
}

void say(const std::string& line)
{
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
}

// Runs one request and reads its stream; returns the question asked, if any.
asio::awaitable<std::optional<std::string>> run_one(adk::Runner& runner, adk::RunRequest request)
{
    std::optional<std::string> question;
    auto stream = co_await runner.run(std::move(request));
    while (auto ev = co_await stream.next()) {
        if (ev->partial)
            continue;
        say("committed " + ev->id);
        for (const auto& call : ev->function_calls())
            if (call.name == adk::request_confirmation_function) {
                question = call.id;
                say("question " + call.id);
            }
    }
    co_return question;
}

// A confirmation question in the session that has no answer yet.
asio::awaitable<std::optional<std::string>> unanswered_question(adk::SessionService& sessions, const std::string& id)
{
    adk::GetSessionRequest get("app", "u", id);
    std::optional<adk::Session> s = co_await sessions.get_session(std::move(get));
    std::optional<std::string> open;
    for (const adk::Event& e : s->events) {
        for (const auto& call : e.function_calls())
            if (call.name == adk::request_confirmation_function)
                open = call.id;
        for (const auto& response : e.function_responses())
            if (open && response.id == *open)
                open.reset();
    }
    co_return open;
}

adk::RunRequest answer(const std::string& session, const std::string& call_id)
{
    adk::Content message("user", {adk::Part::from_function_response(std::string(adk::request_confirmation_function),
                                                                     {{"confirmed", true}}, call_id)});
    return adk::RunRequest("u", session, std::move(message));
}

asio::awaitable<void> work(std::shared_ptr<adk::SessionService> sessions, std::string session, std::string ledger,
                           std::string command, std::string argument, bool approve)
{
    adk::Runner runner({.app_name = "app",
                        .agent = app(ledger),
                        .session_service = sessions,
                        .resumability = {.is_resumable = true}});
    adk::RunRequest request("u", session);
    if (command == "start") {
        adk::CreateSessionRequest create("app", "u", session);
        co_await sessions->create_session(std::move(create));
        request.new_message = adk::Content::user("pay 5");
    } else if (command == "resume") {
        request.invocation_id = argument;
    } else {
        request = answer(session, argument);
    }
    std::optional<std::string> question = co_await run_one(runner, std::move(request));
    if (!question)
        question = co_await unanswered_question(*sessions, session);  // asked by the process that died
    while (question && approve) {
        adk::RunRequest approval = answer(session, *question);
        question = co_await run_one(runner, std::move(approval));
    }
    say("end");
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc < 5 || (std::string(argv[4]) != "start" && argc < 6)) {
        std::cerr << "usage: adk_resume_worker URL SESSION LEDGER start|resume INVOCATION|answer CALL_ID [--approve]\n";
        return 2;
    }
    try {
        const std::string command = argv[4];
        const std::string argument = command == "start" ? "" : argv[5];
        const bool approve = std::string(argv[argc - 1]) == "--approve";
        auto sessions = adk::services::open_session_service(argv[1]);
        asio::io_context ioc;
        std::future<void> done =
            asio::co_spawn(ioc, work(sessions, argv[2], argv[3], command, argument, approve), asio::use_future);
        ioc.run();
        done.get();
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "adk_resume_worker: " << e.what() << "\n";
        return 1;
    }
}
