#include <adk/telemetry/metrics.hpp>

#include <adk/core/error.hpp>
#include <adk/core/utf8.hpp>

#include "unix_time.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>

namespace adk::telemetry {

namespace {

bool valid_instrument_name(std::string_view name) noexcept
{
    if (name.empty() || name.size() > 255)
        return false;
    const auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
    if (!alpha(name[0]))
        return false;
    return std::all_of(name.begin(), name.end(), [&](char c) {
        return alpha(c) || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '/' || c == '-';
    });
}

template <class Attributes>
void sort_attributes(Attributes& attributes)
{
    std::sort(attributes.begin(), attributes.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
}

// Attribute sets in order, pair by pair, whether held as strings or as views (the series' map looks views up).
class AttributesLess {
public:
    using is_transparent = void;
    template <class A, class B>
    bool operator()(const A& a, const B& b) const
    {
        return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
            const int keys = std::string_view(x.first).compare(y.first);
            return keys != 0 ? keys < 0 : std::string_view(x.second) < std::string_view(y.second);
        });
    }
};


const MetricAttributes& overflow_attributes()
{
    static const MetricAttributes attributes{{"otel.metric.overflow", "true"}};
    return attributes;
}

}  // namespace

namespace detail {

class Instrument {
public:
    Instrument(std::string name, std::string unit, std::string description, InstrumentKind kind,
               std::vector<double> bounds, std::size_t max_series)
        : name_(std::move(name)), unit_(std::move(unit)), description_(std::move(description)), kind_(kind),
          bounds_(std::move(bounds)), max_series_(max_series)
    {
    }

    InstrumentKind kind() const noexcept { return kind_; }

    void record(double value, MetricAttributes attributes)
    {
        if (value != value)  // NaN: nothing to record
            return;
        for (auto& attribute : attributes)
            attribute.second.resize(utf8_prefix_size(attribute.second, max_metric_attribute_bytes));
        sort_attributes(attributes);
        std::lock_guard lock(mutex_);
        add(series(std::move(attributes)), value);
    }

    // The same, the attributes copied only for a series seen first.
    void record(double value, std::span<MetricAttributeView> attributes)
    {
        if (value != value)
            return;
        for (auto& attribute : attributes)
            attribute.second =
                attribute.second.substr(0, utf8_prefix_size(attribute.second, max_metric_attribute_bytes));
        sort_attributes(attributes);
        std::lock_guard lock(mutex_);
        if (auto it = series_.find(attributes); it != series_.end())
            return add(it->second, value);
        add(series(MetricAttributes(attributes.begin(), attributes.end())), value);
    }

    MetricData snapshot() const
    {
        MetricData out;
        out.name = name_;
        out.unit = unit_;
        out.description = description_;
        out.kind = kind_;
        out.bounds = bounds_;
        std::lock_guard lock(mutex_);
        out.points.reserve(series_.size());
        for (const auto& [attributes, point] : series_) {
            out.points.push_back(point);
            out.points.back().attributes = attributes;
        }
        return out;
    }

private:
    void add(MetricPoint& point, double value)
    {
        if (kind_ != InstrumentKind::histogram) {
            point.value += value;
            return;
        }
        const auto bucket = std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin();
        ++point.bucket_counts[static_cast<std::size_t>(bucket)];
        if (point.count == 0 || value < point.min)
            point.min = value;
        if (point.count == 0 || value > point.max)
            point.max = value;
        ++point.count;
        point.sum += value;
    }

    MetricPoint& series(MetricAttributes attributes)
    {
        auto it = series_.find(attributes);
        if (it != series_.end())
            return it->second;
        if (series_.size() >= max_series_)
            attributes = overflow_attributes();  // the limit's one extra series
        auto [slot, added] = series_.try_emplace(std::move(attributes));
        if (added && kind_ == InstrumentKind::histogram)
            slot->second.bucket_counts.assign(bounds_.size() + 1, 0);
        return slot->second;
    }

    const std::string name_, unit_, description_;
    const InstrumentKind kind_;
    const std::vector<double> bounds_;
    const std::size_t max_series_;
    mutable std::mutex mutex_;
    std::map<MetricAttributes, MetricPoint, AttributesLess> series_;
};

class GaugeEntry {
public:
    std::string name, unit, description;
    std::function<double()> observe;
    MetricAttributes attributes;
    std::weak_ptr<Meter::Impl> meter;
};

}  // namespace detail

class Meter::Impl {
public:
    std::string scope;
    std::size_t max_series = 0;
    std::int64_t start_ns = 0;
    mutable std::mutex mutex;
    std::vector<std::pair<std::string, std::shared_ptr<detail::Instrument>>> instruments;  // in order made
    std::vector<std::shared_ptr<detail::GaugeEntry>> gauges;                             // in order registered
    std::vector<std::string> gauge_order;  // gauge names, in the order first registered

