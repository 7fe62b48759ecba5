#include <adk/core/clock.hpp>
#include <adk/testing/manual_clock.hpp>

#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <atomic>
#include <stdexcept>

namespace adk {

namespace {

// The process's clock: real time plus an offset (what a manual clock advanced before it ended), or a manual time.
std::atomic<bool> manual_now_set{false};
std::atomic<Clock::rep> manual_ticks{0};
std::atomic<Clock::rep> offset_ticks{0};

Clock::rep real_ticks() noexcept
{
    return std::chrono::steady_clock::now().time_since_epoch().count() + offset_ticks.load(std::memory_order_relaxed);
}

constexpr Clock::duration manual_wait_cap = std::chrono::milliseconds(1);

}  // namespace

Clock::time_point Clock::now() noexcept
{
    if (manual_now_set.load(std::memory_order_acquire))
        return time_point(duration(manual_ticks.load(std::memory_order_acquire)));
    return time_point(duration(real_ticks()));
}

bool Clock::manual() noexcept
{
    return manual_now_set.load(std::memory_order_acquire);
}

Clock::duration ClockWaitTraits::to_wait_duration(const Clock::duration& d) noexcept
{
    return Clock::manual() ? std::min(d, manual_wait_cap) : d;
}

Clock::duration ClockWaitTraits::to_wait_duration(const Clock::time_point& t) noexcept
{
    const Clock::duration d = std::max(t - Clock::now(), Clock::duration::zero());
    return to_wait_duration(d);
}

namespace testing {

ManualClock::ManualClock()
{
    if (manual_now_set.load())
        throw std::logic_error("a ManualClock drives the clock already: one at a time");
    manual_ticks.store(real_ticks());
    manual_now_set.store(true, std::memory_order_release);
}

ManualClock::~ManualClock()
{
    // Real time again, never behind the manual time.
    const Clock::rep manual = manual_ticks.load();
    const Clock::rep real = real_ticks();
    if (manual > real)
        offset_ticks.fetch_add(manual - real);
    manual_now_set.store(false, std::memory_order_release);
}

void ManualClock::advance(Clock::duration d) noexcept
{
    if (d > Clock::duration::zero())
        manual_ticks.fetch_add(d.count(), std::memory_order_acq_rel);
}

boost::asio::awaitable<void> ManualClock::elapse(Clock::duration d)
{
    advance(d);
    // A timer due now fires after every timer due before it (one queue, in order of expiry).
    auto executor = co_await boost::asio::this_coro::executor;
    Timer due(std::move(executor), Clock::now());
    co_await due.async_wait(boost::asio::use_awaitable);
}

}  // namespace testing

}  // namespace adk
