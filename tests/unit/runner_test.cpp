// Runner and the invariants of ../shared/docs/DESIGN.md: commit before continue, order, cancellation (four ways),
// threads, errors. (Bounded memory is in memory_test.cpp.)
#include <adk/adk.hpp>

#include "support/agents.hpp"
#include "support/manual_time.hpp"
#include "support/run.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <iostream>
#include <map>
#include <thread>

namespace asio = boost::asio;
namespace json = boost::json;
using namespace std::chrono_literals;
using adk::test::FnAgent;
using adk::test::run;

namespace {

// The agent of ../shared/docs/DESIGN.md, word for word.
class Counter final : public adk::Agent {
public:
    explicit Counter(int n) : adk::Agent("counter", "Counts."), n_(n) {}

private:
    asio::awaitable<void> run_impl(adk::InvocationContext& ctx, adk::EventSink& out) override
    {
        for (int i = 1; i <= n_; ++i) {
            adk::Event ev = ctx.make_event(adk::Content::model(std::to_string(i)));
            ev.actions.state_delta["count"] = i;
            co_await out.emit(std::move(ev));
        }
    }
    int n_;
};

// A Runner whose agent emits one event, then waits an hour as a slow tool would. Records how the wait
// ended: 1 when it was aborted.
struct StuckRun {
    asio::io_context ioc;
    std::shared_ptr<adk::InMemorySessionService> sessions = std::make_shared<adk::InMemorySessionService>();
    std::shared_ptr<std::atomic<int>> outcome = std::make_shared<std::atomic<int>>(0);
    std::shared_ptr<std::atomic<bool>> tool_waits = std::make_shared<std::atomic<bool>>(false);
    adk::Runner runner{{.app_name = "app", .agent = agent(outcome, tool_waits), .session_service = sessions}};

    static std::shared_ptr<FnAgent> agent(std::shared_ptr<std::atomic<int>> flag, std::shared_ptr<std::atomic<bool>> waits)
    {
        return std::make_shared<FnAgent>("stuck", [flag, waits](adk::InvocationContext& ctx, adk::EventSink& out) -> asio::awaitable<void> {
            co_await out.emit(ctx.make_event(adk::Content::model("working")));
            asio::steady_timer tool(co_await asio::this_coro::executor, 1h);
            *waits = true;
            try {
                co_await tool.async_wait(asio::use_awaitable);
            } catch (const boost::system::system_error& e) {
                if (e.code() == asio::error::operation_aborted)
                    *flag = 1;
                throw;
            }
        });
    }

    // Creates the session and starts the invocation.
    asio::awaitable<adk::EventStream> start()
    {
        co_await sessions->create_session({"app", "user1", "s"});
        co_return co_await runner.run("user1", "s", adk::Content::user("go"));
    }

