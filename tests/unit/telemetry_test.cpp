// Telemetry's seam (adk/telemetry/tracer.hpp): W3C trace context read and written, the tracer's sampling, and the
// spans of real invocations (a tool call, a model error, a cancel, a pause) ended on every path, nested as they ran.
#include <adk/adk.hpp>
#include <adk/core/log.hpp>

#include "support/agents.hpp"
#include "support/run.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <iostream>
#include <sstream>

namespace {

namespace asio = boost::asio;
namespace json = boost::json;
namespace telemetry = adk::telemetry;

using adk::Content;
using adk::Event;
using adk::testing::ScriptedModel;

// A sink that keeps every span it is handed, as an in-memory exporter does.
class Collected final : public telemetry::SpanSink {
public:
    explicit Collected(bool content = true) : content_(content) {}
    void on_end(const telemetry::SpanData& span) override
    {
        std::lock_guard lock(mutex_);
        spans_.push_back(span);
    }
    bool wants_content() const noexcept override { return content_; }

    std::vector<telemetry::SpanData> spans() const
    {
        std::lock_guard lock(mutex_);
        return spans_;
    }
    // The one span of that name.
    telemetry::SpanData named(std::string_view name) const
    {
        std::vector<telemetry::SpanData> found;
        for (const auto& s : spans())
            if (s.name == name)
                found.push_back(s);
        REQUIRE(found.size() == 1);
        return found.front();
    }

private:
    bool content_;
    mutable std::mutex mutex_;
    std::vector<telemetry::SpanData> spans_;
};

std::string text_of(const telemetry::SpanData& span, std::string_view key)
{
    const telemetry::AttributeValue* v = span.find(key);
    REQUIRE(v != nullptr);
    REQUIRE(std::holds_alternative<std::string>(*v));
    return std::get<std::string>(*v);
}

bool child_of(const telemetry::SpanData& child, const telemetry::SpanData& parent)
{
    return child.parent_span_id == parent.context.span_id && child.context.trace_id == parent.context.trace_id;
}

// A runner of one LlmAgent over in-memory sessions, its spans going to a Collected sink.
class Traced {
public:
    explicit Traced(std::shared_ptr<adk::Agent> agent, telemetry::TracerOptions options = {}, bool resumable = false)
        : sink(std::make_shared<Collected>()),
          tracer(std::make_shared<telemetry::Tracer>(std::vector<std::shared_ptr<telemetry::SpanSink>>{sink}, options))
    {
        runner = std::make_unique<adk::Runner>(adk::RunnerOptions{.app_name = "app",
                                                                  .agent = std::move(agent),
                                                                  .session_service = sessions,
                                                                  .resumability = {.is_resumable = resumable},
                                                                  .tracer = tracer});
        adk::test::run(ioc, [this]() -> asio::awaitable<void> {
            adk::CreateSessionRequest create("app", "u", "s");
            co_await sessions->create_session(std::move(create));
        }());
    }

    // Runs one message; the events it streamed, or the error it ended with.
    std::vector<Event> say(std::string text, telemetry::SpanContext parent = {}, std::optional<adk::Error>* error = nullptr)
    {
        adk::RunRequest request("u", "s", Content::user(std::move(text)));
        request.trace_parent = std::move(parent);
        return adk::test::run(ioc, [&]() -> asio::awaitable<std::vector<Event>> {
            std::vector<Event> events;
            try {
                auto stream = co_await runner->run(std::move(request));
                while (auto e = co_await stream.next())
                    events.push_back(std::move(*e));
            } catch (const adk::Error& e) {
                if (!error)
                    throw;
                *error = e;
            }
            co_return events;
        }());
    }

