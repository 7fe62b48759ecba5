// Stream<T> / Sink<T>: order, in-band end and failure, backpressure, the ways to stop a producer, and pulled streams;
// the channel under them (ConcurrentChannel, its buffer made at the first message that waits).
#include <adk/adk.hpp>
#include <adk/core/channel.hpp>

#include "support/run.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_future.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using adk::test::run;

namespace {

// A producer that waits on a timer for an hour, recording how it ended.
struct Sleeper {
    std::shared_ptr<std::atomic<int>> outcome = std::make_shared<std::atomic<int>>(0);  // 1 aborted, 2 woke
    asio::awaitable<void> operator()(adk::Sink<int> sink) const
    {
        co_await sink.emit(1);
        asio::steady_timer t(co_await asio::this_coro::executor, 1h);
        try {
            co_await t.async_wait(asio::use_awaitable);
            *outcome = 2;
        } catch (const boost::system::system_error& e) {
            *outcome = e.code() == asio::error::operation_aborted ? 1 : 3;
            throw;
        }
    }
};

}  // namespace

TEST_CASE("a stream delivers every item in order, then ends", "[stream]")
{
    asio::io_context ioc;
    auto producer = [](adk::Sink<int> sink) -> asio::awaitable<void> {
        for (int i = 0; i < 1000; ++i)
            co_await sink.emit(i);
    };
    auto stream = adk::spawn_stream<int>(ioc.get_executor(), producer, 8);
    run(ioc, [&]() -> asio::awaitable<void> {
        int expected = 0;
        while (auto v = co_await stream.next())
            CHECK(*v == expected++);
        CHECK(expected == 1000);
        auto got1 = co_await stream.next();
        CHECK(!got1);  // stays ended
    }());
}

TEST_CASE("a producer's failure arrives after its items, as adk::Error with its message", "[stream]")
{
    asio::io_context ioc;
    auto failing = [](adk::Sink<int> sink) -> asio::awaitable<void> {
        co_await sink.emit(1);
        co_await sink.emit(2);
        throw std::runtime_error("the tool server is down");
    };
    auto stream = adk::spawn_stream<int>(ioc.get_executor(), failing, 1);
    run(ioc, [&]() -> asio::awaitable<void> {
        auto got2 = co_await stream.next();
        CHECK(*got2 == 1);
        auto got3 = co_await stream.next();
        CHECK(*got3 == 2);
        try {
            co_await stream.next();
            FAIL("the failure was not delivered");
        } catch (const adk::Error& e) {
            CHECK(e.code() == adk::errc::agent_failed);
            CHECK_THAT(e.message(), Catch::Contains("the tool server is down"));
        }
    }());

    auto not_found = [](adk::Sink<int>) -> asio::awaitable<void> {
        throw adk::Error(adk::errc::not_found, "no such thing");
        co_return;
    };
    auto second = adk::spawn_stream<int>(ioc.get_executor(), not_found);
    ioc.restart();
    run(ioc, [&]() -> asio::awaitable<void> {
        std::string error;
        try {
            co_await second.next();
        } catch (const adk::Error& e) {
            CHECK(e.code() == adk::errc::not_found);
            error = e.message();
        }
        CHECK(error == "no such thing");
    }());
}

TEST_CASE("a slow consumer holds the producer back: it is never more than the capacity ahead", "[stream]")
{
    asio::io_context ioc;
    constexpr std::size_t capacity = 4;
    auto produced = std::make_shared<int>(0);
    auto producer = [produced](adk::Sink<int> sink) -> asio::awaitable<void> {
        for (int i = 0; i < 60; ++i) {
            co_await sink.emit(i);
            ++*produced;
        }
    };
    auto stream = adk::spawn_stream<int>(ioc.get_executor(), producer, capacity);
    run(ioc, [&]() -> asio::awaitable<void> {
        asio::steady_timer t(co_await asio::this_coro::executor);
        int consumed = 0;
        int max_ahead = 0;
        while (auto v = co_await stream.next()) {
            ++consumed;
            t.expires_after(1ms);  // let the producer run as far as it can
            co_await t.async_wait(asio::use_awaitable);
            max_ahead = std::max(max_ahead, *produced - consumed);
        }
        CHECK(consumed == 60);
        CHECK(max_ahead <= static_cast<int>(capacity) + 1);
        CHECK(max_ahead >= static_cast<int>(capacity) - 1);  // and it did run ahead as far as allowed
    }());
}