    // Returns once the agent's tool waits. Its first event reaches a caller waiting in next() inside the agent's
    // emit, before the tool begins: a caller that stops the invocation at once stops it there instead.
    asio::awaitable<void> until_tool_waits()
    {
        auto ex = co_await asio::this_coro::executor;
        while (!*tool_waits)
            co_await asio::post(ex, asio::use_awaitable);
    }
};

double ms_since(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST_CASE("the program of DESIGN.md runs as written", "[runner]")
{
    asio::io_context ioc;
    std::vector<std::string> printed;
    run(ioc, [&]() -> asio::awaitable<void> {
        auto sessions = std::make_shared<adk::InMemorySessionService>();
        adk::Runner runner({.app_name = "demo", .agent = std::make_shared<Counter>(3), .session_service = sessions});
        adk::Session s = co_await sessions->create_session({"demo", "u1"});
        auto events = co_await runner.run("u1", s.id, adk::Content::user("go"));  // temporaries in co_await
        while (auto ev = co_await events.next())
            printed.push_back(ev->author + ": " + ev->text());
        std::optional<adk::Session> after = co_await sessions->get_session({"demo", "u1", s.id});
        REQUIRE(after);
        REQUIRE(after->events.size() == 4);
        CHECK(after->events[0].author == "user");
        CHECK(after->events[0].text() == "go");
        CHECK(after->events[0].invocation_id == after->events[1].invocation_id);
        CHECK(after->state["count"] == 3);
    }());
    CHECK(printed == std::vector<std::string>{"counter: 1", "counter: 2", "counter: 3"});
}

TEST_CASE("Runner::start names the invocation before its first event", "[runner]")
{
    asio::io_context ioc;
    run(ioc, [&]() -> asio::awaitable<void> {
        auto sessions = std::make_shared<adk::InMemorySessionService>();
        adk::Runner runner({.app_name = "demo", .agent = std::make_shared<Counter>(2), .session_service = sessions});
        adk::Session s = co_await sessions->create_session({"demo", "u1"});
        adk::RunRequest request("u1", s.id, adk::Content::user("go"));
        auto starting = runner.start(std::move(request));
        adk::Runner::Started started = co_await std::move(starting);
        CHECK(!started.invocation_id.empty());
        int events = 0;
        while (auto ev = co_await started.events.next()) {
            CHECK(ev->invocation_id == started.invocation_id);
            ++events;
        }
        CHECK(events == 2);
        std::optional<adk::Session> after = co_await sessions->get_session({"demo", "u1", s.id});
        REQUIRE(after);
        CHECK(after->events.at(0).invocation_id == started.invocation_id);  // the user's message too
    }());
}

namespace {

// Keeps the events a run hands it (RunRequest::receiver).
struct EventKeeper final : adk::StreamReceiver<adk::Event> {
    std::vector<adk::Event> events;
    void receive(std::unique_ptr<adk::Event> event) noexcept override { events.push_back(std::move(*event)); }
};

// Keeps what a run hands it: the events handed over as their session holds them (receive_held), and the others.
struct HeldKeeper final : adk::StreamReceiver<adk::Event> {
    std::vector<adk::Event> copies;
    std::vector<std::shared_ptr<const adk::Event>> held;
    std::vector<bool> held_equals_item;
    void receive(std::unique_ptr<adk::Event> event) noexcept override { copies.push_back(std::move(*event)); }
    void receive_held(std::unique_ptr<adk::Event> event, std::shared_ptr<const adk::Event> h) noexcept override
    {
        held_equals_item.push_back(*event == *h);
        held.push_back(std::move(h));
    }
};

// Changes the text of every whole event on its way to the caller.
class Rewriter final : public adk::Plugin {
public:
    Rewriter() : adk::Plugin("rewriter") {}
    bool sees_partial_events() const noexcept override { return false; }
    asio::awaitable<std::optional<adk::Event>> on_event(adk::InvocationContext&, const adk::Event& event) override
    {
        adk::Event shown = event;
        shown.content = adk::Content::model("rewritten");
        co_return shown;
    }
};

// Streams "Hel", then says "Hello", then "and more" with state "said" 2 (and a temp: key).
std::shared_ptr<FnAgent> talker()
{
    return std::make_shared<FnAgent>("talker", [](adk::InvocationContext& ctx, adk::EventSink& out) -> asio::awaitable<void> {
        adk::Event delta = ctx.make_event(adk::Content::model("Hel"));
        delta.partial = true;
        co_await out.emit(std::move(delta));
        adk::Event whole = ctx.make_event(adk::Content::model("Hello"));
        co_await out.emit(std::move(whole));
        adk::Event counted = ctx.make_event(adk::Content::model("and more"));
        counted.actions.state_delta["said"] = 2;
        counted.actions.state_delta["temp:scratch"] = 1;
        co_await out.emit(std::move(counted));
    });
}

// The talker, app "demo", on sessions in memory.
adk::RunnerOptions talker_options()
{
    return {.app_name = "demo", .agent = talker(), .session_service = std::make_shared<adk::InMemorySessionService>()};
}

// A run of `options` (app "demo", moved from) on a new session of user "u1", streaming, its events handed to
// `receiver`; when the stream ended (it carries only the end): the session as stored, and the run's invocation id.
// References: g++ 12 mishandles class temporaries in a co_await (docs/DESIGN.md).
class ReceivedRun {
public:
    adk::Session session;
    std::string invocation_id;
};
asio::awaitable<ReceivedRun> run_received(adk::RunnerOptions& options,
                                          const std::shared_ptr<adk::StreamReceiver<adk::Event>>& receiver)
{
    std::shared_ptr<adk::SessionService> sessions = options.session_service;
    adk::Runner runner(std::move(options));
    adk::CreateSessionRequest create("demo", "u1");
    adk::Session s = co_await sessions->create_session(std::move(create));
    adk::RunRequest request("u1", s.id, adk::Content::user("go"));
    request.run_config.streaming_mode = adk::StreamingMode::sse;
    request.receiver = receiver;
    auto starting = runner.start(std::move(request));
    adk::Runner::Started started = co_await std::move(starting);
    auto end = co_await started.events.next();  // never co_await inside a Catch2 macro (support/run.hpp)
    CHECK(!end);
    adk::GetSessionRequest get("demo", "u1", s.id);
    std::optional<adk::Session> after = co_await sessions->get_session(std::move(get));
    REQUIRE(after);
    co_return ReceivedRun{std::move(*after), started.invocation_id};
}

}  // namespace

TEST_CASE("RunRequest::receiver takes every event as it is emitted, the stream only the end", "[runner]")
{
    asio::io_context ioc;
    auto keeper = std::make_shared<EventKeeper>();
    run(ioc, [&]() -> asio::awaitable<void> {
        adk::RunnerOptions options = talker_options();
        const std::shared_ptr<adk::StreamReceiver<adk::Event>> receiver = keeper;
        ReceivedRun ran = co_await run_received(options, receiver);
        REQUIRE(keeper->events.size() == 3);
        CHECK(keeper->events[0].partial);
        CHECK(keeper->events[0].text() == "Hel");
        CHECK(keeper->events[1].text() == "Hello");
        CHECK(keeper->events[2].actions.state_delta.at("said") == 2);
        for (const adk::Event& e : keeper->events)
            CHECK(e.invocation_id == ran.invocation_id);
        const adk::Session& after = ran.session;
        REQUIRE(after.events.size() == 3);  // the user's and the two whole ones: the delta is not stored
        CHECK(after.events[1].id == keeper->events[1].id);
        CHECK(after.events[2].id == keeper->events[2].id);
        CHECK(after.state.at("said") == 2);
    }());
}

TEST_CASE("RunRequest::receiver: a committed event is handed over as its session holds it, one Event for both",
          "[runner]")
{
    for (const bool rewritten : {false, true}) {
        CAPTURE(rewritten);
        asio::io_context ioc;
        auto keeper = std::make_shared<HeldKeeper>();
        run(ioc, [&]() -> asio::awaitable<void> {
            adk::RunnerOptions options = talker_options();
            if (rewritten)
                options.plugins.push_back(std::make_shared<Rewriter>());
            const std::shared_ptr<adk::StreamReceiver<adk::Event>> receiver = keeper;
            ReceivedRun ran = co_await run_received(options, receiver);
            const adk::Session& after = ran.session;
            REQUIRE(after.events.size() == 3);
            if (!rewritten) {
                REQUIRE(keeper->copies.size() == 1);  // the delta: not stored, handed over as it was made
                CHECK(keeper->copies[0].partial);
                REQUIRE(keeper->held.size() == 2);
                CHECK(keeper->held[0] == after.events.shared(1));  // the service's Event itself
                CHECK(keeper->held[1] == after.events.shared(2));
                CHECK(keeper->held[1]->text() == "and more");
                CHECK(!keeper->held[1]->actions.state_delta.contains("temp:scratch"));  // what was stored
                CHECK(keeper->held_equals_item == std::vector<bool>{true, true});
            } else {
                // A plugin changed what the caller sees: the caller's events are its own.
                CHECK(keeper->held.empty());
                REQUIRE(keeper->copies.size() == 3);
                CHECK(keeper->copies[1].text() == "rewritten");
                CHECK(after.events[1].text() == "Hello");  // the session keeps what was stored
            }
        }());
    }
}

TEST_CASE("RunRequest::receiver: a failing agent's events are received, its failure ends the stream", "[runner]")
{
    asio::io_context ioc;
    auto keeper = std::make_shared<EventKeeper>();
    auto agent = std::make_shared<FnAgent>("breaker", [](adk::InvocationContext& ctx, adk::EventSink& out) -> asio::awaitable<void> {
        adk::Event last = ctx.make_event(adk::Content::model("about to fail"));
        co_await out.emit(std::move(last));
        throw adk::Error(adk::errc::unavailable, "the model is overloaded: try again later");
    });
    run(ioc, [&]() -> asio::awaitable<void> {
        auto sessions = std::make_shared<adk::InMemorySessionService>();
        adk::Runner runner({.app_name = "demo", .agent = agent, .session_service = sessions});
        adk::CreateSessionRequest create("demo", "u1");
        adk::Session s = co_await sessions->create_session(std::move(create));
        adk::RunRequest request("u1", s.id, adk::Content::user("go"));
        request.receiver = keeper;
        auto starting = runner.start(std::move(request));
        adk::Runner::Started started = co_await std::move(starting);
        std::string error;
        try {
            co_await started.events.next();
        } catch (const adk::Error& e) {
            error = e.message();
        }
        CHECK_THAT(error, Catch::Contains("the model is overloaded"));
        REQUIRE(keeper->events.size() == 1);
        CHECK(keeper->events[0].text() == "about to fail");
    }());
}

TEST_CASE("invariant 1: when emit returns, the event is committed and its state is visible", "[runner][invariant]")
{
    asio::io_context ioc;
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    int checks = 0;
    auto writer = std::make_shared<FnAgent>("writer", [&](adk::InvocationContext& ctx, adk::EventSink& out) -> asio::awaitable<void> {
        for (int i = 1; i <= 20; ++i) {
            adk::Event ev = ctx.make_event(adk::Content::model("step"));
            ev.actions.state_delta["step"] = i;
            ev.actions.state_delta["temp:scratch"] = i;
            co_await out.emit(std::move(ev));
            // Right after emit: in this invocation's session and in the service's stored session.
            std::optional<json::value> step = ctx.state("step");
            std::optional<json::value> scratch = ctx.state("temp:scratch");
            CHECK((step && step->as_int64() == i));
            CHECK((scratch && scratch->as_int64() == i));
            auto stored = co_await sessions->get_session({ctx.app_name(), ctx.user_id(), ctx.session_id()});
            CHECK(stored->events.size() == static_cast<std::size_t>(i + 1));  // the user message, then ours
            CHECK(stored->state.at("step") == i);
            CHECK(!stored->state.contains("temp:scratch"));
            ++checks;
        }
        adk::Event partial = ctx.make_event(adk::Content::model("par"));
        partial.partial = true;
        partial.actions.state_delta["step"] = 999;
        co_await out.emit(std::move(partial));
        CHECK(ctx.state("step")->as_int64() == 20);  // partial events are never persisted
        CHECK(ctx.session().events.size() == 21);
    });
    auto reader = std::make_shared<FnAgent>("reader", [&](adk::InvocationContext& ctx, adk::EventSink&) -> asio::awaitable<void> {
        CHECK(ctx.state("step")->as_int64() == 20);  // another agent of the invocation sees it
        CHECK(ctx.state("temp:scratch")->as_int64() == 20);
        ++checks;
        co_return;
    });
    auto root = std::make_shared<FnAgent>(
        "root",
        [](adk::InvocationContext& ctx, adk::EventSink& out) -> asio::awaitable<void> {
            for (const auto& sub : ctx.agent().sub_agents())
                co_await sub->run_inline(ctx, out);
        },
        std::vector<std::shared_ptr<adk::Agent>>{writer, reader});
    adk::Runner runner({.app_name = "app", .agent = root, .session_service = sessions});
    adk::testing::ManualClock clock;  // the consumer's pauses on the test's clock
    auto consume = [&]() -> asio::awaitable<void> {
        co_await sessions->create_session({"app", "user1", "s"});
        auto stream = co_await runner.run("user1", "s", adk::Content::user("go"));
        adk::Timer slow(co_await asio::this_coro::executor);
        while (auto ev = co_await stream.next()) {  // a slow consumer (a second an event) changes nothing
            slow.expires_after(1s);
            co_await slow.async_wait(asio::use_awaitable);
        }
    };
    run(ioc, adk::test::passing_time(clock, 100ms, consume()));
    CHECK(checks == 21);
}

TEST_CASE("invariant 3: events reach the caller in commit order", "[runner][invariant]")
{
    asio::io_context ioc;
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::Runner runner({.app_name = "app", .agent = adk::test::counting_agent("counter", 3000), .session_service = sessions});
    run(ioc, [&]() -> asio::awaitable<void> {
        co_await sessions->create_session({"app", "user1", "s"});
        auto events = co_await adk::test::run_once(runner, "s", "go");
        auto stored = co_await sessions->get_session({"app", "user1", "s"});
        REQUIRE(events.size() == 3000);
        REQUIRE(stored->events.size() == 3001);
        for (std::size_t i = 0; i < events.size(); ++i) {
            CHECK(events[i].text() == std::to_string(i + 1));
            CHECK(events[i].id == stored->events[i + 1].id);
        }
    }());
}

TEST_CASE("invariant 4a: Runner::cancel stops the invocation and ends its stream", "[runner][invariant]")
{
    StuckRun f;
    double ended_after_ms = 0;
    std::string invocation_id;
    run(f.ioc, [&]() -> asio::awaitable<void> {
        auto stream = co_await f.start();
        auto first = co_await stream.next();
        co_await f.until_tool_waits();
        CHECK(!f.runner.cancel("e-not-running"));
        auto t0 = std::chrono::steady_clock::now();
        CHECK(f.runner.cancel(first->invocation_id));
        try {
            co_await stream.next();
            FAIL("the stream did not end with an error");
        } catch (const adk::Error& e) {
            CHECK(e.code() == adk::errc::cancelled);
            CHECK_THAT(e.message(), Catch::Contains("Runner::cancel"));
        }
        ended_after_ms = ms_since(t0);
        invocation_id = first->invocation_id;
    }());
    CHECK(!f.runner.cancel(invocation_id));  // it ended: no longer registered
    CHECK(*f.outcome == 1);  // the tool saw operation_aborted; run() checked nothing is left running
    std::cout << "Runner::cancel ended the stream in " << ended_after_ms << " ms\n";
}

TEST_CASE("invariant 4b: Stream::cancel stops the invocation", "[runner][invariant]")
{
    StuckRun f;
    run(f.ioc, [&]() -> asio::awaitable<void> {
        auto stream = co_await f.start();
        auto got1 = co_await stream.next();
        CHECK(got1->text() == "working");
        co_await f.until_tool_waits();
        stream.cancel();
        auto got2 = co_await stream.next();
        CHECK(!got2);
    }());
    CHECK(*f.outcome == 1);
}

TEST_CASE("invariant 4c: dropping the stream stops the invocation", "[runner][invariant]")
{
    StuckRun f;
    run(f.ioc, [&]() -> asio::awaitable<void> {
        {
            auto stream = co_await f.start();
            auto got3 = co_await stream.next();
            CHECK(got3->text() == "working");
            co_await f.until_tool_waits();
        }
        const bool stopped = co_await adk::test::eventually([&] { return *f.outcome == 1; });
        CHECK(stopped);
    }());
}

TEST_CASE("invariant 4d: cancelling the awaiting coroutine stops the invocation", "[runner][invariant]")
{
    using namespace asio::experimental::awaitable_operators;
    StuckRun f;
    run(f.ioc, [&]() -> asio::awaitable<void> {
        auto consume = [&]() -> asio::awaitable<void> {
            auto stream = co_await f.start();
            while (co_await stream.next()) {
            }
        };
        asio::steady_timer deadline(co_await asio::this_coro::executor, 20ms);
        auto result = co_await (consume() || deadline.async_wait(asio::use_awaitable));
        CHECK(result.index() == 1);  // the deadline cancelled the consumer
    }());
    CHECK(*f.outcome == 1);
}

TEST_CASE("Runner::cancel from another thread while the io_context runs on 4 threads", "[runner][invariant][threads]")
{
    StuckRun f;
    std::promise<std::string> id_promise;
    auto consumer = [&]() -> asio::awaitable<std::string> {
        auto stream = co_await f.start();
        id_promise.set_value((co_await stream.next())->invocation_id);
        try {
            while (co_await stream.next()) {
            }
        } catch (const adk::Error& e) {
            co_return e.message();
        }
        co_return "ended without error";
    };
    auto result = asio::co_spawn(asio::make_strand(f.ioc), consumer, asio::use_future);
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i)
        threads.emplace_back([&] { f.ioc.run(); });
    std::string id = id_promise.get_future().get();
    CHECK(f.runner.cancel(id));  // from the test's own thread
    CHECK_THAT(result.get(), Catch::Contains("cancelled by Runner::cancel"));
    for (auto& t : threads)
        t.join();  // ioc.run() returns on every thread: no work left
    CHECK(*f.outcome == 1);
}

TEST_CASE("invariant 5: concurrent invocations on one session, io_context on 4 threads", "[runner][invariant][threads]")
{
    asio::io_context ioc;
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    constexpr int invocations = 8;
    constexpr int per_invocation = 300;
    std::atomic<int> off_strand{0};
    auto agent = std::make_shared<FnAgent>("worker", [&](adk::InvocationContext& ctx, adk::EventSink& out) -> asio::awaitable<void> {
        std::string key = "k_" + ctx.user_content()->text();
        for (int i = 0; i < per_invocation; ++i) {
            auto* strand = ctx.executor().target<asio::strand<asio::io_context::executor_type>>();
            if (!strand || !strand->running_in_this_thread())
                ++off_strand;
            adk::Event ev = ctx.make_event(adk::Content::model(std::to_string(i)));
            ev.actions.state_delta[key] = i;
            co_await out.emit(std::move(ev));
            if (ctx.state(key)->as_int64() != i)
                ++off_strand;  // counted as a failure too
        }
    });
    adk::Runner runner({.app_name = "app", .agent = agent, .session_service = sessions});
    auto created = asio::co_spawn(ioc, sessions->create_session({"app", "user1", "shared"}), asio::use_future);
    ioc.run();
    created.get();
    ioc.restart();

    std::vector<std::future<std::vector<adk::Event>>> results;
    for (int n = 0; n < invocations; ++n) {
        auto one = [&runner, n]() -> asio::awaitable<std::vector<adk::Event>> {
            co_return co_await adk::test::run_once(runner, "shared", std::to_string(n));
        };
        results.push_back(asio::co_spawn(ioc, one, asio::use_future));
    }
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i)
        threads.emplace_back([&] { ioc.run(); });
    for (int n = 0; n < invocations; ++n) {
        auto events = results[n].get();
        REQUIRE(events.size() == per_invocation);
        for (int i = 0; i < per_invocation; ++i)
            CHECK(events[i].text() == std::to_string(i));
    }
    for (auto& t : threads)
        t.join();
    CHECK(off_strand == 0);

