#include <adk/net/http_server.hpp>

#include <adk/net/url.hpp>

#include "http_server_impl.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <string>
#include <utility>

#include <sys/socket.h>

namespace adk::net {

using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

void check_head(std::string_view content_type, const HeaderList& headers)
{
    validate_header("content-type", content_type);
    for (const auto& [name, value] : headers)
        validate_header(name, value);
}

}  // namespace

std::string_view IncomingRequest::header(std::string_view lower_case_name) const
{
    for (const auto& [name, value] : headers)
        if (name == lower_case_name)
            return value;
    return {};
}

asio::awaitable<void> ResponseWriter::send(unsigned status, std::string_view content_type, std::string_view body)
{
    const HeaderList none;
    co_await send(status, content_type, body, none);
}

asio::awaitable<void> ResponseWriter::send(unsigned status, std::string_view content_type, std::string_view body,
                                           const HeaderList& headers)
{
    if (answered_)
        throw Error(errc::invalid_argument, "this request was answered already: send() once, or stream");
    const HeaderList all = with_extra(headers);
    check_head(content_type, all);
    answered_ = true;
    co_await write_head(status, content_type, all, &body);
}

asio::awaitable<void> ResponseWriter::begin_stream(unsigned status, std::string_view content_type)
{
    const HeaderList none;
    co_await begin_stream(status, content_type, none);
}

asio::awaitable<void> ResponseWriter::begin_stream(unsigned status, std::string_view content_type,
                                                   const HeaderList& headers)
{
    if (answered_)
        throw Error(errc::invalid_argument, "this request was answered already: send() once, or stream");
    const HeaderList all = with_extra(headers);
    check_head(content_type, all);
    answered_ = true;
    streaming_ = true;
    co_await write_head(status, content_type, all, nullptr);
}

asio::awaitable<void> ResponseWriter::write(std::string_view data)
{
    if (!streaming_)
        throw Error(errc::invalid_argument, "write() needs begin_stream() first");
    if (!data.empty())
        co_await write_chunk(data, false);
}

asio::awaitable<void> ResponseWriter::end_stream()
{
    co_await end_stream(std::string_view());
}

asio::awaitable<void> ResponseWriter::end_stream(std::string_view last_data)
{
    if (!streaming_)
        throw Error(errc::invalid_argument, "end_stream() needs begin_stream() first");
    streaming_ = false;
    co_await write_chunk(last_data, true);
}

asio::awaitable<void> ResponseWriter::flush()
{
    co_await flush_kept();
}

bool ResponseWriter::write_chunk_now(std::string_view) noexcept
{
    return false;  // not called: can_write_now() is false without chunk_now_ready()
}

asio::awaitable<void> ResponseWriter::flush_kept()
{
    co_return;
}

void ResponseWriter::add_header(std::string name, std::string value)
{
    extra_headers_.emplace_back(std::move(name), std::move(value));
}

HeaderList ResponseWriter::with_extra(const HeaderList& headers) const
{
    if (extra_headers_.empty())
        return headers;
    HeaderList all = headers;
    all.insert(all.end(), extra_headers_.begin(), extra_headers_.end());
    return all;
}

void ResponseWriter::next_request() noexcept
{
    extra_headers_.clear();
    answered_ = false;
    streaming_ = false;
    client_gone_ = false;
    on_client_gone_ = nullptr;
}

void ResponseWriter::on_client_gone(std::function<void()> callback)
{
    if (client_gone_) {
        if (callback)
            callback();
        return;
    }
    on_client_gone_ = std::move(callback);
}

void ResponseWriter::notify_client_gone()
{
    if (client_gone_)
        return;
    client_gone_ = true;
    if (auto callback = std::move(on_client_gone_))
        callback();
}

