#include <adk/core/log.hpp>

#include <adk/telemetry/tracer.hpp>

#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <mutex>
#include <string>

namespace adk {
namespace {

LogLevel level_from_environment()
{
    const char* v = std::getenv("ADK_LOG_LEVEL");
    const std::string_view s = v ? v : "";
    if (s == "debug") return LogLevel::debug;
    if (s == "info") return LogLevel::info;
    if (s == "error") return LogLevel::error;
    if (s == "off") return LogLevel::off;
    return LogLevel::warning;
}

LogFormat format_from_environment()
{
    const char* v = std::getenv("ADK_LOG_FORMAT");
    return v && std::string_view(v) == "json" ? LogFormat::json : LogFormat::text;
}

std::string_view level_name(LogLevel level)
{
    switch (level) {
    case LogLevel::debug: return "debug";
    case LogLevel::info: return "info";
    case LogLevel::warning: return "warning";
    case LogLevel::error: return "error";
    case LogLevel::off: break;
    }
    return "off";
}

// RFC 3339 in UTC, to the millisecond.
std::string timestamp()
{
    const auto now = std::chrono::system_clock::now();
    const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
    const auto millis =
        std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900, utc.tm_mon + 1,
                  utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, static_cast<int>(millis));
    return buf;
}

struct Logger {
    std::atomic<int> threshold{static_cast<int>(level_from_environment())};
    std::atomic<LogFormat> format{format_from_environment()};
    std::mutex mutex;
    LogHandler handler;
};

Logger& logger()
{
    static Logger instance;
    return instance;
}

void write(LogLevel level, std::string_view message, const telemetry::SpanContext* span)
{
    if (!log_enabled(level))
        return;
    auto& l = logger();
    const bool traced = span && span->valid();
    std::lock_guard lock(l.mutex);
    if (l.handler) {
        l.handler(level, message);
        return;
    }
    if (l.format == LogFormat::json) {
        std::string line = R"({"timestamp":")" + timestamp() + R"(","level":")" + std::string(level_name(level)) +
                           R"(","logger":"adk","message":)" +
                           boost::json::serialize(boost::json::string(message));
        if (traced)
            line += R"(,"trace_id":")" + telemetry::to_hex(span->trace_id) + R"(","span_id":")" +
                    telemetry::to_hex(span->span_id) + '"';
        line += "}\n";
        std::clog << line;
        return;
    }
    std::clog << "adk " << level_name(level) << ": " << message;
    if (traced)
        std::clog << " (trace_id=" << telemetry::to_hex(span->trace_id)
                  << " span_id=" << telemetry::to_hex(span->span_id) << ')';
    std::clog << '\n';
}

}  // namespace

void set_log_handler(LogHandler handler)
{
    auto& l = logger();
    std::lock_guard lock(l.mutex);
    l.handler = std::move(handler);
}

void set_log_level(LogLevel level) { logger().threshold = static_cast<int>(level); }

void set_log_format(LogFormat format) { logger().format = format; }

bool log_enabled(LogLevel level) noexcept
{
    return level != LogLevel::off && static_cast<int>(level) >= logger().threshold.load();
}

void log(LogLevel level, std::string_view message)
{
    write(level, message, nullptr);
}

void log(LogLevel level, std::string_view message, const telemetry::SpanContext& span)
{
    write(level, message, &span);
}

}  // namespace adk