    ioc.restart();
    auto stored = asio::co_spawn(ioc, sessions->get_session({"app", "user1", "shared"}), asio::use_future);
    ioc.run();
    auto session = stored.get();
    REQUIRE(session);
    CHECK(session->events.size() == invocations * (per_invocation + 1));
    for (int n = 0; n < invocations; ++n)
        CHECK(session->state.at("k_" + std::to_string(n)) == per_invocation - 1);
}

TEST_CASE("invariant 6: errors end the stream with adk::Error that says what to do", "[runner][invariant]")
{
    asio::io_context ioc;
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::Runner runner({.app_name = "app", .agent = adk::test::counting_agent("counter", 1), .session_service = sessions});
    run(ioc, [&]() -> asio::awaitable<void> {
        try {
            co_await runner.run("user1", "missing", adk::Content::user("go"));
            FAIL("ran without a session");
        } catch (const adk::Error& e) {
            CHECK(e.code() == adk::errc::not_found);
            CHECK_THAT(e.message(), Catch::Contains("create it first with create_session()"));
        }
    }());

    CHECK_THROWS_WITH(adk::Runner({.app_name = "", .agent = adk::test::counting_agent("a", 1), .session_service = sessions}),
                      Catch::Contains("app_name"));
    CHECK_THROWS_WITH(adk::Runner({.app_name = "app", .agent = nullptr, .session_service = sessions}),
                      Catch::Contains("root agent"));
    CHECK_THROWS_WITH(adk::Runner({.app_name = "app", .agent = adk::test::counting_agent("a", 1)}),
                      Catch::Contains("InMemorySessionService"));

    // The session disappears while the agent runs: the commit fails and says so; nothing is half-stored.
    auto deleter = std::make_shared<FnAgent>("deleter", [&](adk::InvocationContext& ctx, adk::EventSink& out) -> asio::awaitable<void> {
        co_await sessions->delete_session({ctx.app_name(), ctx.user_id(), ctx.session_id()});
        co_await out.emit(ctx.make_event(adk::Content::model("lost?")));
    });
    adk::Runner deleting({.app_name = "app", .agent = deleter, .session_service = sessions});
    run(ioc, [&]() -> asio::awaitable<void> {
        co_await sessions->create_session({"app", "user1", "doomed"});
        auto stream = co_await deleting.run("user1", "doomed", adk::Content::user("go"));
        try {
            while (co_await stream.next()) {
            }
            FAIL("no error");
        } catch (const adk::Error& e) {
            CHECK(e.code() == adk::errc::not_found);
            CHECK_THAT(e.message(), Catch::Contains("was it deleted"));
        }
    }());
}

