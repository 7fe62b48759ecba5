// One connection of the server, a class template over its stream (beast::tcp_stream or
// ssl::stream<beast::tcp_stream>), included by the two files that instantiate it (http_server_impl.hpp says why).
#pragma once

#include "direct_write.hpp"
#include "http_server_impl.hpp"

#include <adk/core/wakeup.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/ssl/stream_base.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>

namespace adk::net::detail {

namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
namespace json = boost::json;
using tcp = asio::ip::tcp;
using boost::system::error_code;

inline constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

// A connection's read buffer holds a head (max_header_bytes) and this much more: one read's room while the body
// is parsed, and a chunk-size line or a trailer, which must fit whole.
inline constexpr std::size_t read_room = std::size_t{16} << 10;

inline std::string error_body(std::string_view message)
{
    return json::serialize(json::object{{"error", message}});
}

// One connection: reads requests one after another and answers each through the handler. Stream is
// beast::tcp_stream or ssl::stream<beast::tcp_stream>; the socket's executor is the connection's strand.
template <class Stream>
class Connection final : public Closable, public ResponseWriter, public std::enable_shared_from_this<Connection<Stream>> {
public:
    template <class... Args>
    Connection(std::shared_ptr<HttpServer::Impl> server, Args&&... args)
        : server_(std::move(server)), stream_(std::forward<Args>(args)...),
          watch_done_(beast::get_lowest_layer(stream_).get_executor())
    {
    }

    static constexpr bool plain = std::is_same_v<Stream, beast::tcp_stream>;
    static constexpr std::size_t max_direct_write = std::size_t{64} << 10;

    beast::tcp_stream& lowest() { return beast::get_lowest_layer(stream_); }

    void close() override
    {
        error_code ec;
        lowest().socket().shutdown(tcp::socket::shutdown_both, ec);
        lowest().socket().close(ec);
    }

    // Closes the socket and cancels what the connection awaits (a handler's own waits too).
    void close_from_anywhere() override
    {
        asio::dispatch(lowest().get_executor(), [self = this->shared_from_this()] {
            self->close();
            self->stop_.emit(asio::cancellation_type::terminal);
        });
    }

    asio::cancellation_slot stop_slot() { return stop_.slot(); }
    void admit(Admission admission) { admission_ = admission; }
    const Admission& admission() const { return admission_; }

    void watch_client() override { start_watch(); }

