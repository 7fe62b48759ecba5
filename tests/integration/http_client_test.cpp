// HttpClient over real loopback HTTP and TLS against tools/mock-llm's server: streaming reads, keep-alive,
// certificate checks, retries, broken and stalled streams, cancellation.
#include <adk/core/error.hpp>
#include <adk/core/log.hpp>
#include <adk/core/stream.hpp>
#include <adk/net/http_client.hpp>
#include <adk/net/http_stats.hpp>
#include <adk/net/sse_reader.hpp>

#include "server.hpp"
#include "support/manual_time.hpp"
#include "support/run.hpp"
#include "support/tls.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

using namespace adk;
using namespace std::chrono_literals;
using adk::mock_llm::Server;
using adk::mock_llm::ServerOptions;
using adk::net::HttpClient;
using adk::net::HttpClientOptions;
using adk::net::HttpRequest;
using adk::net::HttpResponse;
using adk::test::run;

namespace {

const char* const script_json = R"({"turns": [{"chunks": ["Hel", "lo", " world"]}]})";

ServerOptions replay(const std::string& body)
{
    ServerOptions o;
    o.replay_body = body;
    return o;
}

// A TLS server with the test certificate, answering by script_json.
ServerOptions tls_script()
{
    ServerOptions o;
    o.tls = true;
    o.cert_file = adk::test::test_certificate().cert_file;
    o.key_file = adk::test::test_certificate().key_file;
    o.script = boost::json::parse(script_json);
    return o;
}

// `o` over TLS with the test certificate when `tls`.
ServerOptions over_tls(ServerOptions o, bool tls)
{
    if (tls) {
        o.tls = true;
        o.cert_file = adk::test::test_certificate().cert_file;
        o.key_file = adk::test::test_certificate().key_file;
    }
    return o;
}

// `o` trusting the test certificate when `tls`.
HttpClientOptions trusting(HttpClientOptions o, bool tls)
{
    if (tls)
        o.ca_file = adk::test::test_certificate().cert_file;
    return o;
}

// A TLS server's context with the test certificate.
asio::ssl::context server_tls_context()
{
    asio::ssl::context ctx(asio::ssl::context::tls_server);
    ctx.use_certificate_chain_file(adk::test::test_certificate().cert_file);
    ctx.use_private_key_file(adk::test::test_certificate().key_file, asio::ssl::context::pem);
    return ctx;
}

// Answers by script_json, after the status `code` with its error body (ServerOptions::status).
ServerOptions failing_script(unsigned code)
{
    ServerOptions o;
    o.script = boost::json::parse(script_json);
    o.status = code;
    return o;
}

// n SSE events "data: 0" to "data: n-1", each with its blank line.
std::string numbered_events(int n)
{
    std::string body;
    for (int i = 0; i < n; ++i)
        body += "data: " + std::to_string(i) + "\n\n";
    return body;
}

HttpRequest post(const std::string& url, std::string body = "{}")
{
    HttpRequest r("POST", url);
    r.set("content-type", "application/json");
    r.body = std::move(body);
    return r;
}

// Appends the rest of the body to `got`; returns the message of the adk::Error that ended it, or "".
asio::awaitable<std::string> read_rest(HttpResponse& res, std::string& got)
{
    std::string failure;
    try {
        while (true) {
            std::string_view piece = co_await res.read_some();
            if (piece.empty())
                break;
            got.append(piece);
        }
    } catch (const adk::Error& e) {
        failure = e.message();
    }
    co_return failure;
}

HttpClientOptions fast_retries()
{
    HttpClientOptions o;
    o.retry.initial_backoff = 10ms;
    o.retry.max_backoff = 40ms;
    return o;
}

// Collects adk::log output for the duration of a test.
struct LogCapture {
    LogCapture()
    {
        adk::set_log_handler([this](adk::LogLevel, std::string_view m) {
            std::lock_guard lock(mutex);
            lines.emplace_back(m);
        });
    }
    ~LogCapture() { adk::set_log_handler({}); }
    std::vector<std::string> all()
    {
        std::lock_guard lock(mutex);
        return lines;
    }
    std::mutex mutex;
    std::vector<std::string> lines;
};

// A 429 answered once (then the script), the request's body hint returning `hint`: returns the retry's log
// lines; `seen_body` gets the error body the hint was given.
std::vector<std::string> retried_once(std::optional<std::chrono::milliseconds> hint, std::string& seen_body)
{
    asio::io_context ioc;
    ServerOptions options = failing_script(429);
    options.status_times = 1;
    Server server(ioc.get_executor(), options);
    server.start();
    HttpClient client(fast_retries());
    LogCapture logs;
    run(ioc, [&]() -> asio::awaitable<void> {
        HttpRequest req = post(server.base_url() + "/v1/messages", R"({"messages":[]})");
        req.retry_hint = [&](std::string_view body) -> std::optional<std::chrono::milliseconds> {
            seen_body = body;
            return hint;
        };
        HttpResponse res = co_await client.send(std::move(req));
        CHECK(res.status() == 200);
        server.stop();
    }(), 5s);
    return logs.all();
}

}  // namespace

