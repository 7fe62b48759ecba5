// OTLP's encodings of spans (adk/otel/otlp_traces.hpp). The JSON form is read back here; the protobuf form is
// decoded by the official OTLP definitions in tests/interop/otlp (protobufjs code generated from opentelemetry-proto).
#include <adk/otel/otlp_traces.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <catch2/catch.hpp>

namespace {

namespace json = boost::json;
namespace telemetry = adk::telemetry;

// Two spans of one trace: a root with a remote parent, and a child that failed, with a content attribute.
std::vector<telemetry::SpanData> two_spans()
{
    auto caller = telemetry::SpanContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "k=v");
    telemetry::SpanData root;
    root.name = "invocation";
    root.context = *caller;
    root.context.span_id = {1, 2, 3, 4, 5, 6, 7, 8};
    root.context.remote = false;
    root.parent_span_id = caller->span_id;
    root.parent_remote = true;
    root.start_ns = 1795311702995000000;
    root.end_ns = 1795311703106031000;
    root.attributes.push_back({"gen_ai.conversation.id", std::string("s1"), false});

    telemetry::SpanData child = root;
    child.name = "generate_content gemini-2.5-flash";
    child.context.span_id = {8, 7, 6, 5, 4, 3, 2, 1};
    child.parent_span_id = root.context.span_id;
    child.parent_remote = false;
    child.kind = telemetry::SpanKind::client;
    child.attributes = {{"gen_ai.usage.input_tokens", std::int64_t{-150}, false},
                        {"gen_ai.request.top_p", 0.25, false},
                        {"adk.streamed", true, false},
                        {"gen_ai.response.finish_reasons", std::vector<std::string>{"stop"}, false},
                        {"gcp.vertex.agent.llm_request", std::string("{\"secret\":1}"), true}};
    child.status = telemetry::StatusCode::error;
    child.status_message = "the provider sent nonsense";
    return {root, child};
}

// Protocol Buffers' wire format read back: the fields of one message, with the bytes of the length-delimited ones
// (a nested message, a string). Fails the test on a malformed message.
class ProtoFields {
public:
    explicit ProtoFields(std::string_view message)
    {
        while (!message.empty()) {
            const std::uint64_t tag = varint(message);
            Field f{static_cast<int>(tag >> 3), {}};
            switch (tag & 7) {
            case 0: varint(message); break;
            case 1: REQUIRE(message.size() >= 8); message.remove_prefix(8); break;
            case 5: REQUIRE(message.size() >= 4); message.remove_prefix(4); break;
            case 2: {
                const std::uint64_t length = varint(message);
                REQUIRE(length <= message.size());
                f.bytes = message.substr(0, length);
                message.remove_prefix(length);
                break;
            }
            default: FAIL("wire type " << (tag & 7));
            }
            fields.push_back(f);
        }
    }
    // The bytes of each field with that number, in order.
    std::vector<std::string_view> all(int number) const
    {
        std::vector<std::string_view> out;
        for (const Field& f : fields)
            if (f.number == number)
                out.push_back(f.bytes);
        return out;
    }
    std::string_view one(int number) const
    {
        const auto found = all(number);
        REQUIRE(found.size() == 1);
        return found[0];
    }

private:
    class Field {
    public:
        int number;
        std::string_view bytes;  // of a length-delimited field
    };
    static std::uint64_t varint(std::string_view& in)
    {
        std::uint64_t v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            REQUIRE(!in.empty());
            const auto byte = static_cast<unsigned char>(in.front());
            in.remove_prefix(1);
            v |= static_cast<std::uint64_t>(byte & 0x7F) << shift;
            if (byte < 0x80)
                return v;
        }
        FAIL("a varint longer than ten bytes");
        return 0;
    }
    std::vector<Field> fields;
};

adk::otel::Origin origin()
{
    adk::otel::Origin o;
    o.resource = {{"service.name", std::string("weather")}};
    o.scope_version = "1.0.0";
    return o;
}

}  // namespace

