// The agent workloads of tools/bench, run on adk-cpp against mock-llm (Gemini's format) on loopback. The
// same workloads run on Google's TypeScript ADK through ts/agent_bench.mjs; tools/bench/compare.sh runs both
// and prints the ratios.
//
//   agent_bench --mock URL --workload a|b|c|d --concurrency N --invocations N --chunks K [--warmup N]
//               [--sessions URL] [--compaction N] [--tracing off|sink|metrics|otlp] [--consumer next|receiver]
//
// Before the measured invocations, --warmup N (300 by default) run unmeasured, at the same concurrency up
// to 50, as ts/agent_bench.mjs does for the TypeScript ADK (a JIT runtime must be warm to be measured
// fairly); the peak RSS mark is then reset, so memory per invocation is the measured run's.
//
// Workloads: (a) one LlmAgent: a tool call, then a streamed answer of K chunks; (b) the same with K = 100;
// (c) a ParallelAgent of 4 such agents; (d) a SequentialAgent of 5. Invocations run `concurrency` at a time
// on one thread (as Node runs), each on a new session, deleted when it ends: in memory by default, or in the
// service --sessions names (adk::services::open_session_service: sqlite:///file.db, postgresql://...).
// mock-llm runs with --stamp and a script whose chunks are "w{t} ", so each partial event tells when its
// chunk left the server. --tracing records the invocations' spans: `sink` hands them to a sink that only counts them
// (what building spans costs), `metrics` feeds ADK's metrics from them (GenAiMetrics), `otlp` exports them with OtlpSpanExporter where OTEL_EXPORTER_OTLP_ENDPOINT says (on a
// thread of its own; the process's CPU counts it, and what is waiting is flushed before the CPU is read). --compaction N configures event compaction every N invocations (the model summarizes);
// with N > 1 it is never due, as each session holds one invocation: what checking for it costs.
// --consumer: how the bench reads an invocation's events: `next` (the default) awaits Stream::next() for each, as
// most callers do; `receiver` takes each as the runner makes it (RunRequest::receiver, a StreamReceiver, as the API
// server does), the stream carrying only the end.
//
// Prints one JSON object: invocations/s, events/s, CPU per invocation (this process only; and the runtime's
// thread alone, which excludes the SQLite service's worker threads and libpq's), latency and
// chunk-to-event percentiles, peak RSS, RSS per concurrent invocation, and how many invocations produced
// exactly the expected events.
#include <adk/adk.hpp>
#include <adk/otel/otlp_exporter.hpp>
#include <adk/telemetry/metrics.hpp>
#include <adk/providers/gemini/gemini.hpp>
#include <adk/services/service_url.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/serialize.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

namespace asio = boost::asio;
namespace json = boost::json;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
    std::string mock;
    char workload = 'a';
    int concurrency = 1;
    int invocations = 100;
    int chunks = 20;
    int warmup = 300;
    std::string sessions = "memory://";
    int compaction = 0;
    std::string tracing = "off";
    std::string consumer = "next";
};

// Counts the spans it is handed: what making spans costs, without sending them anywhere.
class CountingSink final : public adk::telemetry::SpanSink {
public:
    void on_end(const adk::telemetry::SpanData&) override { ++spans; }
    std::atomic<long> spans{0};
};

long rss_kib(const char* field)
{
    std::ifstream status("/proc/self/status");
    std::string line;
    const std::size_t n = std::strlen(field);
    while (std::getline(status, line))
        if (line.compare(0, n, field) == 0)
            return std::stol(line.substr(n + 1));
    return 0;
}

// RUSAGE_SELF: the whole process; RUSAGE_THREAD: the calling thread (the one the io_context runs on).
double cpu_seconds(int who = RUSAGE_SELF)
{
    rusage u{};
    getrusage(who, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double percentile(std::vector<double>& v, double p)
{
    if (v.empty())
        return 0;
    const auto k = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1));
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
    return v[k];
}

