// ManualClock: a clock a test moves, for adk::Clock and every adk::Timer of the process (adk/core/clock.hpp).
//
//   adk::testing::ManualClock clock;   // from here, time stands still
//   ... start a run whose grace period is 30 s ...
//   clock.advance(std::chrono::seconds(31));   // its timer is due: it fires at the next turn of the io_context
//
// One at a time per process. Destroying it gives the runtime the real clock back, ahead by what was advanced (the
// clock never goes back).
#pragma once

#include <adk/core/clock.hpp>

#include <boost/asio/awaitable.hpp>

namespace adk::testing {

class ManualClock {
public:
    ManualClock();
    ~ManualClock();
    ManualClock(const ManualClock&) = delete;
    ManualClock& operator=(const ManualClock&) = delete;

    // Moves the clock forward by `d` (from any thread): timers due by then fire at the next turn of their
    // io_context.
    void advance(Clock::duration d) noexcept;

    // Moves the clock forward by `d`, then returns once every timer of the awaiting coroutine's io_context that was
    // due by then has fired (their handlers run before this one).
    boost::asio::awaitable<void> elapse(Clock::duration d);
};

}  // namespace adk::testing
