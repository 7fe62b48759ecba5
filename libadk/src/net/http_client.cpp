// The HTTP client's transport: Beast over TCP or OpenSSL. See adk/net/http_client.hpp for the contract.
//
// DESIGN: idle connections live in an asio service of the io_context that created them (IdleConnections),
// not in the client, so that a socket never outlives its io_context: tests and programs run many
// io_contexts against one client. Connections are keyed by client and origin.
#include <adk/net/http_client.hpp>

#include <adk/core/clock.hpp>
#include <adk/core/json_fields.hpp>  // base64_encode
#include <adk/core/log.hpp>
#include <adk/net/http_stats.hpp>
#include <adk/net/url.hpp>

#include "../core/printable.hpp"
#include "direct_write.hpp"
#include "tls_socket.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/execution_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <array>
#include <atomic>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <random>
#include <type_traits>
#include <variant>

#include <sys/socket.h>

namespace adk::net {

using adk::detail::printable;

namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace detail {
namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

std::string millis(std::chrono::milliseconds d)
{
    if (d.count() % 1000 == 0)
        return std::to_string(d.count() / 1000) + " s";
    return std::to_string(d.count()) + " ms";
}

}  // namespace

namespace {

// The process's connections (http_stats.hpp): counted where they are made and destroyed, not per chunk.
std::atomic<std::int64_t> connections_open{0};
std::atomic<std::int64_t> connections_active{0};

}  // namespace

}  // namespace detail

HttpClientStats http_client_stats() noexcept
{
    using detail::connections_active;
    using detail::connections_open;
    HttpClientStats s;
    s.connections_open = connections_open.load(std::memory_order_relaxed);
    s.connections_active = connections_active.load(std::memory_order_relaxed);
    return s;
}

namespace detail {

// What a read of a response takes at least when its buffer has little room left.
constexpr std::size_t read_room = 4096;

// One socket, plain or TLS, and the bytes read past the last response.
class Connection {
public:
    Connection(std::string origin_, beast::tcp_stream tcp) : origin(std::move(origin_)), stream(std::move(tcp))
    {
        connections_open.fetch_add(1, std::memory_order_relaxed);
    }
    ~Connection() { connections_open.fetch_sub(1, std::memory_order_relaxed); }
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;

    beast::tcp_stream& lowest()
    {
        if (auto* tls = std::get_if<TlsSocket>(&stream))
            return tls->lowest();
        return std::get<beast::tcp_stream>(stream);
    }
    void close() noexcept
    {
        error_code ec;
        lowest().socket().shutdown(tcp::socket::shutdown_both, ec);
        lowest().socket().close(ec);
    }

    std::string origin;
    std::variant<beast::tcp_stream, TlsSocket> stream;
    beast::flat_buffer buffer;
    bool more_to_read = false;  // the last read filled its room: the next reads before it waits (read_more)
    Clock::time_point idle_since;
};

namespace {

// The idle connections of one io_context.
class IdleConnections final : public asio::execution_context::service {
public:
    static asio::execution_context::id id;

    explicit IdleConnections(asio::execution_context& ctx) : service(ctx) {}

    std::unique_ptr<Connection> take(std::uint64_t client, const std::string& origin, Clock::duration max_idle)
    {
        std::lock_guard lock(mutex_);
        auto it = idle_.find({client, origin});
        if (it == idle_.end())
            return nullptr;
        auto& list = it->second;
        // Oldest first: drop the ones idle too long, then take the most recent, the least likely to have been
        // closed by the server.
        const auto now = Clock::now();
        while (!list.empty() && now - list.front()->idle_since > max_idle)
            list.pop_front();
        if (list.empty())
            return nullptr;
        auto c = std::move(list.back());
        list.pop_back();
        return c;
    }

    void put(std::uint64_t client, std::unique_ptr<Connection> c, std::size_t max_per_origin)
    {
        std::lock_guard lock(mutex_);
        c->idle_since = Clock::now();
        auto& list = idle_[{client, c->origin}];
        list.push_back(std::move(c));
        while (list.size() > max_per_origin)
            list.pop_front();
    }

private:
    void shutdown() override
    {
        std::lock_guard lock(mutex_);
        idle_.clear();
    }

    std::mutex mutex_;
    std::map<std::pair<std::uint64_t, std::string>, std::deque<std::unique_ptr<Connection>>> idle_;
};

asio::execution_context::id IdleConnections::id;

IdleConnections& idle_connections_of(const asio::any_io_executor& ex)
{
    return asio::use_service<IdleConnections>(asio::query(ex, asio::execution::context));
}

std::atomic<std::uint64_t> next_client_id{1};

}  // namespace

class HttpPool {
public:
    explicit HttpPool(HttpClientOptions opts) : options(std::move(opts)), tls(ssl::context::tls_client)
    {
        tls.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                        ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
        error_code ec;
        if (!options.ca_file.empty())
            tls.load_verify_file(options.ca_file, ec);
        if (ec)
            throw Error(ec, "cannot load the CA file '" + options.ca_file + "' (HttpClientOptions::ca_file): " +
                                ec.message() + "; give a readable PEM file");
        if (!options.ca_dir.empty())
            tls.add_verify_path(options.ca_dir, ec);
        if (ec)
            throw Error(ec, "cannot use the CA directory '" + options.ca_dir + "' (HttpClientOptions::ca_dir): " +
                                ec.message());
        cache_certificate_extensions(tls.native_handle());
    }

