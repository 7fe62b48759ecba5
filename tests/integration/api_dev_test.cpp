// ApiServer's artifact routes and the /dev routes the web UI draws with, over real loopback HTTP: artifacts
// listed, loaded (latest and by version), their versions, deleted; the agent tree (compared with what an ADK
// server answered for the same app), its DOT graph, an event's graph; the debug traces of a run; and 404 Not
// Found for the routes that hide the UI's eval and builder panels.
#include <adk/adk.hpp>
#include <adk/server/api_server.hpp>
#include <adk/telemetry/prometheus.hpp>
#include <adk/workflow/workflow.hpp>

#include "support/api_client.hpp"
#include "support/run.hpp"

#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <map>
#include <mutex>

#include <set>

namespace asio = boost::asio;
namespace json = boost::json;
using adk::test::call;
using adk::test::Reply;
using adk::testing::ScriptedModel;

namespace {

// A sink beside the web UI's: the spans the server's tracer hands every sink, by span id (hex).
class SpanIds final : public adk::telemetry::SpanSink {
public:
    void on_end(const adk::telemetry::SpanData& span) override
    {
        std::lock_guard lock(mutex_);
        names_[adk::telemetry::to_hex(span.context.span_id)] = span.name;
    }
    std::map<std::string, std::string> names() const
    {
        std::lock_guard lock(mutex_);
        return names_;
    }

private:
    mutable std::mutex mutex_;
    std::map<std::string, std::string> names_;
};

std::shared_ptr<adk::FunctionTool> weather_tool()
{
    return adk::FunctionTool::create(
        "get_weather", "Returns the weather for a city.",
        json::parse(R"({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]})"),
        [](adk::ToolContext&, json::object args) -> asio::awaitable<json::value> {
            co_return json::object{{"city", args.at("city")}, {"sky", "sunny"}};
        });
}

std::shared_ptr<adk::Agent> researcher(std::string name, std::shared_ptr<ScriptedModel> model)
{
    return adk::LlmAgent::builder(std::move(name)).model(std::move(model)).tool(weather_tool()).build();
}

std::shared_ptr<ScriptedModel> gemini(std::vector<ScriptedModel::Turn> turns = {})
{
    return std::make_shared<ScriptedModel>(std::move(turns), "gemini-2.5-flash");
}

}  // namespace

TEST_CASE("ApiServer: artifacts listed, loaded by version and latest, their versions, deleted", "[server]")
{
    asio::io_context ioc;
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    auto artifacts = std::make_shared<adk::InMemoryArtifactService>();
    adk::server::ApiServerOptions options = adk::test::options_with(sessions);
    options.artifact_service = artifacts;
    adk::server::ApiServer server(ioc.get_executor(), {{"weather", researcher("weather_agent", gemini())}}, options);
    server.start();
    adk::server::ApiServer without(ioc.get_executor(), {{"weather", researcher("weather_agent", gemini())}},
                                   adk::test::options_with(sessions));
    without.start();
    adk::net::HttpClient client(adk::test::no_retries());
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        for (std::string text : {"Sunny, 22C in Paris", "Rainy"}) {
            adk::ArtifactKey key("weather", "u", "s1", "weather.txt");
            adk::Part part = adk::Part::from_bytes(text, "text/plain");
            co_await artifacts->save_artifact(std::move(key), std::move(part));
        }
        const std::string base = "/apps/weather/users/u/sessions/s1/artifacts";
        Reply list = co_await call(client, server, "GET", base);
        CHECK(list.json() == json::parse(adk::test::fixture("adk/api_samples/list_artifacts.body")));
        const std::string v0_path = base + "/weather.txt/versions/0";
        Reply v0 = co_await call(client, server, "GET", v0_path);
        CHECK(v0.json() == json::parse(adk::test::fixture("adk/api_samples/artifact_version0.body")));
        const std::string latest_path = base + "/weather.txt";
        Reply latest = co_await call(client, server, "GET", latest_path);
        CHECK(latest.json().at("inlineData").at("data") == "UmFpbnk=");  // "Rainy"
        const std::string by_query = base + "/weather.txt?version=0";
        Reply first = co_await call(client, server, "GET", by_query);
        CHECK(first.json() == v0.json());
        const std::string versions_path = base + "/weather.txt/versions";
        Reply versions = co_await call(client, server, "GET", versions_path);
        CHECK(versions.json() == json::parse("[0, 1]"));
        const std::string missing_path = base + "/nope.txt/versions/0";
        Reply missing = co_await call(client, server, "GET", missing_path);
        CHECK(missing.status == 404);
        CHECK(missing.json() == json::parse(adk::test::fixture("adk/api_samples/artifact_404.body")));
        const std::string bad_version = base + "/weather.txt/versions/-1";
        Reply negative = co_await call(client, server, "GET", bad_version);
        CHECK(negative.status == 400);
        Reply deleted = co_await call(client, server, "DELETE", latest_path);
        CHECK(deleted.status == 204);
        Reply after = co_await call(client, server, "GET", base);
        CHECK(after.json() == json::array{});
        Reply none = co_await call(client, without, "GET", base);
        CHECK(none.status == 404);
        CHECK_THAT(none.body, Catch::Contains("without an artifact service"));
        server.stop();
        without.stop();
    }());
}

