// Telemetry: spans of an invocation, its agents, model calls and tools, handed to the sinks a Tracer has.
//
// DESIGN: a span is a scope. `Span` is move-only and ends when it is destroyed, so a span ends on every path out of
// what it measures (returned, threw, cancelled, paused); a failure is recorded with set_error() before the scope
// unwinds. The contexts carry the current span's SpanContext (InvocationContext::span_context()), so that a child's
// parent is its real caller: an agent's span is the parent of its model calls and tools, and of the agents it runs.
// A Tracer without sinks records nothing and starts no span: a Span it returns only passes its parent's context on
// (to the traceparent header of what the call reaches), so tracing off costs a branch per span.
//
// Sinks see each finished span once, on whatever thread ended it (and, if they ask, its start: on_start), sampled
// spans only unless they ask for all (wants_unsampled). The web UI's trace view is one sink (adk::server), OTLP
// export another (adk::otel), ADK's metrics a third (GenAiMetrics, adk/telemetry/metrics.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace adk::telemetry {

using TraceId = std::array<std::uint8_t, 16>;
using SpanId = std::array<std::uint8_t, 8>;

// Lower-case hex of an id: 32 digits for a trace, 16 for a span.
std::string to_hex(const TraceId& id);
std::string to_hex(const SpanId& id);

// W3C Trace Context (https://www.w3.org/TR/trace-context/): which trace a span belongs to, its id, and whether the
// trace is sampled. What a child span takes as its parent, and what a request carries as `traceparent`.
class SpanContext {
public:
    TraceId trace_id{};
    SpanId span_id{};
    std::uint8_t flags = 0;   // bit 0: sampled
    std::string trace_state;  // `tracestate`, passed on as it came (checked and bounded when parsed)
    bool remote = false;      // it came in a request: the span made under it is the first of this process

    // Both ids set (the W3C form forbids all-zero ids).
    bool valid() const noexcept;
    bool sampled() const noexcept { return (flags & 1) != 0; }
    // "00-<trace id>-<span id>-<flags>", or empty when not valid().
    std::string traceparent() const;
    // Reads `traceparent` (and `tracestate`) as a request carries them. nullopt for anything else than version 00
    // of the form (or a later version's first 55 characters followed by '-' and more, as the spec asks), zero
    // ids, or upper-case hex: the request then starts a trace of its own. A `tracestate` past 512 bytes, with
    // more than 32 members or with a member that is not key=value of the allowed characters is dropped.
    static std::optional<SpanContext> parse(std::string_view traceparent, std::string_view tracestate = {});
};

using AttributeValue = std::variant<bool, std::int64_t, double, std::string, std::vector<std::string>>;

// An attribute's name as Span::set takes it: a constant (a string literal, or a constexpr std::string_view), checked
// at compile time, so that a span keeps a view of it and setting an attribute allocates nothing for its name.
class AttributeKey {
public:
    consteval AttributeKey(const char* name) : name_(name) {}
    consteval AttributeKey(std::string_view name) : name_(name) {}
    constexpr std::string_view name() const noexcept { return name_; }

private:
    std::string_view name_;
};

class Attribute {
public:
    std::string_view key;  // a constant (AttributeKey): outlives every span
    AttributeValue value;
    // What a person said or a model answered (prompts, answers, tool arguments and results): recorded only when
    // a sink asks for content (SpanSink::wants_content); a sink that does not want it skips it.
    bool content = false;
};

enum class SpanKind { internal, server, client };
enum class StatusCode { unset, ok, error };

// Which app, user and session a span's invocation runs for. Not an attribute: a sink that keeps spans by session
// (the web UI's) reads it. Shared by the spans of an invocation.
class SpanOwner {
public:
    std::string app_name;
    std::string user_id;
    std::string session_id;
    std::string invocation_id;
};

class SpanData {
public:
    std::string name;
    SpanContext context;
    SpanId parent_span_id{};  // all zero for a root
    bool parent_remote = false;  // the parent is a caller's (a request's traceparent), not a span of this process
    SpanKind kind = SpanKind::internal;
    std::int64_t start_ns = 0;  // since the Unix epoch
    std::int64_t end_ns = 0;
    std::vector<Attribute> attributes;
    StatusCode status = StatusCode::unset;
    std::string status_message;
    std::shared_ptr<const SpanOwner> owner;  // null outside an invocation

