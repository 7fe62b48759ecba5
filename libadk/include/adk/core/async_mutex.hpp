// AsyncMutex: a lock that a coroutine awaits without blocking its thread, across threads, first come first
// served. Each waiter waits on a Wakeup of its own executor (adk/core/wakeup.hpp), so the lock holds no I/O object
// between uses and may outlive an io_context. Used where one thing at a time must happen across coroutines: an
// invocation's commits, a session's turns in one process, an MCP client's connection steps.
#pragma once

#include <boost/asio/awaitable.hpp>

#include <memory>
#include <mutex>
#include <vector>

namespace adk {

class AsyncMutex {
public:
    AsyncMutex() = default;
    AsyncMutex(const AsyncMutex&) = delete;
    AsyncMutex& operator=(const AsyncMutex&) = delete;
    ~AsyncMutex();

    // Takes the lock when it is free; never waits.
    bool try_lock();
    // Takes the lock, waiting while another holds it. When the awaiting coroutine is cancelled while it waits, throws
    // boost::system::system_error(operation_aborted) and does not hold the lock (a turn handed to it meanwhile goes
    // to the next waiter).
    boost::asio::awaitable<void> lock();
    // Hands the lock to the first waiter, or frees it. From any thread.
    void unlock();

private:
    class Waiter;
    std::mutex mutex_;
    bool held_ = false;
    std::vector<std::shared_ptr<Waiter>> waiting_;  // in order of arrival; a line is short
};

// Holds a lock taken (try_lock or lock) until it goes: unlocks on every way out, a destroyed coroutine frame
// included.
class AsyncLockGuard {
public:
    explicit AsyncLockGuard(AsyncMutex& mutex) noexcept : mutex_(mutex) {}
    AsyncLockGuard(const AsyncLockGuard&) = delete;
    AsyncLockGuard& operator=(const AsyncLockGuard&) = delete;
    ~AsyncLockGuard() { mutex_.unlock(); }

private:
    AsyncMutex& mutex_;
};

}  // namespace adk