TEST_CASE("OTLP/JSON: ids in hex, enums as numbers, 64-bit integers as strings, content only when asked", "[otel]")
{
    const auto spans = two_spans();
    const json::value request = json::parse(adk::otel::encode_traces(origin(), spans, adk::otel::Encoding::json, false));
    const json::value& resource_spans = request.at("resourceSpans").at(0);
    CHECK(resource_spans.at("resource").at("attributes").at(0) ==
          json::parse(R"({"key":"service.name","value":{"stringValue":"weather"}})"));
    const json::value& scope_spans = resource_spans.at("scopeSpans").at(0);
    CHECK(scope_spans.at("scope") == json::parse(R"({"name":"gcp.vertex.agent","version":"1.0.0"})"));
    const json::array& out = scope_spans.at("spans").as_array();
    REQUIRE(out.size() == 2);

    const json::value& root = out[0];
    CHECK(root.at("traceId") == "4bf92f3577b34da6a3ce929d0e0e4736");
    CHECK(root.at("spanId") == "0102030405060708");
    CHECK(root.at("parentSpanId") == "00f067aa0ba902b7");
    CHECK(root.at("traceState") == "k=v");
    CHECK(root.at("name") == "invocation");
    CHECK(root.at("kind") == 1);
    CHECK(root.at("startTimeUnixNano") == "1795311702995000000");
    CHECK(root.at("endTimeUnixNano") == "1795311703106031000");
    CHECK(root.at("flags") == 0x301);  // sampled; the parent's remoteness known, and remote
    CHECK(root.as_object().if_contains("status") == nullptr);

    const json::value& child = out[1];
    CHECK(child.at("kind") == 3);
    CHECK(child.at("flags") == 0x101);
    CHECK(child.at("parentSpanId") == "0102030405060708");
    CHECK(child.at("status") == json::parse(R"({"code":2,"message":"the provider sent nonsense"})"));
    CHECK(child.at("attributes") == json::parse(R"([
        {"key":"gen_ai.usage.input_tokens","value":{"intValue":"-150"}},
        {"key":"gen_ai.request.top_p","value":{"doubleValue":0.25}},
        {"key":"adk.streamed","value":{"boolValue":true}},
        {"key":"gen_ai.response.finish_reasons","value":{"arrayValue":{"values":[{"stringValue":"stop"}]}}}])"));
    CHECK(child.at("droppedAttributesCount") == 1);  // the request: content, not asked for

    const json::value with_content =
        json::parse(adk::otel::encode_traces(origin(), spans, adk::otel::Encoding::json, true));
    const json::value& attributes = with_content.at("resourceSpans").at(0).at("scopeSpans").at(0).at("spans").at(1).at(
        "attributes");
    CHECK(attributes.as_array().size() == 5);
    CHECK(attributes.at(4).at("value").at("stringValue") == "{\"secret\":1}");
}

TEST_CASE("OTLP/protobuf: the content is left out unless asked, and the message is smaller than its JSON", "[otel]")
{
    const auto spans = two_spans();
    const std::string without = adk::otel::encode_traces(origin(), spans, adk::otel::Encoding::protobuf, false);
    const std::string with = adk::otel::encode_traces(origin(), spans, adk::otel::Encoding::protobuf, true);
    CHECK(with.find("{\"secret\":1}") != std::string::npos);
    CHECK(without.find("secret") == std::string::npos);
    CHECK(without.find("the provider sent nonsense") != std::string::npos);
    CHECK(with.size() < adk::otel::encode_traces(origin(), spans, adk::otel::Encoding::json, true).size());
    CHECK(std::string(adk::otel::content_type(adk::otel::Encoding::protobuf)) == "application/x-protobuf");
    // ExportTraceServiceRequest: field 1 (resource_spans), length-delimited.
    REQUIRE(!without.empty());
    CHECK(static_cast<unsigned char>(without[0]) == 0x0A);
}

TEST_CASE("OTLP/protobuf: nested messages of any length read back (lengths of one, two and three bytes)", "[otel]")
{
    telemetry::SpanData span = two_spans()[1];
    const std::vector<std::string> values = {std::string(100, 'a'), std::string(127, 'b'), std::string(300, 'c'),
                                             std::string(20'000, 'd')};
    span.attributes = {{"short", values[0], false},
                       {"fits_one_byte_until_its_key", values[1], false},
                       {"two_bytes", values[2], false},
                       {"three_bytes", values[3], false},
                       {"list", std::vector<std::string>{values[2], values[0]}, false}};
    const std::string request =
        adk::otel::encode_traces(origin(), std::vector<telemetry::SpanData>{span}, adk::otel::Encoding::protobuf, true);
    // ExportTraceServiceRequest.resource_spans(1) > ResourceSpans.scope_spans(2) > ScopeSpans.spans(2) > Span.
    const ProtoFields out(ProtoFields(ProtoFields(ProtoFields(request).one(1)).one(2)).one(2));
    CHECK(out.one(5) == "generate_content gemini-2.5-flash");
    const auto attributes = out.all(9);
    REQUIRE(attributes.size() == 5);
    for (std::size_t i = 0; i < 4; ++i) {
        const ProtoFields kv(attributes[i]);
        CHECK(kv.one(1) == span.attributes[i].key);
        CHECK(ProtoFields(kv.one(2)).one(1) == values[i]);  // AnyValue.string_value
    }
    const ProtoFields list(ProtoFields(ProtoFields(attributes[4]).one(2)).one(5));  // AnyValue.array_value
    const auto items = list.all(1);
    REQUIRE(items.size() == 2);
    CHECK(ProtoFields(items[0]).one(1) == values[2]);
    CHECK(ProtoFields(items[1]).one(1) == values[0]);
    const ProtoFields status(out.one(15));
    CHECK(status.one(2) == "the provider sent nonsense");
}
