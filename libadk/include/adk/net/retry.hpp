// When and how long to wait before retrying an HTTP request, sans I/O.
//
// The rules the official OpenAI and Anthropic SDKs follow in their HTTP clients:
//   * `x-should-retry: true|false` decides when present; otherwise 408, 409, 429 and 5xx are retried;
//   * the server's hint wins: `retry-after-ms`, then `retry-after` in seconds (a fraction allowed), then
//     `retry-after` as an HTTP date; a hint is honoured when it lies in (0, 60] seconds;
//   * a hint from the error's body (Gemini's RetryInfo, HttpRequest::retry_hint) likewise;
//   * otherwise exponential backoff from `initial_backoff`, doubling up to `max_backoff`, less up to 25%
//     random jitter.
//
// POST requests are retried too, as the official SDKs retry them: a retry happens only when no byte of a
// response reached the caller (a connection that failed, or a status that says "try again"), and a model
// call has no effect but its cost, so running it twice at worst bills it twice. A request that must never
// run twice is sent with max_retries = 0.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

namespace adk::net {

class RetryPolicy {
public:
    RetryPolicy() = default;
    int max_retries = 2;  // retries after the first attempt; 0 disables retrying
    std::chrono::milliseconds initial_backoff{500};
    std::chrono::milliseconds max_backoff{8000};
    std::chrono::milliseconds max_server_hint{60000};  // longer hints are ignored in favour of the backoff
};

// Whether a response with this status (and x-should-retry header, empty when absent) should be retried.
bool retryable_status(unsigned status, std::string_view x_should_retry);

// The wait a response asks for through its headers (empty strings for absent headers). `now` is for HTTP
// dates. Nothing when no hint is given or it is out of (0, max_server_hint].
std::optional<std::chrono::milliseconds> retry_after_hint(std::string_view retry_after_ms,
                                                          std::string_view retry_after,
                                                          std::chrono::system_clock::time_point now,
                                                          const RetryPolicy& policy);

// `hint`, a delay that a server asked for in some other way (an error body), when it lies in
// (0, max_server_hint]; nothing otherwise.
std::optional<std::chrono::milliseconds> bounded_hint(std::optional<std::chrono::milliseconds> hint,
                                                      const RetryPolicy& policy);

// The backoff before retry number `retry` (1 for the first retry); `unit_random` in [0, 1) draws the jitter.
std::chrono::milliseconds backoff_delay(int retry, const RetryPolicy& policy, double unit_random);

// Parses an IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT"), as in Retry-After.
std::optional<std::chrono::system_clock::time_point> parse_http_date(std::string_view text);

}  // namespace adk::net