    asio::awaitable<void> run()
    {
        if constexpr (!plain) {
            lowest().expires_after(server_->options.read_timeout);
            auto [ec] = co_await stream_.async_handshake(ssl::stream_base::server, use_tuple);
            if (ec)
                co_return;
        }
        const HttpServerOptions& opts = server_->options;
        // What is read and not parsed yet: a head, or a chunk-size line or trailer, is refused past it.
        beast::flat_buffer buffer(opts.max_header_bytes + read_room);
        while (true) {
            http::request_parser<http::string_body> parser;
            parser.header_limit(static_cast<std::uint32_t>(std::min<std::size_t>(opts.max_header_bytes, UINT32_MAX)));
            parser.body_limit(boost::none);  // max_body_bytes, once the head check passed (read_request)
            lowest().expires_after(opts.read_timeout);
            IncomingRequest request;
            std::optional<Refusal> refusal;
            error_code ec = co_await read_request(buffer, parser, request, refusal);
            for (std::size_t seen = server_->peak_buffer; buffer.capacity() > seen &&
                                                          !server_->peak_buffer.compare_exchange_weak(seen, buffer.capacity());) {
            }
            next_request();
            kept_.clear();
            kept_failure_ = {};
            if (refusal) {
                keep_alive_ = false;
                try {
                    co_await send(refusal->status, "application/json", refusal->body, refusal->headers);
                } catch (const std::exception&) {
                }
                co_await drain_before_close();
                co_return;
            }
            if (ec) {
                // A request that breaks a limit or does not parse is answered; a connection that ended,
                // timed out or failed is not.
                if (ec.category() != http::make_error_code(http::error::end_of_stream).category() ||
                    ec == http::error::end_of_stream || ec == http::error::partial_message)
                    co_return;
                keep_alive_ = false;
                unsigned status = ec == http::error::body_limit ? 413 : ec == http::error::header_limit ? 431 : 400;
                std::string message =
                    status == 413 ? "the request body is larger than this server accepts (" +
                                        std::to_string(opts.max_body_bytes) + " bytes)"
                    : status == 431 ? "the request's headers are larger than this server accepts (" +
                                          std::to_string(opts.max_header_bytes) + " bytes)"
                    : ec == http::error::buffer_overflow
                        ? "a chunk-size line or the trailer section of the request is longer than this server "
                          "accepts (" + std::to_string(opts.max_header_bytes + read_room) + " bytes)"
                        : "the request is not valid HTTP/1.1: " + ec.message();
                std::string body = error_body(message);
                co_await try_send(status, body);
                co_await drain_before_close();
                co_return;
            }
            lowest().expires_never();  // a handler may take long (a model's answer); each write has its own
            auto& message = parser.get();
            keep_alive_ = message.keep_alive() && !admission_.reserved;  // a reserved connection serves one
            request.body = std::move(message.body());

            std::string failure;
            try {
                co_await server_->handler(request, *this);
            } catch (const Error& e) {
                failure = e.message();  // what() adds the code's own words and a location
            } catch (const std::exception& e) {
                failure = e.what();
            }
            if (!answered()) {
                std::string body = error_body(failure.empty() ? "the server's handler did not answer the request"
                                                              : failure);
                co_await try_send(500, body);
            }
            co_await end_watch();
            if (!failure.empty() || streaming() || !keep_alive_)
                co_return;  // a stream cut short, or the client asked to close
        }
    }

private:
    // While a stream is open, the connection is watched for the client leaving: a wait until the socket is
    // readable, which reads nothing (over TLS too). Readable with no byte to read is the end of the connection;
    // bytes (a pipelined request, a TLS alert) end the watch and stay for the next read.
    void start_watch()
    {
        if (watching_)
            return;
        watching_ = true;
        watch_stopped_ = false;
        (void)watch_done_.try_take();  // a wake from an earlier watch that ended on its own
        auto on_readable = [self = this->shared_from_this()](error_code ec) {
            self->watching_ = false;
            self->watch_done_.notify();
            if (self->watch_stopped_)
                return;
            error_code available_ec;
            const std::size_t available = self->lowest().socket().available(available_ec);
            if (ec || available_ec || available == 0)
                self->notify_client_gone();
        };
        lowest().socket().async_wait(tcp::socket::wait_read,
                                     asio::bind_cancellation_slot(watch_cancel_.slot(), std::move(on_readable)));
    }

    // After a request: stops the watch before the next request is read.
    asio::awaitable<void> end_watch()
    {
        if (!watching_)
            co_return;
        watch_stopped_ = true;
        watch_cancel_.emit(asio::cancellation_type::terminal);
        if (watching_) {
            auto [ec] = co_await watch_done_.async_wait(use_tuple);
            (void)ec;  // the connection's own stop
        }
    }