TEST_CASE("ApiServer: the agent tree, its DOT graph, an event's graph, the traces of a run, and 404 for evals",
          "[server]")
{
    asio::io_context ioc;
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    // The app that the recorded build_graph_pipeline answer describes.
    auto fanout = std::make_shared<adk::ParallelAgent>(
        "fanout", "", std::vector<std::shared_ptr<adk::Agent>>{researcher("researcher_a", gemini()), researcher("researcher_b", gemini())});
    auto pipeline = std::make_shared<adk::SequentialAgent>(
        "pipeline", "Fan out to two researchers in parallel, then summarize.",
        std::vector<std::shared_ptr<adk::Agent>>{fanout, researcher("summarizer", gemini())});
    auto model = gemini({adk::LlmResponse::function_call("get_weather", json::object{{"city", "Paris"}}),
                         adk::LlmResponse::text("Sunny in Paris."),
                         adk::LlmResponse::function_call("get_weather", json::object{{"city", "Paris"}}),
                         adk::LlmResponse::text("Sunny in Paris.")});
    auto weather = adk::LlmAgent::builder("weather_agent")
                       .description("Answers weather questions.")
                       .model(model)
                       .tool(weather_tool())
                       .build();
    auto other_sink = std::make_shared<SpanIds>();
    adk::server::ApiServerOptions options = adk::test::options_with(sessions);
    options.span_sinks.push_back(other_sink);
    adk::server::ApiServer server(ioc.get_executor(), {{"pipeline", pipeline}, {"weather_agent", weather}},
                                  std::move(options));
    server.start();
    adk::net::HttpClient client(adk::test::no_retries());
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        Reply tree = co_await call(client, server, "GET", "/dev/apps/pipeline/build_graph");
        CHECK(tree.json() == json::parse(adk::test::fixture("adk/api_samples/build_graph_pipeline.body")));
        Reply single = co_await call(client, server, "GET", "/dev/apps/weather_agent/build_graph");
        CHECK(single.json() == json::parse(adk::test::fixture("adk/api_samples/build_graph.body")));

        Reply light = co_await call(client, server, "GET", "/dev/apps/weather_agent/build_graph_image?dark_mode=false");
        Reply dark = co_await call(client, server, "GET", "/dev/apps/weather_agent/build_graph_image?dark_mode=true");
        const json::value image = light.json();
        const std::string dot(image.at("dotSrc").as_string());
        CHECK(image.at("").at("dotSrc") == image.at("dotSrc"));  // the keys the UI reads, as ADK's answer has
        CHECK(dot.starts_with("digraph \"weather_agent\" {"));
        CHECK_THAT(dot, Catch::Contains("\"weather_agent\" -> \"get_weather\" [style = \"dashed\""));
        CHECK_THAT(dot, Catch::Contains("bgcolor = \"#F8FAFC\""));
        CHECK(dark.json().at("dotSrc") != image.at("dotSrc"));
        Reply tree_image = co_await call(client, server, "GET", "/dev/apps/pipeline/build_graph_image");
        const std::string tree_dot(tree_image.json().at("dotSrc").as_string());
        CHECK_THAT(tree_dot, Catch::Contains("\"fanout\" -> \"researcher_b\";"));
        CHECK_THAT(tree_dot, Catch::Contains("\"pipeline\" -> \"summarizer\";"));

        // A run, then what the UI asks after it: the session's traces, each event's trace, an event's graph.
        Reply created = co_await call(client, server, "POST", "/apps/weather_agent/users/u/sessions/s1");
        REQUIRE(created.status == 200);
        Reply ran = co_await call(client, server, "POST", "/run",
                                  R"({"appName": "weather_agent", "userId": "u", "sessionId": "s1",
                                      "newMessage": {"role": "user", "parts": [{"text": "Weather in Paris?"}]}})");
        REQUIRE(ran.status == 200);
        const json::array events = ran.json().as_array();
        REQUIRE(events.size() == 3);
        const std::string call_id(events[0].at("id").as_string());
        const std::string response_id(events[1].at("id").as_string());
        const std::string answer_id(events[2].at("id").as_string());

        Reply spans = co_await call(client, server, "GET", "/dev/apps/weather_agent/debug/trace/session/s1");
        Reply legacy = co_await call(client, server, "GET", "/debug/trace/session/s1");
        CHECK(legacy.json() == spans.json());
        std::multiset<std::string> names;
        std::set<std::string> llm_events;
        std::set<std::string> span_ids;
        const json::value span_list = spans.json();
        for (const auto& span : span_list.as_array()) {
            names.emplace(span.at("name").as_string());
            span_ids.emplace(span.at("span_id").as_string());
            CHECK(span.at("end_time").as_int64() >= span.at("start_time").as_int64());
            CHECK(span.at("trace_id").as_string().size() == 32);
            const json::object& attributes = span.at("attributes").as_object();
            if (span.at("name") == "call_llm") {
                llm_events.emplace(attributes.at("gcp.vertex.agent.event_id").as_string());
                CHECK(attributes.at("gcp.vertex.agent.session_id") == "s1");
            }
            if (span.at("name") == "invoke_agent weather_agent")
                CHECK(attributes.at("gen_ai.conversation.id") == "s1");  // the UI requires it
            if (span.at("name") == "execute_tool get_weather") {
                CHECK(attributes.at("gcp.vertex.agent.event_id").as_string() == response_id);
                CHECK(json::parse(attributes.at("gcp.vertex.agent.tool_response").as_string()).at("sky") == "sunny");
            }
        }
        CHECK(names == std::multiset<std::string>{"invocation", "invoke_agent weather_agent", "call_llm", "call_llm",
                                                  "generate_content gemini-2.5-flash",
                                                  "generate_content gemini-2.5-flash", "execute_tool get_weather"});
        CHECK(llm_events == std::set<std::string>{call_id, answer_id});
        for (const auto& span : span_list.as_array())  // every parent is a span of the list, but the root's
            if (!span.at("parent_span_id").is_null())
                CHECK(span_ids.count(std::string(span.at("parent_span_id").as_string())) == 1);
        // The other sinks (an OTLP exporter) are handed the very spans the trace view shows.
        const auto others = other_sink->names();
        for (const auto& span : span_list.as_array()) {
            const auto found = others.find(std::string(span.at("span_id").as_string()));
            REQUIRE(found != others.end());
            CHECK(found->second == span.at("name").as_string());
        }

        const std::string trace_path = "/dev/apps/weather_agent/debug/trace/" + answer_id;
        Reply trace = co_await call(client, server, "GET", trace_path);
        const json::value request = json::parse(trace.json().at("gcp.vertex.agent.llm_request").as_string());
        CHECK(request.at("model") == "gemini-2.5-flash");
        CHECK(request.at("contents").as_array().size() == 3);  // the question, the call, its response
        CHECK(json::parse(trace.json().at("gcp.vertex.agent.llm_response").as_string())
                  .at("content").at("parts").at(0).at("text") == "Sunny in Paris.");
        CHECK(trace.json().at("span_id").is_string());
        Reply no_trace = co_await call(client, server, "GET", "/dev/apps/weather_agent/debug/trace/nope");
        CHECK(no_trace.status == 404);
        CHECK(no_trace.json() == json::parse(R"({"error": "Trace not found"})"));

        // A caller's W3C traceparent: the run's spans join its trace; its span, not in the session, is no parent here.
        Reply created2 = co_await call(client, server, "POST", "/apps/weather_agent/users/u/sessions/s2");
        REQUIRE(created2.status == 200);
        adk::net::HttpRequest traced("POST", server.base_url() + "/run");
        traced.set("content-type", "application/json");
        traced.set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
        traced.body = R"({"appName": "weather_agent", "userId": "u", "sessionId": "s2",
                          "newMessage": {"role": "user", "parts": [{"text": "Weather in Paris?"}]}})";
        adk::net::HttpResponse traced_response = co_await client.send(std::move(traced));
        CHECK(traced_response.status() == 200);
        (void)co_await traced_response.read_all();
        Reply spans2 = co_await call(client, server, "GET", "/dev/apps/weather_agent/debug/trace/session/s2");
        const json::value span_list2 = spans2.json();
        REQUIRE(span_list2.as_array().size() == 7);
        std::size_t roots = 0;
        for (const auto& span : span_list2.as_array()) {
            CHECK(span.at("trace_id") == "4bf92f3577b34da6a3ce929d0e0e4736");
            roots += span.at("parent_span_id").is_null() ? 1 : 0;
        }
        CHECK(roots == 1);

        const std::string graph_path = "/dev/apps/weather_agent/users/u/sessions/s1/events/" + call_id + "/graph";
        Reply graph = co_await call(client, server, "GET", graph_path);
        const std::string event_dot(graph.json().at("dotSrc").as_string());
        CHECK(event_dot.starts_with("strict digraph {"));
        CHECK_THAT(event_dot, Catch::Contains("\"weather_agent\" [shape = \"ellipse\"; style = \"filled\"; fillcolor = \"#0F5223\""));
        CHECK_THAT(event_dot, Catch::Contains("\"get_weather\" [shape = \"box\"; style = \"filled\""));
        const std::string plain_path = "/apps/weather_agent/users/u/sessions/s1/events/" + call_id + "/graph";
        Reply plain = co_await call(client, server, "GET", plain_path);
        CHECK(plain.json() == graph.json());
        Reply no_event = co_await call(client, server, "GET", "/apps/weather_agent/users/u/sessions/s1/events/x/graph");
        CHECK(no_event.status == 404);

        for (std::string_view path : {"/dev/apps/weather_agent/eval_sets", "/dev/apps/weather_agent/eval_results",
                                      "/dev/apps/weather_agent/builder?ts=1", "/dev/apps/weather_agent/metrics-info",
                                      "/dev/apps/weather_agent/tests"}) {
            Reply absent = co_await call(client, server, "GET", path);
            CHECK(absent.status == 404);
            CHECK(absent.json().at("error").is_string());
        }
        server.stop();
    }());
}

