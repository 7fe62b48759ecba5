// Metrics (adk/telemetry/metrics.hpp, prometheus.hpp): the Meter's instruments, bounded; the Prometheus text of a
// snapshot; and the GenAI metrics of real invocations (a tool call, a model error, sampling off), fed from spans.
#include <adk/adk.hpp>
#include <adk/telemetry/metrics.hpp>
#include <adk/telemetry/metered_session_service.hpp>
#include <adk/telemetry/prometheus.hpp>
#include <adk/sqlite/sqlite_session_service.hpp>

#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <atomic>
#include <thread>

namespace {

namespace asio = boost::asio;
namespace json = boost::json;
namespace telemetry = adk::telemetry;

using adk::Content;
using adk::testing::ScriptedModel;

const telemetry::MetricData& metric(const telemetry::MetricsSnapshot& s, std::string_view name)
{
    for (const auto& m : s.metrics)
        if (m.name == name)
            return m;
    FAIL("no metric " << name);
    throw;  // unreachable
}

// The one point with exactly these attributes.
const telemetry::MetricPoint& point(const telemetry::MetricData& m, const telemetry::MetricAttributes& attributes)
{
    for (const auto& p : m.points)
        if (p.attributes == attributes)
            return p;
    FAIL("no series of " << m.name << " with those attributes (it has " << m.points.size() << ")");
    throw;
}

}  // namespace

TEST_CASE("meter: counters, up-down counters, histograms and gauges, cumulative and bounded", "[telemetry][metrics]")
{
    telemetry::Meter meter("test.scope", 3);
    auto requests = meter.counter("requests", "{request}", "Requests.");
    requests.add(2, {{"route", "/run"}, {"method", "POST"}});
    requests.add(1, {{"method", "POST"}, {"route", "/run"}});  // the same series: attributes are sorted
    requests.add(-5, {{"method", "POST"}, {"route", "/run"}});  // a counter only goes up: ignored
    auto active = meter.up_down_counter("active", "1", "Active.");
    active.add(3);
    active.add(-1);
    auto latency = meter.histogram("latency", "s", "Latency.", {0.1, 1, 10});
    for (double v : {0.05, 0.1, 0.5, 20.0})
        latency.record(v);
    latency.record(std::nan(""));  // nothing to record
    std::atomic<int> depth{7};
    auto registration = meter.gauge("depth", "{event}", "Depth.", [&] { return static_cast<double>(depth.load()); },
                                    {{"queue", "a"}});

    auto s = meter.collect();
    CHECK(s.scope == "test.scope");
    CHECK(s.time_ns >= s.start_ns);
    REQUIRE(s.metrics.size() == 4);
    CHECK(s.metrics[0].name == "requests");  // in the order made, gauges last
    CHECK(s.metrics[3].name == "depth");
    CHECK(point(metric(s, "requests"), {{"method", "POST"}, {"route", "/run"}}).value == 3);
    CHECK(point(metric(s, "active"), {}).value == 2);
    const auto& h = point(metric(s, "latency"), {});
    CHECK(h.bucket_counts == std::vector<std::uint64_t>{2, 1, 0, 1});  // (..0.1], (0.1..1], (1..10], (10..)
    CHECK(h.count == 4);
    CHECK(h.sum == Approx(20.65));
    CHECK(h.min == 0.05);
    CHECK(h.max == 20.0);
    CHECK(point(metric(s, "depth"), {{"queue", "a"}}).value == 7);
    depth = 9;
    CHECK(point(metric(meter.collect(), "depth"), {{"queue", "a"}}).value == 9);

    // The same name gives the same instrument; another kind under it is refused, as is a bad name or bounds.
    meter.counter("requests", "{request}", "Requests.").add(1, {{"method", "POST"}, {"route", "/run"}});
    CHECK(point(metric(meter.collect(), "requests"), {{"method", "POST"}, {"route", "/run"}}).value == 4);
    CHECK_THROWS_WITH(meter.histogram("requests", "s", "", {1}), Catch::Contains("another kind"));
    CHECK_THROWS_WITH(meter.counter("depth", "", ""), Catch::Contains("gauge"));
    CHECK_THROWS_WITH(meter.counter("9lives", "", ""), Catch::Contains("not an OpenTelemetry instrument name"));
    CHECK_THROWS_WITH(meter.counter("a b", "", ""), Catch::Contains("not an OpenTelemetry instrument name"));
    CHECK_THROWS_WITH(meter.histogram("h", "s", "", {1, 1}), Catch::Contains("increase strictly"));

    // Past 3 series, values go to the one overflow series.
    for (int i = 0; i < 10; ++i)
        requests.add(1, {{"user", std::to_string(i)}});
    const auto after = meter.collect();
    const auto& bounded = metric(after, "requests");
    CHECK(bounded.points.size() == 4);
    CHECK(point(bounded, {{"otel.metric.overflow", "true"}}).value == 8);

    // Attributes given as views land in the series of the same strings, whatever their order; past the bound, in
    // the overflow series too.
    std::string route = "/run", method = "POST";
    auto timed = meter.histogram("timed", "s", "Timed.", {1});
    timed.record(0.5, {{"method", "POST"}, {"route", "/run"}});
    std::array<telemetry::MetricAttributeView, 2> views{{{"route", route}, {"method", method}}};
    timed.record(2.0, views);
    std::array<telemetry::MetricAttributeView, 1> other{{{"route", "/health"}}};
    timed.record(0.25, other);
    for (int i = 0; i < 3; ++i) {
        const std::string user = "v" + std::to_string(i);
        std::array<telemetry::MetricAttributeView, 1> by_user{{{"user", user}}};
        timed.record(1.0, by_user);
    }
    const auto with_timed = meter.collect();
    const auto& t = metric(with_timed, "timed");
    CHECK(t.points.size() == 4);
    const auto& both = point(t, {{"method", "POST"}, {"route", "/run"}});
    CHECK(both.count == 2);
    CHECK(both.sum == 2.5);
    CHECK(both.bucket_counts == std::vector<std::uint64_t>{1, 1});
    CHECK(point(t, {{"route", "/health"}}).count == 1);
    CHECK(point(t, {{"user", "v0"}}).count == 1);  // the third series
    CHECK(point(t, {{"otel.metric.overflow", "true"}}).count == 2);

    // A gauge goes with its registration.
    registration = telemetry::GaugeRegistration();
    for (const auto& m : meter.collect().metrics)
        CHECK(m.name != "depth");
}

