// Tool calls to an MCP server's `echo` through adk-cpp's MCP client (tools/bench/mcp.sh runs it beside
// @google/adk's MCPToolset, tools/bench/ts/mcp_bench.mjs): the connection McpToolset uses and the mapping of each
// result for the model (tool_response), as an McpTool's run does.
//
//   mcp_bench --calls N --concurrency C [--warmup W] (--stdio COMMAND ARG... | --http URL [--server-pid PID])
//
// Prints one JSON line: calls/s, this process's CPU per call, the latency's p50 and p99, and the server's CPU per
// call (its process: the stdio child, or --server-pid).
#include <adk/mcp/connection.hpp>
#include <adk/mcp/http_transport.hpp>
#include <adk/mcp/mcp_toolset.hpp>
#include <adk/mcp/stdio_transport.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>

namespace asio = boost::asio;
namespace json = boost::json;
namespace mcp = adk::mcp;
using Clock = std::chrono::steady_clock;

namespace {

double cpu_us_self()
{
    rusage r{};
    getrusage(RUSAGE_SELF, &r);
    return (r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e6 + r.ru_utime.tv_usec + r.ru_stime.tv_usec;
}

double cpu_us_of(int pid)
{
    if (pid <= 0)
        return 0;
    std::ifstream f("/proc/" + std::to_string(pid) + "/schedstat");
    double ns = 0;
    f >> ns;
    return ns / 1000;
}

class Run {
public:
    std::shared_ptr<mcp::Connection> c;
    int calls = 0;
    int next = 0;
    std::vector<double> latencies_us;
    int failures = 0;
};

asio::awaitable<void> caller(Run& run)
{
    while (run.next < run.calls) {
        ++run.next;
        json::object params{{"name", "echo"}, {"arguments", json::object{{"message", "hello"}}}};
        const auto start = Clock::now();
        try {
            json::value result = co_await run.c->call("tools/call", std::move(params));
            (void)mcp::tool_response("echo", result, nullptr).response;
        } catch (const std::exception& e) {
            if (++run.failures == 1)
                std::cerr << "mcp_bench: a call failed: " << e.what() << "\n";
        }
        run.latencies_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    }
}

asio::awaitable<void> calls(std::shared_ptr<mcp::Connection> c, int n, int concurrency, Run& run)
{
    run.c = std::move(c);
    run.calls = n;
    auto executor = co_await asio::this_coro::executor;
    int running = concurrency;
    auto done = std::make_shared<asio::steady_timer>(executor, std::chrono::hours(24));
    for (int i = 0; i < concurrency; ++i)
        asio::co_spawn(executor, caller(run), [&running, done](std::exception_ptr) {
            if (--running == 0)
                done->cancel();
        });
    boost::system::error_code ec;
    co_await done->async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

}  // namespace

int main(int argc, char** argv)
{
    int n = 1000, concurrency = 1, warmup = 100, server_pid = 0;
    std::vector<std::string> stdio;
    std::string url;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--calls" && i + 1 < argc)
            n = std::stoi(argv[++i]);
        else if (a == "--concurrency" && i + 1 < argc)
            concurrency = std::stoi(argv[++i]);
        else if (a == "--warmup" && i + 1 < argc)
            warmup = std::stoi(argv[++i]);
        else if (a == "--server-pid" && i + 1 < argc)
            server_pid = std::stoi(argv[++i]);
        else if (a == "--http" && i + 1 < argc)
            url = argv[++i];
        else if (a == "--stdio") {
            stdio.assign(argv + i + 1, argv + argc);
            break;
        } else {
            std::cerr << "usage: mcp_bench --calls N --concurrency C [--warmup W] (--stdio COMMAND ARG... | --http "
                         "URL [--server-pid PID])\n";
            return 2;
        }
    }
    asio::io_context ioc;
    std::unique_ptr<mcp::Transport> transport;
    mcp::StdioTransport* child = nullptr;
    if (!stdio.empty()) {
        auto t = std::make_unique<mcp::StdioTransport>(
            ioc.get_executor(), mcp::StdioServerParams(stdio.front(), std::vector<std::string>(stdio.begin() + 1, stdio.end())));
        child = t.get();
        transport = std::move(t);
    } else {
        transport = std::make_unique<mcp::HttpTransport>(ioc.get_executor(), mcp::HttpServerParams(url));
    }
    auto c = mcp::Connection::create(ioc.get_executor(), std::move(transport), {});
    json::object out;
    auto body = [&]() -> asio::awaitable<void> {
        co_await c->start();
        if (child)
            server_pid = child->pid();
        Run warm;
        co_await calls(c, warmup, concurrency, warm);
        Run measured;
        const double cpu0 = cpu_us_self();
        const double server0 = cpu_us_of(server_pid);
        const auto t0 = Clock::now();
        co_await calls(c, n, concurrency, measured);
        const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
        const double cpu = cpu_us_self() - cpu0;
        const double server = cpu_us_of(server_pid) - server0;
        std::sort(measured.latencies_us.begin(), measured.latencies_us.end());
        auto pct = [&](double p) { return measured.latencies_us[static_cast<std::size_t>(p * (measured.latencies_us.size() - 1))]; };
        out = json::object{{"runtime", "adk-cpp"},
                           {"transport", child ? "stdio" : "http"},
                           {"calls", n},
                           {"concurrency", concurrency},
                           {"failures", measured.failures},
                           {"calls_per_s", n / seconds},
                           {"client_cpu_us_per_call", cpu / n},
                           {"p50_us", pct(0.5)},
                           {"p99_us", pct(0.99)},
                           {"server_cpu_us_per_call", server / n}};
        co_await c->close();
    };
    int status = 0;
    asio::co_spawn(ioc, body(), [&](std::exception_ptr e) {
        if (e) {
            try {
                std::rethrow_exception(e);
            } catch (const std::exception& error) {
                std::cerr << "mcp_bench: " << error.what() << "\n";
            }
            status = 1;
        }
        ioc.stop();
    });
    ioc.run();
    if (status == 0)
        std::cout << json::serialize(out) << "\n";
    return status;
}
