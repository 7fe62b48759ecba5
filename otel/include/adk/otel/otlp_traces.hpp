// OTLP's encodings of spans (opentelemetry-proto, collector/trace/v1/trace_service.proto): an
// ExportTraceServiceRequest in protobuf (OTLP/HTTP's default, application/x-protobuf) or in OTLP/JSON
// (application/json: ids in hex, enums as numbers, 64-bit integers as strings), written without I/O.
#pragma once

#include <adk/telemetry/tracer.hpp>

#include <span>
#include <string>
#include <vector>

namespace adk::otel {

// An attribute of the resource: a name of the operator's (OTEL_RESOURCE_ATTRIBUTES), so owned, unlike a span's.
class ResourceAttribute {
public:
    std::string key;
    telemetry::AttributeValue value;
};

// Who sent the spans: the resource's attributes (service.name, OTEL_RESOURCE_ATTRIBUTES, ...) and the
// instrumentation scope (ADK's tracer is "gcp.vertex.agent").
class Origin {
public:
    std::vector<ResourceAttribute> resource;
    std::string scope_name = "gcp.vertex.agent";
    std::string scope_version;
};

enum class Encoding { protobuf, json };

// One ExportTraceServiceRequest of `spans`: one ResourceSpans, one ScopeSpans. Content attributes
// (telemetry::Attribute::content) are written only when `with_content`.
std::string encode_traces(const Origin& origin, std::span<const telemetry::SpanData> spans, Encoding encoding,
                          bool with_content);

// The same in two steps, as the exporter does: each span encoded once when it ends (a Span message, or its OTLP/JSON
// object), then a batch of them joined into one request without reading the spans again.
std::string encode_span(const telemetry::SpanData& span, Encoding encoding, bool with_content);
std::string join_spans(const Origin& origin, std::span<const std::string> spans, Encoding encoding);

// The content type of an encoding: "application/x-protobuf" or "application/json".
const char* content_type(Encoding encoding) noexcept;

}  // namespace adk::otel
