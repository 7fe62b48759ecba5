// The wall clock as OpenTelemetry writes times: nanoseconds since the Unix epoch (spans' start and end, metric
// points' collection time).
#pragma once

#include <chrono>
#include <cstdint>

namespace adk::telemetry {

inline std::int64_t unix_time_ns() noexcept
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

}  // namespace adk::telemetry