    // The head (into `request`, and past the head check, or `refusal` is set), then (after "100 Continue" when
    // the client waits for it, as curl does before a large body) the body.
    asio::awaitable<error_code> read_request(beast::flat_buffer& buffer, http::request_parser<http::string_body>& parser,
                                             IncomingRequest& request, std::optional<Refusal>& refusal)
    {
        // The body limit is set once the head check passed: a Content-Length over it is then refused at once,
        // but a request the check refuses is answered by the check (and its body never read).
        auto [ec, n] = co_await http::async_read_header(stream_, buffer, parser, use_tuple);
        (void)n;
        if (ec)
            co_return ec;
        const auto& head = parser.get();
        request.method = std::string(head.method_string());
        request.target = std::string(head.target());
        for (const auto& field : head) {
            std::string name(field.name_string());
            for (char& c : name)
                c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
            request.headers.emplace_back(std::move(name), std::string(field.value()));
        }
        if (admission_.reserved && !server_->reserved_target(request.target)) {
            refusal.emplace(503,
                            error_body("the server holds as many connections as it may (HttpServerOptions::"
                                       "max_connections); try again when one has closed"),
                            HeaderList{{"retry-after", "1"}});
            co_return ec;
        }
        if (server_->head_check) {
            refusal = server_->head_check(request);
            if (refusal)
                co_return ec;
        }
        if (parser.is_done())
            co_return ec;
        const std::uint64_t body_limit = server_->options.max_body_bytes;
        if (const auto length = parser.content_length(); length && *length > body_limit)
            co_return http::error::body_limit;
        parser.body_limit(body_limit);
        if (beast::iequals(parser.get()[http::field::expect], "100-continue")) {
            http::response<http::empty_body> go_on{http::status::continue_, 11};
            auto [wec, wn] = co_await http::async_write(stream_, go_on, use_tuple);
            (void)wn;
            if (wec)
                co_return wec;
        }
        auto [bec, bn] = co_await http::async_read(stream_, buffer, parser, use_tuple);
        (void)bn;
        co_return bec;
    }

    // After an error answer to a request that was not read whole: says it is done sending, then reads and
    // drops what the client still sends until it closes (at most max_drain_bytes, each read within 2 s, all of
    // it within read_timeout). Closing with unread bytes would make the kernel reset the connection, and a
    // client that sends its whole body before it reads would lose the answer.
    asio::awaitable<void> drain_before_close()
    {
        error_code ec;
        lowest().socket().shutdown(tcp::socket::shutdown_send, ec);
        const auto idle = std::min<std::chrono::steady_clock::duration>(server_->options.read_timeout,
                                                                        std::chrono::seconds(2));
        const auto deadline = std::chrono::steady_clock::now() + server_->options.read_timeout;
        std::array<char, 16384> sink;
        std::size_t drained = 0;
        while (drained < server_->options.max_drain_bytes) {
            lowest().expires_after(std::min<std::chrono::steady_clock::duration>(
                idle, std::max<std::chrono::steady_clock::duration>(deadline - std::chrono::steady_clock::now(),
                                                                     std::chrono::steady_clock::duration::zero())));
            auto [e, n] = co_await lowest().async_read_some(asio::buffer(sink), use_tuple);
            if (e)
                break;
            drained += n;
        }
    }

    asio::awaitable<void> try_send(unsigned status, const std::string& body)
    {
        try {
            co_await send(status, "application/json", body);
        } catch (const std::exception&) {
            // the client is gone: nothing to tell it
        }
    }

    asio::awaitable<void> write_head(unsigned status, std::string_view content_type, const HeaderList& headers,
                                     const std::string_view* body) override
    {
        if (body) {
            http::response<http::string_body> res{static_cast<http::status>(status), 11};
            res.set(http::field::content_type, content_type);
            for (const auto& [name, value] : headers)
                res.set(name, value);
            res.keep_alive(keep_alive_);
            res.body().assign(body->data(), body->size());
            res.prepare_payload();
            if constexpr (plain) {
                if (body->size() <= max_direct_write) {
                    http::response_serializer<http::string_body> serializer{res};
                    const std::string text = message_text(serializer, false);  // named: g++ 12 and co_await
                    const std::array<asio::const_buffer, 1> bytes{asio::buffer(text)};
                    co_await write_at_once(bytes, "writing the response");
                    co_return;
                }
            }
            lowest().expires_after(server_->options.write_timeout);
            auto [ec, n] = co_await http::async_write(stream_, res, use_tuple);
            (void)n;
            lowest().expires_never();
            if (ec)
                throw boost::system::system_error(ec, "writing the response");
            co_return;
        }
        http::response<http::empty_body> res{static_cast<http::status>(status), 11};
        res.set(http::field::content_type, content_type);
        for (const auto& [name, value] : headers)
            res.set(name, value);
        res.keep_alive(keep_alive_);
        res.chunked(true);
        http::response_serializer<http::empty_body> serializer{res};
        if constexpr (plain) {
            const std::string text = message_text(serializer, true);  // named: g++ 12 and co_await
            const std::array<asio::const_buffer, 1> bytes{asio::buffer(text)};
            co_await write_at_once(bytes, "writing the response's head");
        } else {
            lowest().expires_after(server_->options.write_timeout);
            auto [ec, n] = co_await http::async_write_header(stream_, serializer, use_tuple);
            (void)n;
            lowest().expires_never();
            if (ec)
                throw boost::system::system_error(ec, "writing the response's head");
        }
        start_watch();
    }