TEST_CASE("meter: an attribute value is cut at 128 bytes, so a model's long modelVersion cannot bloat a scrape",
          "[telemetry][metrics]")
{
    telemetry::Meter meter("test.scope");
    auto calls = meter.histogram("calls", "s", "Calls.", {1});
    // 2 KiB versions that differ after their first 200 bytes, as strings and as views; one with a two-byte
    // character across the cut.
    const std::string prefix(200, 'v');
    for (int i = 0; i < 50; ++i) {
        const std::string version = prefix + std::to_string(i) + std::string(2048, 'x');
        calls.record(0.5, {{"gen_ai.response.model", version}});
        std::array<telemetry::MetricAttributeView, 1> views{{{"gen_ai.response.model", version}}};
        calls.record(0.5, views);
    }
    const std::string accented = std::string(127, 'a') + "\xc3\xa9" + std::string(100, 'b');
    calls.record(0.5, {{"gen_ai.response.model", accented}});
    const auto snapshot = meter.collect();
    const auto& m = metric(snapshot, "calls");
    REQUIRE(m.points.size() == 2);
    CHECK(point(m, {{"gen_ai.response.model", std::string(128, 'v')}}).count == 100);
    CHECK(point(m, {{"gen_ai.response.model", std::string(127, 'a')}}).count == 1);  // not inside the character
    CHECK(telemetry::prometheus_text(snapshot).size() < 8000);
}

TEST_CASE("meter: recorded from many threads, nothing lost", "[telemetry][metrics][threads]")
{
    telemetry::Meter meter;
    auto calls = meter.counter("calls", "1", "");
    auto sizes = meter.histogram("sizes", "By", "", {10, 100});
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            for (int i = 0; i < 10000; ++i) {
                calls.add(1, {{"thread", std::to_string(t % 2)}});
                sizes.record(i % 200);
                if (i % 1000 == 0)
                    (void)meter.collect();
            }
        });
    for (auto& t : threads)
        t.join();
    auto s = meter.collect();
    CHECK(point(metric(s, "calls"), {{"thread", "0"}}).value == 20000);
    CHECK(point(metric(s, "calls"), {{"thread", "1"}}).value == 20000);
    CHECK(point(metric(s, "sizes"), {}).count == 40000);
}

