// Invariant 2, bounded memory: a producer of 1,000,000 events and a consumer that sleeps. The producer is
// held back by the stream, so resident memory stays flat while the events flow.
#include <adk/adk.hpp>

#include "support/agents.hpp"
#include "support/run.hpp"

#include <boost/asio/steady_timer.hpp>

#include <catch2/catch.hpp>

#include <fstream>
#include <iostream>
#include <unistd.h>

// ASan keeps freed memory in a quarantine (256 MB by default), which would look like growth here.
extern "C" const char* __asan_default_options()
{
    return "quarantine_size_mb=4";
}

namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {
// Resident set size of this process, in KiB.
long rss_kib()
{
    std::ifstream statm("/proc/self/statm");
    long pages_total = 0;
    long pages_resident = 0;
    statm >> pages_total >> pages_resident;
    return pages_resident * (sysconf(_SC_PAGESIZE) / 1024);
}
}  // namespace

TEST_CASE("invariant 2: a slow consumer keeps memory flat while 1,000,000 events flow", "[invariant][memory]")
{
    constexpr int total = 1'000'000;
    asio::io_context ioc;
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    auto produced = std::make_shared<long>(0);
    // Partial events, as a model's token stream: nothing is persisted, so only the stream could grow.
    auto agent = std::make_shared<adk::test::FnAgent>(
        "streamer", [produced](adk::InvocationContext& ctx, adk::EventSink& out) -> asio::awaitable<void> {
            for (int i = 0; i < total; ++i) {
                adk::Event ev = ctx.make_event(adk::Content::model("token " + std::to_string(i) +
                                                                   std::string(200, 'x')));  // ~0.5 KB each
                ev.partial = true;
                co_await out.emit(std::move(ev));
                ++*produced;
            }
        });
    adk::Runner runner({.app_name = "app", .agent = agent, .session_service = sessions});

    long baseline = 0;
    long peak = 0;
    long max_ahead = 0;
    adk::test::run(
        ioc,
        [&]() -> asio::awaitable<void> {
            co_await sessions->create_session("app", "u", "s");
            baseline = rss_kib();
            auto stream = co_await runner.run("u", "s", adk::Content::user("go"));
            asio::steady_timer nap(co_await asio::this_coro::executor);
            long consumed = 0;
            while (auto ev = co_await stream.next()) {
                ++consumed;
                max_ahead = std::max(max_ahead, *produced - consumed);
                if (consumed % 2000 == 0) {  // the consumer sleeps now and then
                    nap.expires_after(1ms);
                    co_await nap.async_wait(asio::use_awaitable);
                }
                if (consumed % 10'000 == 0)
                    peak = std::max(peak, rss_kib());
            }
            CHECK(consumed == total);
        }(),
        std::chrono::minutes(5));

    std::cout << "bounded memory: RSS before the run " << baseline << " KiB, peak while 1,000,000 events flowed " << peak
              << " KiB, producer at most " << max_ahead << " events ahead\n";
    CHECK(max_ahead <= static_cast<long>(adk::default_stream_capacity) + 1);
    // About 500 MB of events went through; resident memory may move by a few MB at most.
    CHECK(peak - baseline < 16 * 1024);
}
