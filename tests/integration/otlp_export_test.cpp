// OtlpSpanExporter over real HTTP on loopback: an invocation's spans reach a collector (OTLP/JSON read back here;
// the protobuf form is decoded by the official definitions in tests/interop/otlp), with the configured headers;
// a collector that refuses, is slow, or is down costs dropped spans, never memory; shutdown sends what waits.
// OtlpMetricExporter sends a Meter's values, cumulative, on its schedule, and what failed goes with the next one.
// And OtlpOptions::from_env reads OpenTelemetry's variables.
#include <adk/adk.hpp>
#include <adk/net/http_server.hpp>
#include <adk/otel/otlp_exporter.hpp>
#include <adk/otel/otlp_metric_exporter.hpp>

#include "support/drive.hpp"
#include "support/manual_time.hpp"
#include "support/run.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

#include <map>
#include <future>
#include <mutex>
#include <set>
#include <thread>

namespace {

namespace asio = boost::asio;
namespace json = boost::json;
namespace telemetry = adk::telemetry;
using adk::otel::OtlpOptions;
using adk::otel::OtlpSpanExporter;

// A collector on loopback, on a thread of its own: keeps what it is sent, and answers as told.
class Collector {
public:
    Collector()
        : server_(ioc_.get_executor(), adk::net::HttpServerOptions(),
                  [this](adk::net::IncomingRequest& req, adk::net::ResponseWriter& res) -> asio::awaitable<void> {
                      unsigned status = 200;
                      std::chrono::milliseconds delay{0};
                      {
                          std::lock_guard lock(mutex_);
                          requests_.push_back(req);
                          status = status_;
                          delay = delay_;
                      }
                      if (delay.count() > 0) {  // on adk::Clock: a test's ManualClock moves it
                          adk::Timer wait(co_await asio::this_coro::executor, delay);
                          co_await wait.async_wait(asio::use_awaitable);
                      }
                      if (status == 200)
                          co_return co_await res.send(200, "application/json", "{}");
                      const adk::net::HeaderList headers{{"retry-after", "0"}};
                      co_await res.send(status, "application/json", R"({"error":"busy"})", headers);
                  })
    {
        server_.start();
        thread_ = std::thread([this] { ioc_.run(); });
    }
    ~Collector()
    {
        server_.stop();
        thread_.join();
    }

