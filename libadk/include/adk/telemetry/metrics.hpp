// Metrics: counters, histograms and gauges kept in a Meter, read by exporters (Prometheus text, OTLP).
//
//   auto meter = std::make_shared<adk::telemetry::Meter>();
//   auto tracer = std::make_shared<adk::telemetry::Tracer>(
//       std::vector<std::shared_ptr<adk::telemetry::SpanSink>>{std::make_shared<adk::telemetry::GenAiMetrics>(meter)});
//   // RunnerOptions::tracer = tracer; ... later, an exporter reads meter->collect().
//
// DESIGN: the GenAI metrics are fed from the spans' ends (GenAiMetrics is a SpanSink that sees unsampled spans
// too), so a model call, a tool and an agent are measured where they are traced, once. Values are cumulative
// since the Meter was made (Prometheus' and OTLP's cumulative temporality). Every instrument is bounded: past
// max_series attribute sets per instrument, values go to one overflow series (otel.metric.overflow=true), as
// OpenTelemetry's cardinality limit says, and an attribute value longer than max_metric_attribute_bytes is cut
// there (a model's modelVersion is the model's to choose). Recording takes the instrument's mutex: it is done per
// call, not per chunk.
#pragma once

#include <adk/telemetry/tracer.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace adk::telemetry {

// What an attribute value of a series keeps: the longer ones are cut there (at a UTF-8 character's start).
inline constexpr std::size_t max_metric_attribute_bytes = 128;

// An attribute set of a series: pairs sorted by key (the Meter sorts what it is given).
using MetricAttributes = std::vector<std::pair<std::string, std::string>>;
// The same as views, for a record that allocates nothing when its series exists (sorted in place by the Meter).
using MetricAttributeView = std::pair<std::string_view, std::string_view>;

enum class InstrumentKind {
    counter,          // a monotonic sum (Prometheus counter)
    up_down_counter,  // a sum that goes up and down (Prometheus gauge)
    histogram,        // explicit buckets
    gauge,            // observed when collected (a callback)
};

class MetricPoint {
public:
    MetricAttributes attributes;
    double value = 0;                         // sums and gauges
    std::vector<std::uint64_t> bucket_counts;  // histogram: bounds.size() + 1 counts, not cumulative
    std::uint64_t count = 0;                  // histogram
    double sum = 0, min = 0, max = 0;         // histogram (min and max of what was recorded, when count > 0)
};

class MetricData {
public:
    std::string name;
    std::string description;
    std::string unit;  // UCUM, as OpenTelemetry writes it: "s", "{token}", "1"
    InstrumentKind kind = InstrumentKind::counter;
    std::vector<double> bounds;  // histogram: bucket upper bounds, increasing
    std::vector<MetricPoint> points;
};

class MetricsSnapshot {
public:
    std::string scope;  // the instrumentation scope's name
    std::int64_t start_ns = 0;  // when the Meter was made (since the Unix epoch): the start of every cumulative value
    std::int64_t time_ns = 0;   // when collected
    std::vector<MetricData> metrics;
};

namespace detail {
class Instrument;
class GaugeEntry;
}  // namespace detail

// Records into a histogram; copies share it. An empty one (default-constructed) records nothing.
class Histogram {
public:
    Histogram() = default;
    void record(double value, MetricAttributes attributes = {}) const;
    void record(double value, std::span<MetricAttributeView> attributes) const;

private:
    friend class Meter;
    explicit Histogram(std::shared_ptr<detail::Instrument> i) : instrument_(std::move(i)) {}
    std::shared_ptr<detail::Instrument> instrument_;
};

// Adds to a counter (only non-negative amounts; a negative one is ignored) or an up-down counter.
class Counter {
public:
    Counter() = default;
    void add(double amount, MetricAttributes attributes = {}) const;

private:
    friend class Meter;
    explicit Counter(std::shared_ptr<detail::Instrument> i) : instrument_(std::move(i)) {}
    std::shared_ptr<detail::Instrument> instrument_;
};

// A gauge's callback stays registered while this lives (move-only): destroy it before what the callback reads.
class GaugeRegistration {
public:
    GaugeRegistration() = default;
    GaugeRegistration(GaugeRegistration&&) noexcept = default;
    GaugeRegistration& operator=(GaugeRegistration&& other) noexcept;
    GaugeRegistration(const GaugeRegistration&) = delete;
    GaugeRegistration& operator=(const GaugeRegistration&) = delete;
    ~GaugeRegistration();

private:
    friend class Meter;
    std::shared_ptr<detail::GaugeEntry> entry_;
};

class Meter {
public:
    // `scope` names the instrumentation scope; ADK Python's is "gcp.vertex.agent".
    explicit Meter(std::string scope = "gcp.vertex.agent", std::size_t max_series = 2000);
    ~Meter();
    Meter(const Meter&) = delete;
    Meter& operator=(const Meter&) = delete;

    // The instrument of that name, made on first use; asking again with the same name gives the same one (its
    // first description, unit and bounds stay). Throws adk::Error (invalid_argument) when the name is taken by
    // another kind, or is not an OpenTelemetry instrument name ([A-Za-z][A-Za-z0-9_./-]{0,254}).
    Histogram histogram(std::string_view name, std::string_view unit, std::string_view description,
                        std::vector<double> bounds);
    Counter counter(std::string_view name, std::string_view unit, std::string_view description);
    Counter up_down_counter(std::string_view name, std::string_view unit, std::string_view description);
    // A value read when collected, by `observe` (called from the collecting thread: it must be thread-safe). Several
    // registrations may share a name (each with its own attributes); the series goes when its registration does.
    [[nodiscard]] GaugeRegistration gauge(std::string_view name, std::string_view unit, std::string_view description,
                                          std::function<double()> observe, MetricAttributes attributes = {});

    // What every instrument holds now, in the order they were made; series in attribute order.
    MetricsSnapshot collect() const;

    class Impl;

private:
    std::shared_ptr<Impl> impl_;
};

// ADK's metrics, from the spans of its runs (a SpanSink: give it to the Tracer). As ADK Python 2.x names them,
// under the GenAI conventions:
//   gen_ai.client.operation.duration (s)    a model call (generate_content): gen_ai.operation.name,
//                                           gen_ai.request.model, gen_ai.response.model, error.type
//   gen_ai.client.token.usage ({token})     its tokens, gen_ai.token.type input or output
//   gen_ai.invoke_agent.duration (s)        an agent's run: gen_ai.agent.name, error.type
//   gen_ai.execute_tool.duration (s)        a tool's: gen_ai.tool.name, error.type
//   gen_ai.invoke_agent.inference_calls (1) model calls of one agent run: gen_ai.agent.name
//   gen_ai.invoke_agent.tool_calls (1)      tool calls of one agent run: gen_ai.agent.name
// and the runtime's own:
//   adk.invocations.active ({invocation})   invocations running now
//   adk.invocation.duration (s)             a whole invocation: adk.app.name, error.type
class GenAiMetrics final : public SpanSink {
public:
    explicit GenAiMetrics(std::shared_ptr<Meter> meter);
    ~GenAiMetrics() override;

    void on_start(const SpanData& span) override;
    void on_end(const SpanData& span) override;
    bool wants_unsampled() const noexcept override { return true; }

    const std::shared_ptr<Meter>& meter() const noexcept;

private:
    class Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace adk::telemetry
