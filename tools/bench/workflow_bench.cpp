// Graph workflows (adk/workflow): what a run costs the runtime, as tools/bench/ts/workflow_bench.mjs measures
// @google/adk's Workflow on the same graphs (tools/bench/workflow.sh runs both). Function nodes only, so that
// the workflow engine is what is measured; in-memory sessions, one thread.
//   chain   N function nodes in a row, each passing its input on
//   fanout  one node, N nodes after it at once, a JoinNode of them all
//   resume  N nodes in a row, then a node that asks a person (request_input); measured: the answer's run, which
//           passes over the N nodes whose outputs the session holds, to the end
//   dynamic a workflow whose entry runs one function node N times in a row (NodeContext::run_node)
//   workers a ParallelWorker over a list of N items (8 at once)
// Prints one JSON object per scenario: the median of the rounds in ms per invocation, CPU included.
//   build/release/tools/bench/workflow_bench [nodes] [rounds] [warmup]
#include <adk/adk.hpp>
#include <adk/workflow/workflow.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

namespace asio = boost::asio;
namespace json = boost::json;
namespace wf = adk::workflow;

namespace {

std::shared_ptr<wf::FunctionNode> pass(std::string name)
{
    return wf::function_node(std::move(name), [](wf::NodeContext&, json::value in) -> asio::awaitable<json::value> {
        co_return in;
    });
}

std::shared_ptr<wf::Workflow> chain(int n, bool ask)
{
    wf::Workflow::Builder b("chain");
    std::shared_ptr<wf::Node> last;
    for (int i = 0; i < n; ++i) {
        auto node = pass("n" + std::to_string(i));
        if (last)
            b.edge(last, node);
        else
            b.edge(wf::START, node);
        last = node;
    }
    if (ask)
        b.edge(last, wf::function_node("ask", [](wf::NodeContext& ctx, json::value) -> asio::awaitable<json::value> {
            wf::RequestInput question;
            question.message = "Go on?";
            question.interrupt_id = "q";
            co_return co_await ctx.request_input(std::move(question));
        }));
    return b.build();
}

std::shared_ptr<wf::Workflow> fanout(int n)
{
    wf::Workflow::Builder b("fanout");
    auto first = pass("first");
    auto join = wf::join_node("all");
    b.edge(wf::START, first);
    for (int i = 0; i < n; ++i) {
        auto node = pass("n" + std::to_string(i));
        b.edge(first, node).edge(node, join);
    }
    return b.build();
}

std::shared_ptr<wf::Workflow> dynamic(int n)
{
    auto step = pass("step");
    return std::make_shared<wf::Workflow>(
        "dynamic", [step, n](wf::NodeContext& ctx, json::value input) -> asio::awaitable<json::value> {
            for (int i = 0; i < n; ++i)
                input = co_await ctx.run_node(step, std::move(input));
            co_return input;
        });
}

std::shared_ptr<wf::Workflow> workers(int n)
{
    auto items = wf::function_node("items", [n](wf::NodeContext&, json::value) -> asio::awaitable<json::value> {
        json::array list;
        for (int i = 0; i < n; ++i)
            list.emplace_back(i);
        co_return list;
    });
    auto each = std::make_shared<wf::ParallelWorker>(pass("each"), 8);
    return wf::Workflow::Builder("workers").chain({wf::START, items, each}).build();
}

double cpu_ms()
{
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

struct Sample {
    double wall_ms = 0;
    double cpu_ms = 0;
    long events = 0;
};

// One invocation of `agent` (for resume: the first run to the question unmeasured, then the answer's run).
Sample one(const std::shared_ptr<adk::Agent>& agent, bool resume)
{
    asio::io_context ioc(1);
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::Runner runner({.app_name = "bench",
                        .agent = agent,
                        .session_service = sessions,
                        .resumability = {.is_resumable = true},
                        .single_threaded = true});
    Sample s;
    auto body = [&]() -> asio::awaitable<void> {
        adk::Session session = co_await sessions->create_session({"bench", "u"});
        adk::RunRequest request("u", session.id, adk::Content::user("go"));
        if (resume) {
            auto first = co_await runner.run(std::move(request));
            while (co_await first.next()) {
            }
            adk::Content answer("user", {adk::Part::from_function_response("adk_request_input", {{"result", true}}, "q")});
            request = adk::RunRequest("u", session.id, std::move(answer));
        }
        const auto t0 = std::chrono::steady_clock::now();
        const double c0 = cpu_ms();
        auto stream = co_await runner.run(std::move(request));
        while (co_await stream.next())
            ++s.events;
        s.cpu_ms = cpu_ms() - c0;
        s.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    };
    asio::co_spawn(ioc, body(), [](std::exception_ptr e) {
        if (e)
            std::rethrow_exception(e);
    });
    ioc.run();
    return s;
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

void scenario(const char* name, int nodes, const std::shared_ptr<adk::Agent>& agent, bool resume, int rounds, int warmup)
{
    for (int i = 0; i < warmup; ++i)
        one(agent, resume);
    std::vector<double> wall, cpu;
    long events = 0;
    for (int i = 0; i < rounds; ++i) {
        Sample s = one(agent, resume);
        wall.push_back(s.wall_ms);
        cpu.push_back(s.cpu_ms);
        events = s.events;
    }
    std::printf("{\"runtime\":\"adk-cpp\",\"scenario\":\"%s\",\"nodes\":%d,\"events\":%ld,\"wall_ms\":%.3f,\"cpu_ms\":%.3f}\n",
                name, nodes, events, median(wall), median(cpu));
}

}  // namespace

int main(int argc, char** argv)
{
    const int nodes = argc > 1 ? std::atoi(argv[1]) : 100;
    const int rounds = argc > 2 ? std::atoi(argv[2]) : 21;
    const int warmup = argc > 3 ? std::atoi(argv[3]) : 5;
    if (nodes < 1 || rounds < 1 || warmup < 0) {
        std::fprintf(stderr, "usage: workflow_bench [nodes >= 1] [rounds >= 1] [warmup >= 0]\n");
        return 2;
    }
    scenario("chain", nodes, chain(nodes, false), false, rounds, warmup);
    scenario("fanout", nodes, fanout(nodes), false, rounds, warmup);
    scenario("resume", nodes * 10, chain(nodes * 10, true), true, rounds, warmup);
    scenario("dynamic", nodes, dynamic(nodes), false, rounds, warmup);
    scenario("workers", nodes, workers(nodes), false, rounds, warmup);
}
