// The server's shared state (HttpServer::Impl), internal to libadk. Its connections are a class template over the
// stream, plain TCP or TLS; each instantiation is compiled in a translation unit of its own
// (http_connection_plain.cpp, http_connection_tls.cpp): the two in one file were the build's heaviest translation
// unit (about 350 s under ASan and UBSan on two busy cores), and two compile side by side.
#pragma once

#include <adk/core/clock.hpp>
#include <adk/core/error.hpp>
#include <adk/net/http_server.hpp>

#include "tls_socket.hpp"  // cache_certificate_extensions

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/strand.hpp>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>

#include <fcntl.h>
#include <unistd.h>

namespace adk::net {

namespace detail {

// What the server keeps of a live connection, to close it from stop().
class Closable {
public:
    virtual ~Closable() = default;
    virtual void close_from_anywhere() = 0;
};

}  // namespace detail

class HttpServer::Impl : public std::enable_shared_from_this<Impl> {
public:
    Impl(asio::any_io_executor ex, HttpServerOptions opts, Handler h, HeadCheck check)
        : executor(std::move(ex)), options(std::move(opts)), handler(std::move(h)), head_check(std::move(check)),
          acceptor(options.single_threaded ? executor : asio::make_strand(executor)), room(acceptor.get_executor()),
          tls(asio::ssl::context::tls_server)
    {
        if (options.listening_socket >= 0)
            adopt_listening_socket(options.listening_socket);
        if (!handler)
            throw Error(errc::invalid_argument, "HttpServer needs a handler");
        if (options.cert_file.empty() != options.key_file.empty())
            throw Error(errc::invalid_argument, "HttpServerOptions: give both cert_file and key_file for TLS, or neither");
        if (!options.cert_file.empty()) {
            try {
                tls.use_certificate_chain_file(options.cert_file);
                tls.use_private_key_file(options.key_file, asio::ssl::context::pem);
            } catch (const boost::system::system_error& e) {
                throw Error(errc::invalid_argument, "cannot use the TLS certificate '" + options.cert_file +
                                                        "' and key '" + options.key_file + "': " + e.what());
            }
            detail::cache_certificate_extensions(tls.native_handle());
        }
    }

    bool secure() const { return !options.cert_file.empty(); }

    asio::awaitable<void> accept_loop();

    void remember(std::size_t id, std::weak_ptr<detail::Closable> conn)
    {
        std::lock_guard lock(mutex);
        live.emplace(id, std::move(conn));
    }

    void forget(std::size_t id)
    {
        std::lock_guard lock(mutex);
        live.erase(id);
    }

    // A connection ended: an accept loop that waits for room goes on. One that had the spare descriptor gives it
    // back (the accept loop opens another).
    void connection_closed(bool used_spare)
    {
        open--;
        if (used_spare)
            asio::post(acceptor.get_executor(), [self = shared_from_this()] { (void)self->open_spare(); });
        if (waiting_for_room)
            asio::post(acceptor.get_executor(), [self = shared_from_this()] { self->room.cancel(); });
    }

    // The descriptor kept for a connection that comes when the process has no other (on the acceptor's executor).
    // Whether one is kept now.
    bool open_spare()
    {
        if (spare_fd < 0 && acceptor.is_open())
            spare_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
        return spare_fd >= 0;
    }
    void close_spare()
    {
        if (spare_fd >= 0)
            ::close(spare_fd);
        spare_fd = -1;
    }
    ~Impl() { close_spare(); }

    // HttpServerOptions::listening_socket, checked: a TCP socket that listens (the acceptor owns it from here).
    void adopt_listening_socket(int fd);

    // Whether a reserved connection may serve `target` (its path; a query does not count).
    bool reserved_target(std::string_view target) const
    {
        const std::string_view path = target.substr(0, target.find('?'));
        return std::find(options.reserved_targets.begin(), options.reserved_targets.end(), path) !=
               options.reserved_targets.end();
    }

    asio::any_io_executor executor;
    HttpServerOptions options;
    Handler handler;
    HeadCheck head_check;
    asio::ip::tcp::acceptor acceptor;
    adk::Timer room;  // on the acceptor's executor: the accept loop's waits
    std::atomic<bool> waiting_for_room{false};
    asio::ssl::context tls;
    unsigned short port = 0;
    std::atomic<std::size_t> accepted{0};
    std::atomic<std::size_t> peak_buffer{0};
    std::atomic<std::size_t> open{0};
    std::mutex mutex;
    std::map<std::size_t, std::weak_ptr<detail::Closable>> live;
    std::size_t next_id = 0;  // on the acceptor's executor
    int spare_fd = -1;        // on the acceptor's executor
    bool started = false;
};

namespace detail {

// Serves one accepted connection on `executor` (its strand) until it closes, under the server's stop.
// A connection past max_connections (or on the spare descriptor) is `reserved`: it serves one request, a
// reserved target's, and closes (`used_spare`: its descriptor was the spare one).
class Admission {
public:
    bool reserved = false;
    bool used_spare = false;
};
void start_plain_connection(std::shared_ptr<HttpServer::Impl> server, asio::ip::tcp::socket socket,
                            asio::any_io_executor executor, std::size_t id, Admission admission);
void start_tls_connection(std::shared_ptr<HttpServer::Impl> server, asio::ip::tcp::socket socket,
                          asio::any_io_executor executor, std::size_t id, Admission admission);

}  // namespace detail

}  // namespace adk::net
