// adk::mcp over stdio with a real child process (tests/support/mcp_test_server.cpp): the handshake, calls, progress,
// cancellation and timeouts told to the server, the server's own requests, a crash mid-call, and shutdowns that
// leave no process of the group behind.
#include <adk/core/log.hpp>
#include <adk/mcp/connection.hpp>
#include <adk/mcp/stdio_transport.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "support/child_process.hpp"
#include "support/paths.hpp"
#include "support/drive.hpp"
#include "support/manual_time.hpp"

#include <catch2/catch.hpp>

#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <thread>

namespace asio = boost::asio;
namespace json = boost::json;
namespace mcp = adk::mcp;
using adk::test::drive;
using adk::test::process_running;
using namespace std::chrono_literals;

namespace {

const std::string server_program = adk::test::paths::mcp_test_server();

// Log lines, kept while the test runs (and the log level at info, so that the servers' stderr is seen).
class StdioLogCapture {
public:
    StdioLogCapture()
    {
        adk::set_log_level(adk::LogLevel::info);
        adk::set_log_handler([this](adk::LogLevel, std::string_view m) {
            std::lock_guard lock(mutex_);
            lines_.emplace_back(m);
        });
    }
    ~StdioLogCapture()
    {
        adk::set_log_handler(nullptr);
        adk::set_log_level(adk::LogLevel::warning);
    }
    bool has(std::string_view text) const
    {
        std::lock_guard lock(mutex_);
        for (const auto& l : lines_)
            if (l.find(text) != std::string::npos)
                return true;
        return false;
    }
    std::size_t count(std::string_view text) const
    {
        std::lock_guard lock(mutex_);
        std::size_t n = 0;
        for (const auto& l : lines_)
            n += l.find(text) != std::string::npos ? 1 : 0;
        return n;
    }

private:
    mutable std::mutex mutex_;
    std::vector<std::string> lines_;
};

std::size_t open_descriptors()
{
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd"))
        ++n;
    return n;
}

struct StdioFixture {
    asio::io_context ioc;
    asio::any_io_executor strand = asio::make_strand(ioc);

    std::shared_ptr<mcp::Connection> connect(std::vector<std::string> args = {}, mcp::ConnectionOptions options = {},
                                             std::function<void(mcp::StdioServerParams&)> tune = {})
    {
        mcp::StdioServerParams params(server_program, std::move(args));
        if (tune)
            tune(params);
        return mcp::Connection::create(strand, std::make_unique<mcp::StdioTransport>(strand, std::move(params)),
                                       std::move(options));
    }
};

// tools/call of `tool` with arguments given as JSON text (no braced lists inside co_await: g++ 12).
asio::awaitable<json::value> call_tool(mcp::Connection& c, std::string tool, std::string args = "{}",
                                       mcp::CallOptions options = {})
{
    json::object params{{"name", std::move(tool)}, {"arguments", json::parse(args)}};
    co_return co_await c.call("tools/call", std::move(params), std::move(options));
}

asio::awaitable<json::value> list_stdio_tools(mcp::Connection& c)
{
    co_return co_await c.call("tools/list", json::object());
}

std::string text_of(const json::value& result)
{
    return std::string(result.at("content").at(0).at("text").as_string());
}

template <class F>
std::string error_of(F&& f)
{
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "no error";
}

// Waits (running the io_context) until `done` holds, for at most 10 s.
template <class Pred>
void wait_until(asio::io_context& ioc, Pred done)
{
    const auto until = std::chrono::steady_clock::now() + 10s;
    while (!done() && std::chrono::steady_clock::now() < until) {
        ioc.restart();
        ioc.run_for(10ms);
    }
}

}  // namespace

TEST_CASE("MCP stdio: the handshake, tools/list and tools/call with a real process, its stderr in adk's log",
          "[mcp]")
{
    StdioLogCapture log;
    StdioFixture f;
    auto c = f.connect({"--stderr", "hello from the server"});
    drive(f.ioc, [&]() -> asio::awaitable<void> {
        co_await c->start();
        CHECK(c->alive());
        CHECK(c->server().name == "adk-test-server");
        CHECK(c->server().protocol_version == "2025-11-25");
        json::value tools = co_await list_stdio_tools(*c);
        CHECK(tools.at("tools").as_array().size() == 12);
        json::value echoed = co_await call_tool(*c, "echo", R"({"text": "hi"})");
        CHECK(text_of(echoed) == "hi");
        json::value sum = co_await call_tool(*c, "add", R"({"a": 2, "b": 3})");
        CHECK(sum.at("structuredContent").at("sum") == 5.0);
        co_await c->close();
        CHECK_FALSE(c->alive());
    }());
    CHECK(log.has("stdio server " + server_program + ": hello from the server"));
}