TEST_CASE("a run without parts adds no user event, and RunConfig reaches the agent", "[runner]")
{
    asio::io_context ioc;
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    auto probe = std::make_shared<FnAgent>("probe", [](adk::InvocationContext& ctx, adk::EventSink& out) -> asio::awaitable<void> {
        CHECK(!ctx.user_content());
        CHECK(ctx.run_config().streaming_mode == adk::StreamingMode::sse);
        CHECK(ctx.run_config().max_llm_calls == 7);
        CHECK(ctx.root_agent()->name() == "probe");
        co_await out.emit(ctx.make_event(adk::Content::model("ok")));
    });
    adk::Runner runner({.app_name = "app", .agent = probe, .session_service = sessions});
    run(ioc, [&]() -> asio::awaitable<void> {
        co_await sessions->create_session({"app", "user1", "s"});
        adk::RunConfig config;
        config.streaming_mode = adk::StreamingMode::sse;
        config.max_llm_calls = 7;
        auto stream = co_await runner.run("user1", "s", adk::Content(), config);
        auto got4 = co_await adk::test::drain(stream);
        CHECK(got4.size() == 1);
        auto got5 = co_await sessions->get_session({"app", "user1", "s"});
        CHECK(got5->events.size() == 1);
    }());
}

TEST_CASE("RunnerOptions::single_threaded: invocations and parallel branches run on the caller's executor", "[runner]")
{
    asio::io_context ioc(1);
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    std::atomic<int> on_strand{0};
    std::atomic<int> elsewhere{0};
    auto counter = [&](std::string name) {
        return std::make_shared<FnAgent>(name, [&](adk::InvocationContext& ctx, adk::EventSink& out) -> asio::awaitable<void> {
            for (int i = 0; i < 50; ++i) {
                if (ctx.executor().target<asio::strand<asio::io_context::executor_type>>())
                    ++on_strand;
                if (ctx.executor() != asio::any_io_executor(ioc.get_executor()))
                    ++elsewhere;
                adk::Event ev = ctx.make_event(adk::Content::model(std::to_string(i)));
                co_await out.emit(std::move(ev));
            }
        });
    };
    auto fanout = std::make_shared<adk::ParallelAgent>("fanout", "Two counters.",
                                                       std::vector<std::shared_ptr<adk::Agent>>{counter("x"), counter("y")});
    adk::Runner runner({.app_name = "app", .agent = fanout, .session_service = sessions, .single_threaded = true});

    // Three invocations at once on one thread: each sees its own branches' events, in order.
    run(ioc, [&]() -> asio::awaitable<void> {
        for (int n = 0; n < 3; ++n)
            co_await sessions->create_session({"app", "user1", "s" + std::to_string(n)});
    }());
    std::vector<std::future<std::vector<adk::Event>>> results;
    for (int n = 0; n < 3; ++n)
        results.push_back(asio::co_spawn(ioc, adk::test::run_once(runner, "s" + std::to_string(n), "go"), asio::use_future));
    ioc.restart();
    ioc.run();
    std::vector<std::vector<adk::Event>> got;
    for (auto& result : results)
        got.push_back(result.get());
    CHECK(on_strand == 0);
    CHECK(elsewhere == 0);
    for (const auto& events : got) {
        REQUIRE(events.size() == 100);
        std::map<std::string, int> next;
        for (const auto& ev : events) {
            CHECK(ev.text() == std::to_string(next[ev.branch]));
            ++next[ev.branch];
        }
        CHECK(next == std::map<std::string, int>{{"fanout.x", 50}, {"fanout.y", 50}});
    }

    // Without the option, the same agents run on strands.
    adk::Runner stranded({.app_name = "app", .agent = fanout, .session_service = sessions});
    run(ioc, [&]() -> asio::awaitable<void> {
        auto events = co_await adk::test::run_once(stranded, "s0", "again");
        CHECK(events.size() == 100);
    }());
    CHECK(on_strand == 100);
}

