#include "server.hpp"

#include "render.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <atomic>
#include <map>
#include <stdexcept>
#include <variant>

namespace adk::mock_llm {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

struct Conn {
    std::variant<beast::tcp_stream, ssl::stream<beast::tcp_stream>> stream;
    beast::tcp_stream& lowest()
    {
        return std::visit([](auto& s) -> beast::tcp_stream& { return beast::get_lowest_layer(s); }, stream);
    }
    void close()
    {
        error_code ec;
        lowest().socket().shutdown(tcp::socket::shutdown_both, ec);
        lowest().socket().close(ec);
    }
};

// The body frames of a replayed recording: cut after each blank line, so that delays and splits apply per
// event as they do for scripted answers.
std::vector<std::string> replay_frames(const std::string& body)
{
    std::vector<std::string> frames;
    std::size_t start = 0;
    for (std::size_t i = 0; i < body.size(); ++i) {
        const bool lf_lf = body.compare(i, 2, "\n\n") == 0;
        const bool crlf_crlf = body.compare(i, 4, "\r\n\r\n") == 0;
        if (lf_lf || crlf_crlf) {
            const std::size_t end = i + (lf_lf ? 2 : 4);
            frames.push_back(body.substr(start, end - start));
            start = end;
            i = end - 1;
        }
    }
    if (start < body.size())
        frames.push_back(body.substr(start));
    return frames;
}

// Replaces each "{t}" with the monotonic clock in nanoseconds: a benchmark that reads the clock when the
// chunk's event reaches it measures the time from this write to that delivery.
void stamp_frame(std::string& frame)
{
    const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::steady_clock::now().time_since_epoch())
                         .count();
    const std::string stamp = std::to_string(now);
    for (auto at = frame.find("{t}"); at != std::string::npos; at = frame.find("{t}", at + stamp.size()))
        frame.replace(at, 3, stamp);
}

}  // namespace

std::string ReceivedRequest::header(const std::string& lower_name) const
{
    for (const auto& [name, value] : headers)
        if (name == lower_name)
            return value;
    return {};
}

class Server::Impl : public std::enable_shared_from_this<Impl> {
public:
    Impl(asio::any_io_executor ex, ServerOptions opts)
        : options(std::move(opts)), executor(std::move(ex)), acceptor(executor), tls(ssl::context::tls_server)
    {
        if (options.tls) {
            tls.use_certificate_chain_file(options.cert_file);
            tls.use_private_key_file(options.key_file, ssl::context::pem);
        }
        if (!options.replay_body.empty())
            frames = replay_frames(options.replay_body);
        if (options.script)
            validate_script(*options.script);  // a bad script is refused here, not while answering
    }

    asio::awaitable<void> accept_loop()
    {
        auto self = shared_from_this();
        while (true) {
            auto [ec, socket] = co_await acceptor.async_accept(use_tuple);
            if (ec)
                co_return;
            socket.set_option(tcp::no_delay(true));
            auto conn = std::make_shared<Conn>(Conn{beast::tcp_stream(std::move(socket))});
            if (options.tls)
                conn->stream.emplace<ssl::stream<beast::tcp_stream>>(
                    beast::tcp_stream(std::move(std::get<beast::tcp_stream>(conn->stream))), tls);
            const std::size_t id = next_id++;
            live[id] = conn;
            accepted++;
            open++;
            asio::co_spawn(executor, session(self, conn, id), asio::detached);
        }
    }

    // Whatever ends a connection (its peer, a failure while answering), it is closed and forgotten.
    static asio::awaitable<void> session(std::shared_ptr<Impl> self, std::shared_ptr<Conn> conn, std::size_t id)
    {
        try {
            if (auto* s = std::get_if<beast::tcp_stream>(&conn->stream)) {
                co_await self->serve(*s, *conn);
            } else {
                auto& tls = std::get<ssl::stream<beast::tcp_stream>>(conn->stream);
                auto [ec] = co_await tls.async_handshake(ssl::stream_base::server, use_tuple);
                if (!ec)
                    co_await self->serve(tls, *conn);
            }
        } catch (const std::exception& e) {
            ++self->failed;
            std::lock_guard lock(self->mutex);
            self->last_failure = e.what();
        }
        conn->close();
        self->live.erase(id);
        self->open--;
    }

    template <class Stream>
    asio::awaitable<void> serve(Stream& s, Conn& conn)
    {
        beast::flat_buffer buffer;
        buffer.reserve(16384);  // a request in one read or two, not a read per doubling of the buffer
        while (true) {
            http::request_parser<http::string_body> parser;
            parser.body_limit(std::size_t{64} << 20);
            auto [ec, n] = co_await http::async_read(s, buffer, parser, use_tuple);
            (void)n;
            if (ec)
                co_return;
            auto& req = parser.get();
            ReceivedRequest received;
            received.method = std::string(req.method_string());
            received.target = std::string(req.target());
            for (const auto& field : req) {
                std::string name(field.name_string());
                std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
                received.headers.emplace_back(std::move(name), std::string(field.value()));
            }
            received.body = req.body();
            std::size_t request_number = 0;
            {
                std::lock_guard lock(mutex);
                request_number = received_requests.size();
                received_requests.push_back(received);
            }
            const bool keep_alive = req.keep_alive();
            const bool still_open = co_await answer(s, conn, received, request_number);
            if (!still_open || !keep_alive)
                co_return;
        }
    }