    std::shared_ptr<detail::Instrument> instrument(std::string_view name, std::string_view unit,
                                                   std::string_view description, InstrumentKind kind,
                                                   std::vector<double> bounds)
    {
        if (!valid_instrument_name(name))
            throw Error(errc::invalid_argument,
                        "not an OpenTelemetry instrument name (a letter, then up to 254 of letters, digits, _ . / -): " +
                            std::string(name.substr(0, 64)));
        std::lock_guard lock(mutex);
        for (const auto& [existing, instrument] : instruments) {
            if (existing != name)
                continue;
            if (instrument->kind() != kind)
                throw Error(errc::invalid_argument,
                            "the instrument " + existing + " exists with another kind; give this one another name");
            return instrument;
        }
        if (std::find(gauge_order.begin(), gauge_order.end(), name) != gauge_order.end())
            throw Error(errc::invalid_argument,
                        "the instrument " + std::string(name) + " exists as a gauge; give this one another name");
        if (!std::is_sorted(bounds.begin(), bounds.end()) ||
            std::adjacent_find(bounds.begin(), bounds.end()) != bounds.end())
            throw Error(errc::invalid_argument,
                        "a histogram's bucket bounds must increase strictly: " + std::string(name));
        auto made = std::make_shared<detail::Instrument>(std::string(name), std::string(unit),
                                                         std::string(description), kind, std::move(bounds), max_series);
        instruments.emplace_back(std::string(name), made);
        return made;
    }
};

void Histogram::record(double value, MetricAttributes attributes) const
{
    if (instrument_)
        instrument_->record(value, std::move(attributes));
}

void Histogram::record(double value, std::span<MetricAttributeView> attributes) const
{
    if (instrument_)
        instrument_->record(value, attributes);
}

void Counter::add(double amount, MetricAttributes attributes) const
{
    if (!instrument_)
        return;
    if (instrument_->kind() == InstrumentKind::counter && !(amount >= 0))
        return;
    instrument_->record(amount, std::move(attributes));
}

GaugeRegistration& GaugeRegistration::operator=(GaugeRegistration&& other) noexcept
{
    if (this != &other) {
        GaugeRegistration old(std::move(*this));
        entry_ = std::move(other.entry_);
    }
    return *this;
}

GaugeRegistration::~GaugeRegistration()
{
    if (!entry_)
        return;
    if (auto meter = entry_->meter.lock()) {
        std::lock_guard lock(meter->mutex);
        std::erase(meter->gauges, entry_);
    }
}

Meter::Meter(std::string scope, std::size_t max_series) : impl_(std::make_shared<Impl>())
{
    impl_->scope = std::move(scope);
    impl_->max_series = std::max<std::size_t>(max_series, 1);
    impl_->start_ns = unix_time_ns();
}

Meter::~Meter() = default;

Histogram Meter::histogram(std::string_view name, std::string_view unit, std::string_view description,
                           std::vector<double> bounds)
{
    return Histogram(impl_->instrument(name, unit, description, InstrumentKind::histogram, std::move(bounds)));
}

Counter Meter::counter(std::string_view name, std::string_view unit, std::string_view description)
{
    return Counter(impl_->instrument(name, unit, description, InstrumentKind::counter, {}));
}

Counter Meter::up_down_counter(std::string_view name, std::string_view unit, std::string_view description)
{
    return Counter(impl_->instrument(name, unit, description, InstrumentKind::up_down_counter, {}));
}

GaugeRegistration Meter::gauge(std::string_view name, std::string_view unit, std::string_view description,
                               std::function<double()> observe, MetricAttributes attributes)
{
    if (!valid_instrument_name(name))
        throw Error(errc::invalid_argument, "not an OpenTelemetry instrument name: " + std::string(name.substr(0, 64)));
    if (!observe)
        throw Error(errc::invalid_argument, "a gauge needs a callback: " + std::string(name));
    auto entry = std::make_shared<detail::GaugeEntry>();
    entry->name = std::string(name);
    entry->unit = std::string(unit);
    entry->description = std::string(description);
    entry->observe = std::move(observe);
    sort_attributes(attributes);
    entry->attributes = std::move(attributes);
    entry->meter = impl_;
    {
        std::lock_guard lock(impl_->mutex);
        for (const auto& [existing, instrument] : impl_->instruments)
            if (existing == name)
                throw Error(errc::invalid_argument,
                            "the instrument " + existing + " exists with another kind; give the gauge another name");
        if (std::find(impl_->gauge_order.begin(), impl_->gauge_order.end(), name) == impl_->gauge_order.end())
            impl_->gauge_order.push_back(entry->name);
        impl_->gauges.push_back(entry);
    }
    GaugeRegistration out;
    out.entry_ = std::move(entry);
    return out;
}