    std::string url(const std::string& path = "/v1/traces") const { return server_.base_url() + path; }
    void answer(unsigned status, std::chrono::milliseconds delay = {})
    {
        std::lock_guard lock(mutex_);
        status_ = status;
        delay_ = delay;
    }
    std::vector<adk::net::IncomingRequest> requests() const
    {
        std::lock_guard lock(mutex_);
        return requests_;
    }
    // Every span of every request (OTLP/JSON), by name.
    std::multimap<std::string, json::value> spans() const
    {
        std::multimap<std::string, json::value> out;
        for (const auto& r : requests()) {
            const json::value body = json::parse(r.body);
            for (const auto& rs : body.at("resourceSpans").as_array())
                for (const auto& ss : rs.at("scopeSpans").as_array())
                    for (const auto& s : ss.at("spans").as_array())
                        out.emplace(std::string(s.at("name").as_string()), s);
        }
        return out;
    }

private:
    asio::io_context ioc_;
    adk::net::HttpServer server_;
    std::thread thread_;
    mutable std::mutex mutex_;
    std::vector<adk::net::IncomingRequest> requests_;
    unsigned status_ = 200;
    std::chrono::milliseconds delay_{0};
};

OtlpOptions options_for(const std::string& url)
{
    OtlpOptions o = OtlpOptions::from_env([&](std::string_view name) -> std::optional<std::string> {
        static const std::map<std::string, std::string, std::less<>> env{
            {"OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"},
            {"OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20t0k3n,x-tenant=blue"},
            {"OTEL_SERVICE_NAME", "weather-service"},
            {"OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test,service.name=ignored"},
            {"OTEL_BSP_SCHEDULE_DELAY", "50"}};
        if (name == "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
            return url;
        auto it = env.find(name);
        return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
    });
    o.max_retries = 1;
    return o;
}

// Shuts the exporter down, within `deadline`, on the test's io_context.
void shut_down(asio::io_context& ioc, OtlpSpanExporter& exporter, std::chrono::milliseconds deadline)
{
    adk::test::run(ioc, [&]() -> asio::awaitable<void> { co_await exporter.shutdown(deadline); }());
}

telemetry::SpanData a_span(int i)
{
    telemetry::SpanData s;
    s.name = "span " + std::to_string(i);
    s.context.trace_id[0] = 1;
    s.context.span_id[0] = static_cast<std::uint8_t>(1 + i % 200);
    s.start_ns = 1;
    s.end_ns = 2;
    s.attributes.push_back({"i", std::int64_t{i}, false});
    return s;
}

}  // namespace

TEST_CASE("OTLP export: an invocation's spans reach the collector with the configured headers and resource",
          "[otel]")
{
    asio::io_context ioc;
    Collector collector;
    auto exporter = OtlpSpanExporter::create(ioc.get_executor(), options_for(collector.url()));
    auto tracer = std::make_shared<telemetry::Tracer>(std::vector<std::shared_ptr<telemetry::SpanSink>>{exporter},
                                                      exporter->options().tracer);
    auto model = std::make_shared<adk::testing::ScriptedModel>(std::vector<adk::testing::ScriptedModel::Turn>{
        adk::LlmResponse::text("Sunny.")});
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::Runner runner(adk::RunnerOptions{.app_name = "app",
                                          .agent = adk::LlmAgent::builder("agent").model(model).build(),
                                          .session_service = sessions,
                                          .tracer = tracer});
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        adk::CreateSessionRequest create("app", "u", "s");
        co_await sessions->create_session(std::move(create));
        adk::Content question = adk::Content::user("Weather?");
        auto started = runner.run("u", "s", std::move(question));
        auto stream = co_await std::move(started);
        while (co_await stream.next()) {
        }
        const std::chrono::milliseconds deadline = std::chrono::seconds(10);
        co_await exporter->shutdown(deadline);
    }());
    const auto requests = collector.requests();
    REQUIRE_FALSE(requests.empty());
    CHECK(requests[0].header("content-type") == "application/json");
    CHECK(requests[0].header("authorization") == "Bearer t0k3n");  // percent-decoded
    CHECK(requests[0].header("x-tenant") == "blue");
    const json::value first = json::parse(requests[0].body);
    const json::value& resource = first.at("resourceSpans").at(0).at("resource").at("attributes");
    CHECK(resource.at(0) == json::parse(R"({"key":"service.name","value":{"stringValue":"weather-service"}})"));
    CHECK(resource.at(1) == json::parse(R"({"key":"deployment.environment","value":{"stringValue":"test"}})"));

    const auto spans = collector.spans();
    CHECK(spans.size() == 4);
    for (const char* name : {"invocation", "invoke_agent agent", "call_llm", "generate_content scripted-model"})
        CHECK(spans.count(name) == 1);
    // Content is not exported unless asked: with no sink that wants it, it is not even built.
    const json::value& call = spans.find("call_llm")->second;
    CHECK(call.at("attributes").as_array().size() > 5);
    for (const auto& a : call.at("attributes").as_array()) {
        CHECK(a.at("key") != "gcp.vertex.agent.llm_request");
        CHECK(a.at("key") != "gcp.vertex.agent.llm_response");
    }
    CHECK(spans.find("invoke_agent agent")->second.at("parentSpanId") == spans.find("invocation")->second.at("spanId"));
    const auto stats = exporter->stats();
    CHECK(stats.exported == 4);
    CHECK(stats.dropped == 0);
}