TEST_CASE("Stream::cancel stops the producer and ends the stream", "[stream]")
{
    asio::io_context ioc;
    Sleeper sleeper;
    auto stream = adk::spawn_stream<int>(ioc.get_executor(), sleeper);
    run(ioc, [&]() -> asio::awaitable<void> {
        auto got4 = co_await stream.next();
        CHECK(*got4 == 1);
        // Once the producer sleeps (the item reached this coroutine inside its emit, which has not returned yet).
        co_await asio::post(co_await asio::this_coro::executor, asio::use_awaitable);
        stream.cancel();
        auto got5 = co_await stream.next();
        CHECK(!got5);
    }());
    CHECK(*sleeper.outcome == 1);  // its timer was aborted; run() checked nothing is left running
}

namespace {

// A receiver that keeps what it is given, and what the producer had emitted when each item came.
struct Keeper final : adk::StreamReceiver<int> {
    std::vector<int> items;
    std::shared_ptr<int> emitted;  // the producer's count, written after each emit returns
    std::vector<int> emitted_when_received;
    void receive(std::unique_ptr<int> item) noexcept override
    {
        items.push_back(*item);
        emitted_when_received.push_back(*emitted);
    }
};

}  // namespace

TEST_CASE("a stream with a receiver hands each item to it as it is emitted, then ends", "[stream]")
{
    asio::io_context ioc;
    auto emitted = std::make_shared<int>(0);
    auto keeper = std::make_shared<Keeper>();
    keeper->emitted = emitted;
    auto producer = [emitted](adk::Sink<int> sink) -> asio::awaitable<void> {
        for (int i = 0; i < 100; ++i) {
            co_await sink.emit(i);
            ++*emitted;
        }
    };
    // A capacity of 1: the receiver takes the items, so the channel never holds more than the end.
    auto stream = adk::spawn_stream<int>(ioc.get_executor(), producer, 1, keeper);
    run(ioc, [&]() -> asio::awaitable<void> {
        auto end = co_await stream.next();
        CHECK(!end);  // the consumer reads only the end
        CHECK(keeper->items.size() == 100);
    }());
    for (int i = 0; i < 100; ++i) {
        CHECK(keeper->items[i] == i);
        CHECK(keeper->emitted_when_received[i] == i);  // taken inside the emit, before the producer went on
    }
}

TEST_CASE("a stream with a receiver ends with its producer's failure, after its items", "[stream]")
{
    asio::io_context ioc;
    auto keeper = std::make_shared<Keeper>();
    keeper->emitted = std::make_shared<int>(0);
    auto failing = [](adk::Sink<int> sink) -> asio::awaitable<void> {
        co_await sink.emit(1);
        co_await sink.emit(2);
        throw adk::Error(adk::errc::unavailable, "the model is overloaded");
    };
    auto stream = adk::spawn_stream<int>(ioc.get_executor(), failing, 1, keeper);
    run(ioc, [&]() -> asio::awaitable<void> {
        std::string error;
        try {
            co_await stream.next();
        } catch (const adk::Error& e) {
            CHECK(e.code() == adk::errc::unavailable);
            error = e.message();
        }
        CHECK(error == "the model is overloaded");
    }());
    CHECK(keeper->items == std::vector<int>{1, 2});
}

