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
#include "support/agents.hpp"
#include "support/worker.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/json/parse.hpp>

#include <fstream>
#include <string>

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

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
                     .model(std::make_shared<adk::test::RuleModel>("charge", json::object{{"amount", 5}}))
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
                        .model(std::make_shared<adk::test::RuleModel>("notify", json::object{}))
                        .tool(ledger_tool("notify", ledger))
                        .build();
    return std::make_shared<adk::SequentialAgent>("pipeline", "Pays, steps, notifies.",
                                                  std::vector<std::shared_ptr<adk::Agent>>{payer, steps, notifier});
}

}  // namespace

int main(int argc, char** argv)
{
    return adk::test::worker_main("adk_resume_worker", argc, argv,
                                  adk::test::WorkerApp{app, "pay 5", adk::request_confirmation_function, json::object{{"confirmed", true}}});
}
