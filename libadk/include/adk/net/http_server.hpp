// HttpServer: the HTTP/1.1 server core of adk-cpp, over TCP or TLS, for mock-llm and adk::server. It accepts
// connections, reads each request within limits, and hands it to the handler coroutine, which answers it
// whole or streams it (chunked: Server-Sent Events). Beast and OpenSSL stay in src/net/http_server.cpp.
//
//   adk::net::HttpServer server(ioc.get_executor(), options,
//       [](adk::net::IncomingRequest& req, adk::net::ResponseWriter& res) -> asio::awaitable<void> {
//           if (req.target == "/health")
//               co_return co_await res.send(200, "application/json", R"({"status":"ok"})");
//           co_await res.begin_stream(200, "text/event-stream");
//           co_await res.write("data: {}\n\n");     // one write per call: a frame is never split
//           co_await res.end_stream();
//       });
//   server.start();     // binds (or serves the listening_socket given), once; server.port() is the port
//
// * Limits: a request head over max_header_bytes is answered 431, a body over max_body_bytes 413, a chunk-size
//   line or a trailer section longer than the read buffer (max_header_bytes + 16 KiB) 400, a request that does
//   not parse 400, each with a JSON {"error": "..."} and the connection closed. Nothing a client sends is kept
//   beyond those bounds: a connection holds at most its head, its read buffer and (once the head check passed)
//   its body. After such an answer the server says it is done sending and reads on, dropping what comes (at
//   most max_drain_bytes, each read within 2 s), until the client closes: a client that sends its whole body
//   before it reads (Python's http.client) gets the answer, not a reset.
// * Admission: a head check (optional) sees each request's head before its body is read, and may refuse it
//   (a missing credential, a Host the server does not serve): the body is then never read.
// * Connections: at most max_connections at once, and reserved_connections more for the reserved targets
//   (/health): past them the server stops accepting (the kernel queues the next ones) until one closes. Out of
//   descriptors (EMFILE), it gives up a descriptor it keeps spare to accept one connection, served as a
//   reserved one (/health is answered, anything else 503); when it has no spare, it waits, from 10 ms doubling
//   to 1 s, and the connections already open go on being served.
// * Timeouts: a request must arrive whole within read_timeout of the previous answer (a client that idles
//   between requests is closed then too); each write of an answer must finish within write_timeout (a client
//   that stops reading is closed). A handler that streams is held back by its client, never buffered.
// * Failures: a handler that throws before answering gets a 500 with the exception's text; after it began
//   a stream, the connection is closed (the client sees the stream end without its last chunk).
// * A client that leaves mid-stream: while a stream is open the server watches the connection (without
//   reading it), so it learns at once that the client closed it (client_gone(), on_client_gone()), even while
//   the handler writes nothing. A client that half-closes its side after its request counts as gone too. Over
//   TLS a client that says goodbye first (a close_notify alert) is seen at the stream's next write instead.
// * Threads: each connection runs on a strand of the executor (or the executor itself when the server is
//   told it is single_threaded); stop() is safe from any thread.
#pragma once

#include <boost/asio/any_io_executor.hpp>
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

class HttpServerOptions {
public:
    HttpServerOptions() = default;
    std::string host = "127.0.0.1";
    unsigned short port = 0;  // 0: a free port (port() says which)
    // A TCP socket already bound and listening, served instead of host and port: one a supervisor handed over
    // (systemd's socket activation), or one the program bound first so that what it builds before serving knows
    // the port (an OAuth redirect URI under port 0). The server takes it over: it closes it when destroyed.
    int listening_socket = -1;
    std::string cert_file;    // PEM; with key_file, the server speaks TLS
    std::string key_file;
    std::size_t max_header_bytes = std::size_t{16} << 10;
    std::size_t max_body_bytes = std::size_t{16} << 20;
    // What the server reads and drops of a request it refused before reading it whole (413, 401, ...).
    std::size_t max_drain_bytes = std::size_t{64} << 20;
    std::chrono::milliseconds read_timeout{std::chrono::seconds(60)};
    std::chrono::milliseconds write_timeout{std::chrono::seconds(60)};
    std::size_t max_connections = 16384;
    // Past max_connections, and when the process is out of descriptors (one is kept spare for it), this many
    // more are accepted for the request targets named here alone (a load balancer's health check): each such
    // connection serves one request and closes; any other request on it is answered 503.
    std::size_t reserved_connections = 16;
    std::vector<std::string> reserved_targets{"/health"};
    // One thread runs the executor's io_context: connections run on it directly, without strands.
    bool single_threaded = false;
};

static_assert(!std::is_aggregate_v<HttpServerOptions>);

using HeaderList = std::vector<std::pair<std::string, std::string>>;

// A request as it arrived: header names in lower case, the body whole.
class IncomingRequest {
public:
    IncomingRequest() = default;
    std::string method;  // "GET", "POST" ...
    std::string target;  // "/apps/a/users/u/sessions?x=1": path and query as sent
    HeaderList headers;
    std::string body;
    // The first value of the header, or empty.
    std::string_view header(std::string_view lower_case_name) const;
};

static_assert(!std::is_aggregate_v<IncomingRequest>);

// How a handler answers one request: send() once, or begin_stream(), write() any number of times, then
// end_stream(). Header names and values are checked (validate_header): a value that could split the
// response throws adk::Error before anything is written. A write to a client that went away throws
// boost::system::system_error.
class ResponseWriter {
public:
    virtual ~ResponseWriter() = default;