TEST_CASE("cancelling a stream with a receiver stops its producer, and the receiver gets nothing more", "[stream]")
{
    asio::io_context ioc;
    auto keeper = std::make_shared<Keeper>();
    keeper->emitted = std::make_shared<int>(0);
    Sleeper sleeper;  // emits 1, then sleeps for an hour
    auto after = std::make_shared<bool>(false);
    auto producer = [sleeper, after](adk::Sink<int> sink) -> asio::awaitable<void> {
        asio::awaitable<void> sleeping = sleeper(sink);
        try {
            co_await std::move(sleeping);
        } catch (...) {
            *after = true;
        }
        // What a producer that goes on after its wait was aborted meets: emitting throws, nothing is received.
        co_await sink.emit(2);
    };
    auto stream = adk::spawn_stream<int>(ioc.get_executor(), producer, 1, keeper);
    const adk::Canceller canceller = stream.canceller();
    run(ioc, [&]() -> asio::awaitable<void> {
        asio::steady_timer t(co_await asio::this_coro::executor, 5ms);
        while (keeper->items.empty()) {  // the producer runs on the same thread: wait for its first item
            t.expires_after(1ms);
            co_await t.async_wait(asio::use_awaitable);
        }
        canceller.cancel("stopped by the test");
        std::string error;
        try {
            co_await stream.next();
        } catch (const adk::Error& e) {
            CHECK(e.code() == adk::errc::cancelled);
            error = e.message();
        }
        CHECK(error == "stopped by the test");
    }());
    CHECK(*sleeper.outcome == 1);
    CHECK(*after);
    CHECK(keeper->items == std::vector<int>{1});
}

TEST_CASE("dropping a stream stops a producer that waits for room", "[stream]")
{
    asio::io_context ioc;
    auto stopped = std::make_shared<std::string>();
    auto endless = [stopped](adk::Sink<int> sink) -> asio::awaitable<void> {
        try {
            for (int i = 0;; ++i)
                co_await sink.emit(i);
        } catch (const adk::Error& e) {
            *stopped = e.message();
            throw;
        }
    };
    run(ioc, [&]() -> asio::awaitable<void> {
        auto stream = adk::spawn_stream<int>(co_await asio::this_coro::executor, endless, 2);
        auto got6 = co_await stream.next();
        CHECK(*got6 == 0);
        asio::steady_timer t(co_await asio::this_coro::executor, 5ms);
        co_await t.async_wait(asio::use_awaitable);  // the producer fills the channel and waits
    }());
    CHECK_THAT(*stopped, Catch::Contains("stopped reading"));
}

TEST_CASE("cancelling the coroutine that awaits next() stops the producer", "[stream]")
{
    using namespace asio::experimental::awaitable_operators;
    asio::io_context ioc;
    Sleeper sleeper;
    auto stream = adk::spawn_stream<int>(ioc.get_executor(), sleeper);
    run(ioc, [&]() -> asio::awaitable<void> {
        auto got7 = co_await stream.next();
        CHECK(*got7 == 1);
        asio::steady_timer deadline(co_await asio::this_coro::executor, 10ms);
        auto result = co_await (stream.next() || deadline.async_wait(asio::use_awaitable));
        CHECK(result.index() == 1);        // the deadline won and cancelled next()
        auto got8 = co_await stream.next();
        CHECK(!got8);  // the stream is over
    }());
    CHECK(*sleeper.outcome == 1);
}

TEST_CASE("a stream of capacity 0 hands each item from its producer to its consumer, in order", "[stream]")
{
    asio::io_context ioc;
    auto producer = [](adk::Sink<int> sink) -> asio::awaitable<void> {
        for (int i = 0; i < 100; ++i)
            co_await sink.emit(i);
    };
    auto stream = adk::spawn_stream<int>(ioc.get_executor(), producer, 0);
    std::vector<int> got;
    run(ioc, [&]() -> asio::awaitable<void> {
        asio::steady_timer pause(co_await asio::this_coro::executor);
        while (auto v = co_await stream.next()) {
            got.push_back(*v);
            if (*v % 10 == 0) {  // now and then the producer arrives first and waits for the consumer
                pause.expires_after(0s);
                co_await pause.async_wait(asio::use_awaitable);
            }
        }
    }());
    std::vector<int> expected(100);
    std::iota(expected.begin(), expected.end(), 0);
    CHECK(got == expected);
}

