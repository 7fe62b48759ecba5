#include <adk/otel/otlp_traces.hpp>

#include "otlp_wire.hpp"

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <bit>
#include <cstring>

namespace adk::otel {

namespace json = boost::json;

namespace {

using detail::ProtoWriter;
using detail::json_value;
using detail::proto_attribute;
using detail::all_zero;
using detail::id_bytes;

// Span.flags: the W3C trace flags, and whether the parent is remote (SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK and
// SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK).
std::uint32_t span_flags(const telemetry::SpanData& span)
{
    std::uint32_t flags = span.context.flags;
    flags |= 0x100;
    if (span.parent_remote)
        flags |= 0x200;
    return flags;
}

int kind_number(telemetry::SpanKind kind)
{
    switch (kind) {
    case telemetry::SpanKind::internal: return 1;
    case telemetry::SpanKind::server: return 2;
    case telemetry::SpanKind::client: return 3;
    }
    return 0;
}

int status_number(telemetry::StatusCode code)
{
    switch (code) {
    case telemetry::StatusCode::unset: return 0;
    case telemetry::StatusCode::ok: return 1;
    case telemetry::StatusCode::error: return 2;
    }
    return 0;
}

// About what a span's Span message takes, so that its buffer is allocated once: its fixed fields, its strings, and
// each attribute's framing and value (a number or flag at most 11 bytes with its tag).
std::size_t encoded_size_about(const telemetry::SpanData& span)
{
    std::size_t size = 96 + span.name.size() + span.context.trace_state.size() + span.status_message.size();
    for (const telemetry::Attribute& a : span.attributes) {
        size += 12 + a.key.size();
        if (const auto* text = std::get_if<std::string>(&a.value))
            size += text->size();
        else if (const auto* texts = std::get_if<std::vector<std::string>>(&a.value))
            for (const std::string& t : *texts)
                size += 6 + t.size();
        else
            size += 11;
    }
    return size;
}

// A Span message.
std::string protobuf_span(const telemetry::SpanData& span, bool with_content)
{
    ProtoWriter s;
    s.out.reserve(encoded_size_about(span));
    s.bytes_field(1, id_bytes(span.context.trace_id));
    s.bytes_field(2, id_bytes(span.context.span_id));
    s.bytes_field(3, span.context.trace_state);
    if (!all_zero(span.parent_span_id))
        s.bytes_field(4, id_bytes(span.parent_span_id));
    s.bytes_field(5, span.name);
    s.uint_field(6, static_cast<std::uint64_t>(kind_number(span.kind)));
    s.fixed64_field(7, static_cast<std::uint64_t>(span.start_ns));
    s.fixed64_field(8, static_cast<std::uint64_t>(span.end_ns));
    std::uint32_t dropped = 0;
    for (const telemetry::Attribute& a : span.attributes) {
        if (a.content && !with_content) {
            ++dropped;
            continue;
        }
        proto_attribute(s, 9, a.key, a.value);
    }
    s.uint_field(10, dropped);
    if (span.status != telemetry::StatusCode::unset) {
        const std::size_t status = s.begin_message(15);
        s.bytes_field(2, span.status_message);
        s.uint_field(3, static_cast<std::uint64_t>(status_number(span.status)));
        s.end_message(status);
    }
    s.fixed32_field(16, span_flags(span));
    return std::move(s.out);
}

std::string join_protobuf(const Origin& origin, std::span<const std::string> spans)
{
    ProtoWriter scope;
    scope.bytes_field(1, origin.scope_name);
    scope.bytes_field(2, origin.scope_version);
    ProtoWriter scope_head;  // ScopeSpans: the scope (1), then the spans (2)
    scope_head.message_field(1, scope);
    return detail::export_request(origin.resource, scope_head, 2, spans);
}

// OTLP/JSON (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding): protobuf's JSON mapping but for
// ids in lower-case hex, enums as numbers, and field names in lowerCamelCase.
json::array json_attributes(const std::vector<telemetry::Attribute>& attributes, bool with_content,
                            std::size_t& dropped)
{
    json::array out;
    for (const telemetry::Attribute& a : attributes) {
        if (a.content && !with_content) {
            ++dropped;
            continue;
        }
        out.push_back(json::object{{"key", a.key}, {"value", json_value(a.value)}});
    }
    return out;
}

// A span's OTLP/JSON object.
std::string json_span(const telemetry::SpanData& span, bool with_content)
{
    std::size_t dropped = 0;
    json::object s{{"traceId", telemetry::to_hex(span.context.trace_id)},
                   {"spanId", telemetry::to_hex(span.context.span_id)},
                   {"name", span.name},
                   {"kind", kind_number(span.kind)},
                   {"startTimeUnixNano", std::to_string(span.start_ns)},
                   {"endTimeUnixNano", std::to_string(span.end_ns)},
                   {"flags", span_flags(span)}};
    if (!span.context.trace_state.empty())
        s["traceState"] = span.context.trace_state;
    if (!all_zero(span.parent_span_id))
        s["parentSpanId"] = telemetry::to_hex(span.parent_span_id);
    s["attributes"] = json_attributes(span.attributes, with_content, dropped);
    if (dropped)
        s["droppedAttributesCount"] = dropped;
    if (span.status != telemetry::StatusCode::unset)
        s["status"] = json::object{{"code", status_number(span.status)}, {"message", span.status_message}};
    return json::serialize(s);
}

std::string join_json(const Origin& origin, std::span<const std::string> spans)
{
    json::object scope{{"name", origin.scope_name}};
    if (!origin.scope_version.empty())
        scope["version"] = origin.scope_version;
    std::string out = R"({"resourceSpans":[{"resource":)" + json::serialize(detail::json_resource(origin.resource)) +
                      R"(,"scopeSpans":[{"scope":)" + json::serialize(scope) + R"(,"spans":[)";
    for (std::size_t i = 0; i < spans.size(); ++i) {
        if (i > 0)
            out += ',';
        out += spans[i];
    }
    out += "]}]}]}";
    return out;
}

}  // namespace

std::string encode_span(const telemetry::SpanData& span, Encoding encoding, bool with_content)
{
    return encoding == Encoding::protobuf ? protobuf_span(span, with_content) : json_span(span, with_content);
}

std::string join_spans(const Origin& origin, std::span<const std::string> spans, Encoding encoding)
{
    return encoding == Encoding::protobuf ? join_protobuf(origin, spans) : join_json(origin, spans);
}

std::string encode_traces(const Origin& origin, std::span<const telemetry::SpanData> spans, Encoding encoding,
                          bool with_content)
{
    std::vector<std::string> encoded;
    encoded.reserve(spans.size());
    for (const telemetry::SpanData& span : spans)
        encoded.push_back(encode_span(span, encoding, with_content));
    return join_spans(origin, encoded, encoding);
}

const char* content_type(Encoding encoding) noexcept
{
    return encoding == Encoding::protobuf ? "application/x-protobuf" : "application/json";
}

}  // namespace adk::otel