TEST_CASE("HTTP: a streamed body arrives whole, piece by piece, and the connection is reused", "[http]")
{
    asio::io_context ioc;
    const std::string body = adk::test::fixture("providers/openai_chat/text_stream_usage.sse");
    auto options = replay(body);
    options.split_bytes = 7;
    Server server(ioc.get_executor(), options);
    server.start();
    HttpClient client;
    const adk::net::HttpClientStats before = adk::net::http_client_stats();  // other tests' pooled connections
    run(ioc, [&]() -> asio::awaitable<void> {
        for (int i = 0; i < 3; ++i) {
            HttpResponse res = co_await client.send(post(server.base_url() + "/v1/chat/completions"));
            CHECK(res.status() == 200);
            CHECK(res.header("Content-Type") == "text/event-stream");
            CHECK(res.reused_connection() == (i > 0));
            // The connection is counted open, and in use while its response is read (the metrics' gauges).
            CHECK(adk::net::http_client_stats().connections_open == before.connections_open + 1);
            CHECK(adk::net::http_client_stats().connections_active == before.connections_active + 1);
            std::string got;
            std::size_t reads = 0;
            while (true) {
                std::string_view piece = co_await res.read_some();
                if (piece.empty())
                    break;
                got.append(piece);
                ++reads;
            }
            CHECK(got == body);
            CHECK(reads > 1);  // delivered as it arrived, not at the end
        }
        CHECK(adk::net::http_client_stats().connections_active == before.connections_active);  // back in the pool
        CHECK(adk::net::http_client_stats().connections_open == before.connections_open + 1);
        server.stop();
    }());
    CHECK(server.connections_accepted() == 1);
    const auto requests = server.requests();
    REQUIRE(requests.size() == 3);
    CHECK(requests[0].method == "POST");
    CHECK(requests[0].header("content-type") == "application/json");
    CHECK(requests[0].header("user-agent") == "adk-cpp/0.1");
    CHECK(requests[0].header("host") == "127.0.0.1:" + std::to_string(server.port()));
}

TEST_CASE("HTTP: pieces of a body already read are handed out at once, without a trip through the scheduler",
          "[http]")
{
    asio::io_context ioc;
    const std::string body = numbered_events(50);
    Server server(ioc.get_executor(), replay(body));
    server.start();
    HttpClient client;
    std::string got;
    std::size_t pieces = 0;
    std::size_t at_once = 0;  // pieces handed out before a handler posted just before could run
    run(ioc, [&]() -> asio::awaitable<void> {
        HttpResponse res = co_await client.send(post(server.base_url() + "/"));
        asio::steady_timer timer(co_await asio::this_coro::executor, 200ms);
        co_await timer.async_wait(asio::use_awaitable);  // the whole body is in the socket by now: one read takes it
        auto turns = std::make_shared<int>(0);
        const auto executor = co_await asio::this_coro::executor;
        while (true) {
            const int before = *turns;
            auto count_turn = [turns] { ++*turns; };  // named: g++ 12 and lambdas in co_await expressions
            asio::post(executor, std::move(count_turn));
            std::string_view piece = co_await res.read_some();
            if (piece.empty())
                break;
            got.append(piece);
            ++pieces;
            if (*turns == before)
                ++at_once;
        }
        server.stop();
    }());
    CHECK(got == body);
    // One HTTP chunk, one event, per piece: each is handed out as soon as it is whole. The read of the head may
    // end inside a chunk (it takes what came with the head), whose body then comes in two pieces.
    CHECK(pieces >= 50);
    CHECK(pieces <= 51);
    // Two reads of the socket at most: bytes that came with the head, then the rest of the body in one read.
    // Every other piece was already in the buffer.
    CHECK(at_once >= pieces - 2);
}

namespace {

// Answers each request on `s` with `responses[i]` as written (heads and framing by hand), in pieces of `piece`
// bytes, each flushed before the next is written; reads a request's head and body (Content-Length) before
// answering.
template <class Stream>
asio::awaitable<void> answer_on(Stream& s, const std::vector<std::string>& responses, std::size_t piece)
{
    std::string in;
    for (const std::string& response : responses) {
        while (true) {  // the request: its head, then the Content-Length bytes after it
            const auto end = in.find("\r\n\r\n");
            if (end != std::string::npos) {
                std::string head = in.substr(0, end);
                std::transform(head.begin(), head.end(), head.begin(), [](unsigned char c) { return std::tolower(c); });
                const auto at = head.find("content-length: ");
                const std::size_t length = at == std::string::npos ? 0 : std::stoul(head.substr(at + 16));
                if (in.size() >= end + 4 + length) {
                    in.erase(0, end + 4 + length);
                    break;
                }
            }
            char buffer[1024];
            const asio::mutable_buffer room = asio::buffer(buffer);  // named: g++ 12 and temporaries in co_await
            const std::size_t n = co_await s.async_read_some(room, asio::use_awaitable);
            in.append(buffer, n);
        }
        for (std::size_t at = 0; at < response.size(); at += piece) {
            const asio::const_buffer bytes = asio::buffer(response.data() + at, std::min(piece, response.size() - at));
            co_await asio::async_write(s, bytes, asio::use_awaitable);
            asio::steady_timer pause(s.get_executor(), 1ms);  // so that pieces arrive apart
            co_await pause.async_wait(asio::use_awaitable);
        }
    }
}

// How answer_raw ends a TLS connection after its last response.
enum class TlsEnd { close_notify, cut };

// A server that accepts one connection and answers on it (answer_on); over TLS with `tls`, ending the stream
// with TLS's close_notify or cutting the connection without one.
asio::awaitable<void> answer_raw(asio::ip::tcp::acceptor& acceptor, std::vector<std::string> responses,
                                 std::size_t piece, asio::ssl::context* tls = nullptr,
                                 TlsEnd end = TlsEnd::close_notify)
{
    asio::ip::tcp::socket s = co_await acceptor.async_accept(asio::use_awaitable);
    s.set_option(asio::ip::tcp::no_delay(true));
    if (!tls) {
        co_await answer_on(s, responses, piece);
        co_return;
    }
    asio::ssl::stream<asio::ip::tcp::socket> stream(std::move(s), *tls);
    co_await stream.async_handshake(asio::ssl::stream_base::server, asio::use_awaitable);
    co_await answer_on(stream, responses, piece);
    if (end == TlsEnd::close_notify) {
        // Waits for the client's close_notify, which it does not send: ends when it closes.
        auto [ec] = co_await stream.async_shutdown(asio::as_tuple(asio::use_awaitable));
        (void)ec;
    }
}

}  // namespace

