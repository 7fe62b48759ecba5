#include "tls_socket.hpp"

#include <adk/core/error.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cerrno>
#include <mutex>

#include <sys/socket.h>

namespace adk::net::detail {

namespace asio = boost::asio;
using boost::system::error_code;

void cache_certificate_extensions(SSL_CTX* context)
{
    if (X509_STORE* store = SSL_CTX_get_cert_store(context)) {
        STACK_OF(X509)* trusted = X509_STORE_get1_all_certs(store);
        for (int i = 0; i < sk_X509_num(trusted); ++i)
            X509_check_purpose(sk_X509_value(trusted, i), -1, 0);  // -1: only what is cached
        sk_X509_pop_free(trusted, X509_free);
    }
    if (X509* own = SSL_CTX_get0_certificate(context)) {
        X509_check_purpose(own, -1, 0);
        STACK_OF(X509)* chain = nullptr;
        if (SSL_CTX_get0_chain_certs(context, &chain) == 1)
            for (int i = 0; i < sk_X509_num(chain); ++i)
                X509_check_purpose(sk_X509_value(chain, i), -1, 0);
    }
}

// The BIO OpenSSL reads and writes the socket through: recv and send on the descriptor, the errno and the end
// of the stream kept in the TlsSocket for failure().
class SocketBio {
public:
    static BIO_METHOD* method()
    {
        static BIO_METHOD* made = nullptr;
        static std::once_flag once;
        std::call_once(once, [] {
            made = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "adk socket");
            if (made && (BIO_meth_set_write(made, &write) != 1 || BIO_meth_set_read(made, &read) != 1 ||
                         BIO_meth_set_ctrl(made, &ctrl) != 1)) {
                BIO_meth_free(made);
                made = nullptr;
            }
        });
        return made;
    }

private:
    static TlsSocket& socket(BIO* b) { return *static_cast<TlsSocket*>(BIO_get_data(b)); }

    // EWOULDBLOCK is EAGAIN on Linux.
    static bool transient(int e) { return e == EAGAIN || e == EINTR; }

    static int write(BIO* b, const char* data, int size)
    {
        TlsSocket& s = socket(b);
        BIO_clear_retry_flags(b);
        const ssize_t n = ::send(s.fd_, data, static_cast<std::size_t>(size), MSG_NOSIGNAL);
        if (n < 0) {
            s.errno_ = errno;
            if (transient(s.errno_))
                BIO_set_retry_write(b);
            return -1;
        }
        return static_cast<int>(n);
    }

    static int read(BIO* b, char* out, int size)
    {
        TlsSocket& s = socket(b);
        BIO_clear_retry_flags(b);
        const ssize_t n = ::recv(s.fd_, out, static_cast<std::size_t>(size), 0);
        if (n < 0) {
            s.errno_ = errno;
            if (transient(s.errno_))
                BIO_set_retry_read(b);
            return -1;
        }
        if (n == 0)
            s.eof_ = true;
        return static_cast<int>(n);
    }

    static long ctrl(BIO* b, int cmd, long, void*)
    {
        switch (cmd) {
        case BIO_CTRL_FLUSH: return 1;  // nothing is held back
        case BIO_CTRL_EOF: return socket(b).eof_ ? 1 : 0;
        default: return 0;
        }
    }
};

