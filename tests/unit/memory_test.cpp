// Invariant 2, bounded memory: a producer of 1,000,000 events and a consumer that sleeps. The producer is
// held back by the stream, so resident memory stays flat while the events flow.
#include <adk/adk.hpp>
#include <adk/providers/gemini/gemini.hpp>

#include "support/agents.hpp"
#include "support/mock_llm.hpp"
#include "support/run.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/json/parse.hpp>

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
    long warm = 0;  // after the first 100,000 events: ASan's quarantine and the allocator's regions are filled
    long peak = 0;
    long max_ahead = 0;
    adk::test::run(
        ioc,
        [&]() -> asio::awaitable<void> {
            co_await sessions->create_session({"app", "u", "s"});
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
                if (consumed == 100'000)
                    warm = rss_kib();
                if (consumed % 10'000 == 0) {
                    peak = std::max(peak, rss_kib());
                    if (std::getenv("ADK_TRACE_RSS") && consumed % 100'000 == 0)
                        std::cout << consumed << " " << rss_kib() << "\n";
                }
            }
            CHECK(consumed == total);
        }(),
        std::chrono::minutes(5));

    std::cout << "bounded memory: RSS before the run " << baseline << " KiB, after 100,000 events " << warm
              << " KiB, peak while 1,000,000 events flowed " << peak << " KiB, producer at most " << max_ahead
              << " events ahead\n";
    CHECK(max_ahead <= static_cast<long>(adk::default_stream_capacity) + 1);
    // About 500 MB of events went through. Warming up (ASan's 4 MB quarantine, the allocator's first regions) takes
    // 12 to 17 MB under ASan; past that, the other 900,000 events (450 MB) may move resident memory by a few MB.
    CHECK(peak - baseline < 48 * 1024);
    CHECK(peak - warm < 4 * 1024);
}

TEST_CASE("invariant 2 end to end: a slow reader of an agent's events makes the model's socket read slowly", "[invariant][memory]")
{
    // mock-llm streams a long answer in Gemini's format: 100,000 chunks of about 250 bytes, 25 MB in all.
    constexpr long chunks = 100'000;
    adk::mock_llm::ServerOptions options;
    options.script = boost::json::parse(R"({"turns": [{"chunks": ["x"], "repeat": 100000}]})");
    adk::test::MockLlm mock(options);
    adk::gemini::GeminiOptions go;
    go.base_url = mock.base_url();
    go.api_key = "test";
    auto agent = adk::LlmAgent::builder("talker").model(adk::gemini::make_model(go)).build();
    asio::io_context ioc;
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::Runner runner({.app_name = "app", .agent = agent, .session_service = sessions});
    adk::RunConfig config;
    config.streaming_mode = adk::StreamingMode::sse;

    long baseline = 0;
    long peak = 0;
    std::size_t written_during_pause = 0;
    std::size_t written_at_end = 0;
    adk::test::run(
        ioc,
        [&]() -> asio::awaitable<void> {
            co_await sessions->create_session({"app", "u", "s"});
            auto stream = co_await runner.run("u", "s", adk::Content::user("talk"), config);
            asio::steady_timer nap(co_await asio::this_coro::executor);
            long partials = 0;
            while (auto ev = co_await stream.next()) {
                if (!ev->partial)
                    continue;
                ++partials;
                if (partials == chunks / 4) {
                    // The reader stops for a while: the server must stop too, its socket full.
                    nap.expires_after(2s);
                    co_await nap.async_wait(asio::use_awaitable);
                    written_during_pause = mock.server().body_bytes_written();
                }
                if (partials == 5'000)
                    baseline = rss_kib();  // after warm-up: the allocator's first regions, buffers, TCP
                if (partials % 5'000 == 0) {
                    peak = std::max(peak, rss_kib());
                    if (std::getenv("ADK_TRACE_RSS"))
                        std::cout << partials << " " << rss_kib() << "\n";
                }
            }
            CHECK(partials == chunks);
            written_at_end = mock.server().body_bytes_written();
        }(),
        std::chrono::minutes(5));

    std::cout << "backpressure end to end: " << written_at_end / 1024 << " KiB streamed; the server had written "
              << written_during_pause / 1024 << " KiB when the reader paused at a quarter; RSS " << baseline
              << " KiB after 5,000 chunks, " << peak << " KiB at most\n";
    // Paused at a quarter of the body, the server could only run ahead by what the socket buffers hold.
    CHECK(written_during_pause < written_at_end / 2);
    // 24 MB went through after the baseline; what grows is ASan's 4 MB quarantine filling up.
    CHECK(peak - baseline < 8 * 1024);
}