TEST_CASE("cancelling an emit that waits for room fails that emit alone: its item is dropped, the stream goes on",
          "[stream]")
{
    asio::io_context ioc;
    asio::cancellation_signal cancel_emit;
    std::exception_ptr emit_failure;
    bool emit_done = false;
    auto producer = [&](adk::Sink<int> sink) -> asio::awaitable<void> {
        auto ex = co_await asio::this_coro::executor;
        co_await sink.emit(0);  // fills the queue (capacity 1)
        asio::steady_timer gate(ex, asio::steady_timer::time_point::max());
        asio::co_spawn(ex, sink.emit(1), asio::bind_cancellation_slot(cancel_emit.slot(), [&](std::exception_ptr e) {
                           emit_failure = e;
                           emit_done = true;
                           gate.cancel();
                       }));
        auto [ec] = co_await gate.async_wait(asio::as_tuple(asio::use_awaitable));
        CHECK(ec == asio::error::operation_aborted);  // opened by the emit's end
        co_await sink.emit(2);
    };
    auto stream = adk::spawn_stream<int>(ioc.get_executor(), producer, 1);
    ioc.poll();  // nobody reads yet: the emit of 1 waits for room
    REQUIRE(!emit_done);
    cancel_emit.emit(asio::cancellation_type::terminal);
    ioc.poll();
    REQUIRE(emit_done);
    REQUIRE(emit_failure);
    try {
        std::rethrow_exception(emit_failure);
    } catch (const boost::system::system_error& e) {
        CHECK(e.code() == asio::error::operation_aborted);
    }
    std::vector<int> got;
    run(ioc, [&]() -> asio::awaitable<void> {
        while (auto v = co_await stream.next())
            got.push_back(*v);
    }());
    CHECK(got == std::vector<int>{0, 2});
}

TEST_CASE("destroying an io_context frees the coroutines that wait on a stream, the consumer's and the producer's",
          "[stream]")
{
    auto consumer_owns = std::make_shared<int>(1);
    auto producer_owns = std::make_shared<int>(2);
    std::weak_ptr<int> consumer_frame = consumer_owns;
    std::weak_ptr<int> producer_frame = producer_owns;
    bool consumer_waits = false;
    int emitted = 0;
    {
        asio::io_context ioc;
        // A consumer that waits for an item that never comes: its producer sleeps.
        auto consume = [&](std::shared_ptr<int> owns) -> asio::awaitable<void> {
            auto sleeps = [](adk::Sink<int>) -> asio::awaitable<void> {
                asio::steady_timer t(co_await asio::this_coro::executor, asio::steady_timer::time_point::max());
                co_await t.async_wait(asio::use_awaitable);
            };
            auto stream = adk::spawn_stream<int>(co_await asio::this_coro::executor, sleeps);
            consumer_waits = true;
            co_await stream.next();
            (void)owns;
        };
        asio::co_spawn(ioc, consume(std::move(consumer_owns)), asio::detached);
        // A producer that waits for room, its consumer asleep.
        auto fills = [&, owns = std::move(producer_owns)](adk::Sink<int> sink) -> asio::awaitable<void> {
            co_await sink.emit(0);
            ++emitted;
            co_await sink.emit(1);
            ++emitted;
        };
        auto hold = [](adk::Stream<int> stream) -> asio::awaitable<void> {
            asio::steady_timer t(co_await asio::this_coro::executor, asio::steady_timer::time_point::max());
            co_await t.async_wait(asio::use_awaitable);
            (void)stream;
        };
        asio::co_spawn(ioc, hold(adk::spawn_stream<int>(ioc.get_executor(), std::move(fills), 1)), asio::detached);
        ioc.poll();
        REQUIRE(consumer_waits);
        REQUIRE(emitted == 1);
        CHECK(!consumer_frame.expired());
        CHECK(!producer_frame.expired());
    }
    CHECK(consumer_frame.expired());
    CHECK(producer_frame.expired());
}

TEST_CASE("a Canceller stops the producer from another thread and next() throws errc::cancelled", "[stream][threads]")
{
    asio::thread_pool pool(2);
    Sleeper sleeper;
    auto stream = adk::spawn_stream<int>(asio::make_strand(pool), sleeper);
    adk::Canceller canceller = stream.canceller();
    auto consumer = [&]() -> asio::awaitable<std::string> {
        auto got9 = co_await stream.next();
        CHECK(*got9 == 1);
        try {
            co_await stream.next();
        } catch (const adk::Error& e) {
            CHECK(e.code() == boost::system::errc::operation_canceled);
            co_return e.message();
        }
        co_return "not cancelled";
    };
    auto result = asio::co_spawn(asio::make_strand(pool), consumer, asio::use_future);
    std::thread other([&] {
        std::this_thread::sleep_for(20ms);
        canceller.cancel("stopped by the operator");
    });
    CHECK(result.get() == "stopped by the operator");
    other.join();
    pool.join();
    CHECK(*sleeper.outcome == 1);
}