    // The TLS context, with the system's CA certificates (SSL_CERT_FILE, SSL_CERT_DIR, or OpenSSL's default
    // store) loaded on first use: loading them takes OpenSSL 3 about 235 million instructions (RESULTS.md
    // 2026-11-28), which a client that only speaks plain HTTP (an OTLP exporter to a local collector, a local
    // model) never pays.
    ssl::context& tls_context()
    {
        std::call_once(default_paths_loaded, [this] {
            tls.set_default_verify_paths();
            cache_certificate_extensions(tls.native_handle());
        });
        return tls;
    }

    const std::uint64_t id = next_client_id++;
    HttpClientOptions options;

private:
    ssl::context tls;
    std::once_flag default_paths_loaded;
};

// What may stop a response's body from outside the coroutine that reads it: the idle timeout, the body
// timeout, and HttpResponse::abort(). One timer for the whole body, not one per read: a read only notes
// when it started; the timer fires once per idle period and re-arms itself for the pending read's deadline.
// A slow reader (no read pending) is no reason to time out.
//
// DESIGN: the timer's handler and abort() may run on any thread, beside the reading coroutine (an
// io_context run by several threads without a strand), and Asio's sockets are not safe for concurrent use.
// So they never touch the socket object: they shut the connection down through its descriptor
// (shutdown(2)), which makes the pending read end, under a mutex that the exchange also takes when it lets
// the connection go (detach), so that no descriptor is shut down once it is back in the pool or closed.
// Beast's own timeout (tcp_stream::expires_after) would arm, wait on and cancel a timer at every read,
// about 3% of the instructions of a streamed model call.
class BodyWatch : public std::enable_shared_from_this<BodyWatch> {
public:
    enum class Stop { none, idle, too_long, aborted };

    BodyWatch(const asio::any_io_executor& ex, tcp::socket::native_handle_type fd) : timer_(ex), fd_(fd) {}

    // The limits of this body, set before its first read. `body_timeout` counts from now. Either may be
    // milliseconds::max() for "none": both are held to a century, so that no sum overflows.
    void start(std::chrono::milliseconds idle_timeout, std::chrono::milliseconds body_timeout)
    {
        constexpr std::chrono::milliseconds century = std::chrono::hours(24 * 365 * 100);
        std::lock_guard lock(mutex_);
        idle_timeout_ = std::min(idle_timeout, century);
        deadline_ = Clock::now() + std::min(body_timeout, century);
    }

    void read_starts()
    {
        std::lock_guard lock(mutex_);
        reading_ = true;
        read_since_ = Clock::now();
        if (!armed_ && fd_ >= 0)
            arm(std::min(read_since_ + idle_timeout_, deadline_));
    }
    void read_ends()
    {
        std::lock_guard lock(mutex_);
        reading_ = false;
    }

    // From any thread: the pending read (or the next) fails at once.
    void abort() noexcept
    {
        std::lock_guard lock(mutex_);
        stop(Stop::aborted);
    }

    // The exchange lets the connection go: nothing touches its descriptor from now on. Returns why the body
    // was stopped, if it was (such a connection must not be reused).
    Stop detach() noexcept
    {
        std::lock_guard lock(mutex_);
        fd_ = -1;
        if (armed_)
            timer_.cancel();
        return stopped_;
    }

    Stop stopped() const
    {
        std::lock_guard lock(mutex_);
        return stopped_;
    }

private:
    void arm(Clock::time_point due)
    {
        armed_ = true;
        timer_.expires_at(due);
        timer_.async_wait([weak = weak_from_this()](error_code ec) {
            if (auto self = weak.lock(); self && !ec)
                self->on_timer();
        });
    }

    void on_timer()
    {
        std::lock_guard lock(mutex_);
        armed_ = false;
        if (!reading_ || fd_ < 0)
            return;  // the next read arms the timer again
        const auto now = Clock::now();
        if (now >= deadline_) {
            stop(Stop::too_long);
            return;
        }
        const auto due = read_since_ + idle_timeout_;
        if (now < due) {
            arm(std::min(due, deadline_));
            return;
        }
        stop(Stop::idle);
    }

    // Under the mutex. The pending read ends with an error, which read_some reports by stopped().
    void stop(Stop why) noexcept
    {
        if (stopped_ != Stop::none)
            return;
        stopped_ = why;
        if (fd_ >= 0)
            ::shutdown(fd_, SHUT_RDWR);
    }