    bool has_parent() const noexcept;
    // The attribute's value, or null.
    const AttributeValue* find(std::string_view key) const noexcept;
};

class SpanSink {
public:
    virtual ~SpanSink() = default;
    // A span just started (its name, context, parent, kind, owner and start time set; attributes come later), from
    // the thread that started it. Most sinks need only on_end; a metrics sink counts what is running.
    virtual void on_start(const SpanData& /*span*/) {}
    // A finished span, once, from the thread that ended it. Quick and thread-safe: runs on the agents' strands.
    virtual void on_end(const SpanData& span) = 0;
    // Whether it sees the spans the sampler left out too (context().sampled() false): metrics must count every
    // call, an exporter only the sampled ones (OpenTelemetry's RECORD_ONLY). Spans are then made for every call.
    virtual bool wants_unsampled() const noexcept { return false; }
    // Whether it keeps the content attributes (Attribute::content). The web UI's sink does; an exporter does when
    // OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT asks for it.
    virtual bool wants_content() const noexcept { return false; }
};

// OTEL_TRACES_SAMPLER's samplers.
enum class Sampler {
    always_on,
    always_off,
    trace_id_ratio,
    parent_based_always_on,  // the default
    parent_based_always_off,
    parent_based_trace_id_ratio,
};

class TracerOptions {
public:
    Sampler sampler = Sampler::parent_based_always_on;
    double ratio = 1.0;  // of the trace_id_ratio samplers, 0 to 1
};

class Span;

class Tracer {
public:
    explicit Tracer(std::vector<std::shared_ptr<SpanSink>> sinks = {}, TracerOptions options = {});

    // Has sinks: spans are made. Without, start() returns spans that only pass their parent's context on.
    bool recording() const noexcept { return !sinks_.empty(); }
    // A sink keeps content attributes: worth building them.
    bool captures_content() const noexcept { return captures_content_; }
    const std::vector<std::shared_ptr<SpanSink>>& sinks() const noexcept { return sinks_; }

    // A span under `parent` (a root when parent is not valid), sampled as the options say. The Tracer must outlive
    // it.
    Span start(std::string name, const SpanContext& parent, std::shared_ptr<const SpanOwner> owner = nullptr,
               SpanKind kind = SpanKind::internal) const;

private:
    friend class Span;
    void finish(SpanData& span) const;

    std::vector<std::shared_ptr<SpanSink>> sinks_;
    TracerOptions options_;
    bool captures_content_ = false;
    bool records_unsampled_ = false;
};

// One span, open from start() until end() or destruction.
class Span {
public:
    Span() = default;
    // Not recording: context() is `passed_on`.
    explicit Span(SpanContext passed_on) : context_(std::move(passed_on)) {}
    Span(Span&& other) noexcept;
    Span& operator=(Span&& other) noexcept;
    Span(const Span&) = delete;
    Span& operator=(const Span&) = delete;
    ~Span() { end(); }

    // Whether attributes set on it go anywhere.
    bool recording() const noexcept { return data_ != nullptr; }
    // Whether content attributes are worth building for it (recording, and a sink keeps content).
    bool captures_content() const noexcept;
    // Its own context when one was made (the parent of what runs inside it), else its parent's.
    const SpanContext& context() const noexcept { return context_; }

    // Sets (or replaces) an attribute. Nothing when not recording.
    void set(AttributeKey key, AttributeValue value);
    void set_content(AttributeKey key, std::string value);
    // Status error with `error.type` = type, and the message as the status' description.
    void set_error(std::string type, std::string message);
    // Ends it now (its end time); later calls and the destructor do nothing.
    void end() noexcept;

private:
    friend class Tracer;
    const Tracer* tracer_ = nullptr;
    std::unique_ptr<SpanData> data_;
    SpanContext context_;
};

}  // namespace adk::telemetry