TEST_CASE("OTLP export: a collector that refuses, is slow or is down costs dropped spans, never memory", "[otel]")
{
    asio::io_context ioc;
    Collector collector;
    SECTION("503 with Retry-After: retried, then the batch is dropped and counted")
    {
        adk::testing::ManualClock clock;  // the retry's backoff passes on the test's clock
        collector.answer(503);
        auto exporter = OtlpSpanExporter::create(ioc.get_executor(), options_for(collector.url()));
        for (int i = 0; i < 10; ++i)
            exporter->on_end(a_span(i));
        adk::test::run(ioc, adk::test::passing_time(clock, std::chrono::milliseconds(100),
                                                    exporter->shutdown(std::chrono::seconds(20))));
        CHECK(collector.requests().size() == 2);  // the first attempt and one retry
        CHECK(exporter->stats().dropped == 10);
        CHECK(exporter->stats().failed_batches == 1);
        CHECK(exporter->stats().exported == 0);
    }
    SECTION("slower than the timeout: the batch fails, the next one goes through")
    {
        // On the test's clock: a timeout of 10 s, a collector that answers after an hour.
        adk::testing::ManualClock clock;
        OtlpOptions o = options_for(collector.url());
        o.timeout = std::chrono::seconds(10);
        o.max_retries = 0;
        auto exporter = OtlpSpanExporter::create(ioc.get_executor(), o);
        collector.answer(200, std::chrono::hours(1));
        exporter->on_end(a_span(1));
        adk::test::run(ioc, [&]() -> asio::awaitable<void> {
            bool flushed = false;
            auto flush = [&]() -> asio::awaitable<void> {
                co_await exporter->flush();
                flushed = true;
            };
            asio::co_spawn(ioc, flush(), asio::detached);
            const bool arrived = co_await adk::test::eventually([&] { return collector.requests().size() == 1; });
            REQUIRE(arrived);
            co_await clock.elapse(std::chrono::seconds(9));
            CHECK_FALSE(flushed);  // within the timeout, the batch still waits for its answer
            co_await clock.elapse(std::chrono::seconds(2));
            const bool failed = co_await adk::test::eventually([&] { return flushed; });
            REQUIRE(failed);
            clock.advance(std::chrono::hours(1));  // the collector's handler ends: its thread can be joined
            collector.answer(200);
            exporter->on_end(a_span(2));
            const std::chrono::milliseconds deadline = std::chrono::seconds(10);
            co_await exporter->shutdown(deadline);
        }());
        CHECK(exporter->stats().failed_batches == 1);
        CHECK(exporter->stats().dropped == 1);
        CHECK(exporter->stats().exported == 1);
    }
    SECTION("down: a million spans pushed at it, the queue stays within its bounds")
    {
        OtlpOptions o = options_for("http://127.0.0.1:1/v1/traces");  // nothing listens on port 1
        o.max_retries = 0;
        o.max_queue_bytes = 64 << 10;
        auto exporter = OtlpSpanExporter::create(ioc.get_executor(), o);
        std::size_t most_queued = 0;
        std::size_t most_bytes = 0;
        for (int i = 0; i < 1'000'000; ++i) {
            exporter->on_end(a_span(i));
            if (i % 1000 == 0) {
                const auto s = exporter->stats();
                most_queued = std::max(most_queued, s.queued);
                most_bytes = std::max(most_bytes, s.queued_bytes);
                ioc.poll();  // the loop runs between pushes, as it would on another thread
            }
        }
        CHECK(most_queued <= o.max_queue_spans);
        CHECK(most_bytes <= o.max_queue_bytes);
        shut_down(ioc, *exporter, std::chrono::seconds(20));
        const auto s = exporter->stats();
        CHECK(s.exported == 0);
        CHECK(s.dropped == 1'000'000);  // every span is accounted for
        CHECK(s.queued == 0);
    }
}

TEST_CASE("OTLP export: shutdown sends what waits, and past its deadline the rest is dropped and counted", "[otel]")
{
    asio::io_context ioc;
    Collector collector;
    OtlpOptions o = options_for(collector.url());
    o.schedule_delay = std::chrono::hours(1);  // only shutdown sends
    auto exporter = OtlpSpanExporter::create(ioc.get_executor(), o);
    for (int i = 0; i < 5; ++i)
        exporter->on_end(a_span(i));
    shut_down(ioc, *exporter, std::chrono::seconds(10));
    CHECK(collector.spans().size() == 5);
    exporter->on_end(a_span(6));  // after shutdown: dropped
    CHECK(exporter->stats().dropped == 1);

    // On the test's clock, moved a second at each turn: a deadline of 10 s, a collector that answers after 30.
    adk::testing::ManualClock clock;
    collector.answer(200, std::chrono::seconds(30));
    auto slow = OtlpSpanExporter::create(ioc.get_executor(), o);
    slow->on_end(a_span(7));
    const adk::Clock::time_point asked = adk::Clock::now();
    adk::test::run(ioc, adk::test::passing_time(clock, std::chrono::seconds(1), slow->shutdown(std::chrono::seconds(10))));
    CHECK(adk::Clock::now() - asked >= std::chrono::seconds(10));
    CHECK(slow->stats().dropped == 1);
    CHECK(slow->stats().exported == 0);
    clock.advance(std::chrono::hours(1));  // the collector's handler ends: its thread can be joined
}