TEST_CASE("EventSink::try_emit hands partial events over at once and leaves the rest to emit", "[runner]")
{
    asio::io_context ioc;
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    int handed_at_once = 0;
    bool kept_when_full = false;
    bool final_kept = false;
    bool null_refused = false;
    auto producer = std::make_shared<FnAgent>("typist", [&](adk::InvocationContext& ctx, adk::EventSink& out) -> asio::awaitable<void> {
        std::unique_ptr<adk::Event> none;
        try {
            out.try_emit(none);
        } catch (const adk::Error& e) {
            null_refused = e.code() == adk::errc::invalid_argument;
        }
        // The caller reads nothing until a delta is kept: deltas go into the stream's queue until it is full.
        for (int i = 0; i < 100; ++i) {
            auto delta = std::make_unique<adk::Event>(ctx.make_event(adk::Content::model(std::to_string(i))));
            delta->partial = true;
            if (out.try_emit(delta)) {
                ++handed_at_once;
                continue;
            }
            kept_when_full = delta && delta->text() == std::to_string(i);
            co_await out.emit(std::move(delta));  // waits for the consumer
        }
        auto whole = std::make_unique<adk::Event>(ctx.make_event(adk::Content::model("done")));
        final_kept = !out.try_emit(whole) && whole;  // not partial: it must be committed first
        co_await out.emit(std::move(whole));
    });
    adk::Runner runner({.app_name = "app", .agent = producer, .session_service = sessions});
    run(ioc, [&]() -> asio::awaitable<void> {
        co_await sessions->create_session({"app", "user1", "s"});
        adk::Content go = adk::Content::user("go");
        auto stream = co_await runner.run("user1", "s", std::move(go));
        auto ex = co_await asio::this_coro::executor;
        while (!kept_when_full)
            co_await asio::post(ex, asio::use_awaitable);
        std::vector<adk::Event> events;
        while (auto ev = co_await stream.next())
            events.push_back(std::move(*ev));
        REQUIRE(events.size() == 101);
        for (int i = 0; i < 100; ++i)
            CHECK(events[i].text() == std::to_string(i));
        CHECK(events[100].text() == "done");
        auto stored = co_await sessions->get_session({"app", "user1", "s"});
        CHECK(stored->events.back().text() == "done");  // committed; the partial deltas are not stored
        CHECK(stored->events.size() == 2);
    }());
    CHECK(null_refused);
    CHECK(handed_at_once >= static_cast<int>(adk::default_stream_capacity));
    CHECK(handed_at_once < 100);
    CHECK(kept_when_full);
    CHECK(final_kept);
}

