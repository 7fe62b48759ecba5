// An awaitable lock for the MCP client's one-at-a-time steps across threads: a toolset's connection starts and
// closes, an OAuth client's discovery and registration shared by a toolset's users. Internal to adk::mcp.
#pragma once

#include <adk/core/channel.hpp>

#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <deque>
#include <memory>
#include <mutex>

namespace adk::mcp::detail {

namespace asio = boost::asio;

using Wake = adk::ConcurrentChannel<void(boost::system::error_code)>;

// One holder at a time, across threads: an awaitable lock. It holds no I/O object between uses (a toolset may
// outlive an io_context): each waiter brings a channel of its own executor's.
class Gate {
public:
    asio::awaitable<void> lock()
    {
        auto waiter = std::make_shared<Waiter>();
        {
            std::lock_guard guard(mutex_);
            if (!held_) {
                held_ = true;
                co_return;
            }
            waiter->wake = std::make_shared<Wake>(co_await asio::this_coro::executor, 1);
            waiting_.push_back(waiter);
        }
        bool cancelled = false;
        try {
            co_await waiter->wake->async_receive(asio::use_awaitable);
        } catch (const boost::system::system_error&) {
            cancelled = true;
        }
        if (!cancelled)
            co_return;
        bool handed = false;
        {
            std::lock_guard guard(mutex_);
            waiter->abandoned = true;
            handed = waiter->handed;
        }
        if (handed)
            unlock();  // it was ours already: pass it on
        throw boost::system::system_error(asio::error::operation_aborted);
    }

    void unlock()
    {
        std::shared_ptr<Waiter> next;
        {
            std::lock_guard guard(mutex_);
            while (!waiting_.empty() && waiting_.front()->abandoned)
                waiting_.pop_front();
            if (waiting_.empty()) {
                held_ = false;
                return;
            }
            next = waiting_.front();
            waiting_.pop_front();
            next->handed = true;
        }
        next->wake->try_send(boost::system::error_code{});
    }

private:
    class Waiter {
    public:
        std::shared_ptr<Wake> wake;
        bool handed = false;
        bool abandoned = false;
    };
    std::mutex mutex_;
    bool held_ = false;
    std::deque<std::shared_ptr<Waiter>> waiting_;
};

// Unlocks on every way out, the coroutine's frame destroyed included.
class GateGuard {
public:
    explicit GateGuard(Gate& gate) : gate_(gate) {}
    GateGuard(const GateGuard&) = delete;
    GateGuard& operator=(const GateGuard&) = delete;
    ~GateGuard() { gate_.unlock(); }

private:
    Gate& gate_;
};

}  // namespace adk::mcp::detail
