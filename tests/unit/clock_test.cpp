// adk::Clock and adk::Timer, the runtime's one source of time, and ManualClock, the clock a test moves.
#include <adk/core/clock.hpp>
#include <adk/testing/manual_clock.hpp>

#include "support/run.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using adk::test::run;

TEST_CASE("a ManualClock stands still until the test moves it, and the clock never goes back after it", "[clock]")
{
    adk::Clock::time_point during{};
    {
        adk::testing::ManualClock clock;
        CHECK(adk::Clock::manual());
        const auto start = adk::Clock::now();
        CHECK(adk::Clock::now() == start);
        clock.advance(90s);
        CHECK(adk::Clock::now() - start == 90s);
        clock.advance(-5s);  // never back
        CHECK(adk::Clock::now() - start == 90s);
        during = adk::Clock::now();
        CHECK_THROWS(adk::testing::ManualClock());  // one at a time
    }
    CHECK(!adk::Clock::manual());
    CHECK(adk::Clock::now() >= during);  // real time again, ahead by what was advanced
}

TEST_CASE("an hour's timer fires when a ManualClock is moved past it, and elapse() returns after the timers due",
          "[clock]")
{
    adk::testing::ManualClock clock;
    asio::io_context ioc;
    std::vector<std::string> fired;
    adk::Timer hour(ioc, 1h), minute(ioc, 1min), day(ioc, 24h);
    hour.async_wait([&](boost::system::error_code ec) { fired.push_back(ec ? "hour cancelled" : "hour"); });
    minute.async_wait([&](boost::system::error_code ec) { fired.push_back(ec ? "minute cancelled" : "minute"); });
    day.async_wait([&](boost::system::error_code ec) { fired.push_back(ec ? "day cancelled" : "day"); });
    run(ioc, [&]() -> asio::awaitable<void> {
        co_await clock.elapse(59s);
        CHECK(fired.empty());
        co_await clock.elapse(2h);
        CHECK(fired == std::vector<std::string>{"minute", "hour"});  // in order of their time
        day.cancel();
    }());
    CHECK(fired == std::vector<std::string>{"minute", "hour", "day cancelled"});
}