TEST_CASE("prometheus: the text format of a snapshot, names, units, labels and buckets", "[telemetry][metrics]")
{
    telemetry::MetricsSnapshot s;
    s.scope = "gcp.vertex.agent";
    telemetry::MetricData duration;
    duration.name = "gen_ai.client.operation.duration";
    duration.unit = "s";
    duration.description = "GenAI operation duration.";
    duration.kind = telemetry::InstrumentKind::histogram;
    duration.bounds = {0.01, 0.5};
    telemetry::MetricPoint p;
    p.attributes = {{"gen_ai.request.model", "gemini \"2.5\"\\flash\n"}};
    p.bucket_counts = {1, 0, 2};
    p.count = 3;
    p.sum = 4.25;
    duration.points.push_back(p);
    telemetry::MetricData tokens;
    tokens.name = "adk.tokens";
    tokens.unit = "{token}";
    tokens.description = "Tokens,\nsummed \\ here.";
    tokens.kind = telemetry::InstrumentKind::counter;
    telemetry::MetricPoint t;
    t.attributes = {{"9type", "input"}};
    t.value = 12;
    tokens.points.push_back(t);
    telemetry::MetricData active;
    active.name = "adk.invocations.active";
    active.unit = "{invocation}";
    active.kind = telemetry::InstrumentKind::up_down_counter;
    telemetry::MetricPoint a;
    a.value = 0.5;
    active.points.push_back(a);
    telemetry::MetricData empty;  // no series: nothing written
    empty.name = "unused";
    s.metrics = {duration, tokens, active, empty};

    CHECK(telemetry::prometheus_text(s) ==
          "# HELP gen_ai_client_operation_duration_seconds GenAI operation duration.\n"
          "# TYPE gen_ai_client_operation_duration_seconds histogram\n"
          "gen_ai_client_operation_duration_seconds_bucket{otel_scope_name=\"gcp.vertex.agent\","
          "gen_ai_request_model=\"gemini \\\"2.5\\\"\\\\flash\\n\",le=\"0.01\"} 1\n"
          "gen_ai_client_operation_duration_seconds_bucket{otel_scope_name=\"gcp.vertex.agent\","
          "gen_ai_request_model=\"gemini \\\"2.5\\\"\\\\flash\\n\",le=\"0.5\"} 1\n"
          "gen_ai_client_operation_duration_seconds_bucket{otel_scope_name=\"gcp.vertex.agent\","
          "gen_ai_request_model=\"gemini \\\"2.5\\\"\\\\flash\\n\",le=\"+Inf\"} 3\n"
          "gen_ai_client_operation_duration_seconds_sum{otel_scope_name=\"gcp.vertex.agent\","
          "gen_ai_request_model=\"gemini \\\"2.5\\\"\\\\flash\\n\"} 4.25\n"
          "gen_ai_client_operation_duration_seconds_count{otel_scope_name=\"gcp.vertex.agent\","
          "gen_ai_request_model=\"gemini \\\"2.5\\\"\\\\flash\\n\"} 3\n"
          "# HELP adk_tokens_total Tokens,\\nsummed \\\\ here.\n"
          "# TYPE adk_tokens_total counter\n"
          "adk_tokens_total{otel_scope_name=\"gcp.vertex.agent\",key_9type=\"input\"} 12\n"
          "# HELP adk_invocations_active \n"
          "# TYPE adk_invocations_active gauge\n"
          "adk_invocations_active{otel_scope_name=\"gcp.vertex.agent\"} 0.5\n");
}

namespace {

std::shared_ptr<adk::FunctionTool> weather_tool(std::shared_ptr<telemetry::Meter> meter, double* active_seen)
{
    return adk::FunctionTool::create(
        "get_weather", "Tells the weather.", json::parse(R"({"type":"object","properties":{"city":{"type":"string"}}})"),
        [meter, active_seen](adk::ToolContext&, json::object args) -> asio::awaitable<json::value> {
            // While the tool runs, its invocation is counted as active.
            for (const auto& m : meter->collect().metrics)
                if (m.name == "adk.invocations.active" && !m.points.empty())
                    *active_seen = m.points.front().value;
            if (args.at("city") == "Atlantis")
                throw adk::Error(adk::errc::not_found, "no such city");
            co_return json::object{{"city", args.at("city")}, {"sky", "sunny"}};
        });
}

adk::LlmResponse call_weather(std::string city)
{
    adk::LlmResponse r;
    r.content = Content("model", {adk::Part::from_function_call("get_weather", json::object{{"city", city}}, "c1")});
    return r;
}

adk::LlmResponse answer(std::string text, int in, int out)
{
    adk::LlmResponse r = adk::LlmResponse::text(std::move(text));
    r.finish_reason = "STOP";
    adk::UsageMetadata usage;
    usage.prompt_token_count = in;
    usage.candidates_token_count = out;
    r.usage_metadata = usage;
    r.model_version = "scripted-1";
    return r;
}

// Runs `messages` through one LlmAgent with a tracer whose only sink is GenAiMetrics.
telemetry::MetricsSnapshot metrics_of(std::vector<ScriptedModel::Turn> turns, std::vector<std::string> messages,
                                      telemetry::TracerOptions options, double* active_seen)
{
    auto meter = std::make_shared<telemetry::Meter>();
    auto tracer = std::make_shared<telemetry::Tracer>(
        std::vector<std::shared_ptr<telemetry::SpanSink>>{std::make_shared<telemetry::GenAiMetrics>(meter)}, options);
    auto model = std::make_shared<ScriptedModel>(std::move(turns));
    auto agent = adk::LlmAgent::builder("weather_agent").model(model).tool(weather_tool(meter, active_seen)).build();
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::Runner runner(adk::RunnerOptions{
        .app_name = "app", .agent = agent, .session_service = sessions, .tracer = tracer});
    asio::io_context ioc;
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        adk::CreateSessionRequest create("app", "u", "s");
        co_await sessions->create_session(std::move(create));
        for (auto& text : messages) {
            adk::RunRequest request("u", "s", Content::user(text));
            try {
                auto stream = co_await runner.run(std::move(request));
                while (co_await stream.next()) {
                }
            } catch (const adk::Error&) {
                // a model error ends the run: counted below
            }
        }
    }());
    return meter->collect();
}

}  // namespace

