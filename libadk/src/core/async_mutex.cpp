#include <adk/core/async_mutex.hpp>
#include <adk/core/wakeup.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace adk {

class AsyncMutex::Waiter {
public:
    explicit Waiter(asio::any_io_executor executor) : wake(std::move(executor)) {}
    Wakeup wake;
    bool granted = false;  // under the mutex's mutex_: unlock() handed it the lock
};

AsyncMutex::~AsyncMutex() = default;

bool AsyncMutex::try_lock()
{
    std::lock_guard guard(mutex_);
    return !std::exchange(held_, true);
}

asio::awaitable<void> AsyncMutex::lock()
{
    auto executor = co_await asio::this_coro::executor;  // does not suspend
    std::shared_ptr<Waiter> waiter;
    {
        std::lock_guard guard(mutex_);
        if (!held_) {
            held_ = true;
            co_return;
        }
        waiter = std::make_shared<Waiter>(std::move(executor));
        waiting_.push_back(waiter);
    }
    auto [ec] = co_await waiter->wake.async_wait(asio::as_tuple(asio::use_awaitable));
    if (!ec)
        co_return;
    bool granted = false;
    {
        std::lock_guard guard(mutex_);
        granted = waiter->granted;
        if (!granted)
            std::erase(waiting_, waiter);
    }
    if (granted)
        unlock();  // handed over as the wait was given up: pass it on
    throw boost::system::system_error(asio::error::operation_aborted, "waiting for a lock was cancelled");
}

void AsyncMutex::unlock()
{
    std::shared_ptr<Waiter> next;
    {
        std::lock_guard guard(mutex_);
        if (waiting_.empty()) {
            held_ = false;
            return;
        }
        next = std::move(waiting_.front());
        waiting_.erase(waiting_.begin());
        next->granted = true;
    }
    next->wake.notify();
}

}  // namespace adk
