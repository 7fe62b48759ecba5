// W3C trace context as a request carries it (adk/telemetry/tracer.hpp): the input is a traceparent header, a line
// feed, and a tracestate header. Whatever is accepted writes back to a form that reads again to the same context, and
// nothing but an accepted form passes a traceparent on.
#include <adk/telemetry/tracer.hpp>

#include "fuzz.hpp"

#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const auto newline = input.find('\n');
    const std::string_view parent = input.substr(0, newline);
    const std::string_view state = newline == std::string_view::npos ? std::string_view() : input.substr(newline + 1);
    const auto context = adk::telemetry::SpanContext::parse(parent, state);
    if (!context)
        return 0;
    adk::fuzz::check(context->valid(), "an accepted traceparent has both ids");
    const std::string written = context->traceparent();
    adk::fuzz::check(written.size() == 55, "a traceparent is written in 55 characters");
    adk::fuzz::check(context->trace_state.size() <= 512, "a tracestate kept is at most 512 bytes");
    const auto again = adk::telemetry::SpanContext::parse(written, context->trace_state);
    adk::fuzz::check(again.has_value(), "what is written reads again");
    adk::fuzz::check(again->trace_id == context->trace_id && again->span_id == context->span_id &&
                         again->flags == context->flags && again->trace_state == context->trace_state,
                     "what is written reads again to the same context");
    return 0;
}
