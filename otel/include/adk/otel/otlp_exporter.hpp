// OtlpSpanExporter: a span sink (adk/telemetry/tracer.hpp) that sends finished spans to an OpenTelemetry
// collector over OTLP/HTTP, in batches, as OpenTelemetry's batch span processor does.
//
//   auto exporter = adk::otel::OtlpSpanExporter::create(ioc.get_executor(), adk::otel::OtlpOptions::from_env());
//   auto tracer = std::make_shared<adk::telemetry::Tracer>(
//       std::vector<std::shared_ptr<adk::telemetry::SpanSink>>{exporter}, exporter->options().tracer);
//   ...
//   co_await exporter->shutdown(std::chrono::seconds(5));  // sends what is queued, within the deadline
//
// Bounded: at most max_queue_spans spans and max_queue_bytes bytes wait; a span that does not fit is dropped and
// counted (stats()), so a collector that is slow, down or refusing never grows the process. A batch goes out when
// max_batch_spans are waiting or schedule_delay after the first one; a failed export is retried as the HTTP client
// retries (429 and 5xx, honouring Retry-After), then dropped and counted. on_end() encodes the span (the queue holds
// what will be sent, counted in bytes exactly) and takes a lock to queue it: it never waits for the network.
#pragma once

#include <adk/otel/otlp_traces.hpp>
#include <adk/telemetry/tracer.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace adk::otel {

namespace asio = boost::asio;

// Where and how spans (and metrics) are exported; from_env() reads OpenTelemetry's standard environment variables.
class OtlpOptions {
public:
    bool enabled = true;                              // OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none: false
    std::string traces_url = "http://localhost:4318/v1/traces";  // OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT
    std::vector<std::pair<std::string, std::string>> headers;    // OTEL_EXPORTER_OTLP_(TRACES_)HEADERS
    Encoding encoding = Encoding::protobuf;                      // OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL
    std::chrono::milliseconds timeout{10000};                    // OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT
    Origin origin;                       // OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES (service.name, telemetry.sdk.*)
    bool capture_content = false;        // OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true
    telemetry::TracerOptions tracer;     // OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG
    std::size_t max_queue_spans = 2048;  // OTEL_BSP_MAX_QUEUE_SIZE
    std::size_t max_batch_spans = 512;   // OTEL_BSP_MAX_EXPORT_BATCH_SIZE
    std::chrono::milliseconds schedule_delay{5000};  // OTEL_BSP_SCHEDULE_DELAY
    std::size_t max_queue_bytes = std::size_t{32} << 20;  // of the spans waiting, encoded (no variable: adk-cpp's own)
    int max_retries = 3;                 // per batch, after the first attempt
    std::string ca_file;                 // OTEL_EXPORTER_OTLP_(TRACES_)CERTIFICATE: trusted besides the system's

    // Metrics (adk/otel/otlp_metric_exporter.hpp): their own endpoint, from the METRICS_ variants of the variables
    // above or the general ones.
    class Metrics {
    public:
        bool enabled = true;  // OTEL_SDK_DISABLED=true, OTEL_METRICS_EXPORTER=none or prometheus (scraped): false
        std::string url = "http://localhost:4318/v1/metrics";     // OTEL_EXPORTER_OTLP_(METRICS_)ENDPOINT
        std::vector<std::pair<std::string, std::string>> headers;  // OTEL_EXPORTER_OTLP_(METRICS_)HEADERS
        Encoding encoding = Encoding::protobuf;                    // OTEL_EXPORTER_OTLP_(METRICS_)PROTOCOL
        std::chrono::milliseconds timeout{10000};  // OTEL_EXPORTER_OTLP_(METRICS_)TIMEOUT, OTEL_METRIC_EXPORT_TIMEOUT
        std::string ca_file;                        // OTEL_EXPORTER_OTLP_(METRICS_)CERTIFICATE
        std::chrono::milliseconds interval{60000};  // OTEL_METRIC_EXPORT_INTERVAL: between two exports
    };
    Metrics metrics;

    // Reads the variables through `get` (std::getenv when none is given). Throws adk::Error (invalid_argument)
    // naming the variable for a value it cannot use: a protocol other than http/protobuf or http/json (grpc is not
    // supported: say so), a URL that is not http(s), a header or resource attribute that is not key=value, a
    // number that is not one, an unknown sampler.
    static OtlpOptions from_env(std::function<std::optional<std::string>(std::string_view)> get = {});
};

class OtlpSpanExporter final : public telemetry::SpanSink {
public:
    class Stats {
    public:
        std::uint64_t exported = 0;  // spans the collector took
        std::uint64_t dropped = 0;   // spans lost: the queue was full, or their batch failed
        std::uint64_t failed_batches = 0;
        std::size_t queued = 0;      // spans waiting now
        std::size_t queued_bytes = 0;
    };

    // Starts the export loop on a strand of `executor`. Destroy it (its last owner: the Tracer) before the
    // io_context: destruction stops the loop there without waiting, dropping what waits.
    static std::shared_ptr<OtlpSpanExporter> create(asio::any_io_executor executor, OtlpOptions options);
    // The exporter OpenTelemetry's environment asks for (OtlpOptions::from_env): one when OTEL_EXPORTER_OTLP_ENDPOINT
    // or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set, unless OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none says not;
    // null otherwise (nothing configured: nothing sent to a default address).
    static std::shared_ptr<OtlpSpanExporter> from_env(asio::any_io_executor executor);
    ~OtlpSpanExporter() override;

    void on_end(const telemetry::SpanData& span) override;
    bool wants_content() const noexcept override;

    // Sends what waits, then stops; returns when done or at `deadline` (the rest dropped and counted). Spans ended
    // later are dropped. Idempotent.
    asio::awaitable<void> shutdown(std::chrono::milliseconds deadline);
    // Sends what waits now, without waiting for the schedule; returns when it went (or failed).
    asio::awaitable<void> flush();

    Stats stats() const;
    const OtlpOptions& options() const noexcept;

    class Impl;

private:
    explicit OtlpSpanExporter(std::shared_ptr<Impl> impl);
    std::shared_ptr<Impl> impl_;
};

}  // namespace adk::otel
