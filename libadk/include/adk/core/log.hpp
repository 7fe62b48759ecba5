// Diagnostics that are neither events nor errors: an HTTP retry, a dropped pooled connection.
//
// By default warnings and errors go to standard error, one line each; ADK_LOG_LEVEL (debug, info, warning,
// error, off) changes the threshold. ADK_LOG_FORMAT=json (or set_log_format) writes each as one JSON object per
// line for log shippers: {"timestamp", "level", "logger": "adk", "message"}, and "trace_id" and "span_id" when the
// message was written inside a span (log() given its SpanContext). A program routes them elsewhere with
// set_log_handler (which receives the message without the ids).
#pragma once

#include <functional>
#include <string_view>

namespace adk {

enum class LogLevel { debug, info, warning, error, off };

using LogHandler = std::function<void(LogLevel, std::string_view message)>;

enum class LogFormat { text, json };

namespace telemetry {
class SpanContext;
}

// Replaces the handler (an empty handler restores the default). Safe from any thread.
void set_log_handler(LogHandler handler);
void set_log_level(LogLevel level);
bool log_enabled(LogLevel level) noexcept;

// Delivers one message to the handler when `level` is at or above the threshold. Safe from any thread.
void log(LogLevel level, std::string_view message);
// The same, written inside `span` (an invocation's, an agent's, a tool's: InvocationContext::span_context()): its
// trace and span ids go with the message when valid.
void log(LogLevel level, std::string_view message, const telemetry::SpanContext& span);

// How the default handler writes: text ("adk warning: ...", the ids appended) or JSON lines. Safe from any thread.
void set_log_format(LogFormat format);

}  // namespace adk