TEST_CASE("OtlpOptions::from_env: OpenTelemetry's variables, and clear errors for what cannot be used", "[otel]")
{
    auto from = [](std::map<std::string, std::string, std::less<>> env) {
        return OtlpOptions::from_env([env](std::string_view name) -> std::optional<std::string> {
            auto it = env.find(name);
            return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
        });
    };
    const OtlpOptions defaults = from({});
    CHECK(defaults.enabled);
    CHECK(defaults.traces_url == "http://localhost:4318/v1/traces");
    CHECK(defaults.encoding == adk::otel::Encoding::protobuf);
    CHECK_FALSE(defaults.capture_content);
    CHECK(std::get<std::string>(defaults.origin.resource.at(0).value) == "unknown_service");
    CHECK(defaults.tracer.sampler == telemetry::Sampler::parent_based_always_on);

    const OtlpOptions set = from({{"OTEL_EXPORTER_OTLP_ENDPOINT", "https://collector:4318"},
                                  {"OTEL_EXPORTER_OTLP_TIMEOUT", "2500"},
                                  {"OTEL_TRACES_SAMPLER", "parentbased_traceidratio"},
                                  {"OTEL_TRACES_SAMPLER_ARG", "0.25"},
                                  {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "TRUE"},
                                  {"OTEL_BSP_MAX_QUEUE_SIZE", "100"},
                                  {"OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "500"}});
    CHECK(set.traces_url == "https://collector:4318/v1/traces");
    CHECK(set.timeout == std::chrono::milliseconds(2500));
    CHECK(set.tracer.sampler == telemetry::Sampler::parent_based_trace_id_ratio);
    CHECK(set.tracer.ratio == 0.25);
    CHECK(set.capture_content);
    CHECK(set.max_batch_spans == 100);  // never more than the queue holds
    CHECK(from({{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://c:4318/custom"}}).traces_url == "http://c:4318/custom");
    CHECK(from({{"OTEL_EXPORTER_OTLP_HEADERS", "a=%zz, b = x%2Cy "}}).headers ==
          std::vector<std::pair<std::string, std::string>>{{"a", "%zz"}, {"b", "x,y"}});
    CHECK_FALSE(from({{"OTEL_SDK_DISABLED", "true"}}).enabled);
    CHECK_FALSE(from({{"OTEL_TRACES_EXPORTER", "none"}}).enabled);

    // Metrics: their own endpoint, protocol and headers, else the general ones; the export interval.
    CHECK(defaults.metrics.enabled);
    CHECK(defaults.metrics.url == "http://localhost:4318/v1/metrics");
    CHECK(defaults.metrics.interval == std::chrono::milliseconds(60000));
    CHECK(set.metrics.url == "https://collector:4318/v1/metrics");
    CHECK(set.metrics.timeout == std::chrono::milliseconds(2500));
    const OtlpOptions metrics = from({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318/"},
                                      {"OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "http/json"},
                                      {"OTEL_EXPORTER_OTLP_METRICS_HEADERS", "x-metrics=1"},
                                      {"OTEL_EXPORTER_OTLP_HEADERS", "x-all=1"},
                                      {"OTEL_METRIC_EXPORT_INTERVAL", "15000"}});
    CHECK(metrics.metrics.url == "http://c:4318/v1/metrics");
    CHECK(metrics.traces_url == "http://c:4318/v1/traces");
    CHECK(metrics.metrics.encoding == adk::otel::Encoding::json);
    CHECK(metrics.encoding == adk::otel::Encoding::protobuf);
    CHECK(metrics.metrics.headers == std::vector<std::pair<std::string, std::string>>{{"x-metrics", "1"}});
    CHECK(metrics.headers == std::vector<std::pair<std::string, std::string>>{{"x-all", "1"}});
    CHECK(metrics.metrics.interval == std::chrono::milliseconds(15000));
    CHECK(from({{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://m:9/m"}}).metrics.url == "http://m:9/m");
    CHECK_FALSE(from({{"OTEL_METRICS_EXPORTER", "none"}}).metrics.enabled);
    CHECK_FALSE(from({{"OTEL_METRICS_EXPORTER", "prometheus"}}).metrics.enabled);  // scraped at /metrics instead
    CHECK(from({{"OTEL_METRICS_EXPORTER", "none"}}).enabled);  // traces still go
    CHECK_FALSE(from({{"OTEL_SDK_DISABLED", "true"}}).metrics.enabled);

    const std::vector<std::pair<std::map<std::string, std::string, std::less<>>, std::string>> bad{
        {{{"OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"}}, "grpc is not supported"},
        {{{"OTEL_EXPORTER_OTLP_ENDPOINT", "ftp://c"}}, "OTEL_EXPORTER_OTLP_ENDPOINT"},
        {{{"OTEL_EXPORTER_OTLP_HEADERS", "novalue"}}, "key=value"},
        {{{"OTEL_EXPORTER_OTLP_HEADERS", "a=b%0D%0Ainjected: 1"}}, "HTTP forbids"},
        {{{"OTEL_EXPORTER_OTLP_TIMEOUT", "soon"}}, "whole number"},
        {{{"OTEL_TRACES_SAMPLER", "sometimes"}}, "parentbased_always_on"},
        {{{"OTEL_TRACES_SAMPLER_ARG", "2"}}, "from 0 to 1"},
        {{{"OTEL_TRACES_EXPORTER", "zipkin"}}, "OTLP only"},
        {{{"OTEL_METRICS_EXPORTER", "statsd"}}, "OTEL_METRICS_EXPORTER"},
        {{{"OTEL_METRIC_EXPORT_INTERVAL", "0"}}, "above 0"},
        {{{"OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "grpc"}}, "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"},
    };
    for (const auto& [env, says] : bad) {
        try {
            (void)from(env);
            FAIL("accepted: " << env.begin()->first << "=" << env.begin()->second);
        } catch (const adk::Error& e) {
            CHECK(e.code() == adk::errc::invalid_argument);
            CHECK_THAT(e.message(), Catch::Contains(says));
        }
    }
    // A header's value is a credential: no error prints it.
    try {
        (void)from({{"OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%0Asecret"}});
        FAIL("accepted a header with a line feed");
    } catch (const adk::Error& e) {
        CHECK(e.message().find("secret") == std::string::npos);
    }
}

TEST_CASE("OTLP export on 4 threads: parallel branches end spans on their strands, every one is exported once",
          "[otel][threads]")
{
    Collector collector;
    asio::io_context ioc;
    OtlpOptions o = options_for(collector.url());
    o.schedule_delay = std::chrono::milliseconds(5);
    o.max_batch_spans = 7;  // batches leave while spans are still being ended
    auto exporter = OtlpSpanExporter::create(ioc.get_executor(), o);
    auto tracer = std::make_shared<telemetry::Tracer>(std::vector<std::shared_ptr<telemetry::SpanSink>>{exporter});
    constexpr int invocations = 6;
    std::vector<std::shared_ptr<adk::Agent>> branches;
    for (int b = 0; b < 4; ++b) {
        std::vector<adk::testing::ScriptedModel::Turn> turns;
        for (int i = 0; i < invocations; ++i)
            turns.emplace_back(adk::LlmResponse::text("branch " + std::to_string(b)));
        branches.push_back(adk::LlmAgent::builder("branch_" + std::to_string(b))
                               .model(std::make_shared<adk::testing::ScriptedModel>(std::move(turns)))
                               .build());
    }
    auto fanout = std::make_shared<adk::ParallelAgent>("fanout", "", branches);
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::Runner runner(adk::RunnerOptions{.app_name = "app", .agent = fanout, .session_service = sessions,
                                          .tracer = tracer});
    auto all = [&]() -> asio::awaitable<void> {
        for (int i = 0; i < invocations; ++i) {
            const std::string id = "s" + std::to_string(i);
            adk::CreateSessionRequest create("app", "u", id);
            co_await sessions->create_session(std::move(create));
        }
        std::vector<adk::EventStream> streams;
        for (int i = 0; i < invocations; ++i) {
            adk::Content go = adk::Content::user("go");
            auto started = runner.run("u", "s" + std::to_string(i), std::move(go));
            streams.push_back(co_await std::move(started));
        }
        for (auto& stream : streams)
            while (co_await stream.next()) {
            }
        const std::chrono::milliseconds deadline = std::chrono::seconds(20);
        co_await exporter->shutdown(deadline);
    };
    auto done = asio::co_spawn(ioc, all, asio::use_future);
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i)
        threads.emplace_back([&] { ioc.run(); });
    done.get();
    for (auto& t : threads)
        t.join();
    const auto spans = collector.spans();
    // Each invocation: invocation, invoke_agent fanout, and per branch invoke_agent, call_llm, generate_content.
    CHECK(spans.size() == invocations * (2 + 4 * 3));
    std::set<std::string> ids;
    for (const auto& [name, span] : spans)
        ids.insert(std::string(span.at("spanId").as_string()));
    CHECK(ids.size() == spans.size());  // none twice
    CHECK(exporter->stats().dropped == 0);
}

TEST_CASE("OTLP metrics export: a Meter's values on a schedule, cumulative, and a refused export lost to no count",
          "[otel][metrics]")
{
    Collector collector;
    asio::io_context ioc;
    auto meter = std::make_shared<telemetry::Meter>();
    auto calls = meter->counter("calls", "{call}", "Calls made.");
    auto latency = meter->histogram("latency", "s", "How long calls took.", {0.1, 1});
    calls.add(2, {{"tool", "get_weather"}});
    latency.record(0.5);
    OtlpOptions options = options_for(collector.url());
    options.metrics.url = collector.url("/v1/metrics");
    options.metrics.encoding = adk::otel::Encoding::json;
    options.metrics.headers = {{"x-tenant", "blue"}};
    options.metrics.interval = std::chrono::milliseconds(20);
    options.max_retries = 0;
    // The values of `calls` in each request the collector took, in order.
    auto exported_calls = [&] {
        std::vector<double> out;
        for (const auto& r : collector.requests()) {
            const json::value body = json::parse(r.body);
            const auto& scope = body.at("resourceMetrics").at(0).at("scopeMetrics").at(0);
            CHECK(scope.at("scope").at("name") == "gcp.vertex.agent");
            for (const auto& m : scope.at("metrics").as_array())
                if (m.at("name") == "calls")
                    out.push_back(m.at("sum").at("dataPoints").at(0).at("asDouble").to_number<double>());
        }
        return out;
    };

    auto exporter = adk::otel::OtlpMetricExporter::create(ioc.get_executor(), meter, options);
    // On its schedule: a few exports, each the whole count so far.
    while (collector.requests().size() < 2)
        ioc.run_for(std::chrono::milliseconds(10));
    const auto request = collector.requests().front();
    CHECK(request.target == "/v1/metrics");
    CHECK(request.header("x-tenant") == "blue");
    CHECK(request.header("content-type") == "application/json");
    const json::value body = json::parse(request.body);
    const auto& rm = body.at("resourceMetrics").at(0);
    CHECK(rm.at("resource").at("attributes").at(0).at("value").at("stringValue") == "weather-service");
    for (const auto& m : rm.at("scopeMetrics").at(0).at("metrics").as_array()) {
        if (m.at("name") != "latency")
            continue;
        CHECK(m.at("unit") == "s");
        const auto& h = m.at("histogram");
        CHECK(h.at("aggregationTemporality") == 2);
        const auto& p = h.at("dataPoints").at(0);
        CHECK(p.at("count") == "1");
        CHECK(p.at("bucketCounts") == json::parse(R"(["0","1","0"])"));
        CHECK(p.at("explicitBounds") == json::parse("[0.1, 1.0]"));
    }
    CHECK(exported_calls().front() == 2);

    // Refused: counted as failed; what was added meanwhile arrives with the next export that goes.
    collector.answer(503);
    const auto before = exporter->stats();
    while (exporter->stats().failed < before.failed + 1)
        ioc.run_for(std::chrono::milliseconds(10));
    calls.add(3, {{"tool", "get_weather"}});
    collector.answer(200);
    // (Driven, not run to the end: the exporter's schedule keeps the io_context busy until its shutdown.)
    adk::test::drive(ioc, [&]() -> asio::awaitable<bool> {
        co_await exporter->flush();
        co_return true;
    }());
    CHECK(exported_calls().back() == 5);

    // Shutdown: one last export, then no more.
    calls.add(1, {{"tool", "get_weather"}});
    adk::test::drive(ioc, [&]() -> asio::awaitable<bool> {
        const std::chrono::milliseconds deadline = std::chrono::seconds(5);
        co_await exporter->shutdown(deadline);
        co_return true;
    }());
    CHECK(exported_calls().back() == 6);
    const std::size_t after_shutdown = collector.requests().size();
    ioc.run_for(std::chrono::milliseconds(100));
    CHECK(collector.requests().size() == after_shutdown);
    CHECK(exporter->stats().exports >= 3);
}
