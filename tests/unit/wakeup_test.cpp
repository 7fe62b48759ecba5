// Wakeup (the one wake-up primitive) and AsyncMutex (the awaitable lock built on it).
#include <adk/core/async_mutex.hpp>
#include <adk/core/wakeup.hpp>

#include "support/run.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace asio = boost::asio;
using adk::test::run;

TEST_CASE("a Wakeup keeps one wake given before the wait", "[sync]")
{
    asio::io_context ioc;
    adk::Wakeup wake(ioc.get_executor());
    CHECK(!wake.try_take());
    wake.notify();
    wake.notify();  // one wake, however many are given
    CHECK(wake.try_take());
    CHECK(!wake.try_take());
    wake.notify();
    int woken = 0;
    run(ioc, [&]() -> asio::awaitable<void> {
        co_await wake.async_wait(asio::use_awaitable);  // the kept one: no waiting
        ++woken;
    }());
    CHECK(woken == 1);
    CHECK(!wake.try_take());
}

namespace {

// A handler that records how the wait ended and counts the waits that ended.
auto record(boost::system::error_code& into, int& done)
{
    return [&into, &done](boost::system::error_code ec) {
        into = ec;
        ++done;
    };
}

}  // namespace

TEST_CASE("a Wakeup wakes a wait under way, and a cancelled wait completes with an error", "[sync]")
{
    asio::io_context ioc;
    adk::Wakeup wake(ioc.get_executor());
    boost::system::error_code first = asio::error::operation_aborted, second, third = asio::error::operation_aborted;
    int done = 0;
    asio::cancellation_signal cancel;
    wake.async_wait(record(first, done));
    ioc.poll();
    CHECK(done == 0);
    wake.notify();
    ioc.poll();
    CHECK(done == 1);
    CHECK(!first);
    ioc.restart();  // poll() stopped it when no work was left
    wake.async_wait(asio::bind_cancellation_slot(cancel.slot(), record(second, done)));
    ioc.poll();
    CHECK(done == 1);
    cancel.emit(asio::cancellation_type::terminal);
    ioc.poll();
    CHECK(done == 2);
    CHECK(second);
    // A wait after a cancelled one is woken as before (a wake kept from before it is not: see wakeup.hpp).
    ioc.restart();
    wake.async_wait(record(third, done));
    ioc.poll();
    CHECK(done == 2);
    wake.notify();
    ioc.poll();
    CHECK(done == 3);
    CHECK(!third);
}

TEST_CASE("a Wakeup given from another thread resumes the waiter on its own executor", "[sync][threads]")
{
    asio::io_context ioc;
    auto strand = asio::make_strand(ioc);
    adk::Wakeup wake(strand);
    std::atomic<bool> waiting{false};
    bool on_strand = false;
    std::thread giver([&] {
        while (!waiting)
            std::this_thread::yield();
        wake.notify();
    });
    run(ioc, asio::co_spawn(strand, [&]() -> asio::awaitable<void> {
        waiting = true;
        co_await wake.async_wait(asio::use_awaitable);
        on_strand = strand.running_in_this_thread();
    }, asio::use_awaitable));
    giver.join();
    CHECK(on_strand);
}

namespace {

// Takes `mutex`, records `name`, holds the lock until `release` is woken.
asio::awaitable<void> hold(adk::AsyncMutex& mutex, std::vector<std::string>& order, std::string name,
                           adk::Wakeup& release)
{
    co_await mutex.lock();
    adk::AsyncLockGuard guard(mutex);
    order.push_back(std::move(name));
    co_await release.async_wait(asio::use_awaitable);
}

}  // namespace

