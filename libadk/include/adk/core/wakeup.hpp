// Wakeup: one coroutine's wake-up call, given from any thread. The one primitive the runtime's parts wait on
// when they wait for a signal rather than for messages: a follower for the next frame, a request for its
// answer, a caller for a flight under way, a waiter for its turn of a lock (AsyncMutex, adk/core/async_mutex.hpp).
//
// It is an Asio experimental concurrent channel with room for one token (ConcurrentChannel, adk/core/channel.hpp):
// a wake given before the wait is kept (one, however many are given), the wait completes on the waiter's
// executor, and cancelling the awaiting coroutine completes the wait with an error (per-operation cancellation).
//
// After a cancelled wait, a wake given before the next wait begins is lost: Boost 1.81's channel leaves its buffer
// blocked when its last waiting receive is cancelled (a wait that begins unblocks it). Every user here is done with a
// Wakeup once its wait was cancelled (a new wait gets a new Wakeup); one that waits again must not count on a wake
// kept from that time.
#pragma once

#include <adk/core/channel.hpp>

#include <utility>

namespace adk {

class Wakeup {
public:
    // `executor`: where the wait completes (the waiter's).
    explicit Wakeup(asio::any_io_executor executor) : channel_(std::move(executor), 1) {}
    Wakeup(const Wakeup&) = delete;
    Wakeup& operator=(const Wakeup&) = delete;

    // Wakes the wait under way, or keeps the wake for the next one. From any thread; never blocks.
    void notify() noexcept { (void)channel_.try_send(boost::system::error_code{}); }

    // Takes a kept wake without waiting: true when there was one.
    bool try_take() noexcept
    {
        return channel_.try_receive([](boost::system::error_code) {});
    }

    // Waits for a wake (or takes a kept one). Completes with `void(error_code)`: no error when woken, an error when
    // the wait was cancelled. With asio::use_awaitable, a cancelled wait throws boost::system::system_error.
    template <class CompletionToken>
    auto async_wait(CompletionToken&& token)
    {
        return channel_.async_receive(std::forward<CompletionToken>(token));
    }

    asio::any_io_executor get_executor() noexcept { return channel_.get_executor(); }

private:
    ConcurrentChannel<void(boost::system::error_code)> channel_;
};

}  // namespace adk
