// OtlpMetricExporter: sends a Meter's metrics (adk/telemetry/metrics.hpp) to an OpenTelemetry collector over
// OTLP/HTTP every interval, as OpenTelemetry's periodic exporting metric reader does.
//
//   auto meter = std::make_shared<adk::telemetry::Meter>();
//   auto exporter = adk::otel::OtlpMetricExporter::create(ioc.get_executor(), meter, adk::otel::OtlpOptions::from_env());
//   ...
//   co_await exporter->shutdown(std::chrono::seconds(5));  // a last export, within the deadline
//
// Values are cumulative, so an export that fails loses no count: the next one carries it. Nothing queues: each
// export is one snapshot, encoded when it goes.
#pragma once

#include <adk/otel/otlp_exporter.hpp>
#include <adk/otel/otlp_metrics.hpp>
#include <adk/telemetry/metrics.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <memory>

namespace adk::otel {

class OtlpMetricExporter {
public:
    class Stats {
    public:
        std::uint64_t exports = 0;  // snapshots the collector took
        std::uint64_t failed = 0;   // snapshots that did not go (the collector refused, was slow or down)
    };
    // Exports `meter` to options.metrics.url every options.metrics.interval, from a strand of `executor`. Destroy it
    // before the io_context.
    static std::shared_ptr<OtlpMetricExporter> create(asio::any_io_executor executor,
                                                      std::shared_ptr<telemetry::Meter> meter, OtlpOptions options);
    // The exporter OpenTelemetry's environment asks for: one when OTEL_EXPORTER_OTLP_ENDPOINT or
    // OTEL_EXPORTER_OTLP_METRICS_ENDPOINT is set, unless OTEL_SDK_DISABLED or OTEL_METRICS_EXPORTER says not; null
    // otherwise.
    static std::shared_ptr<OtlpMetricExporter> from_env(asio::any_io_executor executor,
                                                        std::shared_ptr<telemetry::Meter> meter);
    ~OtlpMetricExporter();
    OtlpMetricExporter(const OtlpMetricExporter&) = delete;
    OtlpMetricExporter& operator=(const OtlpMetricExporter&) = delete;

    // Exports now, besides the schedule; returns when it went (or failed).
    asio::awaitable<void> flush();
    // A last export, then the schedule stops; returns when done or at `deadline` (the export cut short). Idempotent.
    asio::awaitable<void> shutdown(std::chrono::milliseconds deadline);
    Stats stats() const;

    class Impl;

private:
    explicit OtlpMetricExporter(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
    std::shared_ptr<Impl> impl_;
};

}  // namespace adk::otel