    asio::io_context ioc;
    std::shared_ptr<adk::InMemorySessionService> sessions = std::make_shared<adk::InMemorySessionService>();
    std::shared_ptr<Collected> sink;
    std::shared_ptr<telemetry::Tracer> tracer;
    std::unique_ptr<adk::Runner> runner;
};

std::shared_ptr<adk::FunctionTool> traced_weather_tool()
{
    return adk::FunctionTool::create("get_weather", "Tells the weather.",
                                     json::parse(R"({"type":"object","properties":{"city":{"type":"string"}}})"),
                                     [](adk::ToolContext&, json::object args) -> asio::awaitable<json::value> {
                                         co_return json::object{{"city", args.at("city")}, {"sky", "sunny"}};
                                     });
}

adk::LlmResponse call_weather()
{
    adk::LlmResponse r;
    r.content = Content("model", {adk::Part::from_function_call("get_weather", json::object{{"city", "Paris"}}, "c1")});
    return r;
}

adk::LlmResponse answer(std::string text)
{
    adk::LlmResponse r;
    r.content = Content::model(std::move(text));
    r.finish_reason = "STOP";
    adk::UsageMetadata usage;
    usage.prompt_token_count = 12;
    usage.candidates_token_count = 3;
    usage.thoughts_token_count = 2;
    r.usage_metadata = usage;
    r.model_version = "scripted-1";
    return r;
}

}  // namespace

TEST_CASE("traceparent: read and written as W3C Trace Context says", "[telemetry]")
{
    const std::string header = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    auto context = telemetry::SpanContext::parse(header, "congo=t61rcWkgMzE, rojo=00f067aa0ba902b7");
    REQUIRE(context);
    CHECK(context->valid());
    CHECK(context->sampled());
    CHECK(context->remote);
    CHECK(telemetry::to_hex(context->trace_id) == "4bf92f3577b34da6a3ce929d0e0e4736");
    CHECK(telemetry::to_hex(context->span_id) == "00f067aa0ba902b7");
    CHECK(context->traceparent() == header);  // round trip
    CHECK(context->trace_state == "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7");
    auto again = telemetry::SpanContext::parse(context->traceparent(), context->trace_state);
    REQUIRE(again);
    CHECK(again->traceparent() == header);
    CHECK(again->trace_state == context->trace_state);

    auto unsampled = telemetry::SpanContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
    REQUIRE(unsampled);
    CHECK_FALSE(unsampled->sampled());
    // A later version may add fields after a '-'; its first 55 characters are read.
    CHECK(telemetry::SpanContext::parse("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-comes"));
    CHECK(telemetry::SpanContext::parse("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"));

    for (std::string_view bad : {
             "",
             "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-",     // version 00 has nothing more
             "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",      // upper case
             "00-00000000000000000000000000000000-00f067aa0ba902b7-01",      // zero trace id
             "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",      // zero span id
             "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",      // version ff is invalid
             "00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01",      // dashes misplaced
             "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",
             "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g",
             "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",      // more, but not after a '-'
             "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
         })
        CHECK_FALSE(telemetry::SpanContext::parse(bad));

    // A tracestate that breaks a rule is dropped whole; the traceparent stands.
    const std::string too_many = [] {
        std::string s;
        for (int i = 0; i < 33; ++i)
            s += (i ? "," : "") + std::string("k") + std::to_string(i) + "=v";
        return s;
    }();
    for (std::string_view bad_state : {std::string_view("no-equals"), std::string_view("UPPER=1"),
                                       std::string_view("k=a,b"), std::string_view("k=v=w"), std::string_view(too_many),
                                       std::string_view("k=" + std::string(600, 'x'))}) {
        auto c = telemetry::SpanContext::parse(header, bad_state);
        REQUIRE(c);
        CHECK(c->trace_state.empty());
    }
    CHECK(telemetry::SpanContext().traceparent().empty());  // nothing to send when not valid
}

