// The HTTP client an OTLP exporter sends with: its timeouts, its retries as OTLP's exporters back off, a small
// answer.
#pragma once

#include <adk/net/http_client.hpp>

#include <chrono>
#include <string>

namespace adk::otel::detail {

inline net::HttpClientOptions otlp_client_options(const std::string& ca_file, std::chrono::milliseconds timeout,
                                                  int max_retries)
{
    net::HttpClientOptions c;
    c.ca_file = ca_file;
    c.connect_timeout = timeout;
    c.first_byte_timeout = timeout;
    c.idle_timeout = timeout;
    c.body_timeout = timeout;
    c.max_body_bytes = std::size_t{1} << 20;  // a collector's answer is small
    c.retry.max_retries = max_retries;
    c.retry.initial_backoff = std::chrono::milliseconds(1000);
    c.retry.max_backoff = std::chrono::milliseconds(5000);
    return c;
}

}  // namespace adk::otel::detail