asio::awaitable<void> HttpServer::Impl::accept_loop()
{
    auto self = shared_from_this();
    std::chrono::milliseconds backoff{0};
    bool spare_given = false;  // the spare descriptor was closed for the connection accepted next
    const std::size_t most = options.max_connections + options.reserved_connections;
    while (true) {
        // At the cap and its reserve, wait for a connection to close (it cancels the wait), checking again after
        // each.
        while (open >= most && acceptor.is_open()) {
            waiting_for_room = true;
            room.expires_after(std::chrono::seconds(1));
            if (open >= most) {
                auto [wec] = co_await room.async_wait(use_tuple);
                (void)wec;
            }
            waiting_for_room = false;
        }
        asio::any_io_executor conn_executor = options.single_threaded ? executor : asio::make_strand(executor);
        auto [ec, socket] = co_await acceptor.async_accept(conn_executor, use_tuple);
        if (ec) {
            if (ec == asio::error::operation_aborted || !acceptor.is_open())
                co_return;
            // Out of descriptors: the spare one goes to the connection that waits, served as a reserved one (a
            // health check is answered, anything else 503), and comes back when it closes.
            if ((ec == asio::error::no_descriptors || ec == boost::system::errc::too_many_files_open_in_system) &&
                spare_fd >= 0) {
                close_spare();
                spare_given = true;
                continue;
            }
            // Out of descriptors with no spare, or memory: the pending connection stays queued, so accepting
            // again at once would spin. Wait, longer each time, while the open connections go on.
            backoff = std::clamp(backoff * 2, std::chrono::milliseconds(10), std::chrono::milliseconds(1000));
            room.expires_after(backoff);
            auto [wec] = co_await room.async_wait(use_tuple);
            (void)wec;
            if (spare_given)
                spare_given = !open_spare();  // taken by another thread meanwhile: kept again once there is room
            else
                open_spare();
            continue;
        }
        backoff = std::chrono::milliseconds(0);
        error_code ignored;
        socket.set_option(tcp::no_delay(true), ignored);
        const std::size_t id = next_id++;
        detail::Admission admission;
        admission.reserved = open >= options.max_connections || spare_given;
        admission.used_spare = std::exchange(spare_given, false);
        accepted++;
        open++;
        if (secure())
            detail::start_tls_connection(self, std::move(socket), std::move(conn_executor), id, admission);
        else
            detail::start_plain_connection(self, std::move(socket), std::move(conn_executor), id, admission);
    }
}

HttpServer::HttpServer(asio::any_io_executor executor, HttpServerOptions options, Handler handler, HeadCheck head_check)
    : impl_(std::make_shared<Impl>(std::move(executor), std::move(options), std::move(handler), std::move(head_check)))
{
}

HttpServer::~HttpServer()
{
    stop();
}

void HttpServer::Impl::adopt_listening_socket(int fd)
{
    sockaddr_storage address{};
    socklen_t length = sizeof address;
    int type = 0;
    int listening = 0;
    socklen_t int_length = sizeof type;
    const bool stream = ::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &int_length) == 0 && type == SOCK_STREAM;
    int_length = sizeof listening;
    const bool listens = ::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &int_length) == 0 && listening;
    if (!stream || !listens || ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0 ||
        (address.ss_family != AF_INET && address.ss_family != AF_INET6)) {
        ::close(fd);
        throw Error(errc::invalid_argument, "HttpServerOptions::listening_socket (descriptor " + std::to_string(fd) +
                                                ") is not a TCP socket that listens: bind and listen() on it first, "
                                                "or give host and port instead");
    }
    acceptor.assign(address.ss_family == AF_INET ? tcp::v4() : tcp::v6(), fd);
}

void HttpServer::start()
{
    if (std::exchange(impl_->started, true))
        throw Error(errc::invalid_argument, "HttpServer::start() called twice: a server starts once");
    if (!impl_->acceptor.is_open()) {
        const tcp::endpoint ep(asio::ip::make_address(impl_->options.host), impl_->options.port);
        impl_->acceptor.open(ep.protocol());
        impl_->acceptor.set_option(tcp::acceptor::reuse_address(true));
        impl_->acceptor.bind(ep);
        impl_->acceptor.listen();
    }
    impl_->port = impl_->acceptor.local_endpoint().port();
    impl_->open_spare();  // before the loop runs: the process may be out of descriptors by then
    asio::co_spawn(impl_->acceptor.get_executor(), impl_->accept_loop(), asio::detached);
}

void HttpServer::stop()
{
    asio::dispatch(impl_->acceptor.get_executor(), [impl = impl_] {
        error_code ec;
        impl->acceptor.close(ec);
        impl->room.cancel();
        impl->close_spare();
    });
    std::vector<std::shared_ptr<detail::Closable>> connections;
    {
        std::lock_guard lock(impl_->mutex);
        for (auto& [id, weak] : impl_->live)
            if (auto conn = weak.lock())
                connections.push_back(std::move(conn));
    }
    for (auto& conn : connections)
        conn->close_from_anywhere();
}

unsigned short HttpServer::port() const noexcept
{
    return impl_->port;
}

std::string HttpServer::base_url() const
{
    return std::string(impl_->secure() ? "https" : "http") + "://" + impl_->options.host + ":" + std::to_string(port());
}

std::size_t HttpServer::connections_accepted() const noexcept
{
    return impl_->accepted;
}

std::size_t HttpServer::open_connections() const noexcept
{
    return impl_->open;
}

std::size_t HttpServer::peak_read_buffer_bytes() const noexcept
{
    return impl_->peak_buffer;
}

}  // namespace adk::net
