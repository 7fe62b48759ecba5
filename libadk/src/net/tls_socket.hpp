// TLS over a connected TCP socket, with OpenSSL reading and writing the descriptor itself: the HTTP client's
// transport for https. Internal to libadk's net.
//
// DESIGN: Asio's ssl::stream runs OpenSSL against a BIO pair and copies every byte from the socket into it (and
// out again): each connection held Asio's two 17 KiB buffers, the pair's two 17 KiB rings and OpenSSL's records,
// about 70 KiB a model's stream kept open for minutes. Here OpenSSL reads the socket through a BIO of ours
// (recv and send, MSG_NOSIGNAL: a peer that closed raises no SIGPIPE in the embedding program), with read-ahead,
// so that a chunk of a model's stream is one recv and one decryption into the caller's buffer, and nothing is
// held between reads (OpenSSL gives its record buffers back while it holds no record). The socket stays
// non-blocking; a call that cannot go on says so (would_block) and wait() waits for the readiness OpenSSL asked
// for. Nothing here runs a timer: the caller bounds a wait (the client's watch shuts the descriptor down, which
// ends the wait), and cancelling the awaiting coroutine cancels the wait.
//
// Errors are those of Asio's ssl::stream: eof for the peer's close_notify, ssl::error::stream_truncated for a
// connection cut without one, OpenSSL's error in asio::error::get_ssl_category() otherwise (the handshake's
// certificate check: SSL_get_verify_result on native_handle() says why), the socket's errno as a system error.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/system/error_code.hpp>

#include <cstddef>
#include <string_view>

struct ssl_st;
struct ssl_ctx_st;

namespace adk::net::detail {

// Has OpenSSL compute now what it computes on a certificate's first use and keeps in it (key identifiers,
// purposes, flags), for every certificate `context` holds: those it trusts and its own chain. Otherwise two
// handshakes on two threads can compute the same certificate's at once, one replacing what the other reads (a
// race in OpenSSL 3.0's ossl_x509v3_cache_extensions, which ThreadSanitizer saw here: OpenSSL issue 32609).
// Called once the context is loaded, before it is shared. Certificates a CA directory gives later, as they are
// looked up, are not covered.
void cache_certificate_extensions(ssl_ctx_st* context);

class TlsSocket {
public:
    // Over `tcp`, connected (and tunnelled, through a proxy), as a client of `context`'s settings; throws
    // adk::Error when OpenSSL cannot make the connection's state.
    TlsSocket(boost::beast::tcp_stream tcp, ssl_ctx_st* context);
    ~TlsSocket();
    TlsSocket(const TlsSocket&) = delete;
    TlsSocket& operator=(const TlsSocket&) = delete;

    ssl_st* native_handle() const noexcept { return ssl_; }
    boost::beast::tcp_stream& lowest() noexcept { return tcp_; }

    // The client's handshake, the certificate checked as the connection's settings say.
    boost::asio::awaitable<boost::system::error_code> handshake();
    // Writes all of `bytes`.
    boost::asio::awaitable<boost::system::error_code> write(std::string_view bytes);

    // Whether read_now() must wait() first: OpenSSL holds no bytes it could decrypt, or it asked to wait.
    bool must_wait() const noexcept;
    // Waits until the socket is ready for what OpenSSL asked last (to read, unless it asked to write).
    boost::asio::awaitable<boost::system::error_code> wait();
    // Decrypts what has come into `into`, without waiting: the bytes given, or 0 and an error (would_block:
    // wait() and call again; eof: the peer closed the stream).
    std::size_t read_now(boost::asio::mutable_buffer into, boost::system::error_code& ec);

private:
    // What OpenSSL asked for last.
    enum class Want { nothing, read, write };
    // Before an OpenSSL call: its error queue empty, no errno kept.
    void start_call() noexcept;
    // The error of the OpenSSL call that returned `result`; would_block when it must wait.
    boost::system::error_code failure(int result);

    boost::beast::tcp_stream tcp_;
    int fd_;
    int errno_ = 0;  // the socket's errno at the last failing recv or send (set by the BIO)
    bool eof_ = false;  // a recv returned 0 (set by the BIO)
    ssl_st* ssl_ = nullptr;
    Want want_ = Want::nothing;

    friend class SocketBio;
};

}  // namespace adk::net::detail
