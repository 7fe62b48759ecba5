// OTLP's encodings of metrics (opentelemetry-proto, collector/metrics/v1/metrics_service.proto): an
// ExportMetricsServiceRequest of a Meter's snapshot in protobuf or OTLP/JSON, written without I/O. Sums and
// histograms are cumulative (AGGREGATION_TEMPORALITY_CUMULATIVE) from the Meter's start; up-down counters are
// non-monotonic sums, gauges gauges.
#pragma once

#include <adk/otel/otlp_traces.hpp>
#include <adk/telemetry/metrics.hpp>

#include <string>

namespace adk::otel {

// One ResourceMetrics (origin's resource) with one ScopeMetrics (the snapshot's scope). Metrics without a series are
// left out.
std::string encode_metrics(const Origin& origin, const telemetry::MetricsSnapshot& snapshot, Encoding encoding);

}  // namespace adk::otel
