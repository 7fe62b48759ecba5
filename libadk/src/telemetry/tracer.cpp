#include <adk/telemetry/tracer.hpp>

#include <adk/core/ids.hpp>
#include <adk/core/log.hpp>

#include "unix_time.hpp"

#include <algorithm>
#include <cstring>
#include <exception>
#include <string_view>
#include <utility>

namespace adk::telemetry {

namespace {

constexpr char hex_digits[] = "0123456789abcdef";

template <std::size_t N>
std::string hex_of(const std::array<std::uint8_t, N>& bytes)
{
    std::string out(2 * N, '0');
    for (std::size_t i = 0; i < N; ++i) {
        out[2 * i] = hex_digits[bytes[i] >> 4];
        out[2 * i + 1] = hex_digits[bytes[i] & 0xF];
    }
    return out;
}

int lower_hex_value(char c) noexcept
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

// Reads 2*N lower-case hex digits into `out`; false on any other character.
template <std::size_t N>
bool read_hex(std::string_view text, std::array<std::uint8_t, N>& out) noexcept
{
    if (text.size() != 2 * N)
        return false;
    for (std::size_t i = 0; i < N; ++i) {
        const int high = lower_hex_value(text[2 * i]);
        const int low = lower_hex_value(text[2 * i + 1]);
        if (high < 0 || low < 0)
            return false;
        out[i] = static_cast<std::uint8_t>(high * 16 + low);
    }
    return true;
}

template <std::size_t N>
bool all_zero(const std::array<std::uint8_t, N>& bytes) noexcept
{
    return std::all_of(bytes.begin(), bytes.end(), [](std::uint8_t b) { return b == 0; });
}

// A tracestate list member: key "=" value, as W3C Trace Context's grammar allows them (simple or multi-tenant keys;
// values of printable ASCII without ',' and '=' that do not end in a space).
bool valid_trace_state_member(std::string_view member) noexcept
{
    const auto eq = member.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq > 256)
        return false;
    const std::string_view key = member.substr(0, eq);
    const std::string_view value = member.substr(eq + 1);
    if (!(key[0] >= 'a' && key[0] <= 'z') && !(key[0] >= '0' && key[0] <= '9'))
        return false;
    std::size_t ats = 0;
    for (char c : key) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '*' ||
                        c == '/' || c == '@';
        if (!ok)
            return false;
        ats += c == '@';
    }
    if (ats > 1 || value.empty() || value.size() > 256 || value.back() == ' ')
        return false;
    for (char c : value)
        if (c < 0x20 || c > 0x7E || c == ',' || c == '=')
            return false;
    return true;
}

// The tracestate header checked, its members' surrounding blanks and empty members removed; empty when it breaks a
// rule (the spec: a vendor then drops the whole header).
std::string checked_trace_state(std::string_view header)
{
    constexpr std::size_t max_bytes = 512;
    constexpr std::size_t max_members = 32;
    if (header.size() > max_bytes)
        return {};
    std::string out;
    std::size_t members = 0;
    while (!header.empty()) {
        const auto comma = header.find(',');
        std::string_view member = header.substr(0, comma);
        header = comma == std::string_view::npos ? std::string_view() : header.substr(comma + 1);
        while (!member.empty() && (member.front() == ' ' || member.front() == '\t'))
            member.remove_prefix(1);
        while (!member.empty() && (member.back() == ' ' || member.back() == '\t'))
            member.remove_suffix(1);
        if (member.empty())
            continue;
        if (!valid_trace_state_member(member) || ++members > max_members)
            return {};
        if (!out.empty())
            out += ',';
        out += member;
    }
    return out;
}

// A span's attributes get room when the first is set: for 8 at first (an agent's span sets 5), then as the vector
// grows (a model call's span sets 10 to 18). A span that sets none (the invocation's) holds none: the spans of a
// model's stream stay open as long as it does, and reserving 16 for each held 4 KiB per stream (massif, 100 paced
// streams).
constexpr std::size_t first_attributes = 8;

