// DebugTraces (server/src/debug_traces.hpp), the web UI's trace view, fed finished spans directly: what it shows
// of each attribute type and of a failed span, the event index, and its bounds.
#include "debug_traces.hpp"

#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

namespace json = boost::json;
namespace telemetry = adk::telemetry;
using adk::server::detail::DebugTraces;

namespace {

telemetry::SpanData span(std::string name, std::uint8_t id, std::string session = "s1")
{
    telemetry::SpanData s;
    s.name = std::move(name);
    s.context.trace_id[15] = 1;
    s.context.span_id[7] = id;
    s.context.flags = 1;
    s.start_ns = 1000 * id;
    s.end_ns = 1000 * id + 500;
    auto owner = std::make_shared<telemetry::SpanOwner>();
    owner->app_name = "app";
    owner->user_id = "u";
    owner->session_id = std::move(session);
    s.owner = std::move(owner);
    return s;
}

}  // namespace

TEST_CASE("DebugTraces: every attribute type as the UI reads it, in the order set, and a failure's status",
          "[server]")
{
    DebugTraces traces;
    telemetry::SpanData s = span("call_llm", 1);
    s.attributes.push_back({"gen_ai.system", std::string("gcp.vertex.agent")});
    s.attributes.push_back({"gen_ai.usage.input_tokens", std::int64_t{12}});
    s.attributes.push_back({"gen_ai.request.top_p", 0.5});
    s.attributes.push_back({"adk.flag", true});
    s.attributes.push_back({"gen_ai.response.finish_reasons", std::vector<std::string>{"stop", "length"}});
    s.attributes.push_back({"gcp.vertex.agent.event_id", std::string("e1")});
    s.attributes.push_back({"gcp.vertex.agent.llm_request", std::string(R"({"model":"m"})"), true});
    s.status = telemetry::StatusCode::error;
    s.status_message = "the model said no";
    traces.on_end(s);
    telemetry::SpanData child = span("execute_tool get_weather", 2);
    child.parent_span_id = s.context.span_id;
    traces.on_end(child);

    const json::array spans = traces.session_spans("app", std::string("u"), "s1");
    REQUIRE(spans.size() == 2);
    CHECK(spans[0].at("name") == "call_llm");
    CHECK(spans[0].at("span_id") == "0000000000000001");
    CHECK(spans[0].at("trace_id") == "00000000000000000000000000000001");
    CHECK(spans[0].at("parent_span_id").is_null());
    CHECK(spans[0].at("start_time") == 1000);
    CHECK(spans[0].at("end_time") == 1500);
    const json::value expected = json::parse(R"({
        "gen_ai.system": "gcp.vertex.agent", "gen_ai.usage.input_tokens": 12, "gen_ai.request.top_p": 0.5,
        "adk.flag": true, "gen_ai.response.finish_reasons": ["stop", "length"], "gcp.vertex.agent.event_id": "e1",
        "gcp.vertex.agent.llm_request": "{\"model\":\"m\"}",
        "otel.status_code": "ERROR", "otel.status_description": "the model said no"})");
    CHECK(spans[0].at("attributes") == expected);
    std::vector<std::string> order;
    for (const auto& kv : spans[0].at("attributes").as_object())
        order.emplace_back(kv.key());
    CHECK(order == std::vector<std::string>{"gen_ai.system", "gen_ai.usage.input_tokens", "gen_ai.request.top_p",
                                            "adk.flag", "gen_ai.response.finish_reasons",
                                            "gcp.vertex.agent.event_id", "gcp.vertex.agent.llm_request",
                                            "otel.status_code", "otel.status_description"});
    CHECK(spans[1].at("parent_span_id") == "0000000000000001");
    CHECK(spans[1].at("attributes") == json::object{});

    // The event's trace: the span's attributes with its ids; another app's or user's event is not found.
    const auto trace = traces.event_trace("app", std::string("u"), "e1");
    REQUIRE(trace);
    json::object with_ids = expected.as_object();
    with_ids["trace_id"] = "00000000000000000000000000000001";
    with_ids["span_id"] = "0000000000000001";
    CHECK(*trace == with_ids);
    CHECK_FALSE(traces.event_trace("other", std::nullopt, "e1"));
    CHECK_FALSE(traces.event_trace("app", std::string("v"), "e1"));
    CHECK_FALSE(traces.event_trace("app", std::nullopt, "e2"));
}

