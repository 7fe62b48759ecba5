// HttpClient: HTTP/1.1 over TCP or TLS for the providers, with a keep-alive pool, timeouts, proxies,
// retries and cancellation. Beast and OpenSSL stay in src/net/http_client.cpp.
//
//   adk::net::HttpClient client;                       // one per program is enough; safe from any thread
//   adk::net::HttpRequest req("POST", "https://generativelanguage.googleapis.com/v1beta/...");
//   req.set("content-type", "application/json");
//   req.body = body;
//   adk::net::HttpResponse res = co_await client.send(std::move(req));
//   while (true) {                                     // the body as it arrives, one network read at a time
//       std::string_view bytes = co_await res.read_some();
//       if (bytes.empty()) break;
//       ...
//   }
//
// * TLS verifies the server's certificate and host name against the system store (OpenSSL's default paths,
//   which honour SSL_CERT_FILE and SSL_CERT_DIR), plus the `ca_file` / `ca_dir` given; SNI is sent.
// * Connections are kept alive and reused per origin; a response's connection returns to the pool when its
//   body was read to the end, and is closed otherwise.
// * Timeouts: connect (resolve, TCP and TLS), first byte (request written -> response head), idle (between
//   two reads of the body), body (the head's arrival -> the body's end, however steadily bytes arrive).
//   Expiry throws adk::Error with beast's timeout code and says which one expired.
// * Limits: a body over max_body_bytes ends with adk::Error (bad_response); header values are checked
//   (validate_header) and URLs parsed strictly (parse_url), so nothing a caller passes can split a request;
//   URLs in errors and logs have their userinfo and query string redacted (redact_url).
// * Proxies: https_proxy / http_proxy / no_proxy options, by default HTTPS_PROXY, HTTP_PROXY and NO_PROXY
//   from the environment; the client tunnels through the proxy with CONNECT (credentials from the proxy
//   URL go in Proxy-Authorization).
// * Retries (RetryPolicy) happen inside send(), before any byte of the body reaches the caller: connection
//   failures, and statuses that retryable_status() accepts. Each retry is logged as a warning.
// * Cancellation: cancelling the awaiting coroutine (asio per-operation cancellation, as Stream::cancel
//   does to a producer) aborts the pending operation and closes the socket at once.
#pragma once

#include <adk/core/error.hpp>
#include <adk/net/retry.hpp>

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace adk::net {

namespace asio = boost::asio;

class HttpClientOptions {
public:
    HttpClientOptions() = default;
    std::string ca_file;  // PEM certificates trusted in addition to the system store
    std::string ca_dir;   // a directory of hashed PEM certificates (c_rehash), likewise
    std::chrono::milliseconds connect_timeout{std::chrono::seconds(30)};
    std::chrono::milliseconds first_byte_timeout{std::chrono::minutes(10)};
    std::chrono::milliseconds idle_timeout{std::chrono::minutes(5)};
    std::chrono::milliseconds body_timeout{std::chrono::minutes(30)};  // a whole body, from its head on
    std::size_t max_body_bytes = std::size_t{256} << 20;               // a whole body
    std::chrono::milliseconds pool_idle_time{std::chrono::seconds(30)};  // idle connections older are closed
    std::size_t max_idle_per_origin = 256;  // idle connections kept per origin; more are closed
    std::optional<std::string> https_proxy;  // nullopt: HTTPS_PROXY / https_proxy; "": no proxy
    std::optional<std::string> http_proxy;   // nullopt: HTTP_PROXY / http_proxy; "": no proxy
    std::optional<std::string> no_proxy;     // nullopt: NO_PROXY / no_proxy
    RetryPolicy retry;
    std::string user_agent = "adk-cpp/0.1";
};

class HttpRequest {
public:
    HttpRequest() = default;
    HttpRequest(std::string method_, std::string url_) : method(std::move(method_)), url(std::move(url_)) {}

    // Adds a header (several with one name are allowed).
    HttpRequest& set(std::string name, std::string value)
    {
        headers.emplace_back(std::move(name), std::move(value));
        return *this;
    }

    std::string method = "GET";
    std::string url;  // absolute http:// or https:// URL
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
    // Reads a retry delay from an error body (Gemini's RetryInfo) when the headers give none.
    std::function<std::optional<std::chrono::milliseconds>(std::string_view body)> retry_hint;
};
static_assert(!std::is_aggregate_v<HttpRequest>);

namespace detail {
class HttpExchange;
class HttpPool;
}  // namespace detail

// A response whose head has arrived. Move-only; reading the body to its end gives the connection back to
// the pool, destroying the response earlier closes it.
class HttpResponse {
public:
    HttpResponse() = default;
    explicit HttpResponse(std::unique_ptr<detail::HttpExchange> exchange);
    HttpResponse(HttpResponse&&) noexcept;
    HttpResponse& operator=(HttpResponse&&) noexcept;
    ~HttpResponse();

    unsigned status() const noexcept;
    bool ok() const noexcept { return status() / 100 == 2; }
    // The value of the first header of that name (case-insensitive), or "" when there is none.
    std::string_view header(std::string_view name) const;
    // Whether the server's socket was reused from the pool (for tests and diagnostics).
    bool reused_connection() const noexcept;

    // The next bytes of the body, as soon as any arrive; empty at the end. The view is valid until the
    // next call. Throws adk::Error on a broken connection or an idle timeout.
    asio::awaitable<std::string_view> read_some();
    // The rest of the body; throws adk::Error (invalid_argument) beyond `limit` bytes.
    asio::awaitable<std::string> read_all(std::size_t limit = std::size_t{64} << 20);

    // From any thread, while another coroutine reads: a read_some() under way (or the next) throws
    // adk::Error (operation_aborted) at once, and the connection is closed. Does not touch the socket object
    // (it shuts the connection down through its descriptor), so it needs no strand.
    void abort() noexcept;

private:
    [[noreturn]] void fail(const boost::system::error_code& ec);

    std::unique_ptr<detail::HttpExchange> exchange_;
};

class HttpClient {
public:
    explicit HttpClient(HttpClientOptions options = {});
    ~HttpClient();
    HttpClient(const HttpClient&) = delete;
    HttpClient& operator=(const HttpClient&) = delete;

    // Connects or reuses a pooled connection, writes the request, and returns once the response head has
    // arrived, after retries (RetryPolicy). A non-2xx status is returned, not thrown, when it is final.
    // Throws adk::Error when no response could be had.
    asio::awaitable<HttpResponse> send(HttpRequest request);

    const HttpClientOptions& options() const noexcept;

private:
    std::shared_ptr<detail::HttpPool> pool_;
};

// A shared client for providers that are not given one.
std::shared_ptr<HttpClient> default_http_client();

}  // namespace adk::net