TEST_CASE("HTTP: a body comes out the same in every framing whatever the size of the pieces it arrives in", "[http]")
{
    // The body holds bytes the framing uses ("\r\n", hex digits, "0\r\n\r\n") so that a framing byte handed out as
    // body, or a body byte taken as framing, changes what comes out. A short body comes in pieces smaller than a
    // read; a long one (a burst of a model's chunks) in pieces of the reads' own sizes and about them (1 KiB while
    // a stream waits, 16 KiB after a read that filled its room: a read that fills its room exactly, then finds
    // nothing, must wait for the rest).
    const std::string pattern = "data: 0\r\n\r\ndata: a1\r\n0\r\n\r\nlast";
    const bool long_body = GENERATE(false, true);
    std::string body = pattern;
    std::size_t part_size = 9;
    std::vector<std::size_t> pieces{1, 5, 4096};
    if (long_body) {
        body.clear();
        for (int i = 0; body.size() < 40000; ++i)
            body += pattern + std::to_string(i);
        part_size = 3000;
        pieces = {1023, 1024, 1025, 16384, 16385};
    }
    std::string chunked;
    for (std::size_t at = 0; at < body.size(); at += part_size) {
        const std::string part = body.substr(at, part_size);
        char size[8];
        std::snprintf(size, sizeof size, "%zx", part.size());
        chunked += std::string(size) + (at == 0 ? ";ext=1" : "") + "\r\n" + part + "\r\n";
    }
    chunked += "0\r\nx-trailer: t\r\n\r\n";
    const std::string sized = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    const std::string in_chunks = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked;
    const std::string to_close = "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + body;
    const bool tls = GENERATE(false, true);
    INFO((tls ? "over TLS" : "over TCP") << ", a body of " << body.size() << " bytes");
    asio::ssl::context tls_context = server_tls_context();
    for (const std::size_t piece : pieces) {
        INFO("written in pieces of " << piece << " bytes");
        asio::io_context ioc;
        asio::ip::tcp::acceptor acceptor(ioc, {asio::ip::make_address("127.0.0.1"), 0});
        const std::string url = (tls ? "https://" : "http://") + std::string("127.0.0.1:") +
                                std::to_string(acceptor.local_endpoint().port()) + "/";
        // One connection: the sized and chunked bodies end where their framing says, so it is reused; the last
        // body ends with the connection (over TLS, with the server's close_notify).
        asio::co_spawn(ioc, answer_raw(acceptor, {sized, in_chunks, to_close}, piece, tls ? &tls_context : nullptr),
                       asio::detached);
        HttpClient client(trusting({}, tls));
        std::vector<std::string> got(3);
        std::vector<std::string> failures(3);
        std::vector<bool> reused(3);
        run(ioc, [&]() -> asio::awaitable<void> {
            for (std::size_t i = 0; i < 3; ++i) {
                HttpResponse res = co_await client.send(post(url));
                reused[i] = res.reused_connection();
                failures[i] = co_await read_rest(res, got[i]);
            }
        }());
        for (std::size_t i = 0; i < 3; ++i) {
            INFO("response " << i);
            CHECK(failures[i].empty());
            CHECK(got[i] == body);
        }
        CHECK(reused == std::vector<bool>{false, true, true});
    }
}

TEST_CASE("HTTP: over TLS a body that runs to the close needs the server's close_notify: cut without one it fails",
          "[http]")
{
    asio::ssl::context tls_context = server_tls_context();
    asio::io_context ioc;
    asio::ip::tcp::acceptor acceptor(ioc, {asio::ip::make_address("127.0.0.1"), 0});
    const std::string url = "https://127.0.0.1:" + std::to_string(acceptor.local_endpoint().port()) + "/";
    const std::string to_close = "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\ndata: 1\n\ndata: 2\n\n";
    asio::co_spawn(ioc, answer_raw(acceptor, {to_close}, 4096, &tls_context, TlsEnd::cut), asio::detached);
    HttpClient client(trusting({}, true));
    std::string got;
    std::string failure;
    run(ioc, [&]() -> asio::awaitable<void> {
        HttpResponse res = co_await client.send(post(url));
        failure = co_await read_rest(res, got);
    }());
    CHECK(got == "data: 1\n\ndata: 2\n\n");  // what came is handed out
    // ...but a cut stream could be an attacker's truncation: it is not taken for the body's end.
    CHECK_THAT(failure, Catch::Contains("the connection broke while reading the response"));
    CHECK_THAT(failure, Catch::Contains("stream truncated"));
}

TEST_CASE("HTTP: TLS with a trusted certificate, host name checked", "[http]")
{
    const auto& cert = adk::test::test_certificate();
    asio::io_context ioc;
    ServerOptions options = tls_script();
    Server server(ioc.get_executor(), options);
    server.start();
    HttpClientOptions client_options;
    client_options.ca_file = cert.cert_file;
    HttpClient client(client_options);
    run(ioc, [&]() -> asio::awaitable<void> {
        const std::string url = "https://localhost:" + std::to_string(server.port()) + "/v1/chat/completions";
        HttpResponse res = co_await client.send(post(url, R"({"model":"m","stream":true,"messages":[]})"));
        CHECK(res.status() == 200);
        std::string body = co_await res.read_all();
        CHECK_THAT(body, Catch::Contains("\"content\":\"Hel\""));
        CHECK_THAT(body, Catch::EndsWith("data: [DONE]\n\n"));
        // Again: the TLS connection comes from the pool.
        HttpResponse again = co_await client.send(post(url, R"({"model":"m","messages":[]})"));
        CHECK(again.reused_connection());
        std::string unary = co_await again.read_all();
        CHECK_THAT(unary, Catch::Contains("\"Hello world\""));
        server.stop();
    }());
    CHECK(server.connections_accepted() == 1);
}