TEST_CASE("DebugTraces: attributes kept read back as set, escapes, lists and a status set twice",
          "[server]")
{
    DebugTraces traces;
    telemetry::SpanData s = span("execute_tool get_weather", 1);
    const std::string awkward = "quote \" backslash \\ line\n tab\t bell\x07 caf\xc3\xa9 \xe2\x82\xac";
    s.attributes.push_back({"gcp.vertex.agent.tool_call_args", awkward, true});
    s.attributes.push_back({"adk.list", std::vector<std::string>{}});
    s.attributes.push_back({"adk.names", std::vector<std::string>{"a\"b", ""}});
    s.attributes.push_back({"adk.negative", std::int64_t{-9007199254740993}});
    s.attributes.push_back({"adk.small", 1.25e-300});
    s.attributes.push_back({"otel.status_code", std::string("OK")});  // the failure below sets it again
    s.attributes.push_back({"gcp.vertex.agent.event_id", std::string("e9")});
    s.attributes.push_back({"adk.not_utf8", std::string("caf\xe9 \xff")});  // served as the bytes it held
    s.status = telemetry::StatusCode::error;
    s.status_message = "it \"broke\"";
    traces.on_end(s);

    const json::array spans = traces.session_spans("app", std::string("u"), "s1");
    REQUIRE(spans.size() == 1);
    const json::object& a = spans[0].at("attributes").as_object();
    CHECK(a.at("gcp.vertex.agent.tool_call_args") == json::value(awkward));
    CHECK(a.at("adk.list") == json::array{});
    CHECK(a.at("adk.names") == json::array{"a\"b", ""});
    CHECK(a.at("adk.negative") == std::int64_t{-9007199254740993});
    CHECK(a.at("adk.small").as_double() == 1.25e-300);
    CHECK(a.at("otel.status_description") == "it \"broke\"");
    CHECK(a.at("adk.not_utf8").as_string() == json::string_view("caf\xe9 \xff"));
    std::vector<std::string> order;
    for (const auto& kv : a)
        order.emplace_back(kv.key());
    // Set twice: its first place, its last value.
    CHECK(order == std::vector<std::string>{"gcp.vertex.agent.tool_call_args", "adk.list", "adk.names", "adk.negative",
                                            "adk.small", "otel.status_code", "gcp.vertex.agent.event_id",
                                            "adk.not_utf8", "otel.status_description"});
    CHECK(a.at("otel.status_code") == "ERROR");
    const auto trace = traces.event_trace("app", std::string("u"), "e9");
    REQUIRE(trace);
    CHECK(trace->at("gcp.vertex.agent.tool_call_args") == json::value(awkward));
    CHECK(trace->at("span_id") == "0000000000000001");
}

TEST_CASE("DebugTraces: its bounds on spans per session, sessions and bytes", "[server]")
{
    SECTION("the oldest span of a session goes, and with it its event")
    {
        DebugTraces traces(2, 10, std::size_t{1} << 20);
        for (std::uint8_t i = 1; i <= 3; ++i) {
            telemetry::SpanData s = span("call_llm", i);
            s.attributes.push_back({"gcp.vertex.agent.event_id", "e" + std::to_string(i)});
            traces.on_end(s);
        }
        const json::array spans = traces.session_spans("", std::nullopt, "s1");
        REQUIRE(spans.size() == 2);
        CHECK(spans[0].at("span_id") == "0000000000000002");
        CHECK_FALSE(traces.event_trace("", std::nullopt, "e1"));
        CHECK(traces.event_trace("", std::nullopt, "e3"));
    }
    SECTION("the session seen least recently goes past the bytes kept, never the newest")
    {
        // Each span: 200 bytes of its own, its name, and its attributes packed (its one attribute's key and value,
        // their lengths and its type).
        DebugTraces traces(100, 10, 2000);
        const std::string big(1000, 'x');
        for (const char* session : {"a", "b", "c"}) {
            telemetry::SpanData s = span("invocation", 1, session);
            s.attributes.push_back({"gcp.vertex.agent.llm_request", big, true});
            traces.on_end(s);
        }
        CHECK(traces.session_spans("", std::nullopt, "a").empty());
        CHECK(traces.session_spans("", std::nullopt, "b").empty());
        CHECK(traces.session_spans("", std::nullopt, "c").size() == 1);
        telemetry::SpanData huge = span("invocation", 2, "d");
        huge.attributes.push_back({"gcp.vertex.agent.llm_request", std::string(5000, 'y'), true});
        traces.on_end(huge);
        CHECK(traces.session_spans("", std::nullopt, "c").empty());
        CHECK(traces.session_spans("", std::nullopt, "d").size() == 1);  // alone past the bound: kept
    }
    SECTION("past the sessions kept, the one seen least recently goes")
    {
        DebugTraces traces(100, 2, std::size_t{1} << 20);
        traces.on_end(span("invocation", 1, "a"));
        traces.on_end(span("invocation", 2, "b"));
        traces.on_end(span("invocation", 3, "a"));  // a seen after b
        traces.on_end(span("invocation", 4, "c"));
        CHECK(traces.session_spans("", std::nullopt, "a").size() == 2);
        CHECK(traces.session_spans("", std::nullopt, "b").empty());
        CHECK(traces.session_spans("", std::nullopt, "c").size() == 1);
    }
}