TlsSocket::TlsSocket(boost::beast::tcp_stream tcp, ssl_ctx_st* context)
    : tcp_(std::move(tcp)), fd_(tcp_.socket().native_handle())
{
    error_code ec;
    tcp_.socket().non_blocking(true, ec);
    if (ec)
        throw Error(ec, std::string("cannot make the socket non-blocking for TLS: ") + ec.message());
    BIO_METHOD* method = SocketBio::method();
    ssl_ = SSL_new(context);
    BIO* bio = method ? BIO_new(method) : nullptr;
    if (!ssl_ || !bio) {
        const error_code oec(static_cast<int>(ERR_get_error()), asio::error::get_ssl_category());
        BIO_free(bio);
        SSL_free(ssl_);
        throw Error(oec, "OpenSSL cannot make a TLS connection's state: " + oec.message());
    }
    BIO_set_data(bio, this);
    BIO_set_init(bio, 1);
    SSL_set_bio(ssl_, bio, bio);  // one reference, for both ways
    SSL_set_connect_state(ssl_);
    // A write may be partial and resumed from a buffer that moved; OpenSSL's record buffers (17 KiB each way) are
    // given back while no record is held, so that a stream that waits for its model holds none (8 KiB less
    // per stream measured at 1,000 paced streams, for no CPU time that showed).
    SSL_set_mode(ssl_, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS);
    SSL_set_read_ahead(ssl_, 1);  // a chunk is one recv, not one for a record's header and one for the rest
}

TlsSocket::~TlsSocket()
{
    SSL_free(ssl_);  // and the BIO
}

bool TlsSocket::must_wait() const noexcept
{
    return want_ != Want::nothing || SSL_has_pending(ssl_) != 1;
}

asio::awaitable<error_code> TlsSocket::wait()
{
    const auto what = want_ == Want::write ? asio::socket_base::wait_write : asio::socket_base::wait_read;
    auto [ec] = co_await tcp_.socket().async_wait(what, asio::as_tuple(asio::use_awaitable));
    co_return ec;
}

// SSL_get_error reads the thread's error queue, which must be empty before the call. Emptying it is a walk of
// its sixteen entries (about 390 instructions, 1.4% of a paced chunk): done only when something is queued.
void TlsSocket::start_call() noexcept
{
    if (ERR_peek_error() != 0)
        ERR_clear_error();
    errno_ = 0;
}

error_code TlsSocket::failure(int result)
{
    const int e = SSL_get_error(ssl_, result);
    switch (e) {
    case SSL_ERROR_WANT_READ: want_ = Want::read; return asio::error::would_block;
    case SSL_ERROR_WANT_WRITE: want_ = Want::write; return asio::error::would_block;
    case SSL_ERROR_ZERO_RETURN: return asio::error::eof;
    default: break;
    }
    want_ = Want::nothing;
    if (const unsigned long queued = ERR_get_error(); queued != 0) {
        if (ERR_GET_REASON(queued) == SSL_R_UNEXPECTED_EOF_WHILE_READING)
            return asio::ssl::error::stream_truncated;
        return error_code(static_cast<int>(queued), asio::error::get_ssl_category());
    }
    if (e == SSL_ERROR_SYSCALL && errno_ != 0 && !eof_)
        return error_code(errno_, boost::system::system_category());
    return asio::ssl::error::stream_truncated;  // the connection ended without the peer's close_notify
}

asio::awaitable<error_code> TlsSocket::handshake()
{
    while (true) {
        start_call();
        const int r = SSL_connect(ssl_);
        if (r == 1) {
            want_ = Want::nothing;
            co_return error_code{};
        }
        const error_code ec = failure(r);
        if (ec != asio::error::would_block)
            co_return ec;
        if (const error_code wec = co_await wait())
            co_return wec;
    }
}

asio::awaitable<error_code> TlsSocket::write(std::string_view bytes)
{
    while (!bytes.empty()) {
        start_call();
        std::size_t n = 0;
        const int r = SSL_write_ex(ssl_, bytes.data(), bytes.size(), &n);
        if (r == 1) {
            want_ = Want::nothing;
            bytes.remove_prefix(n);
            continue;
        }
        const error_code ec = failure(r);
        if (ec != asio::error::would_block)
            co_return ec;
        if (const error_code wec = co_await wait())
            co_return wec;
    }
    co_return error_code{};
}

std::size_t TlsSocket::read_now(asio::mutable_buffer into, error_code& ec)
{
    start_call();
    std::size_t n = 0;
    const int r = SSL_read_ex(ssl_, into.data(), into.size(), &n);
    if (r == 1) {
        want_ = Want::nothing;
        ec = {};
        return n;
    }
    ec = failure(r);
    return 0;
}

}  // namespace adk::net::detail