    mutable std::mutex mutex_;
    adk::Timer timer_;  // on the socket's executor, whose io_context runs while the body is read
    tcp::socket::native_handle_type fd_;
    Clock::duration idle_timeout_ = std::chrono::hours(24);  // until start()
    Clock::time_point deadline_ = Clock::now() + std::chrono::hours(24);
    Clock::time_point read_since_;
    bool reading_ = false;
    bool armed_ = false;
    Stop stopped_ = Stop::none;
};

// A response's body as it lies in the connection's read buffer: the parser hands each piece of the body (a
// chunk's data, or the bytes of a body with a length or up to the end) to the reader, which keeps a view of it
// instead of copying it out; the view is valid until the buffer is read into again. One piece at a time: a
// piece not yet taken is not overwritten (the parser then leaves the next one in the buffer).
class BodyPiece {
public:
    class value_type {
    public:
        std::string_view piece;
    };
    class reader {
    public:
        template <bool isRequest, class Fields>
        reader(http::header<isRequest, Fields>&, value_type& body) : body_(body)
        {
        }
        void init(const boost::optional<std::uint64_t>&, error_code& ec) { ec = {}; }
        std::size_t put(asio::const_buffer bytes, error_code& ec)
        {
            ec = {};
            if (!body_.piece.empty())
                return 0;
            body_.piece = std::string_view(static_cast<const char*>(bytes.data()), bytes.size());
            return bytes.size();
        }
        void finish(error_code& ec) { ec = {}; }

    private:
        value_type& body_;
    };
};

class HttpExchange {
public:
    HttpExchange(std::shared_ptr<HttpPool> pool_, std::unique_ptr<Connection> conn_, IdleConnections& idle_)
        : pool(std::move(pool_)), conn(std::move(conn_)), idle(&idle_)
    {
        if (conn)
            connections_active.fetch_add(1, std::memory_order_relaxed);
    }
    ~HttpExchange() { release(); }

    // Gives the connection back to the pool when the body was read to its end, and closes it otherwise.
    void release()
    {
        const bool stopped = watch && watch->detach() != BodyWatch::Stop::none;
        if (!conn)
            return;
        connections_active.fetch_sub(1, std::memory_order_relaxed);
        if (parser.is_done() && parser.keep_alive() && !stopped) {
            conn->lowest().expires_never();
            conn->more_to_read = false;  // the next response is not there yet
            if (conn->buffer.size() == 0 && conn->buffer.capacity() > read_room) {
                conn->buffer.clear();
                conn->buffer.shrink_to_fit();  // a burst's room is not kept while the connection waits in the pool
            }
            idle->put(pool->id, std::move(conn), pool->options.max_idle_per_origin);
        } else {
            conn->close();
            conn.reset();
        }
    }

    std::shared_ptr<HttpPool> pool;
    std::unique_ptr<Connection> conn;
    IdleConnections* idle;
    http::response_parser<BodyPiece> parser;
    std::shared_ptr<BodyWatch> watch;  // made with the response's head

    // The piece of the body the parser delivered last, in the connection's read buffer (empty: none yet).
    std::string_view& piece() { return parser.get().body().piece; }

