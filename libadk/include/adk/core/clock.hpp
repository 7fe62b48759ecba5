// The runtime's time. Every timer and deadline of the runtime, the server and the components reads adk::Clock and
// waits on an adk::Timer, so that one source gives them their time: the real steady clock, or, in a test, a clock
// the test moves (adk::testing::ManualClock), as Boost.MySQL's tests drive their timers. A test of a 30-second
// grace period then takes no 30 seconds.
//
// (Beast's own stream timeouts, which the HTTP server's connections use for their read and write limits, keep to the
// steady clock: beast::basic_stream does not take another.)
#pragma once

#include <boost/asio/basic_waitable_timer.hpp>
#include <boost/asio/any_io_executor.hpp>

#include <chrono>

namespace adk {

class Clock {
public:
    using duration = std::chrono::steady_clock::duration;
    using rep = duration::rep;
    using period = duration::period;
    using time_point = std::chrono::time_point<Clock>;
    static constexpr bool is_steady = true;

    // The steady clock, or the test's clock while one drives it. Never goes back.
    static time_point now() noexcept;
    // Whether a test drives the clock now.
    static bool manual() noexcept;
};

// Asio's wait traits for Clock: while a test drives it, the reactor waits at most a millisecond at a time, so that a
// timer the test made due fires at once, not after a real wait of its length.
class ClockWaitTraits {
public:
    static Clock::duration to_wait_duration(const Clock::duration& d) noexcept;
    static Clock::duration to_wait_duration(const Clock::time_point& t) noexcept;
};

using Timer = boost::asio::basic_waitable_timer<Clock, ClockWaitTraits, boost::asio::any_io_executor>;

}  // namespace adk
