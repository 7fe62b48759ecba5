// Metrics in the Prometheus text exposition format (version 0.0.4), as a /metrics route serves them.
//
// Names follow OpenTelemetry's Prometheus compatibility rules: characters other than [a-zA-Z0-9_:] become '_', the
// unit becomes a suffix ("s" -> _seconds, "By" -> _bytes; annotations such as "{token}" are dropped), counters end
// in _total, up-down counters and gauges are gauges, histograms give _bucket (cumulative, le="+Inf" last), _sum and
// _count. Every series carries otel_scope_name. Label values are escaped; HELP text too.
#pragma once

#include <adk/telemetry/metrics.hpp>

#include <string>

namespace adk::telemetry {

inline constexpr const char* prometheus_content_type = "text/plain; version=0.0.4; charset=utf-8";

std::string prometheus_text(const MetricsSnapshot& snapshot);

}  // namespace adk::telemetry