std::shared_ptr<adk::Agent> llm_agent(const std::string& name, std::shared_ptr<adk::Model> model,
                                      std::shared_ptr<adk::Tool> tool)
{
    return adk::LlmAgent::builder(name)
        .model(std::move(model))
        .instruction("You answer questions about the weather. Use the get_weather tool.")
        .tool(std::move(tool))
        .build();
}

std::shared_ptr<adk::Agent> make_agent(const Options& o, std::shared_ptr<adk::Model> model, int& agents)
{
    auto tool = adk::FunctionTool::create(
        "get_weather", "Returns the weather for a city.",
        json::object{{"type", "object"}, {"properties", {{"city", {{"type", "string"}}}}}, {"required", {"city"}}},
        [](adk::ToolContext&, json::object args) -> asio::awaitable<json::value> {
            co_return json::object{{"city", args["city"]}, {"sky", "sunny"}};
        });
    std::vector<std::shared_ptr<adk::Agent>> children;
    switch (o.workload) {
    case 'c':
        for (int i = 0; i < 4; ++i)
            children.push_back(llm_agent("weather_" + std::to_string(i), model, tool));
        agents = 4;
        return std::make_shared<adk::ParallelAgent>("parallel", "Four at once.", children);
    case 'd':
        for (int i = 0; i < 5; ++i)
            children.push_back(llm_agent("step_" + std::to_string(i), model, tool));
        agents = 5;
        return std::make_shared<adk::SequentialAgent>("sequence", "Five in a row.", children);
    default:
        agents = 1;
        return llm_agent("weather", model, tool);
    }
}

// The stamps in a partial event's text: "w<ns> " per chunk.
void chunk_latencies(const std::string& text, long long now_ns, std::vector<double>& out)
{
    for (std::size_t at = text.find('w'); at != std::string::npos; at = text.find('w', at + 1)) {
        long long stamp = 0;
        auto [end, ec] = std::from_chars(text.data() + at + 1, text.data() + text.size(), stamp);
        if (ec == std::errc{} && end != text.data() + at + 1)
            out.push_back(static_cast<double>(now_ns - stamp) / 1000.0);
    }
}

// What an invocation's consumer counts of its events.
struct Tally {
    std::string& first_error;
    std::vector<double>& chunk_us;
    long seen = 0;
    int partial_chunks = 0;
    int finals = 0;

    void see(const adk::Event& ev)
    {
        ++seen;
        if ((ev.error_code || ev.error_message) && first_error.empty())
            first_error = "an error event: " + ev.error_code.value_or("") + " " + ev.error_message.value_or("");
        if (ev.partial) {
            const auto now =
                std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
            const std::string text = ev.text();
            chunk_latencies(text, now, chunk_us);
            partial_chunks += static_cast<int>(std::count(text.begin(), text.end(), 'w'));
        } else if (ev.is_final_response() && !ev.error_code) {
            ++finals;
        }
    }
};

// --consumer receiver: the events counted as the runner makes them.
class TallyReceiver final : public adk::StreamReceiver<adk::Event> {
public:
    explicit TallyReceiver(Tally& tally) : tally_(tally) {}
    void receive(std::unique_ptr<adk::Event> ev) noexcept override
    {
        try {
            tally_.see(*ev);
        } catch (const std::exception& e) {
            if (tally_.first_error.empty())
                tally_.first_error = std::string("counting an event: ") + e.what();
        }
    }

private:
    Tally& tally_;
};

}  // namespace