TEST_CASE("producer and consumer on different strands of 4 threads keep order", "[stream][threads]")
{
    asio::thread_pool pool(4);
    auto producer = [](adk::Sink<int> sink) -> asio::awaitable<void> {
        for (int i = 0; i < 100000; ++i)
            co_await sink.emit(i);
    };
    auto stream = adk::spawn_stream<int>(asio::make_strand(pool), producer, 16);
    auto consumer = [&]() -> asio::awaitable<int> {
        int expected = 0;
        while (auto v = co_await stream.next()) {
            if (*v != expected)
                co_return -1;
            ++expected;
        }
        co_return expected;
    };
    CHECK(asio::co_spawn(asio::make_strand(pool), consumer, asio::use_future).get() == 100000);
}

namespace {

// A source of 1, 2, 3 that counts its pulls, fails on `fail_at` (0: never) and then, when `sleep` is
// set, waits an hour before each item after the first, recording how the wait ended. abort() cancels that
// wait from any thread, by posting to the timer's executor.
struct CountingSource final : adk::StreamSource<int> {
    struct Record {
        std::atomic<int> pulls = 0;
        std::atomic<int> outcome = 0;  // 1 aborted, 2 woke
        std::atomic<int> aborts = 0;
        std::atomic<bool> destroyed = false;
    };
    explicit CountingSource(std::shared_ptr<Record> r, int fail_on = 0, bool sleeps = false)
        : record(std::move(r)), fail_at(fail_on), sleep(sleeps)
    {
    }
    ~CountingSource() override { record->destroyed = true; }

    asio::awaitable<void> pull(std::unique_ptr<int>& item) override
    {
        const int n = ++record->pulls;
        if (n == fail_at)
            throw std::runtime_error("the disk is on fire");
        if (sleep && n > 1) {
            auto t = std::make_shared<asio::steady_timer>(co_await asio::this_coro::executor, 1h);
            {
                std::lock_guard lock(mutex);
                if (aborted)  // abort() came before the wait began
                    t->expires_at(asio::steady_timer::time_point::min());
                timer = t;
            }
            auto [ec] = co_await t->async_wait(asio::as_tuple(asio::use_awaitable));
            record->outcome = ec == asio::error::operation_aborted ? 1 : 2;
            if (ec)
                throw boost::system::system_error(ec, "waiting for the next item");
        }
        if (n <= 3)
            item = std::make_unique<int>(n);
    }

    void abort() noexcept override
    {
        ++record->aborts;
        std::lock_guard lock(mutex);
        aborted = true;
        if (auto t = timer.lock())
            asio::post(t->get_executor(), [weak = timer] {
                if (auto alive = weak.lock())
                    alive->cancel();
            });
    }

    std::shared_ptr<Record> record;
    int fail_at;
    bool sleep;
    std::mutex mutex;
    bool aborted = false;
    std::weak_ptr<asio::steady_timer> timer;
};

}  // namespace

TEST_CASE("a pulled stream reads its source only when asked, in order, then releases it", "[stream]")
{
    asio::io_context ioc;
    auto record = std::make_shared<CountingSource::Record>();
    auto stream = adk::pull_stream<int>(std::make_unique<CountingSource>(record));
    run(ioc, [&]() -> asio::awaitable<void> {
        CHECK(record->pulls == 0);  // nothing is read before the consumer asks
        int expected = 1;
        while (auto v = co_await stream.next()) {
            CHECK(*v == expected);
            CHECK(record->pulls == expected);  // one pull per item: nothing read ahead
            ++expected;
        }
        CHECK(expected == 4);
        CHECK(record->destroyed);  // released at its end, not when the Stream goes
        auto again = co_await stream.next();
        CHECK(!again);
        CHECK(record->pulls == 4);
    }());
}