TEST_CASE("tracer: without sinks nothing is recorded and the parent's context passes on, and samplers decide", "[telemetry]")
{
    auto parent = telemetry::SpanContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    REQUIRE(parent);
    const telemetry::Tracer off;
    CHECK_FALSE(off.recording());
    {
        telemetry::Span span = off.start("nothing", *parent);
        CHECK_FALSE(span.recording());
        CHECK(span.context().traceparent() == parent->traceparent());
        span.set("ignored", std::int64_t{1});
    }

    auto sink = std::make_shared<Collected>(false);
    const std::vector<std::shared_ptr<telemetry::SpanSink>> sinks{sink};
    const telemetry::Tracer on(sinks);
    {
        telemetry::Span root = on.start("root", {});
        REQUIRE(root.recording());
        CHECK_FALSE(root.captures_content());  // no sink keeps content
        root.set_content("prompt", "secret words");
        root.set("n", std::int64_t{1});
        root.set("n", std::int64_t{2});  // replaced, not repeated
        telemetry::Span child = on.start("child", root.context());
        CHECK(child.context().trace_id == root.context().trace_id);
        child.set_error("timed_out", "it took too long");
        telemetry::Span moved = std::move(child);
        moved.end();
        moved.end();  // once
    }
    const auto spans = sink->spans();
    REQUIRE(spans.size() == 2);
    CHECK(spans[0].name == "child");
    CHECK(spans[0].status == telemetry::StatusCode::error);
    CHECK(spans[0].status_message == "it took too long");
    CHECK(text_of(spans[0], "error.type") == "timed_out");
    CHECK(child_of(spans[0], spans[1]));
    CHECK_FALSE(spans[1].has_parent());
    CHECK(spans[1].find("prompt") == nullptr);
    CHECK(spans[1].attributes.size() == 1);
    CHECK(std::get<std::int64_t>(*spans[1].find("n")) == 2);
    CHECK(spans[1].end_ns >= spans[1].start_ns);

    // Samplers: parent-based follows the caller's decision; always_off records nothing but still passes a context on.
    auto unsampled = telemetry::SpanContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
    const telemetry::Tracer parent_based(sinks, {.sampler = telemetry::Sampler::parent_based_always_on});
    CHECK_FALSE(parent_based.start("x", *unsampled).recording());
    CHECK(parent_based.start("x", *parent).recording());
    const telemetry::Tracer never(sinks, {.sampler = telemetry::Sampler::always_off});
    telemetry::Span dropped = never.start("x", {});
    CHECK_FALSE(dropped.recording());
    CHECK(dropped.context().valid());
    CHECK_FALSE(dropped.context().sampled());
    const telemetry::Tracer half(sinks, {.sampler = telemetry::Sampler::trace_id_ratio, .ratio = 0.5});
    int sampled = 0;
    for (int i = 0; i < 2000; ++i)
        sampled += half.start("x", {}).recording() ? 1 : 0;
    CHECK(sampled > 800);
    CHECK(sampled < 1200);
    const telemetry::Tracer none(sinks, {.sampler = telemetry::Sampler::trace_id_ratio, .ratio = 0.0});
    CHECK_FALSE(none.start("x", {}).recording());
}