TEST_CASE("MCP stdio: a server that floods its stderr and its log notifications has 50 lines of each written, and "
          "the count of the rest",
          "[mcp]")
{
    StdioLogCapture log;
    StdioFixture f;
    auto c = f.connect({"--chatter", "5000"});
    drive(f.ioc, [&]() -> asio::awaitable<void> {
        co_await c->start();
        json::value echoed = co_await call_tool(*c, "echo", R"({"text": "after"})");
        CHECK(text_of(echoed) == "after");  // the notifications came before this answer
        co_await c->close();
    }());
    f.ioc.restart();
    f.ioc.poll();  // the stderr reader's end, which close() cancelled: it says what it held back
    // Written within one window of the limiter (10 s): the first 50 of each, and one line with what was held back.
    CHECK(log.count(": stderr line ") == 50);
    CHECK(log.has(": stderr line 49"));
    CHECK_FALSE(log.has(": stderr line 50"));
    CHECK(log.count(": log line ") == 50);
    CHECK(log.has("4950 more log lines not written (at most 50 each 10 s)"));
    CHECK(log.count("more log lines not written") == 2);
}

TEST_CASE("MCP stdio: progress reaches the caller, a cancelled call and a call past its timeout are cancelled on "
          "the server",
          "[mcp]")
{
    StdioLogCapture log;
    StdioFixture f;
    auto c = f.connect();
    std::vector<std::string> progress;
    drive(f.ioc, [&]() -> asio::awaitable<void> {
        co_await c->start();
        mcp::CallOptions with_progress;
        with_progress.on_progress = [&](const mcp::event::Progress& p) {
            progress.push_back(std::to_string(static_cast<int>(p.progress)) + "/" +
                               std::to_string(static_cast<int>(p.total.value_or(0))) + " " + p.message);
        };
        json::value done = co_await call_tool(*c, "slow", R"({"steps": 3})", with_progress);
        CHECK(text_of(done) == "done");
    }());
    CHECK(progress == std::vector<std::string>{"1/3 step 1", "2/3 step 2", "3/3 step 3"});

    // Cancelled by its caller after its first progress: the caller sees operation_aborted, the server is told.
    asio::cancellation_signal cancel;
    std::string outcome;
    mcp::CallOptions on_first;
    on_first.on_progress = [&](const mcp::event::Progress&) { asio::post(f.ioc, [&] { cancel.emit(asio::cancellation_type::terminal); }); };
    asio::co_spawn(f.ioc, call_tool(*c, "slow", R"({"steps": 500})", on_first),
                   asio::bind_cancellation_slot(cancel.slot(), [&](std::exception_ptr e, json::value) {
                       outcome = e ? error_of([&] { std::rethrow_exception(e); }) : "answered";
                   }));
    wait_until(f.ioc, [&] { return !outcome.empty() && log.has("cancelled 3"); });
    CHECK_THAT(outcome, Catch::Contains("Operation canceled"));
    CHECK(log.has("cancelled 3"));  // the server's stderr: notifications/cancelled came for request 3 (1 was initialize)

    // Past its timeout (30 s on the test's clock, moved a second at each turn; the server takes 10 real seconds):
    // timed_out, and the server is told too.
    std::optional<adk::testing::ManualClock> clock(std::in_place);
    mcp::CallOptions short_wait;
    short_wait.timeout = 30s;
    const adk::Clock::time_point asked = adk::Clock::now();
    std::string timed_out = error_of([&] {
        drive(f.ioc, adk::test::passing_time(*clock, 1s, call_tool(*c, "slow", R"({"steps": 500})", short_wait)));
    });
    CHECK(adk::Clock::now() - asked >= 30s);
    clock.reset();
    CHECK_THAT(timed_out, Catch::Contains("did not answer tools/call within 30 s"));
    wait_until(f.ioc, [&] { return log.has("cancelled 4"); });
    CHECK(log.has("cancelled 4"));
    CHECK(c->alive());  // the connection goes on
    drive(f.ioc, c->close());
}