TEST_CASE("a pulled source's failure reaches the consumer as adk::Error and ends the stream", "[stream]")
{
    asio::io_context ioc;
    auto record = std::make_shared<CountingSource::Record>();
    auto stream = adk::pull_stream<int>(std::make_unique<CountingSource>(record, 2));
    std::string failure;
    run(ioc, [&]() -> asio::awaitable<void> {
        auto first = co_await stream.next();
        CHECK(first == 1);
        try {
            co_await stream.next();
        } catch (const adk::Error& e) {
            failure = e.message();
            CHECK(e.code() == adk::errc::agent_failed);
        }
        auto after = co_await stream.next();
        CHECK(!after);
    }());
    CHECK(failure == "the disk is on fire");
    CHECK(record->destroyed);
}

TEST_CASE("cancelling the coroutine that awaits a pulled next() aborts what the source awaits", "[stream]")
{
    using namespace asio::experimental::awaitable_operators;
    asio::io_context ioc;
    auto record = std::make_shared<CountingSource::Record>();
    auto stream = adk::pull_stream<int>(std::make_unique<CountingSource>(record, 0, true));
    run(ioc, [&]() -> asio::awaitable<void> {
        auto first = co_await stream.next();
        CHECK(first == 1);
        asio::steady_timer deadline(co_await asio::this_coro::executor, 10ms);
        auto result = co_await (stream.next() || deadline.async_wait(asio::use_awaitable));
        CHECK(result.index() == 1);  // the deadline won and cancelled next()
        auto after = co_await stream.next();
        CHECK(!after);  // the stream is over
    }());
    CHECK(record->outcome == 1);
    CHECK(record->destroyed);
}

TEST_CASE("Stream::cancel and dropping a pulled stream release its source", "[stream]")
{
    asio::io_context ioc;
    auto cancelled = std::make_shared<CountingSource::Record>();
    auto dropped = std::make_shared<CountingSource::Record>();
    run(ioc, [&]() -> asio::awaitable<void> {
        auto stream = adk::pull_stream<int>(std::make_unique<CountingSource>(cancelled));
        auto first = co_await stream.next();
        CHECK(first == 1);
        stream.cancel();
        CHECK(cancelled->destroyed);
        auto after = co_await stream.next();
        CHECK(!after);
        CHECK(cancelled->pulls == 1);
        {
            auto other = adk::pull_stream<int>(std::make_unique<CountingSource>(dropped));
            auto moved = std::move(other);
            CHECK(!dropped->destroyed);
        }
        CHECK(dropped->destroyed);
    }());
}

TEST_CASE("Stream::cancel while another coroutine awaits a pulled next() aborts the pull, then releases the source",
          "[stream]")
{
    // The consumer waits in next() for the second item (the source sleeps an hour); another coroutine of the
    // same thread cancels the stream. Cancelling used to destroy the source under the pull (use after free).
    asio::io_context ioc;
    auto record = std::make_shared<CountingSource::Record>();
    auto stream = adk::pull_stream<int>(std::make_unique<CountingSource>(record, 0, true));
    std::optional<int> second = -1;
    bool second_done = false;
    run(ioc, [&]() -> asio::awaitable<void> {
        auto first = co_await stream.next();
        CHECK(first == 1);
        auto reader = [&]() -> asio::awaitable<void> {
            second = co_await stream.next();
            second_done = true;
        };
        auto ex = co_await asio::this_coro::executor;
        asio::co_spawn(ex, reader, asio::detached);
        asio::steady_timer t(ex, 20ms);
        co_await t.async_wait(asio::use_awaitable);
        CHECK(!second_done);  // the reader is inside the source's pull
        stream.cancel();
        CHECK(record->aborts == 1);
        CHECK(!record->destroyed);  // not under the pull: its end releases it
        t.expires_after(20ms);
        co_await t.async_wait(asio::use_awaitable);
        CHECK(second_done);
        CHECK(!second);  // the consumer stopped reading: the end of the stream
        CHECK(record->outcome == 1);
        CHECK(record->destroyed);
        auto after = co_await stream.next();
        CHECK(!after);
    }());
}