    // (No defaulted class-type parameters: g++ 12 miscompiles class temporaries built in a co_await
    // expression, so the overloads without headers make none.)
    asio::awaitable<void> send(unsigned status, std::string_view content_type, std::string_view body);
    asio::awaitable<void> send(unsigned status, std::string_view content_type, std::string_view body,
                               const HeaderList& headers);
    asio::awaitable<void> begin_stream(unsigned status, std::string_view content_type);
    asio::awaitable<void> begin_stream(unsigned status, std::string_view content_type, const HeaderList& headers);
    // One chunk, in one write.
    asio::awaitable<void> write(std::string_view data);
    asio::awaitable<void> end_stream();
    // The stream's last data (none when empty) and its end, in one write.
    asio::awaitable<void> end_stream(std::string_view last_data);
    // Whether a stream is open: between begin_stream() and end_stream().
    bool streaming() const noexcept { return streaming_; }

    // Writing a stream's chunk from outside the handler's coroutine, on the connection's thread, while the
    // handler waits on something else (a run's next event): no asynchronous operation, no wake-up of the handler.
    // Whether write_now() may be called: a stream open on a plain (not TLS) connection, with nothing kept from an
    // earlier write_now() and no write failed.
    bool can_write_now() const noexcept { return streaming_ && !client_gone_ && chunk_now_ready(); }
    // One chunk, written at once without waiting (needs can_write_now()). True when it is all on the wire; false
    // when the socket took only part of it, or none (a client that reads slowly: the rest is kept, and written
    // first by the next write(), end_stream() or flush()), or the write failed (they throw the failure).
    bool write_now(std::string_view data) noexcept { return write_chunk_now(data); }
    // Writes what write_now() kept, under the write timeout; throws what the write failed with.
    asio::awaitable<void> flush();

    // A header that the answer to this request will carry, whichever way it is sent (a middle layer's:
    // CORS). Checked with the answer's other headers.
    void add_header(std::string name, std::string value);

    // Whether an answer has begun (a handler that failed after it cannot send a 500).
    bool answered() const noexcept { return answered_; }
    // Closes the connection at once (a handler that wants the client to see the stream cut).
    virtual void close() = 0;

    // Whether the client closed the connection (or it failed) while this request's stream was open.
    bool client_gone() const noexcept { return client_gone_; }
    // `callback` runs once, on the connection's executor, when the client closes the connection while this
    // request's stream is open (or at once if it has): a handler that waits on something other than its own
    // writes (a run's next event) learns that its client left. It is dropped when the request ends.
    void on_client_gone(std::function<void()> callback);
    // Watches the connection before any answer began, as a stream's is watched: a handler that gathers a whole
    // answer for long (a run's events) learns too that its client left.
    virtual void watch_client() = 0;

protected:
    // The head, and the whole body when `body` is given; chunked (a stream follows) when it is not.
    virtual asio::awaitable<void> write_head(unsigned status, std::string_view content_type,
                                             const HeaderList& headers, const std::string_view* body) = 0;
    virtual asio::awaitable<void> write_chunk(std::string_view data, bool last) = 0;
    // write_now() where the connection can (none by default: a write goes through write()).
    virtual bool chunk_now_ready() const noexcept { return false; }
    virtual bool write_chunk_now(std::string_view data) noexcept;
    virtual asio::awaitable<void> flush_kept();
    // A connection's next request starts unanswered.
    void next_request() noexcept;
    // The connection saw its client leave during a stream.
    void notify_client_gone();
    HeaderList with_extra(const HeaderList& headers) const;

private:
    bool answered_ = false;
    bool streaming_ = false;
    bool client_gone_ = false;
    std::function<void()> on_client_gone_;
    HeaderList extra_headers_;
};

// A head check's refusal: the answer, sent with the connection closed.
class Refusal {
public:
    Refusal(unsigned status_, std::string body_, HeaderList headers_ = {})
        : status(status_), body(std::move(body_)), headers(std::move(headers_))
    {
    }
    unsigned status;
    std::string body;  // JSON
    HeaderList headers;
};

class HttpServer {
public:
    using Handler = std::function<asio::awaitable<void>(IncomingRequest&, ResponseWriter&)>;
    // Sees a request's method, target and headers (no body yet); a refusal answers it.
    using HeadCheck = std::function<std::optional<Refusal>(const IncomingRequest& head)>;

    // Throws adk::Error (invalid_argument) when TLS files are given and cannot be read.
    HttpServer(asio::any_io_executor executor, HttpServerOptions options, Handler handler,
               HeadCheck head_check = nullptr);
    ~HttpServer();
    HttpServer(const HttpServer&) = delete;
    HttpServer& operator=(const HttpServer&) = delete;

    // Binds and starts accepting; throws boost::system::system_error when the address is taken.
    void start();
    // Closes the listener and every connection, and cancels what their handlers await (the pending wait
    // throws operation_aborted, as asio's per-operation cancellation does). Safe from any thread. Destroy
    // the server before its io_context.
    void stop();

    unsigned short port() const noexcept;
    std::string base_url() const;  // "http://127.0.0.1:PORT", or https://
    std::size_t connections_accepted() const noexcept;
    std::size_t open_connections() const noexcept;
    // The most bytes a connection's read buffer has held (its capacity): at most max_header_bytes + 16 KiB.
    std::size_t peak_read_buffer_bytes() const noexcept;

    class Impl;

private:
    std::shared_ptr<Impl> impl_;
};

}  // namespace adk::net