    template <class Stream>
    asio::awaitable<bool> answer(Stream& s, Conn& conn, const ReceivedRequest& req, std::size_t request_number)
    {
        Format format = Format::openai;
        bool gemini_stream = false;
        std::string model;
        const bool known = format_of_path(req.target, format, gemini_stream, model);
        Answer a;
        if (options.status && (options.status_times == 0 || request_number < options.status_times)) {
            a.status = *options.status;
            a.content_type = "application/json";
            a.body = boost::json::serialize(boost::json::object{
                {"error", {{"code", a.status}, {"message", "mock-llm: status set by --status"}}}});
            if (!options.retry_after.empty())
                a.headers.emplace_back("retry-after", options.retry_after);
        } else if (!frames.empty()) {
            a.streamed = true;
            a.content_type = options.replay_content_type;
            a.plan.head = frames;
        } else if (!known || !options.script) {
            a.status = 404;
            a.content_type = "application/json";
            a.body = R"({"error":{"code":404,"message":"mock-llm serves POST .../models/M:streamGenerateContent, )"
                     R"(.../models/M:generateContent, .../chat/completions and .../messages"}})";
        } else {
            a = render(*options.script, format, gemini_stream, model, req.body);
        }

        if (!a.streamed) {
            http::response<http::string_body> res{static_cast<http::status>(a.status), 11};
            res.set(http::field::content_type, a.content_type);
            for (const auto& [name, value] : a.headers)
                res.set(name, value);
            res.body() = std::move(a.body);
            res.prepare_payload();
            auto [ec, n] = co_await http::async_write(s, res, use_tuple);
            (void)n;
            co_return !ec;
        }

        http::response<http::empty_body> res{static_cast<http::status>(a.status), 11};
        res.set(http::field::content_type, a.content_type);
        res.set(http::field::cache_control, "no-cache");
        for (const auto& [name, value] : a.headers)
            res.set(name, value);
        res.chunked(true);
        http::response_serializer<http::empty_body> sr{res};
        if (auto [ec, n] = co_await http::async_write_header(s, sr, use_tuple); ec)
            co_return false;

        asio::steady_timer timer(executor);
        std::size_t written_frames = 0;
        std::size_t body_bytes = 0;
        auto write_frame = [&](std::string& frame) -> asio::awaitable<bool> {
            if (written_frames++ > 0 && options.chunk_delay.count() > 0) {
                timer.expires_after(options.chunk_delay);
                co_await timer.async_wait(use_tuple);
            }
            if (options.stamp)
                stamp_frame(frame);  // at the write, after the delay
            const std::size_t piece = options.split_bytes ? options.split_bytes : frame.size();
            for (std::size_t at = 0; at < frame.size(); at += piece) {
                std::size_t len = std::min(piece, frame.size() - at);
                bool cut = false;
                if (options.disconnect_after_bytes && body_bytes + len >= *options.disconnect_after_bytes) {
                    len = *options.disconnect_after_bytes - body_bytes;
                    cut = true;
                }
                if (len > 0) {
                    auto [ec, n] = co_await asio::async_write(s, http::make_chunk(asio::buffer(frame.data() + at, len)),
                                                              use_tuple);
                    (void)n;
                    if (ec)
                        co_return false;
                    body_bytes += len;
                    written += len;
                }
                if (cut) {
                    conn.close();
                    co_return false;
                }
            }
            co_return true;
        };
        for (auto& frame : a.plan.head)
            if (!co_await write_frame(frame))
                co_return false;
        for (std::size_t i = 0; i < a.plan.text_count; ++i) {
            std::string frame = a.plan.text_frame(i);
            if (!co_await write_frame(frame))
                co_return false;
        }
        for (auto& frame : a.plan.tail)
            if (!co_await write_frame(frame))
                co_return false;
        auto [ec, n] = co_await asio::async_write(s, http::make_chunk_last(), use_tuple);
        (void)n;
        co_return !ec;
    }

    ServerOptions options;
    unsigned short port = 0;
    asio::any_io_executor executor;  // run by one thread
    tcp::acceptor acceptor;
    ssl::context tls;
    std::vector<std::string> frames;
    std::map<std::size_t, std::shared_ptr<Conn>> live;  // on the executor's thread
    std::size_t next_id = 0;
    std::atomic<std::size_t> accepted{0};
    std::atomic<std::size_t> open{0};
    std::atomic<std::size_t> written{0};
    std::atomic<std::size_t> failed{0};
    mutable std::mutex mutex;
    std::string last_failure;
    std::vector<ReceivedRequest> received_requests;
};

Server::Server(asio::any_io_executor ex, ServerOptions options)
    : impl_(std::make_shared<Impl>(std::move(ex), std::move(options)))
{
}

Server::~Server() { stop(); }

void Server::start()
{
    const tcp::endpoint ep(asio::ip::make_address(impl_->options.host), impl_->options.port);
    impl_->acceptor.open(ep.protocol());
    impl_->acceptor.set_option(tcp::acceptor::reuse_address(true));
    impl_->acceptor.bind(ep);
    impl_->acceptor.listen();
    impl_->port = impl_->acceptor.local_endpoint().port();
    asio::co_spawn(impl_->executor, impl_->accept_loop(), asio::detached);
}

void Server::stop()
{
    asio::dispatch(impl_->executor, [impl = impl_] {
        error_code ec;
        impl->acceptor.close(ec);
        for (auto& [id, conn] : impl->live)
            conn->close();
    });
}

unsigned short Server::port() const { return impl_->port; }

std::string Server::base_url() const
{
    return std::string(impl_->options.tls ? "https" : "http") + "://" + impl_->options.host + ":" +
           std::to_string(port());
}

std::vector<ReceivedRequest> Server::requests() const
{
    std::lock_guard lock(impl_->mutex);
    return impl_->received_requests;
}

std::size_t Server::connections_accepted() const { return impl_->accepted; }
std::size_t Server::open_connections() const { return impl_->open; }
std::size_t Server::body_bytes_written() const { return impl_->written; }
std::size_t Server::failed_connections() const { return impl_->failed; }

}  // namespace adk::mock_llm
