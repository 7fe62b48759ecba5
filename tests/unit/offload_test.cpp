// offload (adk/core/offload.hpp): blocking work on a pool, its result or exception back on the caller's
// executor, and an io_context that may go as soon as its run() returns.
#include <adk/core/error.hpp>
#include <adk/core/offload.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>

#include <catch2/catch.hpp>

#include <thread>

namespace asio = boost::asio;

TEST_CASE("offload: the work runs on the pool, its result and its exception come back on the caller's strand",
          "[threads]")
{
    asio::thread_pool pool(1);
    asio::io_context ioc;
    auto strand = asio::make_strand(ioc);
    std::thread::id worker;
    int result = 0;
    std::string failure;
    bool on_strand = false;
    asio::co_spawn(
        strand,
        [&]() -> asio::awaitable<void> {
            result = co_await adk::offload(pool.get_executor(), [&] {
                worker = std::this_thread::get_id();
                return 42;
            });
            on_strand = strand.running_in_this_thread();
            try {
                co_await adk::offload(pool.get_executor(), []() -> int {
                    throw adk::Error(adk::errc::storage_failed, "the disk is full");
                });
            } catch (const adk::Error& e) {
                failure = e.message();
            }
        },
        asio::detached);
    ioc.run();
    pool.join();
    CHECK(result == 42);
    CHECK(worker != std::this_thread::get_id());
    CHECK(on_strand);
    CHECK(failure == "the disk is full");
}

// Found in a worker process that exited: the pool's thread let go of its copy of the caller's strand after
// the io_context's run() had returned and main had destroyed the io_context (heap-use-after-free in the
// strand service, under ASan). 5,000 rounds make that window likely to be hit if it opens again.
TEST_CASE("offload: the caller's io_context may be destroyed as soon as its run() returns", "[threads]")
{
    asio::thread_pool pool(1);
    int done = 0;
    for (int round = 0; round < 5000; ++round) {
        asio::io_context ioc;
        asio::co_spawn(
            asio::make_strand(ioc),
            [&]() -> asio::awaitable<void> {
                done += co_await adk::offload(pool.get_executor(), [] { return 1; });
            },
            asio::detached);
        ioc.run();
    }
    pool.join();
    CHECK(done == 5000);
}