TEST_CASE("an AsyncMutex is taken first come first served, and try_lock does not wait", "[sync]")
{
    asio::io_context ioc;
    adk::AsyncMutex mutex;
    std::vector<std::string> order;
    adk::Wakeup release_a(ioc.get_executor()), release_b(ioc.get_executor()), release_c(ioc.get_executor());
    asio::co_spawn(ioc, hold(mutex, order, "a", release_a), asio::detached);
    ioc.poll();
    asio::co_spawn(ioc, hold(mutex, order, "b", release_b), asio::detached);
    ioc.poll();
    asio::co_spawn(ioc, hold(mutex, order, "c", release_c), asio::detached);
    ioc.poll();
    CHECK(order == std::vector<std::string>{"a"});
    CHECK(!mutex.try_lock());
    release_a.notify();
    ioc.poll();
    CHECK(order == std::vector<std::string>{"a", "b"});
    release_b.notify();
    ioc.poll();
    CHECK(order == std::vector<std::string>{"a", "b", "c"});
    release_c.notify();
    ioc.poll();
    CHECK(mutex.try_lock());  // free again
    mutex.unlock();
}

TEST_CASE("a wait for an AsyncMutex that is cancelled leaves the line, and a turn handed to it goes on", "[sync]")
{
    asio::io_context ioc;
    adk::AsyncMutex mutex;
    REQUIRE(mutex.try_lock());
    std::vector<std::string> order;
    adk::Wakeup release_b(ioc.get_executor());
    asio::cancellation_signal cancel_a;
    std::exception_ptr a_failure;
    bool a_done = false;
    asio::co_spawn(ioc,
                   [&]() -> asio::awaitable<void> {
                       co_await mutex.lock();
                       adk::AsyncLockGuard guard(mutex);
                       order.push_back("a");
                   },
                   asio::bind_cancellation_slot(cancel_a.slot(), [&](std::exception_ptr e) {
                       a_failure = e;
                       a_done = true;
                   }));
    ioc.poll();
    asio::co_spawn(ioc, hold(mutex, order, "b", release_b), asio::detached);
    ioc.poll();
    // a's wait is cancelled, and before a runs again the holder hands a the lock: a must pass it on to b.
    const bool handed_while_cancelled = GENERATE(false, true);
    cancel_a.emit(asio::cancellation_type::terminal);
    REQUIRE(ioc.poll_one() == 1);  // co_spawn delivers the cancellation on a's executor: a's wait ends, a is queued
    REQUIRE(!a_done);
    if (handed_while_cancelled)
        mutex.unlock();
    ioc.poll();
    REQUIRE(a_done);
    REQUIRE(a_failure);
    try {
        std::rethrow_exception(a_failure);
    } catch (const boost::system::system_error& e) {
        CHECK(e.code() == asio::error::operation_aborted);
    }
    if (!handed_while_cancelled) {
        CHECK(order.empty());  // the holder still holds it
        mutex.unlock();
        ioc.poll();
    }
    CHECK(order == std::vector<std::string>{"b"});
    release_b.notify();
    ioc.poll();
    CHECK(mutex.try_lock());
    mutex.unlock();
}

TEST_CASE("an AsyncMutex lets one coroutine at a time in, from the strands of 4 threads", "[sync][threads]")
{
    asio::thread_pool pool(4);
    adk::AsyncMutex mutex;
    long counter = 0;  // not atomic: the lock is what guards it (ThreadSanitizer checks)
    int inside = 0;
    std::atomic<int> most_inside{0};
    constexpr int workers = 8, rounds = 500;
    std::atomic<int> finished{0};
    for (int w = 0; w < workers; ++w)
        asio::co_spawn(asio::make_strand(pool), [&]() -> asio::awaitable<void> {
            for (int i = 0; i < rounds; ++i) {
                if (!mutex.try_lock())
                    co_await mutex.lock();
                adk::AsyncLockGuard guard(mutex);
                const int now = ++inside;
                if (now > most_inside)
                    most_inside = now;
                ++counter;
                if (i % 16 == 0) {  // now and then give the thread up while holding the lock
                    auto here = co_await asio::this_coro::executor;
                    co_await asio::post(here, asio::use_awaitable);
                }
                --inside;
            }
            ++finished;
        }, asio::detached);
    pool.join();
    CHECK(finished == workers);
    CHECK(counter == long(workers) * rounds);
    CHECK(most_inside == 1);
}