TEST_CASE("GenAI metrics of real runs: model calls, tokens, tools, agents, invocations, errors, unsampled too",
          "[telemetry][metrics][runner]")
{
    // Two runs: one with a tool call and an answer, one whose tool fails and whose model then errs.
    const std::vector<ScriptedModel::Turn> turns{
        call_weather("Paris"), answer("Sunny.", 12, 3), call_weather("Atlantis"),
        ScriptedModel::Turn::raise(adk::Error(adk::errc::bad_response, "the provider sent nonsense"))};
    telemetry::TracerOptions off;
    off.sampler = telemetry::Sampler::always_off;  // metrics count every call, sampled or not
    for (const auto& options : {telemetry::TracerOptions{}, off}) {
        double active_seen = -1;
        const auto s = metrics_of(turns, {"Weather in Paris?", "And Atlantis?"}, options, &active_seen);
        CHECK(active_seen == 1);
        CHECK(s.scope == "gcp.vertex.agent");

        const auto& operations = metric(s, "gen_ai.client.operation.duration");
        CHECK(operations.unit == "s");
        const telemetry::MetricAttributes ok{{"gen_ai.operation.name", "generate_content"},
                                             {"gen_ai.request.model", "scripted-model"}};
        CHECK(point(operations, ok).count == 2);  // each run's function call, which named no model version...
        const telemetry::MetricAttributes answered{{"gen_ai.operation.name", "generate_content"},
                                                   {"gen_ai.request.model", "scripted-model"},
                                                   {"gen_ai.response.model", "scripted-1"}};
        CHECK(point(operations, answered).count == 1);  // ...and the answer, which named its model
        std::uint64_t failed = 0;
        for (const auto& p : operations.points)
            for (const auto& [k, v] : p.attributes)
                if (k == "error.type")
                    failed += p.count;
        CHECK(failed == 1);
        CHECK(point(operations, {{"error.type", "bad_response"}, {"gen_ai.operation.name", "generate_content"},
                                 {"gen_ai.request.model", "scripted-model"}}).count == 1);

        const auto& tokens = metric(s, "gen_ai.client.token.usage");
        auto input = answered;
        input.emplace_back("gen_ai.token.type", "input");
        auto output = answered;
        output.emplace_back("gen_ai.token.type", "output");
        CHECK(point(tokens, input).sum == 12);
        CHECK(point(tokens, output).sum == 3);

        const auto& tools = metric(s, "gen_ai.execute_tool.duration");
        CHECK(point(tools, {{"gen_ai.tool.name", "get_weather"}}).count == 1);
        CHECK(point(tools, {{"error.type", "not_found"}, {"gen_ai.tool.name", "get_weather"}}).count == 1);

        const auto& agents = metric(s, "gen_ai.invoke_agent.duration");
        std::uint64_t agent_runs = 0;
        for (const auto& p : agents.points)
            agent_runs += p.count;
        CHECK(agent_runs == 2);
        CHECK(point(agents, {{"gen_ai.agent.name", "weather_agent"}}).count == 1);
        const auto& inference = point(metric(s, "gen_ai.invoke_agent.inference_calls"), {{"gen_ai.agent.name", "weather_agent"}});
        CHECK(inference.count == 2);
        CHECK(inference.sum == 4);
        CHECK(point(metric(s, "gen_ai.invoke_agent.tool_calls"), {{"gen_ai.agent.name", "weather_agent"}}).sum == 2);

        CHECK(point(metric(s, "adk.invocations.active"), {}).value == 0);  // both ended
        const auto& invocations = metric(s, "adk.invocation.duration");
        CHECK(point(invocations, {{"adk.app.name", "app"}}).count == 1);
        CHECK(point(invocations, {{"adk.app.name", "app"}, {"error.type", "bad_response"}}).count == 1);

        // Prometheus reads the same numbers.
        const std::string text = telemetry::prometheus_text(s);
        CHECK_THAT(text, Catch::Contains("gen_ai_client_token_usage_sum{otel_scope_name=\"gcp.vertex.agent\","
                                         "gen_ai_operation_name=\"generate_content\",gen_ai_request_model="
                                         "\"scripted-model\",gen_ai_response_model=\"scripted-1\","
                                         "gen_ai_token_type=\"input\"} 12\n"));
        CHECK_THAT(text, Catch::Contains("# TYPE gen_ai_execute_tool_duration_seconds histogram\n"));
    }
}

