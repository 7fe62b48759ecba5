// Running a coroutine to its end on an io_context that never runs out of work (a connection's reader, a server's
// accept loop keep it busy), unlike run.hpp's run(), which also requires that nothing is left.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <exception>
#include <optional>
#include <thread>
#include <vector>

namespace adk::test {

// Runs `aw` on `ioc` (this thread) until it finishes, at most `limit`; rethrows what it threw.
template <class T>
T drive(boost::asio::io_context& ioc, boost::asio::awaitable<T> aw,
        std::chrono::milliseconds limit = std::chrono::seconds(30))
{
    std::optional<T> result;
    std::exception_ptr failure;
    bool done = false;
    boost::asio::co_spawn(ioc, std::move(aw), [&](std::exception_ptr e, T v) {
        done = true;
        failure = e;
        if (!e)
            result.emplace(std::move(v));
    });
    const auto until = std::chrono::steady_clock::now() + limit;
    while (!done && std::chrono::steady_clock::now() < until) {
        ioc.restart();
        ioc.run_for(std::chrono::milliseconds(10));
    }
    REQUIRE(done);
    if (failure)
        std::rethrow_exception(failure);
    return std::move(*result);
}

inline void drive(boost::asio::io_context& ioc, boost::asio::awaitable<void> aw,
                  std::chrono::milliseconds limit = std::chrono::seconds(30))
{
    auto wrapped = [](boost::asio::awaitable<void> inner) -> boost::asio::awaitable<bool> {
        co_await std::move(inner);
        co_return true;
    };
    drive(ioc, wrapped(std::move(aw)), limit);
}

// Runs `ioc` on `threads` threads until it runs out of work or is stopped.
inline void run_on_threads(boost::asio::io_context& ioc, int threads)
{
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&ioc] { ioc.run(); });
    for (auto& t : pool)
        t.join();
}

}  // namespace adk::test