TEST_CASE("HTTP: an untrusted certificate is refused with a message that says what to do", "[http]")
{
    asio::io_context ioc;
    ServerOptions options = tls_script();
    Server server(ioc.get_executor(), options);
    server.start();
    HttpClient client(fast_retries());  // the system store only
    std::string message;
    boost::system::error_code code;
    run(ioc, [&]() -> asio::awaitable<void> {
        try {
            co_await client.send(post("https://localhost:" + std::to_string(server.port()) + "/v1/messages"));
        } catch (const adk::Error& e) {
            message = e.message();
            code = e.code();
        }
        server.stop();
    }());
    CHECK(code.category() == asio::error::get_ssl_category());
    CHECK_THAT(message, Catch::Contains("self-signed certificate"));
    CHECK_THAT(message, Catch::Contains("not trusted"));
    CHECK_THAT(message, Catch::Contains("ca_file"));
    CHECK(server.connections_accepted() == 1);  // no retry: another try cannot succeed
    CHECK(server.requests().empty());           // nothing was sent
}

TEST_CASE("HTTP: a certificate for another host name is refused", "[http]")
{
    const auto& cert = adk::test::test_certificate();
    asio::io_context ioc;
    ServerOptions options = tls_script();
    options.host = "127.0.0.2";  // the certificate names localhost and 127.0.0.1 only
    Server server(ioc.get_executor(), options);
    server.start();
    HttpClientOptions client_options = fast_retries();
    client_options.ca_file = cert.cert_file;
    HttpClient client(client_options);
    std::string message;
    run(ioc, [&]() -> asio::awaitable<void> {
        try {
            co_await client.send(post(server.base_url() + "/v1/messages"));
        } catch (const adk::Error& e) {
            message = e.message();
        }
        server.stop();
    }());
    CHECK_THAT(message, Catch::Contains("TLS handshake with 127.0.0.2"));
    CHECK_THAT(message, Catch::Contains("IP address mismatch"));
    CHECK_THAT(message, Catch::Contains("does not name '127.0.0.2'"));
}

TEST_CASE("HTTP: 429 with Retry-After is retried, each retry logged, then the answer comes", "[http]")
{
    asio::io_context ioc;
    ServerOptions options = failing_script(429);
    options.retry_after = "0.05";
    options.status_times = 2;
    Server server(ioc.get_executor(), options);
    server.start();
    HttpClient client(fast_retries());
    LogCapture logs;
    run(ioc, [&]() -> asio::awaitable<void> {
        HttpResponse res = co_await client.send(post(server.base_url() + "/v1/messages", R"({"messages":[]})"));
        CHECK(res.status() == 200);
        std::string body = co_await res.read_all();
        CHECK_THAT(body, Catch::Contains("Hello world"));
        server.stop();
    }());
    CHECK(server.requests().size() == 3);
    const auto lines = logs.all();
    REQUIRE(lines.size() == 2);
    CHECK_THAT(lines[0], Catch::Contains("HTTP 429; retrying in 50 ms (retry 1 of 2)"));
    CHECK_THAT(lines[1], Catch::Contains("retry 2 of 2"));
}

TEST_CASE("HTTP: when retries run out, the last error response is returned with its body", "[http]")
{
    asio::io_context ioc;
    ServerOptions options = failing_script(503);
    Server server(ioc.get_executor(), options);
    server.start();
    HttpClient client(fast_retries());
    LogCapture logs;
    run(ioc, [&]() -> asio::awaitable<void> {
        HttpResponse res = co_await client.send(post(server.base_url() + "/v1/messages"));
        CHECK(res.status() == 503);
        std::string body = co_await res.read_all();
        CHECK_THAT(body, Catch::Contains("status set by --status"));
        server.stop();
    }());
    CHECK(server.requests().size() == 3);  // the first try and two retries
    CHECK(logs.all().size() == 2);          // each retry logged
}

TEST_CASE("HTTP: a status that is not retryable is returned at once", "[http]")
{
    asio::io_context ioc;
    ServerOptions options = failing_script(400);
    Server server(ioc.get_executor(), options);
    server.start();
    HttpClient client(fast_retries());
    run(ioc, [&]() -> asio::awaitable<void> {
        HttpResponse res = co_await client.send(post(server.base_url() + "/v1/messages"));
        CHECK(res.status() == 400);
        server.stop();
    }());
    CHECK(server.requests().size() == 1);
}

TEST_CASE("HTTP: a body hint (Gemini RetryInfo) sets the delay when headers give none", "[http]")
{
    std::string seen_body;
    const auto lines = retried_once(30ms, seen_body);
    CHECK_THAT(seen_body, Catch::Contains("status set by --status"));
    REQUIRE(lines.size() == 1);
    CHECK_THAT(lines[0], Catch::Contains("retrying in 30 ms"));
}

TEST_CASE("HTTP: a refused connection is retried, then reported with what to check", "[http]")
{
    asio::io_context ioc;
    unsigned short port = 0;
    {
        // A port that was free a moment ago and has no listener now.
        asio::ip::tcp::acceptor probe(ioc, {asio::ip::make_address("127.0.0.1"), 0});
        port = probe.local_endpoint().port();
    }
    HttpClient client(fast_retries());
    LogCapture logs;
    std::string message;
    run(ioc, [&]() -> asio::awaitable<void> {
        try {
            co_await client.send(post("http://127.0.0.1:" + std::to_string(port) + "/v1/messages"));
        } catch (const adk::Error& e) {
            message = e.message();
        }
    }());
    CHECK_THAT(message, Catch::Contains("cannot connect to http://127.0.0.1:" + std::to_string(port)));
    CHECK_THAT(message, Catch::Contains("refused"));
    CHECK(logs.all().size() == 2);
}