TEST_CASE("MeteredSessionService: each operation on a real SQLite file timed as db.client.operation.duration, "
          "failures with error.type",
          "[telemetry][metrics][sessions]")
{
    adk::test::TempDir dir("metered");
    auto meter = std::make_shared<telemetry::Meter>();
    auto sqlite = std::make_shared<adk::sqlite::SqliteSessionService>(dir.file("sessions.db"));
    adk::StateLimits small;
    small.max_value_bytes = 64;
    sqlite->set_state_limits(small);
    auto sessions = std::make_shared<telemetry::MeteredSessionService>(sqlite, meter, "sqlite");
    CHECK(sessions->state_limits().max_value_bytes == 64);  // the wrapped service's limits hold

    asio::io_context ioc;
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        adk::Session session = co_await sessions->create_session({"app", "u", "s1"});
        {
            adk::SessionTurn turn = co_await sessions->take_turn(session.key());
            adk::Event first("agent", Content::model("one"));
            first.actions.state_delta["count"] = 1;
            co_await sessions->append_event(session, first);
            adk::Event second("agent", Content::model("two"));
            second.actions.state_delta["count"] = 2;
            co_await sessions->append_event(session, second);
        }
        // Refused by the checks, before the store: not an operation of the store, not timed.
        adk::Event too_big("agent", Content::model("three"));
        too_big.actions.state_delta["blob"] = std::string(100, 'x');
        auto refused = co_await adk::test::error_of(sessions->append_event(session, too_big));
        REQUIRE(refused);
        CHECK(refused->code() == adk::errc::too_large);
        // Failed in the store: timed, with error.type.
        adk::Session gone("missing", "app", "u");
        adk::Event lost("agent", Content::model("lost"));
        auto missing = co_await adk::test::error_of(sessions->append_event(gone, lost));
        REQUIRE(missing);
        CHECK(missing->code() == adk::errc::not_found);

        // What the wrapper stored is in the SQLite file, read without it.
        auto stored = co_await sqlite->get_session({"app", "u", "s1"});
        REQUIRE(stored);
        CHECK(stored->events.size() == 2);
        CHECK(stored->state.at("count") == 2);
        auto listed = co_await sessions->list_sessions({"app", "u"});
        CHECK(listed.size() == 1);
        auto read = co_await sessions->get_session({"app", "u", "s1"});
        CHECK(read->events.size() == 2);
        co_await sessions->delete_session({"app", "u", "s1"});
        CHECK(!(co_await sqlite->get_session({"app", "u", "s1"})));
    }());

    const auto snapshot = meter->collect();
    const auto& duration = metric(snapshot, "db.client.operation.duration");
    CHECK(duration.unit == "s");
    auto count = [&](const std::string& operation) {
        return point(duration, {{"db.operation.name", operation}, {"db.system.name", "sqlite"}}).count;
    };
    CHECK(count("create_session") == 1);
    CHECK(count("take_turn") == 1);
    CHECK(count("append_event") == 2);
    CHECK(count("list_sessions") == 1);
    CHECK(count("get_session") == 1);
    CHECK(count("delete_session") == 1);
    const auto& failed =
        point(duration, {{"db.operation.name", "append_event"}, {"db.system.name", "sqlite"}, {"error.type", "not_found"}});
    CHECK(failed.count == 1);
    CHECK(failed.min >= 0);
    CHECK(duration.points.size() == 7);  // nothing else: the refused event was never the store's
}
