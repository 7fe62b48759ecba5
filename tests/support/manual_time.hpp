// Time in tests: the runtime's timers on a clock the test moves (adk::testing::ManualClock), so that a test of a
// 30-second grace period or a retry after 2 s takes no real time.
//
// Two ways to move it:
// - `co_await clock.elapse(d)` where the test knows what waits (a run held for its grace, a request in flight);
// - `passing_time(clock, step, aw)`: the clock moves `step` at each turn of the io_context while `aw` runs, so every
//   timer fires in its order, as fast as the test runs. Made for tests with no real I/O (in-memory agents,
//   workflows). Beside real sockets or processes the clock outruns their progress, which takes real time: there a
//   test keeps many turns between what must happen and what must not (a 1-minute idle timeout against a server
//   that pauses 5, steps of 1 s), and says its margin.
#pragma once

#include <adk/testing/manual_clock.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <memory>

namespace adk::test {

// Runs `aw` while `clock` moves forward by `step` at each turn of the io_context; returns what `aw` returns.
template <class T>
boost::asio::awaitable<T> passing_time(adk::testing::ManualClock& clock, adk::Clock::duration step,
                                       boost::asio::awaitable<T> aw)
{
    auto done = std::make_shared<bool>(false);
    auto ticking = [](adk::testing::ManualClock& c, adk::Clock::duration s,
                      std::shared_ptr<bool> stop) -> boost::asio::awaitable<void> {
        while (!*stop)
            co_await c.elapse(s);
    };
    auto executor = co_await boost::asio::this_coro::executor;
    boost::asio::co_spawn(executor, ticking(clock, step, done), boost::asio::detached);
    struct Stop {
        std::shared_ptr<bool> done;
        ~Stop() { *done = true; }
    } stop{done};
    co_return co_await std::move(aw);
}

inline boost::asio::awaitable<void> passing_time(adk::testing::ManualClock& clock, adk::Clock::duration step,
                                                 boost::asio::awaitable<void> aw)
{
    auto wrapped = [](boost::asio::awaitable<void> inner) -> boost::asio::awaitable<bool> {
        co_await std::move(inner);
        co_return true;
    };
    (void)co_await passing_time(clock, step, wrapped(std::move(aw)));
}

// Waits until `ready()` holds: something another thread, process or connection makes true (a request reached a
// server, a run was listed). Checks each real millisecond; false when `limit` passed first (the test then fails).
// This waits for an event, not for time: a test never waits for a duration to pass.
template <class Ready>
boost::asio::awaitable<bool> eventually(Ready ready, std::chrono::milliseconds limit = std::chrono::seconds(10))
{
    const auto until = std::chrono::steady_clock::now() + limit;
    boost::asio::steady_timer tick(co_await boost::asio::this_coro::executor);
    while (!ready()) {
        if (std::chrono::steady_clock::now() >= until)
            co_return false;
        tick.expires_after(std::chrono::milliseconds(1));
        co_await tick.async_wait(boost::asio::use_awaitable);
    }
    co_return true;
}

}  // namespace adk::test