namespace {

// The in-memory service behind a store that takes its time after each write, as a database's round trip
// does: an event by `slow_author` is acknowledged 5 ms after it is stored, the others at once.
class SlowStore final : public adk::SessionService {
public:
    explicit SlowStore(std::string slow_author) : slow_author_(std::move(slow_author)) {}
    std::shared_ptr<adk::InMemorySessionService> inner = std::make_shared<adk::InMemorySessionService>();

protected:
    asio::awaitable<adk::Session> do_create_session(adk::CreateSessionRequest request) override
    {
        co_return co_await inner->create_session(std::move(request));
    }
    asio::awaitable<std::optional<adk::Session>> do_get_session(adk::GetSessionRequest request) override
    {
        co_return co_await inner->get_session(std::move(request));
    }
    asio::awaitable<std::vector<adk::Session>> do_list_sessions(adk::ListSessionsRequest request) override
    {
        co_return co_await inner->list_sessions(std::move(request));
    }
    asio::awaitable<void> do_delete_session(adk::DeleteSessionRequest request) override
    {
        co_await inner->delete_session(std::move(request));
    }
    asio::awaitable<void> do_append_event(adk::AppendEventRequest request) override
    {
        adk::Session stored(request.key.session_id, request.key.app_name, request.key.user_id);
        co_await inner->append_event(stored, request.event);
        if (request.event.author == slow_author_) {
            asio::steady_timer ack(co_await asio::this_coro::executor, 5ms);
            co_await ack.async_wait(asio::use_awaitable);
        }
    }

private:
    std::string slow_author_;
};

}  // namespace

