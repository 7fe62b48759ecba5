// Never put co_await inside a Catch2 assertion macro: with g++ 12 the awaited call runs twice (the
// macro's never-evaluated `false && (expr)` is still transformed). Await into a local, then CHECK it.
//
// Test harness: run a coroutine to completion on an io_context, then require that nothing is left
// running (a producer that outlived its stream would keep the io_context busy and fail the test).
#pragma once

#include <adk/core/error.hpp>

#include "support/paths.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <exception>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

namespace adk::test {

namespace asio = boost::asio;

// Runs `aw` on `ioc` (one thread: this one). Fails when it has not finished after `limit`, or when other
// work is still pending `limit` later. Rethrows what the coroutine threw.
template <class T>
T run(asio::io_context& ioc, asio::awaitable<T> aw, std::chrono::milliseconds limit = std::chrono::seconds(20))
{
    bool done = false;
    std::exception_ptr failure;
    std::optional<T> result;
    ioc.restart();
    asio::co_spawn(ioc, std::move(aw), [&](std::exception_ptr e, T value) {
        done = true;
        failure = e;
        if (!e)
            result.emplace(std::move(value));
    });
    ioc.run_for(limit);
    REQUIRE(done);
    if (!ioc.stopped())
        ioc.run_for(limit);
    CHECK(ioc.stopped());  // no work left behind: every producer ended
    if (failure)
        std::rethrow_exception(failure);
    return std::move(*result);
}

inline void run(asio::io_context& ioc, asio::awaitable<void> aw,
                std::chrono::milliseconds limit = std::chrono::seconds(20))
{
    auto wrapped = [](asio::awaitable<void> inner) -> asio::awaitable<bool> {
        co_await std::move(inner);
        co_return true;
    };
    run(ioc, wrapped(std::move(aw)), limit);
}

// The adk::Error an awaitable threw, or nullopt when it did not throw.
template <class T>
asio::awaitable<std::optional<Error>> error_of(asio::awaitable<T> aw)
{
    try {
        co_await std::move(aw);
    } catch (const Error& e) {
        co_return e;
    }
    co_return std::nullopt;
}

// A file under tests/fixtures (a copy of the team's ../shared/fixtures).
inline std::string fixture(const std::string& relative)
{
    std::string path = adk::test::paths::fixtures() + "/" + relative;
    std::ifstream in(path, std::ios::binary);
    if (!in)
        FAIL("fixture not found: " << path << " (tests/fixtures holds the recorded fixtures; ADK_FIXTURES_DIR names another folder)");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace adk::test