TEST_CASE("HTTP: a connection cut mid-body throws, and nothing is retried after bytes were delivered", "[http]")
{
    const bool tls = GENERATE(false, true);
    INFO((tls ? "over TLS" : "over TCP"));
    asio::io_context ioc;
    auto options = replay(adk::test::fixture("providers/anthropic/text_stream.sse"));
    options.disconnect_after_bytes = 300;
    Server server(ioc.get_executor(), over_tls(options, tls));
    server.start();
    HttpClient client(trusting(fast_retries(), tls));
    std::string got;
    std::string message;
    run(ioc, [&]() -> asio::awaitable<void> {
        HttpResponse res = co_await client.send(post(server.base_url() + "/v1/messages"));
        message = co_await read_rest(res, got);
        server.stop();
    }());
    CHECK(got.size() == 300);
    CHECK_THAT(message, Catch::Contains("the connection broke while reading the response"));
    CHECK(server.requests().size() == 1);
}

TEST_CASE("HTTP: a stalled body hits the idle timeout, a slow reader does not", "[http]")
{
    const bool tls = GENERATE(false, true);
    INFO((tls ? "over TLS" : "over TCP"));
    // On the test's clock, moved a second at each turn: an idle timeout of a minute, a server that pauses 5.
    adk::testing::ManualClock clock;
    asio::io_context ioc;
    auto options = replay("data: 1\n\ndata: 2\n\ndata: 3\n\n");
    options.chunk_delay = 5min;
    Server server(ioc.get_executor(), over_tls(options, tls));
    server.start();
    HttpClientOptions client_options = trusting({}, tls);
    client_options.idle_timeout = 1min;
    HttpClient client(client_options);
    std::string message;
    boost::system::error_code code;
    std::string first;
    adk::Clock::time_point stalled_since;
    auto stalled = [&]() -> asio::awaitable<void> {
        HttpResponse res = co_await client.send(post(server.base_url() + "/"));
        try {
            for (;;) {
                std::string_view piece = co_await res.read_some();
                if (piece.empty())
                    break;
                first.append(piece);
                stalled_since = adk::Clock::now();
            }
        } catch (const adk::Error& e) {
            message = e.message();
            code = e.code();
        }
        server.stop();
    };
    run(ioc, adk::test::passing_time(clock, 1s, stalled()));
    CHECK(first == "data: 1\n\n");  // the first frame, then nothing for longer than the timeout
    CHECK(code == boost::beast::error::timeout);
    CHECK_THAT(message, Catch::Contains("no bytes for 60 s"));
    CHECK(adk::Clock::now() - stalled_since >= 1min);

    // The same timeout with a fast server and a reader that pauses longer than it between reads.
    asio::io_context ioc2;
    Server fast(ioc2.get_executor(), over_tls(replay("data: 1\n\ndata: 2\n\ndata: 3\n\n"), tls));
    fast.start();
    std::string got;
    auto pausing = [&]() -> asio::awaitable<void> {
        HttpResponse res = co_await client.send(post(fast.base_url() + "/"));
        adk::Timer pause(co_await asio::this_coro::executor);
        while (true) {
            std::string_view piece = co_await res.read_some();
            if (piece.empty())
                break;
            got.append(piece);
            pause.expires_after(2min);
            co_await pause.async_wait(asio::use_awaitable);
        }
        fast.stop();
    };
    run(ioc2, adk::test::passing_time(clock, 1s, pausing()));
    CHECK(got == "data: 1\n\ndata: 2\n\ndata: 3\n\n");
}

TEST_CASE("HTTP: a body that keeps coming for many idle timeouts does not time out, read from two executors",
          "[http]")
{
    asio::io_context ioc;
    const std::string expected = numbered_events(12);
    auto options = replay(expected);
    options.chunk_delay = 50ms;  // 600 ms in all: the idle timer fires and re-arms while reads are pending
    Server server(ioc.get_executor(), options);
    server.start();
    HttpClientOptions client_options;
    client_options.idle_timeout = 200ms;
    HttpClient client(client_options);
    std::string got;
    std::string failure;
    run(ioc, [&]() -> asio::awaitable<void> {
        HttpResponse res = co_await client.send(post(server.base_url() + "/"));
        // The first events on the caller's executor, the rest from a coroutine on a strand: the idle
        // timeout follows the reader.
        while (got.size() < 20) {
            std::string_view piece = co_await res.read_some();
            if (piece.empty())
                break;
            got.append(piece);
        }
        auto rest = [&]() -> asio::awaitable<void> { failure = co_await read_rest(res, got); };
        auto strand = asio::make_strand(ioc);
        co_await asio::co_spawn(strand, rest, asio::use_awaitable);
        server.stop();
    }());
    CHECK(failure.empty());
    CHECK(got == expected);
}

TEST_CASE("HTTP: cancelling the reader closes the socket at once", "[http]")
{
    const bool tls = GENERATE(false, true);
    INFO((tls ? "over TLS" : "over TCP"));
    asio::io_context ioc;
    auto options = replay("data: x\n\n");
    for (int i = 0; i < 6; ++i)
        options.replay_body += options.replay_body;  // 64 events
    options.chunk_delay = 100ms;                     // 6.4 s to send them all
    Server server(ioc.get_executor(), over_tls(options, tls));
    server.start();
    HttpClient client(trusting({}, tls));
    std::size_t received = 0;
    std::size_t open_after_cancel = 99;
    run(ioc, [&]() -> asio::awaitable<void> {
        auto read_body = [&](adk::Sink<std::string> sink) -> asio::awaitable<void> {
            HttpResponse res = co_await client.send(post(server.base_url() + "/"));
            while (true) {
                std::string_view piece = co_await res.read_some();
                if (piece.empty())
                    break;
                co_await sink.emit(std::string(piece));
            }
        };
        auto stream = adk::spawn_stream<std::string>(co_await asio::this_coro::executor, read_body);
        auto first = co_await stream.next();
        received += first ? 1 : 0;
        CHECK(server.open_connections() == 1);
        stream.cancel();
        // The server sees the closed socket on its next write, 100 ms later at most.
        asio::steady_timer t(co_await asio::this_coro::executor);
        t.expires_after(300ms);
        co_await t.async_wait(asio::use_awaitable);
        open_after_cancel = server.open_connections();
        server.stop();
    }());
    CHECK(received == 1);
    CHECK(open_after_cancel == 0);                // the client closed it, not the pool
    CHECK(server.body_bytes_written() < 64 * 9);  // the server stopped writing: its peer was gone
}