MetricsSnapshot Meter::collect() const
{
    MetricsSnapshot out;
    out.scope = impl_->scope;
    out.start_ns = impl_->start_ns;
    std::vector<std::shared_ptr<detail::Instrument>> instruments;
    std::vector<std::shared_ptr<detail::GaugeEntry>> gauges;
    std::vector<std::string> gauge_order;
    {
        std::lock_guard lock(impl_->mutex);
        for (const auto& [name, instrument] : impl_->instruments)
            instruments.push_back(instrument);
        gauges = impl_->gauges;
        gauge_order = impl_->gauge_order;
    }
    for (const auto& instrument : instruments)
        out.metrics.push_back(instrument->snapshot());
    // Callbacks run outside the Meter's lock: one may read something that records.
    for (const std::string& name : gauge_order) {
        MetricData data;
        data.kind = InstrumentKind::gauge;
        for (const auto& entry : gauges) {
            if (entry->name != name)
                continue;
            if (data.name.empty()) {
                data.name = entry->name;
                data.unit = entry->unit;
                data.description = entry->description;
            }
            MetricPoint point;
            point.attributes = entry->attributes;
            point.value = entry->observe();
            data.points.push_back(std::move(point));
        }
        if (data.points.empty())
            continue;
        std::sort(data.points.begin(), data.points.end(),
                  [](const MetricPoint& a, const MetricPoint& b) { return a.attributes < b.attributes; });
        out.metrics.push_back(std::move(data));
    }
    out.time_ns = unix_time_ns();
    return out;
}

// GenAiMetrics

namespace {

// Bucket bounds as ADK Python and the GenAI conventions advise.
std::vector<double> doubling(double first, int count)
{
    std::vector<double> out;
    for (int i = 0; i < count; ++i)
        out.push_back(first * static_cast<double>(std::int64_t{1} << i));
    return out;
}

// A view of the span's string attribute (empty when it has none).
std::string_view string_attribute(const SpanData& span, std::string_view key)
{
    if (const AttributeValue* v = span.find(key))
        if (const auto* s = std::get_if<std::string>(v))
            return *s;
    return {};
}

std::optional<std::int64_t> int_attribute(const SpanData& span, std::string_view key)
{
    if (const AttributeValue* v = span.find(key))
        if (const auto* i = std::get_if<std::int64_t>(v))
            return *i;
    return std::nullopt;
}

double seconds(const SpanData& span)
{
    return static_cast<double>(std::max<std::int64_t>(span.end_ns - span.start_ns, 0)) / 1e9;
}

bool starts_with(std::string_view s, std::string_view prefix)
{
    return s.substr(0, prefix.size()) == prefix;
}

// A span's metric attributes: a few views of its own strings, on the stack.
class Attributes {
public:
    Attributes() = default;
    Attributes(std::string_view key, std::string_view value) { add(key, value); }
    void add(std::string_view key, std::string_view value) { items_[size_++] = {key, value}; }
    // error.type when the span failed; nothing else.
    void add_error(const SpanData& span)
    {
        if (span.status != StatusCode::error)
            return;
        const std::string_view type = string_attribute(span, "error.type");
        add("error.type", type.empty() ? "_OTHER" : type);
    }
    std::span<MetricAttributeView> span() noexcept { return {items_.data(), size_}; }

private:
    std::array<MetricAttributeView, 6> items_{};  // the most on_end sets is five
    std::size_t size_ = 0;
};

class CallCounts {
public:
    std::int64_t inference = 0;
    std::int64_t tools = 0;
};

struct SpanIdHash {
    std::size_t operator()(const SpanId& id) const noexcept
    {
        std::size_t h = 0;
        for (std::uint8_t b : id)
            h = h * 131 + b;
        return h;
    }
};

}  // namespace

class GenAiMetrics::Impl {
public:
    explicit Impl(std::shared_ptr<Meter> m) : meter(std::move(m))
    {
        operation_duration = meter->histogram("gen_ai.client.operation.duration", "s", "GenAI operation duration.",
                                              doubling(0.01, 14));
        token_usage = meter->histogram("gen_ai.client.token.usage", "{token}", "Number of input and output tokens used.",
                                       [] {
                                           std::vector<double> out;
                                           for (double b = 1; b <= 67108864; b *= 4)
                                               out.push_back(b);
                                           return out;
                                       }());
        agent_duration = meter->histogram("gen_ai.invoke_agent.duration", "s", "Duration of an agent's run.",
                                          doubling(0.1, 13));
        tool_duration =
            meter->histogram("gen_ai.execute_tool.duration", "s", "Duration of a tool's execution.", doubling(0.01, 14));
        inference_calls = meter->histogram("gen_ai.invoke_agent.inference_calls", "1",
                                           "Model calls made in one agent run.", {0, 1, 2, 4, 8, 16, 32, 64});
        tool_calls = meter->histogram("gen_ai.invoke_agent.tool_calls", "1", "Tool calls made in one agent run.",
                                      {0, 1, 2, 4, 8, 16, 32, 64});
        active = meter->up_down_counter("adk.invocations.active", "{invocation}", "Invocations running now.");
        invocation_duration = meter->histogram("adk.invocation.duration", "s", "Duration of a whole invocation.",
                                               doubling(0.1, 13));
    }

