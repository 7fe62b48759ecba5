// How libadk nests its spans, and records a failure on the span of what failed (adk/telemetry/tracer.hpp).
#pragma once

#include <adk/telemetry/tracer.hpp>

#include <exception>
#include <string>

namespace adk::detail {

// `error.type` of a failure: the adk::errc's name ("cancelled", "bad_response", ...), else "<category>.<value>" of
// its error code, else the exception's kind.
std::string error_type(std::exception_ptr failure);

// Whether `span` has a context of its own (sampled or not), not only its parent's passed on: what runs inside it
// then takes it as parent, so that a trace keeps one id, and one sampling decision, from its root down.
inline bool has_own_context(const telemetry::Span& span, const telemetry::SpanContext& parent) noexcept
{
    return span.context().valid() && span.context().span_id != parent.span_id;
}

// Marks the span failed (status error, error.type, the message as the status' description) when it records.
void record_failure(telemetry::Span& span, std::exception_ptr failure);

}  // namespace adk::detail