TEST_CASE("parallel branches: the service stores events in the order the invocation sees them", "[runner][threads]")
{
    // Branch a's writes are acknowledged late; b's at once. The invocation's copy of the session used to get
    // each event when its write was acknowledged, so b's overtook a's there but not in the store.
    for (int threads : {1, 4}) {
        INFO("threads: " << threads);
        auto store = std::make_shared<SlowStore>("a");
        auto writer = [](std::string name) {
            return std::make_shared<FnAgent>(name, [name](adk::InvocationContext& ctx, adk::EventSink& out) -> asio::awaitable<void> {
                for (int i = 0; i < 4; ++i) {
                    adk::Event ev = ctx.make_event(adk::Content::model(name + std::to_string(i)));
                    ev.actions.state_delta["last"] = name + std::to_string(i);
                    co_await out.emit(std::move(ev));
                }
            });
        };
        auto seen = std::make_shared<std::vector<std::string>>();
        auto state_seen = std::make_shared<json::value>();
        auto recorder = std::make_shared<FnAgent>("recorder", [seen, state_seen](adk::InvocationContext& ctx, adk::EventSink&) -> asio::awaitable<void> {
            for (const auto& e : ctx.session().events)
                seen->push_back(e.id);
            *state_seen = ctx.state("last").value_or(nullptr);
            co_return;
        });
        auto fanout = std::make_shared<adk::ParallelAgent>("fanout", "At once.",
                                                           std::vector<std::shared_ptr<adk::Agent>>{writer("a"), writer("b")});
        auto root = std::make_shared<adk::SequentialAgent>("root", "In order.",
                                                           std::vector<std::shared_ptr<adk::Agent>>{fanout, recorder});
        asio::io_context ioc;
        adk::Runner runner({.app_name = "app", .agent = root, .session_service = store});
        std::vector<std::string> stored;
        json::value stored_state;
        auto body = [&]() -> asio::awaitable<void> {
            co_await store->create_session({"app", "user1", "s"});
            auto stream = co_await runner.run("user1", "s", adk::Content::user("go"));
            co_await adk::test::drain(stream);
            auto session = co_await store->get_session({"app", "user1", "s"});
            for (const auto& e : session->events)
                stored.push_back(e.id);
            stored_state = session->state.at("last");
        };
        std::exception_ptr failure;
        asio::co_spawn(ioc, body, [&](std::exception_ptr e) { failure = e; });
        std::vector<std::thread> pool;
        for (int t = 1; t < threads; ++t)
            pool.emplace_back([&] { ioc.run(); });
        ioc.run();
        for (auto& t : pool)
            t.join();
        if (failure)
            std::rethrow_exception(failure);
        REQUIRE(stored.size() == 9);  // the user's message and four events of each branch
        CHECK(*seen == stored);
        CHECK(*state_seen == stored_state);  // the last write wins in both
    }
}

TEST_CASE("a temp: key is checked like any key, and a refused event changes nothing", "[runner]")
{
    for (const char* bad : {"temp:../../etc/x\n\x01", "temp:", "app:", "user:"}) {
        INFO(bad);
        auto agent = std::make_shared<FnAgent>("a", [bad](adk::InvocationContext& ctx, adk::EventSink& out) -> asio::awaitable<void> {
            adk::Event ev = ctx.make_event(adk::Content::model("x"));
            ev.actions.state_delta["fine"] = 1;
            ev.actions.state_delta[bad] = 2;
            co_await out.emit(std::move(ev));
        });
        asio::io_context ioc;
        auto sessions = std::make_shared<adk::InMemorySessionService>();
        adk::Runner runner({.app_name = "app", .agent = agent, .session_service = sessions});
        std::string failure;
        std::optional<adk::Session> after;
        run(ioc, [&]() -> asio::awaitable<void> {
            co_await sessions->create_session({"app", "user1", "s"});
            auto stream = co_await runner.run("user1", "s", adk::Content::user("go"));
            try {
                co_await adk::test::drain(stream);
            } catch (const adk::Error& e) {
                CHECK(e.code() == adk::errc::invalid_argument);
                failure = e.message();
            }
            after = co_await sessions->get_session({"app", "user1", "s"});
        }());
        CHECK_THAT(failure, Catch::Contains("is refused"));
        REQUIRE(after);
        CHECK(after->events.size() == 1);  // the user's message only
        CHECK(!after->state.contains("fine"));
    }
}