TEST_CASE("MCP stdio: a server that exits mid-call fails the call with an error that names it and says how it ended",
          "[mcp]")
{
    StdioFixture f;
    auto c = f.connect();
    drive(f.ioc, c->start());
    std::string crashed = error_of([&] { drive(f.ioc, call_tool(*c, "crash")); });
    CHECK_THAT(crashed, Catch::Contains("stdio server " + server_program) && Catch::Contains("ended the connection") &&
                            Catch::Contains("exited with status 3") && Catch::Contains("crashing as asked"));
    CHECK_FALSE(c->alive());
    std::string after = error_of([&] { drive(f.ioc, list_stdio_tools(*c)); });
    CHECK_THAT(after, Catch::Contains("is not connected"));
    drive(f.ioc, c->close());
}

TEST_CASE("MCP stdio: close() leaves no process of the group: grandchildren, and a server that ignores SIGTERM",
          "[mcp]")
{
    StdioFixture f;
    {
        auto c = f.connect();
        int grandchild = 0;
        drive(f.ioc, [&]() -> asio::awaitable<void> {
            co_await c->start();
            json::value spawned = co_await call_tool(*c, "spawn");
            grandchild = std::stoi(text_of(spawned));
        }());
        REQUIRE(process_running(grandchild));
        drive(f.ioc, c->close());
        CHECK_FALSE(process_running(grandchild));  // the server exited at stdin's end; its grandchild got SIGTERM
        drive(f.ioc, c->close());            // idempotent
    }
    {
        // A grandchild that left the group (setsid), with close() and without.
        for (const bool closed : {true, false}) {
            int detached = 0;
            {
                auto c = f.connect();
                drive(f.ioc, [&]() -> asio::awaitable<void> {
                    co_await c->start();
                    json::value spawned = co_await call_tool(*c, "detach");
                    detached = std::stoi(text_of(spawned));
                }());
                REQUIRE(process_running(detached));
                if (closed)
                    drive(f.ioc, c->close());
            }
            f.ioc.restart();
            f.ioc.run_for(closed ? 0s : 2s);
            CHECK_FALSE(process_running(detached));
        }
    }
    {
        // Ignores SIGTERM and the end of stdin: SIGKILL ends it.
        auto stubborn = std::make_unique<mcp::StdioTransport>(
            f.strand, [] {
                mcp::StdioServerParams p(server_program, {"--ignore-term", "--stay-after-eof"});
                p.term_after = 50ms;
                p.kill_after = 100ms;
                return p;
            }());
        auto* transport = stubborn.get();
        auto c = mcp::Connection::create(f.strand, std::move(stubborn), {});
        drive(f.ioc, c->start());
        const int pid = transport->pid();
        REQUIRE(process_running(pid));
        drive(f.ioc, c->close());
        CHECK_FALSE(process_running(pid));
        CHECK_THAT(transport->diagnostics(), Catch::Contains("killed by signal 9"));
    }
    {
        // Dropped without close(): the group is killed at once.
        int grandchild = 0;
        {
            auto c = f.connect();
            drive(f.ioc, [&]() -> asio::awaitable<void> {
                co_await c->start();
                json::value spawned = co_await call_tool(*c, "spawn");
                grandchild = std::stoi(text_of(spawned));
            }());
        }
        f.ioc.restart();
        f.ioc.run_for(2s);
        CHECK_FALSE(process_running(grandchild));
    }
}

TEST_CASE("MCP stdio: the server inherits no descriptor of adk's but its three pipes (a listening socket stays ours)",
          "[mcp]")
{
    // A socket as Asio opens them: not close-on-exec, as the HTTP server's listening socket and its clients' are.
    const int socket_fd = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(socket_fd >= 0);
    auto target_of = [](const std::string& link) {
        std::error_code ec;
        return std::filesystem::read_symlink(link, ec).string();
    };
    const std::string ours = target_of("/proc/self/fd/" + std::to_string(socket_fd));
    REQUIRE(ours.rfind("socket:[", 0) == 0);
    StdioFixture f;
    auto transport = std::make_unique<mcp::StdioTransport>(f.strand, mcp::StdioServerParams(server_program, {}));
    auto* stdio = transport.get();
    auto c = mcp::Connection::create(f.strand, std::move(transport), {});
    drive(f.ioc, c->start());
    std::vector<std::string> inherited;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/" + std::to_string(stdio->pid()) + "/fd"))
        inherited.push_back(target_of(entry.path().string()));
    CHECK(std::find(inherited.begin(), inherited.end(), ours) == inherited.end());
    // Its standard streams are the pipes; whatever else it holds it opened itself (its own event loop's).
    for (const char* standard : {"0", "1", "2"})
        CHECK(target_of("/proc/" + std::to_string(stdio->pid()) + "/fd/" + standard).rfind("pipe:[", 0) == 0);
    drive(f.ioc, c->close());
    ::close(socket_fd);
}