    std::string url;
    bool reused = false;
};

namespace {

// The request's bytes, as Beast's write sends them.
std::string serialize(http::request<http::string_body>& req, error_code& ec)
{
    http::request_serializer<http::string_body> serializer(req);
    return message_text(serializer, false, ec);
}

// Writes the request: its bytes in one buffer, written at once when the socket takes them (a request nearly always
// fits its send buffer), without Beast's write walking the header's many buffers or a trip through the scheduler;
// what the socket does not take goes under the exchange's deadline (bounded()).
asio::awaitable<error_code> write_request(beast::tcp_stream& s, http::request<http::string_body>& req)
{
    error_code ec;
    const std::string bytes = serialize(req, ec);
    if (ec)
        co_return ec;
    const std::size_t written = detail::write_some_now(s.socket(), asio::buffer(bytes), ec);
    if (ec != asio::error::would_block)
        co_return ec;  // all of it written, or the failure
    const asio::const_buffer rest = asio::buffer(bytes) + written;
    auto [wec, n] = co_await asio::async_write(s, rest, use_tuple);
    (void)n;
    co_return wec;
}

asio::awaitable<error_code> read_head(beast::tcp_stream& s, beast::flat_buffer& buffer, http::response_parser<BodyPiece>& parser)
{
    auto [ec, n] = co_await http::async_read_header(s, buffer, parser, use_tuple);
    (void)n;
    co_return ec;
}

// The end of the stream where a response was expected or under way, as Beast's reads have it: end_of_stream when
// nothing of a response came, else the parser's verdict (the end of a body that runs to the close, or a response
// cut short: partial_message).
error_code end_of_stream(http::response_parser<BodyPiece>& parser)
{
    if (!parser.got_some())
        return http::error::end_of_stream;
    error_code ec;
    parser.put_eof(ec);
    return ec;
}

// Parses what the connection's buffer already holds, without I/O, up to the first piece of the body
// (x.piece(), empty when the buffer holds none: then the caller reads). Returns the parser's error.
error_code parse_buffered(HttpExchange& x)
{
    auto& buffer = x.conn->buffer;
    x.piece() = {};
    error_code ec;
    while (buffer.size() > 0 && !x.parser.is_done() && x.piece().empty()) {
        const std::size_t used = x.parser.put(buffer.data(), ec);
        buffer.consume(used);  // the piece stays where it is: consume() moves no bytes
        if (ec && ec == http::error::need_more) {  // `ec &&`: the comparison is a call, and a chunk makes three
            ec = {};
            break;
        }
        if (ec || used == 0)
            break;
    }
    return ec;
}

// What a stream that waits for its next bytes keeps of its read buffer: 1 KiB. A buffer grown past it (by a
// burst, a large event, the head) that holds only a few bytes (the CRLF that ends a chunk, which Beast's parser
// takes with the next chunk's size line) is made 1 KiB again before the wait, with those bytes. A model's stream
// waits between all of its chunks: it held 4 KiB (massif, 100 paced streams); a paced chunk fits in 1 KiB and is
// read with no allocation (giving the buffer back at each wait cost an allocation a chunk, 1.1% of its
// instructions).
constexpr std::size_t wait_room = 1024;

void fit_for_wait(beast::flat_buffer& buffer)
{
    std::array<char, 16> kept;
    if (buffer.capacity() <= wait_room || buffer.size() > kept.size())
        return;  // small already, or a piece under way whose bytes stay where they are
    const std::size_t n = asio::buffer_copy(asio::buffer(kept), buffer.data());
    buffer.clear();
    buffer.shrink_to_fit();
    const asio::mutable_buffer room = buffer.prepare(wait_room);
    std::memcpy(room.data(), kept.data(), n);
    buffer.commit(n);
}

// The room a read takes: what the buffer has free, unless that is little (a piece under way fills it): then
// read_room more. After a read that filled its room (`more`: a burst, several chunks at once), burst_room at least,
// so that what waits is read in one call, not a kilobyte a call.
constexpr std::size_t burst_room = 16384;

std::size_t read_room_of(const beast::flat_buffer& buffer, bool more)
{
    const std::size_t free = buffer.capacity() - buffer.size();
    if (more)
        return std::max(free, burst_room);
    return free >= wait_room / 2 ? free : read_room;
}

// Reads more of a response into `buffer`. Called when the buffer holds no whole piece (of the head: no whole
// head; of the body: at most the start of a piece, or the CRLF that ends a chunk), so more bytes must come. It
// waits for the socket to be readable (over TLS, unless OpenSSL holds bytes already), then reads what is there at
// once: no read comes back empty first (Asio tries one before it waits, and a model writes a chunk every 20 to 100
// ms), the completion is not posted a second time, and the buffer holds 1 KiB while the stream waits
// (fit_for_wait). When the last read filled the room it had (`more`, kept by the caller between calls), more bytes
// are likely there: the read is tried first, and waits only if it finds none (a wait costs a system call of its
// own: Asio re-arms the descriptor with epoll_ctl at each). Returns an error, or none when bytes came or the
// readiness was spurious: the caller parses what the buffer holds and calls again. The end of the stream is the
// parser's verdict (end_of_stream).
template <class Stream>
asio::awaitable<error_code> read_more(Stream& s, beast::flat_buffer& buffer, http::response_parser<BodyPiece>& parser,
                                      bool& more)
{
    error_code ec;
    std::size_t n = 0;
    std::size_t room = 0;
    if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
        if (!more) {
            fit_for_wait(buffer);
            auto [wec] = co_await s.socket().async_wait(tcp::socket::wait_read, use_tuple);
            if (wec)
                co_return wec;
        }
        if (!s.socket().non_blocking())
            s.socket().non_blocking(true, ec);  // a readiness that was spurious must not block the thread
        if (!ec) {
            room = read_room_of(buffer, more);
            n = s.socket().read_some(buffer.prepare(room), ec);
        }
    } else {
        if (!more && s.must_wait()) {
            fit_for_wait(buffer);
            if (const error_code wec = co_await s.wait())
                co_return wec;
        }
        room = read_room_of(buffer, more);
        n = s.read_now(buffer.prepare(room), ec);
    }
    more = !ec && n == room;
    buffer.commit(n);
    if (!ec)
        co_return ec;
    if (ec == asio::error::would_block || ec == asio::error::try_again)
        co_return error_code{};  // nothing after all: the caller waits again
    if (ec == asio::error::eof)
        co_return end_of_stream(parser);
    co_return ec;
}

// Writes the request and reads the response's head, on a plain connection.
asio::awaitable<error_code> exchange_head(beast::tcp_stream& s, http::request<http::string_body>& req,
                                          beast::flat_buffer& buffer, http::response_parser<BodyPiece>& parser)
{
    error_code ec = co_await write_request(s, req);
    if (!ec)
        ec = co_await read_head(s, buffer, parser);
    co_return ec;
}

// Writes the request over TLS and reads the response's head (what Beast's write and read_header do over a
// stream of theirs); the head is bounded by the parser's header limit.
asio::awaitable<error_code> exchange_head(TlsSocket& s, http::request<http::string_body>& req, beast::flat_buffer& buffer,
                                          http::response_parser<BodyPiece>& parser)
{
    error_code ec;
    const std::string bytes = serialize(req, ec);
    if (ec)
        co_return ec;
    if (const error_code wec = co_await s.write(bytes))
        co_return wec;
    bool more = false;
    while (true) {
        while (buffer.size() > 0 && !parser.is_header_done()) {
            const std::size_t used = parser.put(buffer.data(), ec);
            buffer.consume(used);
            if (ec == http::error::need_more) {
                ec = {};
                break;
            }
            if (ec)
                co_return ec;
            if (used == 0)
                break;
        }
        if (parser.is_header_done())
            co_return error_code{};
        if (const error_code rec = co_await read_more(s, buffer, parser, more))
            co_return rec;
    }
}

// Runs `op`, an exchange on `socket` (plain or under TLS), under a deadline `limit` from now on adk::Clock: past it,
// the connection is shut down (so that a wait under way ends) and the op's error is beast::error::timeout.
asio::awaitable<error_code> bounded(tcp::socket& socket, std::chrono::milliseconds limit, asio::awaitable<error_code> op)
{
    auto watch = std::make_shared<BodyWatch>(socket.get_executor(), socket.native_handle());
    watch->start(std::chrono::milliseconds::max(), limit);
    watch->read_starts();
    error_code ec = co_await std::move(op);
    watch->read_ends();
    if (watch->detach() == BodyWatch::Stop::too_long)
        ec = beast::error::timeout;
    co_return ec;
}

// The outcome of one attempt.
struct Attempt {
    std::unique_ptr<HttpExchange> exchange;
    error_code ec;
    std::string message;
    bool stale = false;      // a pooled connection the server had closed: try again on a new one at once
    bool retryable = false;  // a connection failure worth retrying after a backoff
};

// A TLS failure is worth retrying only when the peer cut the stream; a certificate will not change.
bool connection_error_retryable(const error_code& ec)
{
    if (ec == asio::ssl::error::stream_truncated)
        return true;
    return ec != asio::error::operation_aborted && ec.category() != asio::error::get_ssl_category();
}

bool is_ip_literal(const std::string& host)
{
    error_code ec;
    asio::ip::make_address(host, ec);
    return !ec;
}

std::string tls_failure(SSL* ssl, const Url& url, const error_code& ec)
{
    std::string msg = "TLS handshake with " + url.authority() + " failed: " + ec.message();
    const long verify = SSL_get_verify_result(ssl);
    if (verify == X509_V_OK)
        return msg;
    msg += std::string(" (") + X509_verify_cert_error_string(verify) + ")";
    if (verify == X509_V_ERR_HOSTNAME_MISMATCH || verify == X509_V_ERR_IP_ADDRESS_MISMATCH)
        return msg + "; the certificate does not name '" + url.host +
               "': use the host name the certificate was issued for";
    return msg + "; the server's certificate is not trusted: add the CA that signed it with "
                 "HttpClientOptions::ca_file or the SSL_CERT_FILE environment variable";
}

asio::awaitable<Attempt> connect(HttpPool& pool, const Url& url, const std::optional<Url>& proxy)
{
    Attempt a;
    const auto& opts = pool.options;
    auto ex = co_await asio::this_coro::executor;
    const Url& first_hop = proxy ? *proxy : url;
    tcp::resolver resolver(ex);
    auto [rec, endpoints] = co_await resolver.async_resolve(first_hop.host, first_hop.port, use_tuple);
    if (rec) {
        a.ec = rec;
        a.message = "cannot resolve '" + first_hop.host + "': " + rec.message() + "; check the host name" +
                    (proxy ? " of the proxy" : " in the base URL");
        a.retryable = rec != asio::error::operation_aborted;
        co_return a;
    }
    beast::tcp_stream tcp_stream(ex);
    tcp_stream.expires_after(opts.connect_timeout);
    auto [cec, ep] = co_await tcp_stream.async_connect(endpoints, use_tuple);
    (void)ep;
    if (cec) {
        a.ec = cec;
        a.message = cec == beast::error::timeout
                        ? "connecting to " + first_hop.origin() + " timed out after " + millis(opts.connect_timeout)
                        : "cannot connect to " + first_hop.origin() + ": " + cec.message() +
                              "; check that the server runs and that the URL is right";
        a.retryable = cec != asio::error::operation_aborted;
        co_return a;
    }
    tcp_stream.socket().set_option(tcp::no_delay(true));

    if (proxy) {
        http::request<http::empty_body> req{http::verb::connect, url.authority(), 11};
        req.set(http::field::host, url.authority());
        req.set(http::field::user_agent, opts.user_agent);
        if (!proxy->userinfo.empty())
            req.set(http::field::proxy_authorization,
                    "Basic " + adk::json_fields::base64_encode(percent_decode(proxy->userinfo)));
        auto [wec, wn] = co_await http::async_write(tcp_stream, req, use_tuple);
        (void)wn;
        beast::flat_buffer buffer;
        http::response_parser<http::empty_body> parser;
        parser.skip(true);  // a 2xx answer to CONNECT has no body: the tunnel starts after the head
        error_code hec = wec;
        if (!hec) {
            auto [e, hn] = co_await http::async_read_header(tcp_stream, buffer, parser, use_tuple);
            (void)hn;
            hec = e;
        }
        if (hec) {
            a.ec = hec;
            a.message = "the proxy " + proxy->origin() + " failed while opening a tunnel to " + url.authority() +
                        ": " + hec.message();
            a.retryable = hec != asio::error::operation_aborted;
            co_return a;
        }
        if (parser.get().result_int() / 100 != 2) {
            a.ec = make_error_code(errc::invalid_argument);
            a.message = "the proxy " + proxy->origin() + " refused to open a tunnel to " + url.authority() +
                        ": HTTP " + std::to_string(parser.get().result_int()) + " " +
                        std::string(parser.get().reason()) +
                        "; check HTTPS_PROXY / NO_PROXY and the proxy's credentials";
            co_return a;
        }
    }

    tcp_stream.expires_never();  // a TLS handshake has a deadline of its own (bounded)
    if (!url.tls()) {
        a.exchange = std::make_unique<HttpExchange>(nullptr, std::make_unique<Connection>(url.origin(), std::move(tcp_stream)),
                                                    idle_connections_of(ex));
        co_return a;
    }

    auto conn = std::make_unique<Connection>(url.origin(), beast::tcp_stream(ex));
    auto& tls = conn->stream.emplace<TlsSocket>(std::move(tcp_stream), pool.tls_context().native_handle());
    SSL* ssl = tls.native_handle();
    if (!is_ip_literal(url.host)) {
        // SSL_set_tlsext_host_name is a macro with a C-style cast.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
        const bool sni = SSL_set_tlsext_host_name(ssl, url.host.c_str()) == 1;
#pragma GCC diagnostic pop
        if (!sni) {
            a.ec = error_code(static_cast<int>(::ERR_get_error()), asio::error::get_ssl_category());
            a.message = "cannot set the TLS server name '" + url.host + "': " + a.ec.message();
            co_return a;
        }
    }
    SSL_set_verify(ssl, SSL_VERIFY_PEER, nullptr);
    // OpenSSL checks the name itself (and reports a mismatch as such, which a verify callback cannot).
    X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
    const int name_set = is_ip_literal(url.host) ? X509_VERIFY_PARAM_set1_ip_asc(param, url.host.c_str())
                                                 : X509_VERIFY_PARAM_set1_host(param, url.host.c_str(), 0);
    if (name_set != 1) {
        a.ec = make_error_code(errc::invalid_argument);
        a.message = "cannot check TLS certificates for the host '" + url.host + "'";
        co_return a;
    }
    auto handshake = tls.handshake();
    const error_code hec = co_await bounded(tls.lowest().socket(), opts.connect_timeout, std::move(handshake));
    if (hec) {
        a.ec = hec;
        a.message = hec == beast::error::timeout
                        ? "the TLS handshake with " + url.authority() + " timed out after " +
                              millis(opts.connect_timeout)
                        : tls_failure(ssl, url, hec);
        a.retryable = connection_error_retryable(hec) || hec == beast::error::timeout;
        co_return a;
    }
    a.exchange = std::make_unique<HttpExchange>(nullptr, std::move(conn), idle_connections_of(ex));
    co_return a;
}

asio::awaitable<Attempt> attempt(const std::shared_ptr<HttpPool>& pool, const HttpRequest& request, const Url& url,
                                 const std::optional<Url>& proxy, bool allow_reuse)
{
    const auto& opts = pool->options;
    auto ex = co_await asio::this_coro::executor;
    Attempt a;
    auto& idle = idle_connections_of(ex);
    std::unique_ptr<Connection> pooled = allow_reuse ? idle.take(pool->id, url.origin(), opts.pool_idle_time) : nullptr;
    if (pooled) {
        a.exchange = std::make_unique<HttpExchange>(pool, std::move(pooled), idle);
        a.exchange->reused = true;
    } else {
        a = co_await connect(*pool, url, proxy);
        if (!a.exchange)
            co_return a;
        a.exchange->pool = pool;
    }
    HttpExchange& x = *a.exchange;
    x.url = request.url;  // for messages, redacted when one is made

    const http::verb verb = http::string_to_verb(request.method);
    http::request<http::string_body> req{verb, url.target, 11};
    const bool default_port = url.port == (url.tls() ? "443" : "80");
    req.set(http::field::host, default_port ? (url.host.find(':') != std::string::npos ? "[" + url.host + "]" : url.host)
                                            : url.authority());
    req.set(http::field::user_agent, opts.user_agent);
    for (const auto& [name, value] : request.headers)
        req.insert(name, value);
    req.body() = request.body;
    if (!request.body.empty() || verb == http::verb::post || verb == http::verb::put || verb == http::verb::patch)
        req.prepare_payload();

    Connection& c = *x.conn;
    x.parser.body_limit(opts.max_body_bytes);
    error_code ec;
    if (auto* plain = std::get_if<beast::tcp_stream>(&c.stream)) {
        auto head = exchange_head(*plain, req, c.buffer, x.parser);
        ec = co_await bounded(plain->socket(), opts.first_byte_timeout, std::move(head));
    } else {
        auto& tls = std::get<TlsSocket>(c.stream);
        auto head = exchange_head(tls, req, c.buffer, x.parser);
        ec = co_await bounded(tls.lowest().socket(), opts.first_byte_timeout, std::move(head));
    }
    if (ec) {
        const bool reused = x.reused;
        a.exchange.reset();  // closes the socket
        a.ec = ec;
        if (ec == asio::error::operation_aborted) {
            a.message = request.method + " " + redact_url(request.url) + " was cancelled";
            co_return a;
        }
        if (reused && ec != beast::error::timeout) {
            a.stale = true;
            co_return a;
        }
        a.message = ec == beast::error::timeout
                        ? "no response from " + url.origin() + " within " + millis(opts.first_byte_timeout) +
                              " (HttpClientOptions::first_byte_timeout)"
                        : request.method + " " + redact_url(request.url) +
                              " failed before a response came: " + ec.message();
        a.retryable = true;
        co_return a;
    }
    x.watch = std::make_shared<BodyWatch>(c.lowest().get_executor(), c.lowest().socket().native_handle());
    x.watch->start(opts.idle_timeout, opts.body_timeout);
    co_return a;
}

double unit_random()
{
    thread_local std::mt19937_64 rng{std::random_device{}()};
    return std::uniform_real_distribution<double>(0.0, 1.0)(rng);
}

asio::awaitable<void> wait(std::chrono::milliseconds delay, const std::string& what)
{
    adk::Timer timer(co_await asio::this_coro::executor);
    timer.expires_after(delay);
    auto [ec] = co_await timer.async_wait(use_tuple);
    if (ec)
        throw Error(ec, what + " was cancelled while waiting to retry");
}

}  // namespace
}  // namespace detail