    // What `serializer` writes (its head alone when `head_only`), as one string.
    template <class Serializer>
    static std::string message_text(Serializer& serializer, bool head_only)
    {
        error_code ec;
        std::string out = detail::message_text(serializer, head_only, ec);
        if (ec)
            throw boost::system::system_error(ec, "writing the response");
        return out;
    }

    // Writes `bytes` at once when the socket takes them, the rest under the write timeout (a plain connection).
    // `bytes` is taken by value (a few buffers): the coroutine keeps its own copy across the wait.
    template <class Buffers>
    asio::awaitable<void> write_at_once(Buffers bytes, const char* what)
    {
        error_code ec;
        const std::size_t written = write_some_now(bytes, ec);
        if (!ec)
            co_return;
        if (ec != asio::error::would_block)
            throw boost::system::system_error(ec, what);
        beast::buffers_suffix<Buffers> rest(bytes);
        rest.consume(written);
        lowest().expires_after(server_->options.write_timeout);
        auto [e, n] = co_await asio::async_write(stream_, rest, use_tuple);
        (void)n;
        lowest().expires_never();
        if (e)
            throw boost::system::system_error(e, what);
    }

    // `data` as one chunk of the stream: its size line (written into `head`), the data, CRLF.
    static std::array<asio::const_buffer, 3> framed(std::string_view data, std::array<char, 24>& head)
    {
        const auto size = std::to_chars(head.data(), head.data() + head.size() - 2, data.size(), 16);
        char* end = size.ptr;
        *end++ = '\r';
        *end++ = '\n';
        return {asio::buffer(head.data(), static_cast<std::size_t>(end - head.data())),
                asio::buffer(data.data(), data.size()), asio::buffer("\r\n", 2)};
    }

    // The same (no chunk when `data` is empty), then the stream's end when `last`: one write for both.
    static std::array<asio::const_buffer, 4> framed(std::string_view data, std::array<char, 24>& head, bool last)
    {
        std::array<asio::const_buffer, 4> out{};
        if (!data.empty()) {
            const std::array<asio::const_buffer, 3> chunk = framed(data, head);
            std::copy(chunk.begin(), chunk.end(), out.begin());
        }
        if (last)
            out[3] = asio::buffer("0\r\n\r\n", 5);
        return out;
    }

    // Writes what the socket takes of `chunk` now, without waiting (write_some_now).
    template <class Buffers>
    std::size_t write_some_now(const Buffers& chunk, error_code& ec)
    {
        return detail::write_some_now(lowest().socket(), chunk, ec);
    }

    bool chunk_now_ready() const noexcept override { return plain && kept_.empty() && !kept_failure_; }

    bool write_chunk_now(std::string_view data) noexcept override
    {
        if constexpr (plain) {
            if (data.empty())
                return true;
            std::array<char, 24> head;
            const std::array<asio::const_buffer, 3> chunk = framed(data, head);
            error_code ec;
            const std::size_t written = write_some_now(chunk, ec);
            if (!ec)
                return true;
            if (ec != asio::error::would_block) {
                kept_failure_ = ec;
                return false;
            }
            try {
                beast::buffers_suffix<std::array<asio::const_buffer, 3>> rest(chunk);
                rest.consume(written);
                kept_.reserve(asio::buffer_size(rest));
                for (asio::const_buffer b : beast::buffers_range_ref(rest))
                    kept_.append(static_cast<const char*>(b.data()), b.size());
            } catch (const std::exception&) {
                kept_.clear();
                kept_failure_ = asio::error::no_memory;  // the stream cannot go on whole
            }
            return false;
        }
        (void)data;
        return false;
    }