TEST_CASE("HTTP: one client shared by coroutines on four threads, connections pooled", "[http][threads]")
{
    asio::io_context server_ioc;
    ServerOptions options;
    options.script = boost::json::parse(script_json);
    Server server(server_ioc.get_executor(), options);
    server.start();
    std::thread server_thread([&] { server_ioc.run(); });

    asio::io_context ioc;
    HttpClient client;
    std::atomic<int> ok{0};
    std::atomic<int> reused{0};
    constexpr int coroutines = 20;
    constexpr int requests_each = 5;
    for (int c = 0; c < coroutines; ++c)
        asio::co_spawn(asio::make_strand(ioc), [&]() -> asio::awaitable<void> {
            for (int i = 0; i < requests_each; ++i) {
                HttpResponse res = co_await client.send(post(server.base_url() + "/v1/chat/completions",
                                                             R"({"model":"m","stream":true,"messages":[]})"));
                std::string body = co_await res.read_all();
                if (res.status() == 200 && body.find("[DONE]") != std::string::npos)
                    ++ok;
                if (res.reused_connection())
                    ++reused;
            }
        }, asio::detached);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&] { ioc.run(); });
    for (auto& t : threads)
        t.join();
    server.stop();
    server_thread.join();
    CHECK(ok == coroutines * requests_each);
    CHECK(reused > 0);
    CHECK(server.connections_accepted() < static_cast<std::size_t>(coroutines * requests_each));
}

TEST_CASE("HTTP: a server that accepts but never answers hits the first-byte timeout over TCP and TLS, and one "
          "silent in the TLS handshake the connect timeout",
          "[http]")
{
    enum class Silent { plain, in_handshake, after_handshake };
    const Silent silent_how = GENERATE(Silent::plain, Silent::in_handshake, Silent::after_handshake);
    const bool tls = silent_how != Silent::plain;
    INFO((silent_how == Silent::plain ? "over TCP" : silent_how == Silent::in_handshake ? "silent in the handshake"
                                                                                         : "silent after the handshake"));
    asio::ssl::context tls_context = server_tls_context();
    asio::io_context ioc;
    asio::ip::tcp::acceptor silent(ioc, {asio::ip::make_address("127.0.0.1"), 0});
    // Connections accepted and left without an answer (a TLS stream over each, whether it handshakes or not).
    std::vector<std::shared_ptr<asio::ssl::stream<asio::ip::tcp::socket>>> held;
    std::function<void()> accept = [&] {
        silent.async_accept([&](boost::system::error_code ec, asio::ip::tcp::socket s) {
            if (ec)
                return;
            auto stream = std::make_shared<asio::ssl::stream<asio::ip::tcp::socket>>(std::move(s), tls_context);
            held.push_back(stream);
            if (silent_how == Silent::after_handshake)
                stream->async_handshake(asio::ssl::stream_base::server, [](boost::system::error_code) {});
            accept();
        });
    };
    accept();
    HttpClientOptions options = trusting(fast_retries(), tls);
    options.connect_timeout = 150ms;
    options.first_byte_timeout = 150ms;
    options.retry.max_retries = 1;
    HttpClient client(options);
    LogCapture logs;
    std::string message;
    boost::system::error_code code;
    std::size_t accepted = 0;
    run(ioc, [&]() -> asio::awaitable<void> {
        try {
            co_await client.send(post((tls ? "https://" : "http://") + std::string("127.0.0.1:") +
                                      std::to_string(silent.local_endpoint().port()) + "/"));
        } catch (const adk::Error& e) {
            message = e.message();
            code = e.code();
        }
        accepted = held.size();
        silent.close();
        for (auto& s : held)
            s->lowest_layer().close();
        held.clear();
    }());
    CHECK(code == boost::beast::error::timeout);
    if (silent_how == Silent::in_handshake)
        CHECK_THAT(message, Catch::Contains("the TLS handshake with 127.0.0.1:") &&
                                Catch::Contains("timed out after 150 ms"));
    else
        CHECK_THAT(message, Catch::Contains("within 150 ms (HttpClientOptions::first_byte_timeout)"));
    CHECK(accepted == 2);  // the first try and the retry, each on a new connection
    CHECK(logs.all().size() == 1);  // one retry, then the error
}