TEST_CASE("a Canceller stops a pulled stream from another thread: the pull under way is aborted", "[stream][threads]")
{
    asio::io_context ioc;
    auto record = std::make_shared<CountingSource::Record>();
    auto stream = adk::pull_stream<int>(std::make_unique<CountingSource>(record, 0, true));
    adk::Canceller canceller = stream.canceller();
    std::string failure;
    std::thread other;
    run(ioc, [&]() -> asio::awaitable<void> {
        auto first = co_await stream.next();
        CHECK(first == 1);
        other = std::thread([&] {
            std::this_thread::sleep_for(20ms);  // the reader waits in the source by then
            canceller.cancel("stopped from the UI thread");
        });
        try {
            co_await stream.next();
        } catch (const adk::Error& e) {
            CHECK(e.code() == adk::errc::cancelled);
            failure = e.message();
        }
        std::string again;  // next() keeps saying so, as a channel stream does
        try {
            co_await stream.next();
        } catch (const adk::Error& e) {
            again = e.message();
        }
        CHECK(again == "stopped from the UI thread");
    }());
    other.join();
    CHECK(failure == "stopped from the UI thread");
    CHECK(record->aborts == 1);
    CHECK(record->outcome == 1);
    CHECK(record->destroyed);
}

TEST_CASE("a ConcurrentChannel keeps the messages that wait in it in order, up to its capacity", "[stream]")
{
    asio::io_context ioc;
    adk::ConcurrentChannel<void(boost::system::error_code, int)> channel(ioc, 3);
    const auto send = [&](int v) { return channel.try_send(boost::system::error_code{}, v); };
    std::vector<int> got;
    const auto take = [&] { return channel.try_receive([&](boost::system::error_code, int v) { got.push_back(v); }); };
    CHECK_FALSE(take());  // nothing waits
    CHECK(send(1));
    CHECK(send(2));
    CHECK(send(3));
    CHECK_FALSE(send(4));  // full
    while (take())
        ;
    CHECK(got == std::vector<int>{1, 2, 3});
    CHECK(send(5));  // the buffer, empty again, takes more
    CHECK(take());
    CHECK(got.back() == 5);
    CHECK(send(6));
    channel.close();  // as Asio's channel: close() drops what waits
    CHECK_FALSE(take());
    boost::system::error_code ec;
    channel.async_receive([&](boost::system::error_code e, int) { ec = e; });
    ioc.run();
    CHECK(ec == asio::experimental::error::channel_closed);
    CHECK(got.size() == 4);
}

TEST_CASE("a ConcurrentChannel of error codes alone keeps them in order, runs of the same one counted", "[stream]")
{
    asio::io_context ioc;
    adk::ConcurrentChannel<void(boost::system::error_code)> channel(ioc, 8);
    const std::vector<boost::system::error_code> sent = {{}, {}, asio::error::eof, {}, asio::error::eof,
                                                         asio::error::eof, asio::error::operation_aborted};
    for (const auto& ec : sent)
        CHECK(channel.try_send(ec));
    CHECK(channel.try_send(boost::system::error_code{}));  // the eighth
    CHECK_FALSE(channel.try_send(boost::system::error_code{}));
    std::vector<boost::system::error_code> got;
    while (channel.try_receive([&](boost::system::error_code ec) { got.push_back(ec); }))
        ;
    REQUIRE(got.size() == 8);
    CHECK(std::equal(sent.begin(), sent.end(), got.begin()));
    CHECK(!got.back());
}

TEST_CASE("LazyDeque, the buffer of a ConcurrentChannel, is a queue: in order, movable, usable again after clear",
          "[stream]")
{
    adk::detail::LazyDeque<std::string> q;
    CHECK(q.empty());
    CHECK(q.size() == 0);
    q.clear();  // nothing made, nothing to clear
    q.push_back("a");
    const std::string b = "b";
    q.push_back(b);
    CHECK(q.size() == 2);
    CHECK(q.front() == "a");
    CHECK(q.back() == "b");
    adk::detail::LazyDeque<std::string> moved(std::move(q));
    CHECK(moved.size() == 2);
    moved.pop_front();
    CHECK(moved.front() == "b");
    q = std::move(moved);
    CHECK(q.size() == 1);
    q.clear();
    CHECK(q.empty());
    q.push_back("c");  // made already: used again
    CHECK(q.front() == "c");
}