// ---- HttpResponse ----

HttpResponse::HttpResponse(std::unique_ptr<detail::HttpExchange> exchange) : exchange_(std::move(exchange)) {}
HttpResponse::HttpResponse(HttpResponse&&) noexcept = default;
HttpResponse& HttpResponse::operator=(HttpResponse&&) noexcept = default;
HttpResponse::~HttpResponse() = default;

unsigned HttpResponse::status() const noexcept { return exchange_ ? exchange_->parser.get().result_int() : 0; }

std::string_view HttpResponse::header(std::string_view name) const
{
    if (!exchange_)
        return {};
    const auto& head = exchange_->parser.get();
    auto it = head.find(beast::string_view(name.data(), name.size()));
    if (it == head.end())
        return {};
    return {it->value().data(), it->value().size()};
}

bool HttpResponse::reused_connection() const noexcept { return exchange_ && exchange_->reused; }

asio::awaitable<std::string_view> HttpResponse::read_some()
{
    if (!exchange_ || !exchange_->conn)
        co_return std::string_view{};
    auto& x = *exchange_;
    while (!x.parser.is_done()) {
        auto& c = *x.conn;
        // Bytes already read are parsed here, without a trip through the scheduler: Beast's async_read_some
        // would post its completion, so chunks that arrived in one read would leave one per turn.
        if (const error_code ec = detail::parse_buffered(x))
            fail(ec);
        if (!x.piece().empty())
            co_return x.piece();
        if (x.parser.is_done())
            break;
        x.watch->read_starts();
        error_code ec;
        if (auto* plain = std::get_if<beast::tcp_stream>(&c.stream))
            ec = co_await detail::read_more(*plain, c.buffer, x.parser, c.more_to_read);
        else
            ec = co_await detail::read_more(std::get<detail::TlsSocket>(c.stream), c.buffer, x.parser, c.more_to_read);
        x.watch->read_ends();
        if (ec)
            fail(ec);
    }
    x.release();
    co_return std::string_view{};
}

