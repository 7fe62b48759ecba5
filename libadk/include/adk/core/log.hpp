// Diagnostics that are neither events nor errors: an HTTP retry, a dropped pooled connection.
//
// By default warnings and errors go to standard error, one line each; ADK_LOG_LEVEL (debug, info, warning,
// error, off) changes the threshold. A program routes them elsewhere with set_log_handler.
#pragma once

#include <functional>
#include <string_view>

namespace adk {

enum class LogLevel { debug, info, warning, error, off };

using LogHandler = std::function<void(LogLevel, std::string_view message)>;

// Replaces the handler (an empty handler restores the default). Safe from any thread.
void set_log_handler(LogHandler handler);
void set_log_level(LogLevel level);
bool log_enabled(LogLevel level) noexcept;

// Delivers one message to the handler when `level` is at or above the threshold. Safe from any thread.
void log(LogLevel level, std::string_view message);

}  // namespace adk