TEST_CASE("HTTP: a body over max_body_bytes ends with bad_response naming the limit", "[http]")
{
    asio::io_context ioc;
    std::string body;
    for (int i = 0; i < 400; ++i)
        body += "data: " + std::string(100, 'x') + "\n\n";  // 41 KB
    Server server(ioc.get_executor(), replay(body));
    server.start();
    HttpClientOptions options;
    options.max_body_bytes = 10'000;
    HttpClient client(options);
    std::string got;
    std::string failure;
    run(ioc, [&]() -> asio::awaitable<void> {
        HttpResponse res = co_await client.send(post(server.base_url() + "/"));
        failure = co_await read_rest(res, got);
        server.stop();
    }());
    CHECK(got.size() <= 10'000);
    CHECK_THAT(failure, Catch::Contains("over 10000 bytes (HttpClientOptions::max_body_bytes)"));
}

TEST_CASE("HTTP: a body that keeps trickling in hits the body timeout, though no read is idle", "[http]")
{
    asio::io_context ioc;
    const std::string body = numbered_events(40);
    auto options = replay(body);
    options.chunk_delay = 30ms;  // 1.2 s in all, never idle for long
    Server server(ioc.get_executor(), options);
    server.start();
    HttpClientOptions client_options;
    client_options.idle_timeout = 1s;
    client_options.body_timeout = 300ms;
    HttpClient client(client_options);
    std::string got;
    std::string failure;
    const auto start = std::chrono::steady_clock::now();
    run(ioc, [&]() -> asio::awaitable<void> {
        HttpResponse res = co_await client.send(post(server.base_url() + "/"));
        failure = co_await read_rest(res, got);
        server.stop();
    }());
    CHECK_THAT(failure, Catch::Contains("took longer than 300 ms (HttpClientOptions::body_timeout)"));
    CHECK(got.size() < body.size());
    CHECK(std::chrono::steady_clock::now() - start < 1s);
}

TEST_CASE("HTTP: a header value with a line break is refused before anything is sent", "[http]")
{
    asio::io_context ioc;
    Server server(ioc.get_executor(), replay("data: 1\n\n"));
    server.start();
    HttpClient client;
    std::vector<std::string> failures;
    run(ioc, [&]() -> asio::awaitable<void> {
        HttpRequest smuggled = post(server.base_url() + "/");
        smuggled.set("authorization", "Bearer k\r\nX-Smuggled: 1");
        HttpRequest bad_url = post(server.base_url() + "/v1\r\nX-Smuggled: 1");
        for (HttpRequest* req : {&smuggled, &bad_url}) {
            try {
                co_await client.send(std::move(*req));
            } catch (const adk::Error& e) {
                CHECK(e.code() == adk::errc::invalid_argument);
                failures.push_back(e.message());
            }
        }
        server.stop();
    }());
    REQUIRE(failures.size() == 2);
    CHECK_THAT(failures[0], Catch::Contains("'authorization' holds a control character"));
    CHECK_THAT(failures[1], Catch::Contains("control character"));
    CHECK(server.requests().empty());
    CHECK(server.connections_accepted() == 0);
}

TEST_CASE("HTTP: a body hint of a day is not honoured, the backoff applies", "[http]")
{
    std::string seen_body;
    const auto lines = retried_once(24h, seen_body);
    REQUIRE(lines.size() == 1);
    CHECK_THAT(lines[0], Catch::Matches(".*retrying in [0-9]{1,2} ms.*"));
}

TEST_CASE("HTTP: URLs in logs and errors carry no credentials and no query", "[http]")
{
    asio::io_context ioc;
    Server server(ioc.get_executor(), failing_script(503));
    server.start();
    HttpClientOptions options = fast_retries();
    options.retry.max_retries = 1;
    HttpClient client(options);
    LogCapture logs;
    std::string failure;
    run(ioc, [&]() -> asio::awaitable<void> {
        const std::string base = server.base_url();
        const std::string url = "http://user:hunter2@" + base.substr(7) + "/v1/chat/completions?key=AIzaSECRET";
        HttpResponse res = co_await client.send(post(url));
        CHECK(res.status() == 503);
        server.stop();
        try {  // the server is gone: a connection error names the URL too
            co_await client.send(post(url));
        } catch (const adk::Error& e) {
            failure = e.message();
        }
    }());
    const auto lines = logs.all();
    REQUIRE(lines.size() >= 2);
    for (const auto& line : lines) {
        CHECK_THAT(line, !Catch::Contains("hunter2") && !Catch::Contains("AIzaSECRET"));
        CHECK_THAT(line, Catch::Contains("http://***@127.0.0.1:"));
    }
    CHECK(!failure.empty());
    CHECK_THAT(failure, !Catch::Contains("hunter2") && !Catch::Contains("AIzaSECRET"));
}

TEST_CASE("HTTP: abort() from another thread ends a pending read at once and closes the connection", "[http][threads]")
{
    const bool tls = GENERATE(false, true);
    INFO((tls ? "over TLS" : "over TCP"));
    asio::io_context ioc;
    auto options = replay("data: 1\n\ndata: 2\n\n");
    options.chunk_delay = 10s;  // the second event never comes in time
    Server server(ioc.get_executor(), over_tls(options, tls));
    server.start();
    HttpClient client(trusting({}, tls));
    std::string failure;
    boost::system::error_code code;
    std::thread other;
    std::chrono::steady_clock::duration abort_to_error{};
    std::atomic<std::int64_t> aborted_at{0};
    bool reused = true;
    run(ioc, [&]() -> asio::awaitable<void> {
        HttpResponse res = co_await client.send(post(server.base_url() + "/"));
        std::string_view first = co_await res.read_some();
        CHECK(first == "data: 1\n\n");
        other = std::thread([&] {
            std::this_thread::sleep_for(50ms);  // the reader waits for the second event by then
            aborted_at = std::chrono::steady_clock::now().time_since_epoch().count();
            res.abort();
        });
        try {
            co_await res.read_some();
        } catch (const adk::Error& e) {
            failure = e.message();
            code = e.code();
        }
        abort_to_error = std::chrono::steady_clock::now().time_since_epoch() -
                         std::chrono::steady_clock::duration(aborted_at.load());
        HttpResponse next = co_await client.send(post(server.base_url() + "/"));
        reused = next.reused_connection();
        server.stop();
    }());
    other.join();
    CHECK(code == asio::error::operation_aborted);
    CHECK_THAT(failure, Catch::Contains("was cancelled"));
    CHECK(abort_to_error < 1s);
    CHECK_FALSE(reused);  // the aborted connection was closed, not given back to the pool
}

TEST_CASE("HTTP: one client on an io_context of four threads without strands: bodies, idle timeouts, aborts",
          "[http][threads]")
{
    // Every coroutine runs on the io_context's own executor, so its steps, the body watch's timer and the
    // aborts from other threads may all run at once on different threads (what TSan checks here).
    const bool tls = GENERATE(false, true);
    INFO((tls ? "over TLS" : "over TCP"));
    asio::io_context server_ioc;
    const std::string body = numbered_events(8);
    auto steady_options = replay(body);
    steady_options.chunk_delay = 10ms;  // reads pending while the 250 ms idle timer fires and re-arms (25x margin:
                                        // a loaded 2-core machine stalls a thread for tens of ms, at times over 80)
    Server steady(server_ioc.get_executor(), over_tls(steady_options, tls));
    steady.start();
    auto stalled_options = replay(body);
    stalled_options.chunk_delay = 1500ms;  // the idle timeout expires
    Server stalled(server_ioc.get_executor(), over_tls(stalled_options, tls));
    stalled.start();
    std::thread server_thread([&] { server_ioc.run(); });

    asio::io_context ioc;
    HttpClientOptions options = trusting({}, tls);
    options.idle_timeout = 250ms;
    HttpClient client(options);
    std::atomic<int> whole{0}, timed_out{0}, aborted{0}, other{0};
    std::mutex responses_mutex;
    std::vector<std::pair<int, HttpResponse*>> reading;  // aborted from the main thread while they read
    constexpr int coroutines = 24;
    for (int c = 0; c < coroutines; ++c) {
        auto one = [&, c]() -> asio::awaitable<void> {
            const int kind = c % 3;  // 0 steady, 1 stalled, 2 aborted
            HttpResponse res = co_await client.send(post((kind == 1 ? stalled : steady).base_url() + "/"));
            if (kind == 2) {
                std::lock_guard lock(responses_mutex);
                reading.emplace_back(c, &res);
            }
            std::string got;
            const std::string failure = co_await read_rest(res, got);
            if (kind == 2) {
                std::lock_guard lock(responses_mutex);
                std::erase(reading, std::make_pair(c, &res));
            }
            if (failure.empty() && got == body)
                ++whole;
            else if (failure.find("no bytes for 250 ms") != std::string::npos)
                ++timed_out;
            else if (failure.find("was cancelled") != std::string::npos)
                ++aborted;
            else
                ++other;
        };
        asio::co_spawn(ioc.get_executor(), one, asio::detached);
    }
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&] { ioc.run(); });
    // Each of the third kind is aborted as soon as it reads (its 8 events take 70 ms): not after a fixed
    // sleep, which a loaded machine can outlast.
    std::set<int> aborted_ones;
    for (int i = 0; i < 10000 && aborted_ones.size() < coroutines / 3; ++i) {
        {
            std::lock_guard lock(responses_mutex);
            for (auto [c, r] : reading)
                if (aborted_ones.insert(c).second)
                    r->abort();
        }
        std::this_thread::sleep_for(1ms);
    }
    for (auto& t : threads)
        t.join();
    steady.stop();
    stalled.stop();
    server_thread.join();
    CHECK(other == 0);
    CHECK(timed_out == coroutines / 3);
    CHECK(whole + aborted == 2 * coroutines / 3);
    CHECK(aborted > 0);
}