// Calls each sink that sees this span (an unsampled span only reaches the sinks that ask for it); a sink that
// throws is logged and the others still get the span.
template <class Call>
void for_each_sink(const std::vector<std::shared_ptr<SpanSink>>& sinks, bool sampled, std::string_view failure,
                   Call call)
{
    for (const auto& sink : sinks) {
        if (!sampled && !sink->wants_unsampled())
            continue;
        try {
            call(*sink);
        } catch (const std::exception& e) {
            log(LogLevel::warning, std::string(failure) + e.what());
        }
    }
}

// Whether a trace with this id is in a `ratio` sample: its last 8 bytes read as a number, below ratio * 2^64 (the
// same id gives the same answer in every process that reads it so).
bool in_ratio(const TraceId& id, double ratio) noexcept
{
    if (ratio >= 1.0)
        return true;
    if (!(ratio > 0.0))
        return false;
    std::uint64_t low = 0;
    for (std::size_t i = 8; i < 16; ++i)
        low = (low << 8) | id[i];
    return static_cast<double>(low) < ratio * 18446744073709551616.0;
}

bool sample(const TracerOptions& options, const SpanContext& parent, const TraceId& trace_id) noexcept
{
    const bool has_parent = parent.valid();
    switch (options.sampler) {
    case Sampler::always_on: return true;
    case Sampler::always_off: return false;
    case Sampler::trace_id_ratio: return in_ratio(trace_id, options.ratio);
    case Sampler::parent_based_always_on: return has_parent ? parent.sampled() : true;
    case Sampler::parent_based_always_off: return has_parent ? parent.sampled() : false;
    case Sampler::parent_based_trace_id_ratio: return has_parent ? parent.sampled() : in_ratio(trace_id, options.ratio);
    }
    return true;
}

}  // namespace

std::string to_hex(const TraceId& id)
{
    return hex_of(id);
}

std::string to_hex(const SpanId& id)
{
    return hex_of(id);
}

bool SpanContext::valid() const noexcept
{
    return !all_zero(trace_id) && !all_zero(span_id);
}

std::string SpanContext::traceparent() const
{
    if (!valid())
        return {};
    std::string out = "00-";
    out += hex_of(trace_id);
    out += '-';
    out += hex_of(span_id);
    out += '-';
    out += hex_digits[flags >> 4];
    out += hex_digits[flags & 0xF];
    return out;
}

std::optional<SpanContext> SpanContext::parse(std::string_view traceparent, std::string_view tracestate)
{
    // version "-" trace-id "-" parent-id "-" trace-flags: 2 + 1 + 32 + 1 + 16 + 1 + 2 = 55 characters.
    constexpr std::size_t length = 55;
    if (traceparent.size() < length)
        return std::nullopt;
    std::array<std::uint8_t, 1> version{};
    if (!read_hex(traceparent.substr(0, 2), version) || version[0] == 0xFF)
        return std::nullopt;
    if (version[0] == 0 ? traceparent.size() != length : (traceparent.size() > length && traceparent[length] != '-'))
        return std::nullopt;
    if (traceparent[2] != '-' || traceparent[35] != '-' || traceparent[52] != '-')
        return std::nullopt;
    SpanContext out;
    std::array<std::uint8_t, 1> flags{};
    if (!read_hex(traceparent.substr(3, 32), out.trace_id) || !read_hex(traceparent.substr(36, 16), out.span_id) ||
        !read_hex(traceparent.substr(53, 2), flags))
        return std::nullopt;
    if (!out.valid())
        return std::nullopt;
    out.flags = static_cast<std::uint8_t>(flags[0] & 1);  // the only flag defined: the others are not passed on
    out.trace_state = checked_trace_state(tracestate);
    out.remote = true;
    return out;
}

bool SpanData::has_parent() const noexcept
{
    return !all_zero(parent_span_id);
}

const AttributeValue* SpanData::find(std::string_view key) const noexcept
{
    for (const Attribute& a : attributes)
        if (a.key == key)
            return &a.value;
    return nullptr;
}

