// A process that runs a resumable graph workflow on a session service picked by URL, for the tests that kill it
// (SIGKILL) at some point of an invocation and resume the invocation in another process.
//
//   adk_workflow_worker URL SESSION LEDGER start             a new invocation ("order 5"); the session is made
//   adk_workflow_worker URL SESSION LEDGER resume INVOCATION  resumes the invocation
//   adk_workflow_worker URL SESSION LEDGER answer CALL_ID     answers the workflow's question CALL_ID with true
// With --approve after the command, the process answers each question itself, at once.
//
// The workflow "flow":
//   START -> prepare -> {payer, stock} -> joined -> approve -> ship -> count -(again)-> count ... -(done)-> done
//         -> listing -> item -> tail
//   prepare, stock, ship, count, done, listing  function nodes; stock waits 5 ms first; count runs three times
//   payer    an LlmAgent whose model calls charge(amount), then answers "charge done"
//   joined   a JoinNode
//   approve  asks a person (adk_request_input); the answer is its output
//   item     a ParallelWorker (2 at once) of the function node "item" over listing's [1, 2, 3]: x -> 10 x
//   tail     a workflow with an entry: it runs the function node "step" twice (run_node), step(x) = {"seen": x}
// Each function node and the tool append "<node path or tool> <id>" to LEDGER when they run, before they return.
// Printed, one line each, flushed: "committed <event id>" for every event read from the stream, "question <call
// id>", and "end".
#include <adk/workflow/workflow.hpp>

#include "support/worker.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/json/parse.hpp>

#include <fstream>
#include <string>

namespace asio = boost::asio;
namespace json = boost::json;
namespace wf = adk::workflow;

namespace {

void write_ledger(const std::string& ledger, const std::string& what, const std::string& id)
{
    std::ofstream(ledger, std::ios::app) << what << " " << id << "\n" << std::flush;
}

// A function node that writes its path to the ledger and answers with fn(input, ctx).
std::shared_ptr<wf::FunctionNode> logged(std::string name, std::string ledger,
                                         std::function<json::value(const json::value&, wf::NodeContext&)> fn,
                                         bool slow = false)
{
    return wf::function_node(std::move(name), [ledger, fn, slow](wf::NodeContext& ctx, json::value in) -> asio::awaitable<json::value> {
        if (slow) {
            asio::steady_timer pause(co_await asio::this_coro::executor, std::chrono::milliseconds(5));
            co_await pause.async_wait(asio::use_awaitable);
        }
        json::value out = fn(in, ctx);
        write_ledger(ledger, "node", ctx.node_path());
        co_return out;
    });
}

std::shared_ptr<adk::Agent> app(const std::string& ledger)
{
    auto charge = adk::FunctionTool::create(
        "charge", "Charges.", json::parse(R"({"type":"object","properties":{"amount":{"type":"integer"}}})"),
        [ledger](adk::ToolContext& ctx, json::object) -> asio::awaitable<json::value> {
            write_ledger(ledger, "charge", ctx.function_call_id());
            co_return json::object{{"ok", true}};
        });
    auto payer = adk::LlmAgent::builder("payer")
                     .model(std::make_shared<adk::test::RuleModel>("charge", json::object{{"amount", 5}}))
                     .tool(charge)
                     .build();
    auto prepare = logged("prepare", ledger, [](const json::value& in, wf::NodeContext&) { return in; });
    auto stock = logged("stock", ledger, [](const json::value&, wf::NodeContext&) { return json::value("in stock"); },
                        /*slow=*/true);
    auto joined = wf::join_node("joined");
    auto approve = wf::function_node("approve", [](wf::NodeContext& ctx, json::value) -> asio::awaitable<json::value> {
        wf::RequestInput question;
        question.message = "Ship the order?";
        question.response_schema = json::parse(R"({"type":"boolean"})");
        co_return co_await ctx.request_input(std::move(question));
    });
    auto ship = logged("ship", ledger, [](const json::value& in, wf::NodeContext&) {
        return json::value(in.is_bool() && in.get_bool() ? "shipped" : "held");
    });
    auto count = logged("count", ledger, [](const json::value&, wf::NodeContext& ctx) {
        std::optional<json::value> n = ctx.state("count");
        const std::int64_t next = n ? n->as_int64() + 1 : 1;
        ctx.set_state("count", next);
        ctx.set_route(next < 3 ? "again" : "done");
        return json::value(next);
    });
    auto done = logged("done", ledger, [](const json::value& in, wf::NodeContext&) {
        return json::value("counted " + std::to_string(in.as_int64()));
    });
    auto listing = logged("listing", ledger, [](const json::value&, wf::NodeContext&) { return json::array{1, 2, 3}; });
    auto item = logged("item", ledger, [](const json::value& in, wf::NodeContext&) { return json::value(in.as_int64() * 10); },
                       /*slow=*/true);
    auto items = std::make_shared<wf::ParallelWorker>(item, 2);
    auto step = logged("step", ledger, [](const json::value& in, wf::NodeContext&) { return json::object{{"seen", in}}; });
    auto tail = std::make_shared<wf::Workflow>(
        "tail", [step](wf::NodeContext& ctx, json::value input) -> asio::awaitable<json::value> {
            json::value once = co_await ctx.run_node(step, std::move(input));
            co_return co_await ctx.run_node(step, std::move(once));
        });
    return wf::Workflow::Builder("flow")
        .edge(wf::START, prepare)
        .edges(prepare, {payer, stock})
        .edge(payer, joined)
        .edge(stock, joined)
        .chain({joined, approve, ship, count})
        .route(count, "again", count)
        .route(count, "done", done)
        .chain({done, listing, items, tail})
        .build();
}

}  // namespace

int main(int argc, char** argv)
{
    return adk::test::worker_main("adk_workflow_worker", argc, argv,
                                  adk::test::WorkerApp{app, "order 5", adk::request_input_function, json::object{{"result", true}}});
}
