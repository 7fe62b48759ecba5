// The HTTP client an OTLP exporter sends with: its timeouts, its retries as OTLP's exporters back off, a small
// answer; and the deadline a shutdown gives its last export.
#pragma once

#include <adk/core/clock.hpp>
#include <adk/net/http_client.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

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

// Awaits `work` until it ends or `deadline` passes, whichever comes first (the other is cancelled): true when
// the work ended in time.
inline asio::awaitable<bool> ended_within(asio::awaitable<void> work, std::chrono::milliseconds deadline)
{
    using namespace asio::experimental::awaitable_operators;
    adk::Timer limit(co_await asio::this_coro::executor, deadline);
    // Named operands: g++ 12 miscompiles class-type temporaries built inside a co_await expression.
    boost::system::error_code ec;
    asio::awaitable<void> expired = limit.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    const auto first = co_await (std::move(work) || std::move(expired));
    co_return first.index() == 0;
}

}  // namespace adk::otel::detail