    asio::awaitable<void> flush_kept() override
    {
        if (kept_failure_)
            throw boost::system::system_error(kept_failure_, "writing the response's stream");
        if (kept_.empty())
            co_return;
        lowest().expires_after(server_->options.write_timeout);
        auto [ec, n] = co_await asio::async_write(stream_, asio::buffer(kept_), use_tuple);
        (void)n;
        lowest().expires_never();
        if (kept_.capacity() > max_direct_write)
            std::string().swap(kept_);
        else
            kept_.clear();
        if (ec) {
            kept_failure_ = ec;
            throw boost::system::system_error(ec, "writing the response's stream");
        }
    }

    asio::awaitable<void> write_chunk(std::string_view data, bool last) override
    {
        if (!kept_.empty() || kept_failure_)
            co_await flush_kept();  // what write_now() left goes first
        if constexpr (plain) {
            // A stream's chunk usually fits in the socket's send buffer: written here at once, without an
            // asynchronous operation, its timer, or a trip through the scheduler (the stream's last chunk and its
            // end together). What does not fit (a client that reads slowly) is written below, under the write
            // timeout. A large chunk goes below whole, in writes of at most 64 KiB as Asio makes them: one call
            // would hand the kernel megabytes at once, whether the client reads them or not, and hold the thread
            // while it copies them.
            if (data.size() <= max_direct_write) {
                std::array<char, 24> head;
                const std::array<asio::const_buffer, 4> chunk = framed(data, head, last);
                co_await write_at_once(chunk, "writing the response's stream");
                co_return;
            }
        }
        lowest().expires_after(server_->options.write_timeout);
        error_code ec;
        if (!data.empty()) {
            auto [e, n] = co_await asio::async_write(stream_, http::make_chunk(asio::buffer(data.data(), data.size())),
                                                     use_tuple);
            (void)n;
            ec = e;
        }
        if (!ec && last) {
            auto [e, n] = co_await asio::async_write(stream_, http::make_chunk_last(), use_tuple);
            (void)n;
            ec = e;
        }
        lowest().expires_never();
        if (ec)
            throw boost::system::system_error(ec, "writing the response's stream");
    }

    std::shared_ptr<HttpServer::Impl> server_;
    Stream stream_;
    asio::cancellation_signal stop_;  // on the connection's executor
    std::string kept_;           // what write_now() could not write at once, written first by the next write
    error_code kept_failure_;    // how write_now() or the write of what it kept failed
    bool keep_alive_ = true;
    asio::cancellation_signal watch_cancel_;
    Wakeup watch_done_;  // given when the watch's wait completes
    bool watching_ = false;
    bool watch_stopped_ = false;  // the watch was cancelled by the connection itself
    Admission admission_;
};

template <class Stream>
asio::awaitable<void> serve(std::shared_ptr<HttpServer::Impl> server, std::shared_ptr<Connection<Stream>> conn,
                            std::size_t id)
{
    try {
        co_await conn->run();
    } catch (const std::exception&) {
        // a connection's failure ends that connection only
    }
    conn->close();
    server->forget(id);
    server->connection_closed(conn->admission().used_spare);
}

// Serves `conn` (remembered by the server under `id`) on `executor`; the server's stop() cancels it.
template <class Stream>
void start_connection(std::shared_ptr<HttpServer::Impl> server, std::shared_ptr<Connection<Stream>> conn,
                      asio::any_io_executor executor, std::size_t id)
{
    server->remember(id, conn);
    auto on_stop = asio::bind_cancellation_slot(conn->stop_slot(), asio::detached);
    asio::co_spawn(executor, serve(server, conn, id), std::move(on_stop));
}

}  // namespace adk::net::detail