TEST_CASE("a RunRequest carries a state delta in with the message, or alone, and refuses what it cannot do", "[runner]")
{
    asio::io_context ioc;
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    auto seen = std::make_shared<std::vector<std::string>>();
    auto reader = std::make_shared<FnAgent>("reader", [seen](adk::InvocationContext& ctx, adk::EventSink& out) -> asio::awaitable<void> {
        for (const char* key : {"k", "user:city", "temp:draft"})
            seen->push_back(json::serialize(ctx.state(key).value_or(nullptr)));
        co_await out.emit(ctx.make_event(adk::Content::model("read")));
    });
    adk::Runner runner({.app_name = "app", .agent = reader, .session_service = sessions});
    std::optional<adk::Session> after;
    std::vector<std::string> refusals;
    run(ioc, [&]() -> asio::awaitable<void> {
        co_await sessions->create_session({"app", "user1", "s"});
        adk::RunRequest with_message("user1", "s", adk::Content::user("hello"));
        with_message.state_delta = json::object{{"k", 2}, {"user:city", "Paris"}, {"temp:draft", true}};
        auto stream = co_await runner.run(std::move(with_message));
        co_await adk::test::drain(stream);

        adk::RunRequest alone("user1", "s");  // no message: an event of the user's with only the delta
        alone.state_delta = json::object{{"k", 3}};
        auto second = co_await runner.run(std::move(alone));
        co_await adk::test::drain(second);
        after = co_await sessions->get_session({"app", "user1", "s"});

        adk::RunRequest resume("user1", "s");
        resume.invocation_id = "e-123";
        adk::RunRequest bad_key("user1", "s", adk::Content::user("x"));
        bad_key.state_delta = json::object{{"../x", 1}};
        for (adk::RunRequest* r : {&resume, &bad_key}) {
            try {
                co_await runner.run(std::move(*r));
            } catch (const adk::Error& e) {
                CHECK(e.code() == adk::errc::invalid_argument);
                refusals.push_back(e.message());
            }
        }
    }());
    // The agent saw the delta, temp: key included, before it ran.
    REQUIRE(seen->size() == 6);
    CHECK((*seen)[0] == "2");
    CHECK((*seen)[1] == "\"Paris\"");
    CHECK((*seen)[2] == "true");
    CHECK((*seen)[3] == "3");
    REQUIRE(after);
    REQUIRE(after->events.size() == 4);  // message + answer, delta alone + answer
    const adk::Event& message = after->events[0];
    CHECK(message.author == "user");
    CHECK(message.text() == "hello");
    CHECK(message.actions.state_delta == json::object{{"k", 2}, {"user:city", "Paris"}});  // temp: never stored
    const adk::Event& delta_only = after->events[2];
    CHECK(delta_only.author == "user");
    CHECK(!delta_only.content);
    CHECK(delta_only.actions.state_delta == json::object{{"k", 3}});
    CHECK(after->state.at("k") == 3);
    CHECK(after->state.at("user:city") == "Paris");
    CHECK(!after->state.contains("temp:draft"));
    REQUIRE(refusals.size() == 2);
    CHECK_THAT(refusals[0], Catch::Contains("is not resumable"));
    CHECK_THAT(refusals[1], Catch::Contains("state key '../x' is refused"));
}

TEST_CASE("invocations of one session take turns: none loses another's read-modify-write of state", "[runner][threads]")
{
    asio::io_context ioc;
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    auto agent = std::make_shared<FnAgent>("adder", [](adk::InvocationContext& ctx, adk::EventSink& out) -> asio::awaitable<void> {
        auto before = ctx.state("counter");
        std::int64_t seen = before ? before->as_int64() : 0;
        asio::steady_timer pause(ctx.executor(), std::chrono::milliseconds(2));  // another invocation could run now
        co_await pause.async_wait(asio::use_awaitable);
        adk::Event ev = ctx.make_event(adk::Content::model("added"));
        ev.actions.state_delta["counter"] = seen + 1;
        co_await out.emit(std::move(ev));
    });
    adk::Runner runner({.app_name = "app", .agent = agent, .session_service = sessions});
    auto created = asio::co_spawn(ioc, sessions->create_session({"app", "user1", "shared"}), asio::use_future);
    ioc.run();
    created.get();
    ioc.restart();
    constexpr int invocations = 8;
    std::vector<std::future<std::vector<adk::Event>>> results;
    for (int n = 0; n < invocations; ++n) {
        auto one = [&runner]() -> asio::awaitable<std::vector<adk::Event>> {
            co_return co_await adk::test::run_once(runner, "shared", "add one");
        };
        results.push_back(asio::co_spawn(ioc, one, asio::use_future));
    }
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i)
        threads.emplace_back([&] { ioc.run(); });
    for (auto& r : results)
        CHECK(r.get().size() == 1);
    for (auto& t : threads)
        t.join();
    ioc.restart();
    auto stored = asio::co_spawn(ioc, sessions->get_session({"app", "user1", "shared"}), asio::use_future);
    ioc.run();
    auto session = stored.get();
    REQUIRE(session);
    CHECK(session->state.at("counter") == invocations);
}