Tracer::Tracer(std::vector<std::shared_ptr<SpanSink>> sinks, TracerOptions options)
    : sinks_(std::move(sinks)), options_(options)
{
    sinks_.erase(std::remove(sinks_.begin(), sinks_.end(), nullptr), sinks_.end());
    captures_content_ = std::any_of(sinks_.begin(), sinks_.end(), [](const auto& s) { return s->wants_content(); });
    records_unsampled_ =
        std::any_of(sinks_.begin(), sinks_.end(), [](const auto& s) { return s->wants_unsampled(); });
}

Span Tracer::start(std::string name, const SpanContext& parent, std::shared_ptr<const SpanOwner> owner,
                   SpanKind kind) const
{
    if (sinks_.empty())
        return Span(parent);
    SpanContext context;
    if (parent.valid()) {
        context.trace_id = parent.trace_id;
        context.trace_state = parent.trace_state;
    } else {
        random_bytes(context.trace_id.data(), context.trace_id.size());
    }
    random_bytes(context.span_id.data(), context.span_id.size());
    const bool sampled = sample(options_, parent, context.trace_id);
    context.flags = sampled ? 1 : 0;
    Span span(std::move(context));
    if (!sampled && !records_unsampled_)
        return span;  // its context goes on, so that what it calls knows the trace is not sampled
    span.tracer_ = this;
    span.data_ = std::make_unique<SpanData>();
    SpanData& data = *span.data_;
    data.name = std::move(name);
    data.context = span.context_;
    if (parent.valid()) {
        data.parent_span_id = parent.span_id;
        data.parent_remote = parent.remote;
    }
    data.kind = kind;
    data.owner = std::move(owner);
    data.start_ns = unix_time_ns();
    for_each_sink(sinks_, sampled, "a span sink failed on a span's start: ",
                  [&](SpanSink& sink) { sink.on_start(data); });
    return span;
}

void Tracer::finish(SpanData& span) const
{
    for_each_sink(sinks_, span.context.sampled(), "a span sink failed and lost a span: ",
                  [&](SpanSink& sink) { sink.on_end(span); });
}

Span::Span(Span&& other) noexcept
    : tracer_(std::exchange(other.tracer_, nullptr)), data_(std::move(other.data_)), context_(std::move(other.context_))
{
}

Span& Span::operator=(Span&& other) noexcept
{
    if (this != &other) {
        end();
        tracer_ = std::exchange(other.tracer_, nullptr);
        data_ = std::move(other.data_);
        context_ = std::move(other.context_);
    }
    return *this;
}

bool Span::captures_content() const noexcept
{
    return data_ && data_->context.sampled() && tracer_->captures_content();
}

namespace {

// The attribute of that name, added (empty) when the span has none yet.
Attribute& attribute_named(std::vector<Attribute>& attributes, std::string_view key)
{
    for (Attribute& a : attributes)
        if (a.key == key)
            return a;
    if (attributes.capacity() == 0)
        attributes.reserve(first_attributes);
    Attribute& added = attributes.emplace_back();
    added.key = key;
    return added;
}

}  // namespace

void Span::set(AttributeKey key, AttributeValue value)
{
    if (!data_)
        return;
    Attribute& a = attribute_named(data_->attributes, key.name());
    a.value = std::move(value);
    a.content = false;
}

void Span::set_content(AttributeKey key, std::string value)
{
    if (!captures_content())
        return;
    Attribute& a = attribute_named(data_->attributes, key.name());
    a.value = std::move(value);
    a.content = true;
}

void Span::set_error(std::string type, std::string message)
{
    if (!data_)
        return;
    set("error.type", std::move(type));
    data_->status = StatusCode::error;
    data_->status_message = std::move(message);
}

void Span::end() noexcept
{
    if (!data_)
        return;
    std::unique_ptr<SpanData> data = std::move(data_);
    data->end_ns = unix_time_ns();
    tracer_->finish(*data);
}

}  // namespace adk::telemetry