TEST_CASE("spans of an invocation: a tool call and an answer, nested as they ran, in the caller's trace",
          "[telemetry][runner]")
{
    auto model = std::make_shared<ScriptedModel>(std::vector<ScriptedModel::Turn>{call_weather(), answer("Sunny.")});
    auto agent = adk::LlmAgent::builder("weather_agent").description("Knows the weather.").model(model)
                     .tool(traced_weather_tool()).build();
    Traced t(agent);
    auto caller = telemetry::SpanContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "k=v");
    REQUIRE(caller);
    const std::vector<Event> events = t.say("Weather in Paris?", *caller);
    REQUIRE(events.size() == 3);  // the call, its response, the answer

    const auto spans = t.sink->spans();
    std::multiset<std::string> names;
    for (const auto& s : spans) {
        names.insert(s.name);
        CHECK(telemetry::to_hex(s.context.trace_id) == "4bf92f3577b34da6a3ce929d0e0e4736");  // one trace
        CHECK(s.context.trace_state == "k=v");
        CHECK(s.status == telemetry::StatusCode::unset);
        REQUIRE(s.owner);
        CHECK(s.owner->session_id == "s");
        CHECK(s.owner->app_name == "app");
        CHECK(s.end_ns >= s.start_ns);
    }
    CHECK(names == std::multiset<std::string>{"invocation", "invoke_agent weather_agent", "call_llm", "call_llm",
                                              "generate_content scripted-model", "generate_content scripted-model",
                                              "execute_tool get_weather"});
    const auto root = t.sink->named("invocation");
    const auto agent_span = t.sink->named("invoke_agent weather_agent");
    const auto tool_span = t.sink->named("execute_tool get_weather");
    CHECK(root.parent_span_id == caller->span_id);  // the caller's span is the parent
    CHECK(root.parent_remote);
    CHECK(child_of(agent_span, root));
    CHECK_FALSE(agent_span.parent_remote);
    CHECK(child_of(tool_span, agent_span));
    CHECK(text_of(agent_span, "gen_ai.operation.name") == "invoke_agent");
    CHECK(text_of(agent_span, "gen_ai.agent.description") == "Knows the weather.");
    CHECK(text_of(agent_span, "gen_ai.conversation.id") == "s");
    CHECK(text_of(tool_span, "gen_ai.tool.call.id") == "c1");
    CHECK(text_of(tool_span, "gcp.vertex.agent.event_id") == events[1].id);  // the response's event
    CHECK(json::parse(text_of(tool_span, "gcp.vertex.agent.tool_call_args")) == json::parse(R"({"city":"Paris"})"));
    CHECK(json::parse(text_of(tool_span, "gcp.vertex.agent.tool_response")).at("sky") == "sunny");

    // Each model call: call_llm under the agent, generate_content under it, both naming the event the answer became.
    std::map<std::string, telemetry::SpanData> llm_by_event;
    for (const auto& s : spans)
        if (s.name == "call_llm")
            llm_by_event.emplace(text_of(s, "gcp.vertex.agent.event_id"), s);
    REQUIRE(llm_by_event.count(events[0].id) == 1);
    REQUIRE(llm_by_event.count(events[2].id) == 1);
    for (const auto& s : spans) {
        if (s.name == "call_llm")
            CHECK(child_of(s, agent_span));
        if (s.name != "generate_content scripted-model")
            continue;
        const auto& call = llm_by_event.at(text_of(s, "gcp.vertex.agent.event_id"));
        CHECK(child_of(s, call));
        CHECK(s.kind == telemetry::SpanKind::client);
        CHECK(text_of(s, "gen_ai.operation.name") == "generate_content");
        CHECK(text_of(s, "gen_ai.request.model") == "scripted-model");
    }
    const auto& last = llm_by_event.at(events[2].id);
    CHECK(std::get<std::vector<std::string>>(*last.find("gen_ai.response.finish_reasons")) ==
          std::vector<std::string>{"stop"});
    CHECK(std::get<std::int64_t>(*last.find("gen_ai.usage.input_tokens")) == 12);
    CHECK(std::get<std::int64_t>(*last.find("gen_ai.usage.output_tokens")) == 5);  // thoughts count as output
    CHECK(text_of(last, "gen_ai.response.model") == "scripted-1");
    CHECK(json::parse(text_of(last, "gcp.vertex.agent.llm_request")).at("contents").as_array().size() == 3);
    CHECK(json::parse(text_of(last, "gcp.vertex.agent.llm_response")).at("content").at("parts").at(0).at("text") ==
          "Sunny.");

    // What the model was sent carries its generate_content span, to go out as traceparent.
    const auto requests = model->requests();
    REQUIRE(requests.size() == 2);
    // The request and the answer as the spans keep them: the same text as their JSON trees serialized.
    const adk::LlmRequest& sent = requests[1];
    REQUIRE(sent.system_instruction);
    REQUIRE(sent.tools.size() == 1);
    json::array declarations;
    for (const auto& d : sent.tools)
        declarations.push_back(json::object{{"name", d.name}, {"description", d.description}, {"parameters", d.parameters}});
    json::array contents;
    for (const auto& c : sent.contents)
        contents.push_back(json::value_from(c));
    const json::object request_tree{
        {"model", sent.model},
        {"contents", contents},
        {"config", json::object{{"systemInstruction", json::value_from(*sent.system_instruction)},
                                {"tools", json::array{json::object{{"functionDeclarations", declarations}}}}}}};
    CHECK(text_of(last, "gcp.vertex.agent.llm_request") == json::serialize(request_tree));
    const Event& answer_event = events[2];
    REQUIRE(answer_event.content);
    REQUIRE(answer_event.finish_reason);
    REQUIRE(answer_event.usage_metadata);
    const json::object answer_tree{{"content", json::value_from(*answer_event.content)},
                                   {"finishReason", *answer_event.finish_reason},
                                   {"usageMetadata", json::value_from(*answer_event.usage_metadata)}};
    CHECK(text_of(last, "gcp.vertex.agent.llm_response") == json::serialize(answer_tree));
    bool found = false;
    for (const auto& s : spans)
        found = found || (s.name.starts_with("generate_content") && s.context.span_id == requests[1].span_context.span_id);
    CHECK(found);
}