TEST_CASE("ApiServer: a graph workflow described by its graph and drawn START to END, each nested workflow by its path",
          "[server][graph_workflow]")
{
    namespace wf = adk::workflow;
    asio::io_context ioc;
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    auto pass = [](std::string name) {
        return wf::function_node(std::move(name), [](wf::NodeContext&, json::value in) -> asio::awaitable<json::value> {
            co_return in;
        });
    };
    auto classify = pass("classify");
    auto fixer = researcher("fixer", gemini());
    auto helper = pass("helper");
    auto done = wf::join_node("done");
    auto inner = wf::Workflow::Builder("inner").chain({wf::START, pass("x"), pass("y")}).build();
    auto triage = wf::Workflow::Builder("triage")
                      .edge(wf::START, classify)
                      .route(classify, "bug", fixer)
                      .route(classify, json::array{"question", 2}, helper)
                      .route(classify, wf::default_route, inner)
                      .edge(fixer, done)
                      .edge(helper, done)
                      .build();
    adk::server::ApiServer server(ioc.get_executor(), {{"triage", triage}}, adk::test::options_with(sessions));
    server.start();
    adk::net::HttpClient client(adk::test::no_retries());
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        Reply tree = co_await call(client, server, "GET", "/dev/apps/triage/build_graph");
        REQUIRE(tree.status == 200);
        const json::value root = tree.json().at("root_agent");
        CHECK(root.at("type") == "workflow");
        CHECK_FALSE(root.as_object().contains("sub_agents"));
        const json::array& nodes = root.at("graph").at("nodes").as_array();
        std::map<std::string, std::string> types;
        for (const json::value& n : nodes)
            types[std::string(n.at("name").as_string())] = std::string(n.at("type").as_string());
        CHECK(types == std::map<std::string, std::string>{{"__START__", "start"}, {"classify", "function"},
                                                          {"fixer", "agent"}, {"helper", "function"},
                                                          {"inner", "workflow"}, {"done", "join"}});
        for (const json::value& n : nodes)
            if (n.at("name") == "inner")
                CHECK(n.at("graph").at("nodes").as_array().size() == 3);  // START, x, y
        std::set<std::string> edges;
        for (const json::value& e : root.at("graph").at("edges").as_array())
            edges.insert(std::string(e.at("from_node").at("name").as_string()) + "->" +
                         std::string(e.at("to_node").at("name").as_string()) +
                         (e.as_object().contains("route") ? " " + json::serialize(e.at("route")) : ""));
        CHECK(edges == std::set<std::string>{"__START__->classify", "classify->fixer \"bug\"",
                                             "classify->helper [\"question\",\"2\"]", "classify->inner \"default\"",
                                             "fixer->done", "helper->done"});

        Reply image = co_await call(client, server, "GET", "/dev/apps/triage/build_graph_image?dark_mode=false");
        REQUIRE(image.status == 200);
        const json::value drawn = image.json();
        CHECK(drawn.at("").at("dotSrc") == drawn.at("dotSrc"));
        REQUIRE(drawn.as_object().contains("inner"));  // the nested workflow, by its path
        const std::string dot(drawn.at("dotSrc").as_string());
        CHECK(dot.starts_with("digraph \"triage\" {"));
        CHECK_THAT(dot, Catch::Contains("\"__START__\" -> \"classify\";"));
        CHECK_THAT(dot, Catch::Contains("\"classify\" -> \"fixer\" [label = \"  bug\"];"));
        CHECK_THAT(dot, Catch::Contains("\"classify\" -> \"helper\" [label = \"  question, 2\"];"));
        CHECK_THAT(dot, Catch::Contains("\"classify\" [label = <"));
        CHECK_THAT(dot, Catch::Contains("shape = \"diamond\""));
        CHECK_THAT(dot, Catch::Contains("\"done\" -> \"__END__\";"));
        CHECK_THAT(dot, Catch::Contains("\"fixer\" -> \"get_weather\" [style = \"dashed\"];"));
        const std::string inner_dot(drawn.at("inner").at("dotSrc").as_string());
        CHECK_THAT(inner_dot, Catch::Contains("\"x\" -> \"y\";"));
        CHECK_THAT(inner_dot, Catch::Contains("\"y\" -> \"__END__\";"));

        Reply nested = co_await call(client, server, "GET", "/dev/apps/triage/build_graph_image?node=inner");
        REQUIRE(nested.status == 200);
        CHECK(nested.json().at("dotSrc") == nested.json().at("inner").at("dotSrc"));
        Reply missing = co_await call(client, server, "GET", "/dev/apps/triage/build_graph_image?node=nowhere");
        CHECK(missing.status == 404);
        server.stop();
    }());
}