TEST_CASE("MCP stdio: the server's requests go to the handler, list changes to the callback", "[mcp]")
{
    StdioFixture f;
    mcp::ConnectionOptions options;
    options.session.capabilities.elicitation = true;
    std::vector<std::string> asked;
    options.handle_request = [&](const mcp::jsonrpc::Request& r) -> asio::awaitable<json::value> {
        asked.push_back(r.method + ": " + std::string(r.params->at("message").as_string()));
        co_return json::object{{"action", "accept"}, {"content", {{"name", "Bob"}}}};
    };
    int changed = 0;
    options.on_tools_changed = [&] { ++changed; };
    auto c = f.connect({}, std::move(options));
    drive(f.ioc, [&]() -> asio::awaitable<void> {
        co_await c->start();
        json::value answer = co_await call_tool(*c, "ask");
        CHECK_THAT(text_of(answer), Catch::Contains("\"action\":\"accept\"") && Catch::Contains("Bob"));
        co_await call_tool(*c, "grow");
        json::value tools = co_await list_stdio_tools(*c);
        CHECK(tools.at("tools").as_array().size() == 13);
        co_await c->close();
    }());
    CHECK(asked == std::vector<std::string>{"elicitation/create: Your name?"});
    CHECK(changed == 1);
}

TEST_CASE("MCP stdio: what cannot work fails with an error that says what to do", "[mcp]")
{
    StdioFixture f;
    auto missing = mcp::Connection::create(
        f.strand, std::make_unique<mcp::StdioTransport>(f.strand, mcp::StdioServerParams("adk-no-such-mcp-server")), {});
    CHECK_THAT(error_of([&] { drive(f.ioc, missing->start()); }),
               Catch::Contains("cannot start the stdio server adk-no-such-mcp-server") &&
                   Catch::Contains("No such file or directory") && Catch::Contains("PATH"));

    auto old = f.connect({"--version", "2024-11-05"});
    CHECK_THAT(error_of([&] { drive(f.ioc, old->start()); }),
               Catch::Contains("speaks MCP \"2024-11-05\", which adk-cpp does not"));
    drive(f.ioc, old->close());

    auto limited = f.connect({}, {}, [](mcp::StdioServerParams& p) { p.max_message_bytes = 1 << 20; });
    drive(f.ioc, limited->start());
    CHECK_THAT(error_of([&] {
                   drive(f.ioc, call_tool(*limited, "big", R"({"bytes": 2097152})"));
               }),
               Catch::Contains("over 1048576 bytes") && Catch::Contains("max_message_bytes"));
    CHECK_FALSE(limited->alive());
    drive(f.ioc, limited->close());
}

TEST_CASE("MCP stdio: 50 callers on 4 threads share one connection, descriptors stay flat", "[mcp][threads]")
{
    asio::io_context ioc;
    auto strand = asio::make_strand(ioc);
    auto c = mcp::Connection::create(
        strand, std::make_unique<mcp::StdioTransport>(strand, mcp::StdioServerParams(server_program)), {});
    drive(ioc, c->start());
    const std::size_t descriptors = open_descriptors();
    std::atomic<int> right{0};
    std::atomic<int> callers_done{0};
    for (int i = 0; i < 50; ++i)
        asio::co_spawn(
            ioc,
            [&, i]() -> asio::awaitable<void> {
                for (int k = 0; k < 20; ++k) {
                    const std::string text = std::to_string(i) + "-" + std::to_string(k);
                    const std::string args = json::serialize(json::object{{"text", text}});
                    json::value r = co_await call_tool(*c, "echo", args);
                    if (text_of(r) == text)
                        ++right;
                }
                if (++callers_done == 50)
                    ioc.stop();  // the connection's reader would keep the threads running
            },
            asio::detached);
    ioc.restart();
    adk::test::run_on_threads(ioc, 4);
    CHECK(right == 1000);
    CHECK(open_descriptors() == descriptors);
    drive(ioc, c->close());
}