int main(int argc, char** argv)
{
    Options o;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        const std::string v = argv[i + 1];
        if (a == "--mock") o.mock = v;
        else if (a == "--workload") o.workload = v.at(0);
        else if (a == "--concurrency") o.concurrency = std::stoi(v);
        else if (a == "--invocations") o.invocations = std::stoi(v);
        else if (a == "--chunks") o.chunks = std::stoi(v);
        else if (a == "--warmup") o.warmup = std::stoi(v);
        else if (a == "--sessions") o.sessions = v;
        else if (a == "--compaction") o.compaction = std::stoi(v);
        else if (a == "--tracing") o.tracing = v;
        else if (a == "--consumer") o.consumer = v;
        else {
            std::cerr << "agent_bench: unknown argument " << a << "\n";
            return 2;
        }
    }
    if (o.mock.empty() || (o.tracing != "off" && o.tracing != "sink" && o.tracing != "metrics" && o.tracing != "otlp") ||
        (o.consumer != "next" && o.consumer != "receiver")) {
        std::cerr << "usage: agent_bench --mock URL --workload a|b|c|d --concurrency N --invocations N --chunks K\n"
                     "       [--warmup N] [--sessions memory://|sqlite:///file.db|postgresql://...] [--compaction N]\n"
                     "       [--tracing off|sink|metrics|otlp] [--consumer next|receiver]\n";
        return 2;
    }

    asio::io_context ioc(1);
    adk::gemini::GeminiOptions go;
    go.base_url = o.mock;
    go.api_key = "bench";
    adk::net::HttpClientOptions http;
    http.max_idle_per_origin = static_cast<std::size_t>(o.concurrency);  // a connection per concurrent call
    go.http = std::make_shared<adk::net::HttpClient>(http);
    auto model = adk::gemini::make_model(go);
    int agents = 1;
    auto agent = make_agent(o, model, agents);
    auto sessions = adk::services::open_session_service(o.sessions);
    std::optional<adk::EventsCompactionConfig> compaction;
    if (o.compaction > 0)
        compaction = adk::EventsCompactionConfig{.compaction_interval = o.compaction, .overlap_size = 1};
    // Tracing: the exporter on a thread of its own, as a server would run it beside its agents.
    asio::io_context export_ioc(1);
    auto export_work = asio::make_work_guard(export_ioc);
    std::thread export_thread;
    std::shared_ptr<adk::otel::OtlpSpanExporter> exporter;
    auto counting = std::make_shared<CountingSink>();
    std::shared_ptr<adk::telemetry::Tracer> tracer;
    if (o.tracing == "sink") {
        tracer = std::make_shared<adk::telemetry::Tracer>(std::vector<std::shared_ptr<adk::telemetry::SpanSink>>{counting});
    } else if (o.tracing == "metrics") {
        tracer = std::make_shared<adk::telemetry::Tracer>(std::vector<std::shared_ptr<adk::telemetry::SpanSink>>{
            std::make_shared<adk::telemetry::GenAiMetrics>(std::make_shared<adk::telemetry::Meter>())});
    } else if (o.tracing == "otlp") {
        exporter = adk::otel::OtlpSpanExporter::create(export_ioc.get_executor(), adk::otel::OtlpOptions::from_env());
        tracer = std::make_shared<adk::telemetry::Tracer>(std::vector<std::shared_ptr<adk::telemetry::SpanSink>>{exporter},
                                                          exporter->options().tracer);
        export_thread = std::thread([&] { export_ioc.run(); });
    }
    const auto flush = [&] {
        if (exporter)
            asio::co_spawn(export_ioc, exporter->flush(), asio::use_future).get();
    };
    adk::Runner runner({.app_name = "bench",
                        .agent = agent,
                        .session_service = sessions,
                        .compaction = compaction,
                        .tracer = tracer,
                        .single_threaded = true});
    adk::RunConfig config;
    config.streaming_mode = adk::StreamingMode::sse;

    // Per agent: a call, a response, K partial deltas, the final text.
    const long expected_events = static_cast<long>(agents) * (o.chunks + 3);
    std::vector<double> latencies_ms;
    std::vector<double> chunk_us;
    long events = 0;
    int verified = 0;
    int failed = 0;
    int next = 0;
    int target = 0;  // invocations to start in this phase
    std::string first_error;

    auto worker = [&]() -> asio::awaitable<void> {
        while (next < target) {
            ++next;
            const auto t0 = Clock::now();
            Tally tally{first_error, chunk_us};
            try {
                adk::Session s = co_await sessions->create_session({"bench", "u"});
                adk::RunRequest request("u", s.id, adk::Content::user("Weather in Paris?"));
                request.run_config = config;
                if (o.consumer == "receiver")
                    request.receiver = std::make_shared<TallyReceiver>(tally);
                asio::awaitable<adk::EventStream> starting = runner.run(std::move(request));  // named: g++ 12
                adk::EventStream stream = co_await std::move(starting);
                while (auto ev = co_await stream.next())
                    tally.see(*ev);
                // Finished conversations are not what "RSS per concurrent invocation" measures.
                co_await sessions->delete_session({"bench", "u", s.id});
            } catch (const std::exception& e) {
                if (first_error.empty())
                    first_error = e.what();
            }
            events += tally.seen;
            latencies_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
            if (tally.seen == expected_events && tally.partial_chunks == agents * o.chunks && tally.finals == agents)
                ++verified;
            else
                ++failed;
        }
    };

    // The warm-up, then everything it counted forgotten and the peak RSS mark reset (Linux: clear_refs 5).
    target = o.warmup;
    for (int i = 0; i < std::min(o.concurrency, 50); ++i)
        asio::co_spawn(ioc, worker(), asio::detached);
    ioc.run();
    ioc.restart();
    flush();
    const long warmup_spans = counting->spans;
    const std::uint64_t warmup_exported = exporter ? exporter->stats().exported : 0;
    const int warmup_failed = failed;
    latencies_ms.clear();
    chunk_us.clear();
    events = 0;
    verified = failed = next = 0;
    std::ofstream("/proc/self/clear_refs") << "5";

    target = o.invocations;
    const long rss_before = rss_kib("VmRSS:");
    const double cpu0 = cpu_seconds();
    const double thread_cpu0 = cpu_seconds(RUSAGE_THREAD);
    const auto t0 = Clock::now();
    for (int i = 0; i < o.concurrency; ++i)
        asio::co_spawn(ioc, worker(), asio::detached);
    ioc.run();
    flush();  // what the measured invocations' spans cost to send counts
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    const double cpu = cpu_seconds() - cpu0;
    const double thread_cpu = cpu_seconds(RUSAGE_THREAD) - thread_cpu0;
    const long peak = rss_kib("VmHWM:");

    json::object result{
        {"runtime", "adk-cpp"},
        {"workload", std::string(1, o.workload)},
        {"compaction", o.compaction},
        {"concurrency", o.concurrency},
        {"invocations", o.invocations},
        {"chunks", o.chunks},
        {"warmup", o.warmup},
        {"warmup_failed", warmup_failed},
        {"verified", verified},
        {"failed", failed},
        {"invocations_per_s", o.invocations / seconds},
        {"events_per_s", static_cast<double>(events) / seconds},
        {"cpu_ms_per_invocation", cpu * 1000.0 / o.invocations},
        {"runtime_thread_cpu_ms_per_invocation", thread_cpu * 1000.0 / o.invocations},
        {"latency_ms_p50", percentile(latencies_ms, 0.50)},
        {"latency_ms_p99", percentile(latencies_ms, 0.99)},
        {"chunk_to_event_us_p50", percentile(chunk_us, 0.50)},
        {"chunk_to_event_us_p99", percentile(chunk_us, 0.99)},
        {"peak_rss_kib", peak},
        {"rss_kib_per_concurrent", static_cast<double>(peak - rss_before) / o.concurrency},
    };
    result["tracing"] = o.tracing;
    result["consumer"] = o.consumer;
    if (o.tracing == "sink")
        result["spans_per_invocation"] = static_cast<double>(counting->spans - warmup_spans) / o.invocations;
    if (exporter) {
        asio::co_spawn(export_ioc, exporter->shutdown(std::chrono::seconds(10)), asio::use_future).get();
        const auto stats = exporter->stats();
        result["spans_per_invocation"] = static_cast<double>(stats.exported - warmup_exported) / o.invocations;
        result["spans_dropped"] = stats.dropped;
    }
    export_work.reset();
    if (export_thread.joinable())
        export_thread.join();
    if (!first_error.empty())
        result["first_error"] = first_error;
    std::cout << json::serialize(result) << std::endl;
    return failed == 0 && warmup_failed == 0 ? 0 : 1;
}