void HttpResponse::fail(const boost::system::error_code& ec)
{
    auto& x = *exchange_;
    const auto why = x.watch->stopped();
    x.release();  // the body is not done: closes the connection
    const auto& opts = x.pool->options;
    const std::string what = "the response of " + redact_url(x.url);
    switch (why) {
    case detail::BodyWatch::Stop::idle:
        throw Error(beast::error::timeout, what + " stalled: no bytes for " + detail::millis(opts.idle_timeout) +
                                               " (HttpClientOptions::idle_timeout)");
    case detail::BodyWatch::Stop::too_long:
        throw Error(beast::error::timeout, what + " took longer than " + detail::millis(opts.body_timeout) +
                                               " (HttpClientOptions::body_timeout)");
    case detail::BodyWatch::Stop::aborted:
        throw Error(asio::error::operation_aborted, "reading " + what + " was cancelled");
    case detail::BodyWatch::Stop::none: break;
    }
    if (ec == asio::error::operation_aborted)
        throw Error(ec, "reading " + what + " was cancelled");
    if (ec == http::error::body_limit)
        throw Error(errc::bad_response, what + " is over " + std::to_string(opts.max_body_bytes) +
                                            " bytes (HttpClientOptions::max_body_bytes): the server sent more than "
                                            "any answer needs; raise the limit if it is right");
    throw Error(ec, "the connection broke while reading " + what + ": " + ec.message());
}