TEST_CASE("spans end on every path: a model error, a failing tool, a cancel, a pause", "[telemetry][runner]")
{
    SECTION("the model refuses: its spans and the agent's are errors, with error.type")
    {
        auto model = std::make_shared<ScriptedModel>(std::vector<ScriptedModel::Turn>{
            ScriptedModel::Turn::raise(adk::Error(adk::errc::bad_response, "the provider sent nonsense"))});
        Traced t(adk::LlmAgent::builder("agent").model(model).build());
        std::optional<adk::Error> error;
        t.say("hi", {}, &error);
        REQUIRE(error);
        for (std::string_view name : {"generate_content scripted-model", "call_llm", "invoke_agent agent", "invocation"}) {
            const auto s = t.sink->named(name);
            CHECK(s.status == telemetry::StatusCode::error);
            CHECK(text_of(s, "error.type") == "bad_response");
            CHECK_THAT(s.status_message, Catch::Contains("nonsense"));
        }
        // The request goes on call_llm as the call ends, however it ends.
        const json::value request = json::parse(text_of(t.sink->named("call_llm"), "gcp.vertex.agent.llm_request"));
        CHECK(request.at("contents").at(0).at("parts").at(0).at("text") == "hi");
    }
    SECTION("a tool throws: its span is an error, the model is told, the invocation is not")
    {
        auto model = std::make_shared<ScriptedModel>(std::vector<ScriptedModel::Turn>{call_weather(), answer("Sorry.")});
        auto broken = adk::FunctionTool::create("get_weather", "Breaks.", json::value(),
                                                [](adk::ToolContext&, json::object) -> asio::awaitable<json::value> {
                                                    throw adk::Error(adk::errc::unavailable, "the weather service is down");
                                                    co_return nullptr;
                                                });
        Traced t(adk::LlmAgent::builder("agent").model(model).tool(broken).build());
        const auto events = t.say("Weather?");
        REQUIRE(events.size() == 3);
        const auto tool = t.sink->named("execute_tool get_weather");
        CHECK(tool.status == telemetry::StatusCode::error);
        CHECK(text_of(tool, "error.type") == "unavailable");
        CHECK(t.sink->named("invocation").status == telemetry::StatusCode::unset);
    }
    SECTION("the consumer cancels mid-stream: every span ends, as cancelled")
    {
        auto model = std::make_shared<ScriptedModel>(
            std::vector<ScriptedModel::Turn>{ScriptedModel::chunks({"It ", "is "}).then_hang()});
        Traced t(adk::LlmAgent::builder("agent").model(model).build());
        adk::test::run(t.ioc, [&]() -> asio::awaitable<void> {
            adk::RunRequest request("u", "s", Content::user("talk"));
            request.run_config.streaming_mode = adk::StreamingMode::sse;
            auto stream = co_await t.runner->run(std::move(request));
            auto first = co_await stream.next();
            CHECK(first->partial);
            stream.cancel();
        }());
        const auto spans = t.sink->spans();
        CHECK(spans.size() == 4);
        for (const auto& s : spans) {
            CHECK(s.status == telemetry::StatusCode::error);
            CHECK(s.find("error.type") != nullptr);
        }
        const json::value request = json::parse(text_of(t.sink->named("call_llm"), "gcp.vertex.agent.llm_request"));
        CHECK(request.at("contents").at(0).at("parts").at(0).at("text") == "talk");
    }
    SECTION("a tool waits for a person's approval: the invocation pauses and its spans end, without error")
    {
        auto model = std::make_shared<ScriptedModel>(std::vector<ScriptedModel::Turn>{call_weather()});
        auto tool = traced_weather_tool();
        tool->set_require_confirmation(true);
        Traced t(adk::LlmAgent::builder("agent").model(model).tool(tool).build(), {}, true);
        const auto events = t.say("Weather?");
        REQUIRE_FALSE(events.empty());
        std::multiset<std::string> names;
        for (const auto& s : t.sink->spans()) {
            names.insert(s.name);
            CHECK(s.status == telemetry::StatusCode::unset);
        }
        CHECK(names == std::multiset<std::string>{"invocation", "invoke_agent agent", "call_llm",
                                                  "generate_content scripted-model", "execute_tool get_weather"});
    }
}

