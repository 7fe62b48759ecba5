#include <adk/otel/otlp_metrics.hpp>

#include "otlp_wire.hpp"

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

namespace adk::otel {

namespace json = boost::json;

namespace {

using detail::ProtoWriter;

constexpr int cumulative = 2;  // AGGREGATION_TEMPORALITY_CUMULATIVE

void proto_point_attributes(ProtoWriter& into, int field, const telemetry::MetricAttributes& attributes)
{
    for (const auto& [key, value] : attributes)
        detail::proto_attribute(into, field, key, value);
}

std::string encode_protobuf(const Origin& origin, const telemetry::MetricsSnapshot& snapshot)
{
    ProtoWriter scope_metrics;
    {
        ProtoWriter scope;
        scope.bytes_field(1, snapshot.scope);
        scope.bytes_field(2, origin.scope_version);
        scope_metrics.message_field(1, scope);
    }
    const auto start = static_cast<std::uint64_t>(snapshot.start_ns);
    const auto time = static_cast<std::uint64_t>(snapshot.time_ns);
    for (const telemetry::MetricData& m : snapshot.metrics) {
        if (m.points.empty())
            continue;
        ProtoWriter metric;
        metric.bytes_field(1, m.name);
        metric.bytes_field(2, m.description);
        metric.bytes_field(3, m.unit);
        ProtoWriter data;
        for (const telemetry::MetricPoint& p : m.points) {
            ProtoWriter point;
            if (m.kind == telemetry::InstrumentKind::histogram) {
                point.fixed64_field(2, start);
                point.fixed64_field(3, time);
                point.fixed64_field(4, p.count);
                point.double_field(5, p.sum);
                point.packed_fixed64_field(6, p.bucket_counts);
                point.packed_double_field(7, m.bounds);
                proto_point_attributes(point, 9, p.attributes);
                if (p.count > 0) {
                    point.double_field(11, p.min);
                    point.double_field(12, p.max);
                }
            } else {
                if (m.kind != telemetry::InstrumentKind::gauge)
                    point.fixed64_field(2, start);
                point.fixed64_field(3, time);
                point.double_field(4, p.value);
                proto_point_attributes(point, 7, p.attributes);
            }
            data.message_field(1, point);
        }
        switch (m.kind) {
        case telemetry::InstrumentKind::counter:
        case telemetry::InstrumentKind::up_down_counter:
            data.uint_field(2, cumulative);
            data.uint_field(3, m.kind == telemetry::InstrumentKind::counter ? 1 : 0);
            metric.message_field(7, data);
            break;
        case telemetry::InstrumentKind::histogram:
            data.uint_field(2, cumulative);
            metric.message_field(9, data);
            break;
        case telemetry::InstrumentKind::gauge: metric.message_field(5, data); break;
        }
        scope_metrics.message_field(2, metric);
    }
    return detail::export_request(origin.resource, scope_metrics, 2);
}

json::array json_point_attributes(const telemetry::MetricAttributes& attributes)
{
    json::array out;
    for (const auto& [key, value] : attributes)
        out.push_back(json::object{{"key", key}, {"value", json::object{{"stringValue", value}}}});
    return out;
}

std::string encode_json(const Origin& origin, const telemetry::MetricsSnapshot& snapshot)
{
    const std::string start = std::to_string(snapshot.start_ns);
    const std::string time = std::to_string(snapshot.time_ns);
    json::array metrics;
    for (const telemetry::MetricData& m : snapshot.metrics) {
        if (m.points.empty())
            continue;
        json::array points;
        for (const telemetry::MetricPoint& p : m.points) {
            json::object point{{"attributes", json_point_attributes(p.attributes)}, {"timeUnixNano", time}};
            if (m.kind != telemetry::InstrumentKind::gauge)
                point["startTimeUnixNano"] = start;
            if (m.kind == telemetry::InstrumentKind::histogram) {
                point["count"] = std::to_string(p.count);
                point["sum"] = p.sum;
                json::array counts;
                for (std::uint64_t c : p.bucket_counts)
                    counts.push_back(json::value(std::to_string(c)));
                point["bucketCounts"] = std::move(counts);
                json::array bounds;
                for (double b : m.bounds)
                    bounds.push_back(b);
                point["explicitBounds"] = std::move(bounds);
                if (p.count > 0) {
                    point["min"] = p.min;
                    point["max"] = p.max;
                }
            } else {
                point["asDouble"] = p.value;
            }
            points.push_back(std::move(point));
        }
        json::object metric{{"name", m.name}, {"description", m.description}, {"unit", m.unit}};
        switch (m.kind) {
        case telemetry::InstrumentKind::counter:
        case telemetry::InstrumentKind::up_down_counter:
            metric["sum"] = json::object{{"dataPoints", std::move(points)},
                                         {"aggregationTemporality", cumulative},
                                         {"isMonotonic", m.kind == telemetry::InstrumentKind::counter}};
            break;
        case telemetry::InstrumentKind::histogram:
            metric["histogram"] =
                json::object{{"dataPoints", std::move(points)}, {"aggregationTemporality", cumulative}};
            break;
        case telemetry::InstrumentKind::gauge: metric["gauge"] = json::object{{"dataPoints", std::move(points)}}; break;
        }
        metrics.push_back(std::move(metric));
    }
    json::object scope{{"name", snapshot.scope}};
    if (!origin.scope_version.empty())
        scope["version"] = origin.scope_version;
    json::value request = json::object{
        {"resourceMetrics",
         json::array{json::object{
             {"resource", detail::json_resource(origin.resource)},
             {"scopeMetrics",
              json::array{json::object{{"scope", std::move(scope)}, {"metrics", std::move(metrics)}}}}}}}};
    return json::serialize(request);
}

}  // namespace

std::string encode_metrics(const Origin& origin, const telemetry::MetricsSnapshot& snapshot, Encoding encoding)
{
    return encoding == Encoding::protobuf ? encode_protobuf(origin, snapshot) : encode_json(origin, snapshot);
}

}  // namespace adk::otel