void HttpResponse::abort() noexcept
{
    if (exchange_ && exchange_->watch)
        exchange_->watch->abort();
}

asio::awaitable<std::string> HttpResponse::read_all(std::size_t limit)
{
    std::string body;
    while (true) {
        std::string_view bytes = co_await read_some();
        if (bytes.empty())
            break;
        if (body.size() + bytes.size() > limit)
            throw Error(errc::invalid_argument, "the response body is larger than " + std::to_string(limit) +
                                                    " bytes; read it with read_some()");
        body.append(bytes);
    }
    co_return body;
}

// ---- HttpClient ----

HttpClient::HttpClient(HttpClientOptions options) : pool_(std::make_shared<detail::HttpPool>(std::move(options))) {}
HttpClient::~HttpClient() = default;

const HttpClientOptions& HttpClient::options() const noexcept { return pool_->options; }

asio::awaitable<HttpResponse> HttpClient::send(HttpRequest request)
{
    const Url url = parse_url(request.url);
    if (http::string_to_verb(request.method) == http::verb::unknown)
        throw Error(errc::invalid_argument, "unknown HTTP method '" + printable(request.method) + "'");
    const auto& opts = pool_->options;
    for (const auto& [name, value] : request.headers)
        validate_header(name, value);
    validate_header("user-agent", opts.user_agent);
    const std::optional<Url> proxy = proxy_for(url, url.tls() ? opts.https_proxy : opts.http_proxy, opts.no_proxy);
    // For messages only: made when one is (redacting a URL costs a copy of it at every request otherwise).
    auto what = [&request] { return request.method + " " + redact_url(request.url); };

    for (int retry = 0;; ++retry) {
        auto a = co_await detail::attempt(pool_, request, url, proxy, true);
        if (a.stale) {
            if (log_enabled(LogLevel::debug))
                log(LogLevel::debug, what() + ": a pooled connection was closed by the server; reconnecting");
            a = co_await detail::attempt(pool_, request, url, proxy, false);
        }
        std::chrono::milliseconds delay{0};
        std::string reason;
        if (!a.exchange) {
            if (!a.retryable || retry >= opts.retry.max_retries)
                throw Error(a.ec, a.message);
            delay = backoff_delay(retry + 1, opts.retry, detail::unit_random());
            reason = a.message;
        } else {
            HttpResponse response(std::move(a.exchange));
            const unsigned status = response.status();
            if (status / 100 == 2 || retry >= opts.retry.max_retries ||
                !retryable_status(status, response.header("x-should-retry")))
                co_return response;
            auto hint = retry_after_hint(response.header("retry-after-ms"), response.header("retry-after"),
                                         std::chrono::system_clock::now(), opts.retry);
            std::string body;
            try {
                body = co_await response.read_all(std::size_t{1} << 20);
            } catch (const Error&) {
                // the hint in the body is lost; the backoff still applies
            }
            if (!hint && request.retry_hint)
                hint = bounded_hint(request.retry_hint(body), opts.retry);
            delay = hint.value_or(backoff_delay(retry + 1, opts.retry, detail::unit_random()));
            reason = "HTTP " + std::to_string(status);
        }
        log(LogLevel::warning, what() + ": " + reason + "; retrying in " + std::to_string(delay.count()) +
                                   " ms (retry " + std::to_string(retry + 1) + " of " +
                                   std::to_string(opts.retry.max_retries) + ")");
        co_await detail::wait(delay, what());
    }
}

std::shared_ptr<HttpClient> default_http_client()
{
    static const auto client = std::make_shared<HttpClient>();
    return client;
}

}  // namespace adk::net
