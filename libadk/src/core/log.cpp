#include <adk/core/log.hpp>

#include <atomic>
#include <cstdlib>
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

struct Logger {
    std::atomic<int> threshold{static_cast<int>(level_from_environment())};
    std::mutex mutex;
    LogHandler handler;
};

Logger& logger()
{
    static Logger instance;
    return instance;
}

}  // namespace

void set_log_handler(LogHandler handler)
{
    auto& l = logger();
    std::lock_guard lock(l.mutex);
    l.handler = std::move(handler);
}

void set_log_level(LogLevel level) { logger().threshold = static_cast<int>(level); }

bool log_enabled(LogLevel level) noexcept
{
    return level != LogLevel::off && static_cast<int>(level) >= logger().threshold.load();
}

void log(LogLevel level, std::string_view message)
{
    if (!log_enabled(level))
        return;
    auto& l = logger();
    std::lock_guard lock(l.mutex);
    if (l.handler)
        l.handler(level, message);
    else
        std::clog << "adk " << level_name(level) << ": " << message << '\n';
}

}  // namespace adk
