// MCP over Streamable HTTP (spec 2025-11-25, basic/transports), on adk's HttpClient (TLS, proxies, timeouts) and
// SSE parser; and the old HTTP+SSE transport (2024-11-05) as the spec's fallback.
//
// Every message of the client's is a POST to the server's URL, with `Accept: application/json,
// text/event-stream`, the `Mcp-Session-Id` the server gave in its answer to initialize, and the negotiated
// `MCP-Protocol-Version`. A request's answer comes as one JSON body or as an SSE stream (which may carry the
// server's own requests and notifications first). After `notifications/initialized` a GET stream is opened
// for what the server sends unasked (a server that offers none answers 405).
//
// * A stream that ends or breaks before its answer came is resumed: after the server's `retry:` (or
//   `reconnect_delay`), a GET with `Last-Event-ID`; `max_reconnects` times in a row at most.
// * A 404 for a request that carried a session id means the server forgot the session: the transport sends
//   initialize (and notifications/initialized) once more, without a session id, and retries the request
//   once. The connection above never sees it.
// * An HTTP error for one request (a 500, a body that is not JSON-RPC, a network failure) answers that
//   request with a JSON-RPC error naming the server and the status; the connection goes on. Only an
//   initialize that cannot reach the server ends it.
// * When initialize is refused with 400, 404 or 405, and a GET opens an SSE stream whose first event is
//   `endpoint`, the server speaks the old HTTP+SSE transport: messages go by POST to that endpoint (same
//   origin only), every answer comes on the stream, and the stream's end ends the connection.
// * close() cancels every exchange under way and sends DELETE with the session id (a 405 is fine).
// * With `oauth`, every request carries the token, and a 401 (or a 403 asking for more scope) runs the OAuth
//   flow once for all the requests that met it, then sends them again (adk/mcp/oauth.hpp).
//
// Every call is made on `executor`, a strand when several threads run its io_context; one receive() at a
// time. Headers given in the params are checked as the HttpClient checks them; the URL's userinfo and query
// are never printed (name() redacts them).
#pragma once

#include <adk/mcp/oauth.hpp>
#include <adk/mcp/transport.hpp>
#include <adk/net/http_client.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace adk::mcp {

class HttpServerParams {
public:
    // The server's MCP endpoint, "https://host/mcp". The HttpClient does not retry (a tool call must not run
    // twice); the transport resumes streams and renews sessions itself.
    explicit HttpServerParams(std::string url_);

    std::string url;
    std::vector<std::pair<std::string, std::string>> headers;  // sent with every request (Authorization, ...)
    net::HttpClientOptions http;
    std::size_t max_message_bytes = std::size_t{16} << 20;  // one JSON body or SSE event; past it, an error
    bool listen = true;  // open the GET stream for the server's own requests and notifications
    std::chrono::milliseconds reconnect_delay{std::chrono::seconds(1)};  // when the server sent no retry:
    int max_reconnects = 5;  // resumptions in a row without an event, per stream
    bool legacy_fallback = true;  // try the old HTTP+SSE transport when initialize is refused
    // OAuth 2.1 (adk/mcp/oauth.hpp): a 401, or a 403 for more scope, runs the flow and the request again.
    std::optional<OAuthOptions> oauth;
};

class HttpTransport final : public Transport {
public:
    HttpTransport(asio::any_io_executor executor, HttpServerParams params);
    ~HttpTransport() override;

    asio::awaitable<void> open() override;
    asio::awaitable<void> send(std::string message) override;
    asio::awaitable<std::optional<std::string>> receive() override;
    asio::awaitable<void> close() override;
    // "MCP server at http://host/mcp" (userinfo and query redacted).
    const std::string& name() const override;
    // Why the connection ended, when it did.
    std::string diagnostics() const override;

    // The session id the server gave (empty when none, or after close()), and whether the old HTTP+SSE
    // transport is in use. For tests and logs; call them on the executor.
    std::string session_id() const;
    bool legacy() const;

private:
    class Impl;
    std::shared_ptr<Impl> impl_;
};

}  // namespace adk::mcp