TEST_CASE("SSE: SseReader gives every event of a body that arrives in pieces, the last without its blank line",
          "[http][sse]")
{
    asio::io_context ioc;
    const std::string body = ": keep-alive\n\ndata: one\n\nevent: x\ndata: two\ndata: 2\n\nid: 7\ndata: three";
    auto options = replay(body);
    options.split_bytes = 5;
    Server server(ioc.get_executor(), options);
    server.start();
    HttpClient client;
    std::vector<adk::net::SseEvent> got;
    int reads = 0, empty_reads = 0;
    bool read_after_end = true;
    run(ioc, [&]() -> asio::awaitable<void> {
        HttpResponse res = co_await client.send(post(server.base_url() + "/"));
        adk::net::SseReader reader(std::move(res));
        std::vector<adk::net::SseEvent> events;
        for (bool more = true; more;) {
            more = co_await reader.read(events);
            ++reads;
            if (events.empty())
                ++empty_reads;
            for (auto& e : events)
                got.push_back(std::move(e));
            events.clear();
        }
        read_after_end = co_await reader.read(events);
        server.stop();
    }());
    REQUIRE(got.size() == 3);
    CHECK(got[0] == adk::net::SseEvent("message", "one"));
    CHECK(got[1] == adk::net::SseEvent("x", "two\n2"));
    CHECK(got[2].data == "three");  // finished at the end of the body
    CHECK(got[2].id == "7");
    CHECK(reads > 3);        // one read at a time, as the pieces came
    CHECK(empty_reads > 0);  // the keep-alive and the halves of events complete nothing
    CHECK(!read_after_end);
}

TEST_CASE("SSE: SseReader refuses an event over its bound with bad_response", "[http][sse]")
{
    asio::io_context ioc;
    Server server(ioc.get_executor(), replay("data: " + std::string(5000, 'x') + "\n\n"));
    server.start();
    HttpClient client;
    std::optional<boost::system::error_code> failure;
    run(ioc, [&]() -> asio::awaitable<void> {
        HttpResponse res = co_await client.send(post(server.base_url() + "/"));
        adk::net::SseReader reader(std::move(res), 1000);
        std::vector<adk::net::SseEvent> events;
        try {
            while (co_await reader.read(events))
                events.clear();
        } catch (const adk::Error& e) {
            failure = e.code();
        }
        server.stop();
    }());
    REQUIRE(failure);
    CHECK(*failure == make_error_code(adk::errc::bad_response));
}