TEST_CASE("spans: no tracer, no spans, and the caller's trace still reaches the model", "[telemetry][runner]")
{
    auto model = std::make_shared<ScriptedModel>(std::vector<ScriptedModel::Turn>{answer("Hello.")});
    asio::io_context ioc;
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::Runner runner(adk::RunnerOptions{.app_name = "app",
                                          .agent = adk::LlmAgent::builder("agent").model(model).build(),
                                          .session_service = sessions});
    auto caller = telemetry::SpanContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        adk::CreateSessionRequest create("app", "u", "s");
        co_await sessions->create_session(std::move(create));
        adk::RunRequest request("u", "s", Content::user("hi"));
        request.trace_parent = *caller;
        auto stream = co_await runner.run(std::move(request));
        while (co_await stream.next()) {
        }
    }());
    REQUIRE(model->requests().size() == 1);
    CHECK(model->requests()[0].span_context.traceparent() == caller->traceparent());
}

TEST_CASE("sampling: an invocation's spans share its root's decision, and an unsampled trace still passes on", "[telemetry][runner]")
{
    SECTION("a ratio: each invocation is kept whole or not at all")
    {
        std::vector<ScriptedModel::Turn> turns;
        for (int i = 0; i < 40; ++i)
            turns.emplace_back(answer("Hello."));
        auto model = std::make_shared<ScriptedModel>(std::move(turns));
        Traced t(adk::LlmAgent::builder("agent").model(model).build(),
                 {.sampler = telemetry::Sampler::trace_id_ratio, .ratio = 0.5});
        for (int i = 0; i < 40; ++i)
            t.say("hi");
        std::map<telemetry::TraceId, std::vector<std::string>> traces;
        for (const auto& s : t.sink->spans())
            traces[s.context.trace_id].push_back(s.name);
        CHECK(traces.size() > 5);   // some kept
        CHECK(traces.size() < 35);  // some not
        for (auto& [id, names] : traces) {
            std::sort(names.begin(), names.end());
            CHECK(names == std::vector<std::string>{"call_llm", "generate_content scripted-model", "invocation",
                                                    "invoke_agent agent"});
        }
    }
    SECTION("always off: nothing is recorded, and the model is told the trace is not sampled")
    {
        auto model = std::make_shared<ScriptedModel>(std::vector<ScriptedModel::Turn>{answer("Hello.")});
        Traced t(adk::LlmAgent::builder("agent").model(model).build(), {.sampler = telemetry::Sampler::always_off});
        t.say("hi");
        CHECK(t.sink->spans().empty());
        REQUIRE(model->requests().size() == 1);
        const telemetry::SpanContext sent = model->requests()[0].span_context;
        CHECK(sent.valid());
        CHECK_FALSE(sent.sampled());
        CHECK(sent.traceparent().ends_with("-00"));
    }
}

TEST_CASE("logs: JSON lines for log shippers, with the trace and span ids of the span they were written in",
          "[telemetry][log]")
{
    std::ostringstream captured;
    std::streambuf* old = std::clog.rdbuf(captured.rdbuf());
    adk::set_log_handler({});
    auto span = telemetry::SpanContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    REQUIRE(span);
    adk::set_log_format(adk::LogFormat::json);
    adk::log(adk::LogLevel::warning, "a \"quoted\"\nmessage", *span);
    adk::log(adk::LogLevel::error, "outside any span");
    adk::log(adk::LogLevel::debug, "below the threshold");
    adk::set_log_format(adk::LogFormat::text);
    adk::log(adk::LogLevel::warning, "as text", *span);
    std::clog.rdbuf(old);

    std::istringstream lines(captured.str());
    std::string line;
    std::vector<std::string> all;
    while (std::getline(lines, line))
        all.push_back(line);
    REQUIRE(all.size() == 3);
    const json::value first = json::parse(all[0]);
    CHECK(first.at("level") == "warning");
    CHECK(first.at("logger") == "adk");
    CHECK(first.at("message") == "a \"quoted\"\nmessage");
    CHECK(first.at("trace_id") == "4bf92f3577b34da6a3ce929d0e0e4736");
    CHECK(first.at("span_id") == "00f067aa0ba902b7");
    const std::string stamp(first.at("timestamp").as_string());
    CHECK(stamp.size() == 24);  // 2026-11-27T22:10:00.123Z
    CHECK(stamp.back() == 'Z');
    const json::value second = json::parse(all[1]);
    CHECK(second.at("level") == "error");
    CHECK(second.as_object().if_contains("trace_id") == nullptr);
    CHECK(all[2] == "adk warning: as text (trace_id=4bf92f3577b34da6a3ce929d0e0e4736 span_id=00f067aa0ba902b7)");
}