    std::shared_ptr<Meter> meter;
    Histogram operation_duration, token_usage, agent_duration, tool_duration, inference_calls, tool_calls,
        invocation_duration;
    Counter active;

    // Model and tool calls counted per open agent span (its span id), until that span ends. Children end before
    // their parent, so an entry lives no longer than its agent's run.
    std::mutex mutex;
    std::unordered_map<SpanId, CallCounts, SpanIdHash> counts;

    void count_call(const SpanData& span, bool inference)
    {
        if (!span.has_parent())
            return;
        std::lock_guard lock(mutex);
        CallCounts& c = counts[span.parent_span_id];
        (inference ? c.inference : c.tools) += 1;
    }

    CallCounts take_counts(const SpanId& id)
    {
        std::lock_guard lock(mutex);
        auto it = counts.find(id);
        if (it == counts.end())
            return {};
        CallCounts out = it->second;
        counts.erase(it);
        return out;
    }
};

GenAiMetrics::GenAiMetrics(std::shared_ptr<Meter> meter)
{
    if (!meter)
        throw Error(errc::invalid_argument, "GenAiMetrics needs a Meter");
    impl_ = std::make_unique<Impl>(std::move(meter));
}

GenAiMetrics::~GenAiMetrics() = default;

const std::shared_ptr<Meter>& GenAiMetrics::meter() const noexcept
{
    return impl_->meter;
}

void GenAiMetrics::on_start(const SpanData& span)
{
    if (span.name == "invocation")
        impl_->active.add(1);
}

void GenAiMetrics::on_end(const SpanData& span)
{
    const std::string_view operation = string_attribute(span, "gen_ai.operation.name");
    if (span.name == "invocation") {
        impl_->active.add(-1);
        Attributes attributes;
        if (span.owner)
            attributes.add("adk.app.name", span.owner->app_name);
        attributes.add_error(span);
        impl_->invocation_duration.record(seconds(span), attributes.span());
        return;
    }
    if (span.name == "call_llm") {
        impl_->count_call(span, true);
        return;
    }
    if (operation == "generate_content" || starts_with(span.name, "generate_content ")) {
        Attributes attributes("gen_ai.operation.name", "generate_content");
        if (std::string_view model = string_attribute(span, "gen_ai.request.model"); !model.empty())
            attributes.add("gen_ai.request.model", model);
        if (std::string_view model = string_attribute(span, "gen_ai.response.model"); !model.empty())
            attributes.add("gen_ai.response.model", model);
        const Attributes tokens = attributes;
        attributes.add_error(span);
        impl_->operation_duration.record(seconds(span), attributes.span());
        for (const auto& [key, type] : {std::pair{"gen_ai.usage.input_tokens", "input"},
                                        std::pair{"gen_ai.usage.output_tokens", "output"}}) {
            if (auto n = int_attribute(span, key)) {
                Attributes with_type = tokens;
                with_type.add("gen_ai.token.type", type);
                impl_->token_usage.record(static_cast<double>(*n), with_type.span());
            }
        }
        return;
    }
    if (operation == "execute_tool") {
        impl_->count_call(span, false);
        Attributes attributes("gen_ai.tool.name", string_attribute(span, "gen_ai.tool.name"));
        attributes.add_error(span);
        impl_->tool_duration.record(seconds(span), attributes.span());
        return;
    }
    if (operation == "invoke_agent") {
        const std::string_view agent = string_attribute(span, "gen_ai.agent.name");
        const CallCounts calls = impl_->take_counts(span.context.span_id);
        Attributes attributes("gen_ai.agent.name", agent);
        attributes.add_error(span);
        impl_->agent_duration.record(seconds(span), attributes.span());
        Attributes by_agent("gen_ai.agent.name", agent);
        impl_->inference_calls.record(static_cast<double>(calls.inference), by_agent.span());
        impl_->tool_calls.record(static_cast<double>(calls.tools), by_agent.span());
    }
}

}  // namespace adk::telemetry