TEST_CASE("ApiServer: /metrics in Prometheus' text format, behind the bearer token, counting a run's calls",
          "[server][metrics]")
{
    asio::io_context ioc;
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    auto weather = adk::LlmAgent::builder("weather_agent")
                       .model(gemini({adk::LlmResponse::function_call("get_weather", json::object{{"city", "Paris"}}),
                                      adk::LlmResponse::text("Sunny in Paris.")}))
                       .tool(weather_tool())
                       .build();
    adk::server::ApiServerOptions options = adk::test::options_with(sessions);
    options.bearer_token = "s3cret";
    options.meter = std::make_shared<adk::telemetry::Meter>();  // the caller's, read by an exporter of its own
    const auto meter = options.meter;
    adk::server::ApiServer server(ioc.get_executor(), {{"weather_agent", weather}}, std::move(options));
    server.start();
    adk::net::HttpClient client(adk::test::no_retries());
    // (Views: g++ 12 miscompiles class temporaries built in a co_await expression.)
    auto send = [&](std::string_view method, std::string_view path, std::string_view body,
                    bool token) -> asio::awaitable<std::pair<Reply, std::string>> {
        adk::net::HttpRequest req(std::string(method), server.base_url() + std::string(path));
        if (token)
            req.set("authorization", "Bearer s3cret");
        if (!body.empty())
            req.set("content-type", "application/json");
        req.body = std::string(body);
        adk::net::HttpResponse res = co_await client.send(std::move(req));
        Reply r;
        r.status = res.status();
        std::string type(res.header("content-type"));
        r.body = co_await res.read_all();
        co_return std::make_pair(r, type);
    };
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        auto [refused, ignored] = co_await send("GET", "/metrics", "", false);
        CHECK(refused.status == 401);
        auto [before, type] = co_await send("GET", "/metrics", "", true);
        CHECK(before.status == 200);
        CHECK(type == "text/plain; version=0.0.4; charset=utf-8");
        CHECK_THAT(before.body, Catch::Contains("adk_server_runs_held{otel_scope_name=\"gcp.vertex.agent\"} 0\n"));
        CHECK_THAT(before.body, !Catch::Contains("gen_ai_client_operation_duration"));  // nothing ran yet
        CHECK_THAT(before.body, Catch::Contains("# TYPE http_client_open_connections gauge\n"));
        CHECK_THAT(before.body, Catch::Contains("http_client_open_connections{otel_scope_name=\"gcp.vertex.agent\","
                                                "http_connection_state=\"active\"} "));

        auto [created, t1] = co_await send("POST", "/apps/weather_agent/users/u/sessions/s1", "", true);
        REQUIRE(created.status == 200);
        auto [ran, t2] = co_await send("POST", "/run", R"({"appName": "weather_agent", "userId": "u", "sessionId": "s1",
            "newMessage": {"role": "user", "parts": [{"text": "Weather in Paris?"}]}})", true);
        REQUIRE(ran.status == 200);
        auto [after, t3] = co_await send("GET", "/metrics", "", true);
        CHECK_THAT(after.body, Catch::Contains("gen_ai_client_operation_duration_seconds_count{otel_scope_name="
                                               "\"gcp.vertex.agent\",gen_ai_operation_name=\"generate_content\","
                                               "gen_ai_request_model=\"gemini-2.5-flash\"} 2\n"));
        CHECK_THAT(after.body, Catch::Contains("gen_ai_execute_tool_duration_seconds_count{otel_scope_name="
                                               "\"gcp.vertex.agent\",gen_ai_tool_name=\"get_weather\"} 1\n"));
        CHECK_THAT(after.body, Catch::Contains("gen_ai_invoke_agent_duration_seconds_count{otel_scope_name="
                                               "\"gcp.vertex.agent\",gen_ai_agent_name=\"weather_agent\"} 1\n"));
        CHECK_THAT(after.body, Catch::Contains("adk_invocations_active{otel_scope_name=\"gcp.vertex.agent\"} 0\n"));
        // /run's answer was read whole: no frame waits for a client.
        CHECK_THAT(after.body,
                   Catch::Contains("adk_server_stream_queue_depth{otel_scope_name=\"gcp.vertex.agent\"} 0\n"));
        // The Meter given is the one served.
        CHECK(adk::telemetry::prometheus_text(meter->collect()).size() == after.body.size());
        server.stop();
    }());

    // Metrics off: the route is not there.
    adk::server::ApiServerOptions quiet = adk::test::options_with(sessions);
    quiet.metrics = false;
    adk::server::ApiServer without(ioc.get_executor(), {{"weather_agent", weather}}, std::move(quiet));
    without.start();
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        Reply none = co_await call(client, without, "GET", "/metrics");
        CHECK(none.status == 404);
        without.stop();
    }());
}
