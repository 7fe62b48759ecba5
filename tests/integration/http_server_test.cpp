// HttpServer (adk/net/http_server.hpp) over real loopback HTTP and TLS: whole and streamed answers on
// kept-alive connections, the limits and the errors a hostile or broken client meets, handlers that fail,
// timeouts, stop(), and many requests on an io_context run by four threads. Raw sockets play the clients
// that HttpClient would never be.
#include <adk/core/error.hpp>
#include <adk/net/http_client.hpp>
#include <adk/net/http_server.hpp>

#include "support/raw_http.hpp"
#include "support/run.hpp"
#include "support/tls.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/error.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <future>
#include <thread>

#include <filesystem>

#include <sys/resource.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <netinet/in.h>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using adk::net::HttpServer;
using adk::net::HttpServerOptions;
using adk::net::IncomingRequest;
using adk::net::ResponseWriter;
using tcp = asio::ip::tcp;
using adk::test::raw_exchange;
using adk::test::read_until_closed;

namespace {

// A server on an io_context of its own, run by `threads` threads for the test's length.
class ServerThread {
public:
    ServerThread(HttpServerOptions options, HttpServer::Handler handler, int threads = 1)
        : server(ioc.get_executor(), std::move(options), std::move(handler))
    {
        server.start();
        for (int i = 0; i < threads; ++i)
            pool.emplace_back([this] { ioc.run(); });
    }
    ~ServerThread()
    {
        server.stop();
        guard.reset();
        ioc.stop();
        for (auto& t : pool)
            t.join();
    }

    asio::io_context ioc;
    asio::executor_work_guard<asio::io_context::executor_type> guard{ioc.get_executor()};
    HttpServer server;
    std::vector<std::thread> pool;
};

asio::awaitable<void> answer_by_path(IncomingRequest& req, ResponseWriter& res)
{
    if (req.target == "/whole") {
        std::string body = req.method + " " + std::string(req.header("x-test")) + " " + req.body;
        co_await res.send(200, "text/plain", body);
    } else if (req.target == "/stream") {
        const adk::net::HeaderList headers{{"cache-control", "no-cache"}};
        co_await res.begin_stream(200, "text/event-stream", headers);
        for (int i = 0; i < 3; ++i) {
            std::string frame = "data: " + std::to_string(i) + "\n\n";
            co_await res.write(frame);
        }
        co_await res.end_stream();
    } else if (req.target == "/stream-end") {
        // The last frame written with the stream's end, as a run's last frames are.
        co_await res.begin_stream(200, "text/event-stream");
        co_await res.write("data: 0\n\n");
        co_await res.end_stream("data: 1\n\ndata: 2\n\n");
    } else if (req.target == "/throw") {
        throw adk::Error(adk::errc::invalid_argument, "the handler refused it");
    } else if (req.target == "/throw-mid-stream") {
        co_await res.begin_stream(200, "text/event-stream");
        co_await res.write("data: first\n\n");
        throw adk::Error(adk::errc::invalid_argument, "the handler failed mid-stream");
    } else if (req.target == "/split-header") {
        const adk::net::HeaderList headers{{"x-injected", "a\r\nset-cookie: evil=1"}};
        co_await res.send(200, "text/plain", "never", headers);
    } else if (req.target == "/silent") {
        co_return;  // answers nothing
    } else {
        co_await res.send(404, "application/json", R"({"error":"no such path"})");
    }
}

}  // namespace

TEST_CASE("HttpServer: whole and streamed answers on one kept-alive connection", "[http][server]")
{
    ServerThread s(HttpServerOptions(), answer_by_path);
    asio::io_context ioc;
    adk::net::HttpClient client;
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        for (int i = 0; i < 3; ++i) {
            adk::net::HttpRequest req("POST", s.server.base_url() + "/whole");
            req.set("x-test", "t" + std::to_string(i));
            req.body = "hello";
            adk::net::HttpResponse res = co_await client.send(std::move(req));
            CHECK(res.status() == 200);
            CHECK(res.header("content-type") == "text/plain");
            std::string body = co_await res.read_all();
            CHECK(body == "POST t" + std::to_string(i) + " hello");

            adk::net::HttpRequest stream_req("GET", s.server.base_url() + "/stream");
            adk::net::HttpResponse streamed = co_await client.send(std::move(stream_req));
            CHECK(streamed.status() == 200);
            CHECK(streamed.header("cache-control") == "no-cache");
            std::string events = co_await streamed.read_all();
            CHECK(events == "data: 0\n\ndata: 1\n\ndata: 2\n\n");

            adk::net::HttpRequest end_req("GET", s.server.base_url() + "/stream-end");
            adk::net::HttpResponse ended = co_await client.send(std::move(end_req));
            const std::string ended_events = co_await ended.read_all();
            CHECK(ended_events == "data: 0\n\ndata: 1\n\ndata: 2\n\n");
        }
    }());
    CHECK(s.server.connections_accepted() == 1);  // each stream ended where its framing says: the connection kept
}

TEST_CASE("HttpServer: bodies and headers over the limits, and requests that do not parse, get a JSON error",
          "[http][server]")
{
    HttpServerOptions options;
    options.max_body_bytes = 1000;
    options.max_header_bytes = 2048;
    options.read_timeout = 500ms;
    ServerThread s(options, answer_by_path);

    std::string big_body = raw_exchange(s.server.port(), "POST /whole HTTP/1.1\r\nHost: x\r\nContent-Length: 1001\r\n\r\n" +
                                                             std::string(1001, 'b'));
    CHECK(big_body.rfind("HTTP/1.1 413 ", 0) == 0);
    CHECK_THAT(big_body, Catch::Contains(R"json({"error":"the request body is larger than this server accepts (1000 bytes)"})json"));
    CHECK_THAT(big_body, Catch::Contains("Connection: close"));

    // A client that writes its whole body before it reads (Python's http.client): 3 MiB over a bound of 1000
    // bytes. The server reads and drops it, so the client's writes finish and it reads the 413, not a reset.
    {
        boost::asio::io_context io;
        boost::asio::ip::tcp::socket socket(io);
        socket.connect(boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), s.server.port()));
        const std::string body(std::size_t{3} << 20, 'b');
        const std::string request = "POST /whole HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(body.size()) +
                                    "\r\n\r\n" + body;
        boost::system::error_code write_ec;
        boost::asio::write(socket, boost::asio::buffer(request), write_ec);
        CHECK(!write_ec);
        const std::string answer = adk::test::read_until_closed(socket);
        CHECK(answer.rfind("HTTP/1.1 413 ", 0) == 0);
    }

    std::string big_head = raw_exchange(s.server.port(), "GET /whole HTTP/1.1\r\nHost: x\r\nX-Big: " +
                                                             std::string(4000, 'h') + "\r\n\r\n");
    CHECK(big_head.rfind("HTTP/1.1 431 ", 0) == 0);
    CHECK_THAT(big_head, Catch::Contains("headers are larger than this server accepts (2048 bytes)"));

    std::string garbage = raw_exchange(s.server.port(), "HELLO THERE\r\n\r\n");
    CHECK(garbage.rfind("HTTP/1.1 400 ", 0) == 0);
    CHECK_THAT(garbage, Catch::Contains("not valid HTTP/1.1"));

    // A client that waits for "100 Continue" before its body (curl does, past 1 KB) gets it, then the answer.
    std::string expect = raw_exchange(s.server.port(), "POST /whole HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                                                       "Content-Length: 2\r\nConnection: close\r\n\r\nhi");
    CHECK(expect.rfind("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n", 0) == 0);
    CHECK_THAT(expect, Catch::EndsWith("POST  hi"));

    std::string bad_length = raw_exchange(s.server.port(), "POST /whole HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n");
    CHECK(bad_length.rfind("HTTP/1.1 400 ", 0) == 0);

    // A request that never arrives whole is not answered: the connection is closed after read_timeout, and
    // the server goes on.
    std::string cut = raw_exchange(s.server.port(), "POST /whole HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc");
    CHECK(cut.empty());
    std::string after = raw_exchange(s.server.port(), "GET /whole HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    CHECK(after.rfind("HTTP/1.1 200 ", 0) == 0);
}

TEST_CASE("HttpServer: an endless chunk-size line or trailer section is refused within the read buffer's bound",
          "[http][server]")
{
    HttpServerOptions options;
    options.max_header_bytes = 2048;
    options.read_timeout = 2s;
    ServerThread s(options, answer_by_path);
    // A chunk extension that never ends, then a trailer field that never ends: each is refused once the
    // connection's buffer (max_header_bytes + 16 KiB) is full, long before the client stops sending.
    const std::string head = "POST /whole HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
    std::string extension = raw_exchange(s.server.port(), head + "5;ext=" + std::string(200000, 'e'));
    CHECK(extension.rfind("HTTP/1.1 400 ", 0) == 0);
    CHECK_THAT(extension, Catch::Contains("chunk-size line or the trailer section"));
    std::string trailer = raw_exchange(s.server.port(), head + "2\r\nhi\r\n0\r\nX-Trailer: " + std::string(200000, 't'));
    CHECK(trailer.rfind("HTTP/1.1 4", 0) == 0);  // 400, or 431 when Beast counts the trailer as header
    CHECK(trailer.find("200 OK") == std::string::npos);
    // A chunked body within the bounds is read as before.
    std::string fine = raw_exchange(s.server.port(), head.substr(0, head.size() - 2) + "Connection: close\r\n\r\n" +
                                                         "2;x=y\r\nhi\r\n0\r\nX-T: 1\r\n\r\n");
    CHECK_THAT(fine, Catch::EndsWith("POST  hi"));
    CHECK(s.server.peak_read_buffer_bytes() <= options.max_header_bytes + 16 * 1024);
}

TEST_CASE("HttpServer: a head check refuses a request before its body is read", "[http][server]")
{
    HttpServerOptions options;
    asio::io_context ioc;
    std::atomic<int> handled{0};
    auto handler = [&](IncomingRequest& req, ResponseWriter& res) -> asio::awaitable<void> {
        ++handled;
        co_await answer_by_path(req, res);
    };
    auto check = [](const IncomingRequest& head) -> std::optional<adk::net::Refusal> {
        if (head.header("authorization") != "yes")
            return adk::net::Refusal(401, R"({"error":"who are you"})", {{"www-authenticate", "Bearer"}});
        return std::nullopt;
    };
    HttpServer server(ioc.get_executor(), options, handler, check);
    server.start();
    std::thread runner([&] { ioc.run(); });
    // The head says 100 MB follow and none do: the refusal comes at once, not after the read timeout (60 s).
    std::string refused = raw_exchange(server.port(), "POST /whole HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n");
    CHECK(refused.rfind("HTTP/1.1 401 ", 0) == 0);
    CHECK_THAT(refused, Catch::Contains("WWW-Authenticate: Bearer") || Catch::Contains("www-authenticate: Bearer"));
    CHECK_THAT(refused, Catch::EndsWith(R"({"error":"who are you"})"));
    std::string admitted = raw_exchange(server.port(), "POST /whole HTTP/1.1\r\nHost: x\r\nAuthorization: yes\r\n"
                                                       "Content-Length: 2\r\nConnection: close\r\n\r\nok");
    CHECK_THAT(admitted, Catch::EndsWith("POST  ok"));
    CHECK(handled == 1);
    server.stop();
    runner.join();
}

TEST_CASE("HttpServer: past max_connections it accepts no more until one closes", "[http][server]")
{
    HttpServerOptions options;
    options.max_connections = 2;
    options.reserved_connections = 0;  // none kept for a health check (the next test's)
    ServerThread s(options, answer_by_path);
    asio::io_context io;
    const tcp::endpoint at(asio::ip::make_address("127.0.0.1"), s.server.port());
    std::vector<std::unique_ptr<tcp::socket>> idle;
    for (int i = 0; i < 2; ++i) {
        idle.push_back(std::make_unique<tcp::socket>(io));
        idle.back()->connect(at);
    }
    auto wait_until = [](auto done) {
        for (int i = 0; i < 1000 && !done(); ++i)
            std::this_thread::sleep_for(10ms);
        return done();
    };
    REQUIRE(wait_until([&] { return s.server.open_connections() == 2; }));
    // The third is queued by the kernel, not accepted: its request waits.
    tcp::socket third(io);
    third.connect(at);
    const std::string request = "GET /whole HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    asio::write(third, asio::buffer(request));
    std::this_thread::sleep_for(200ms);
    CHECK(s.server.connections_accepted() == 2);
    CHECK(third.available() == 0);
    idle.front()->close();
    REQUIRE(wait_until([&] { return s.server.connections_accepted() == 3; }));
    std::string answer = read_until_closed(third);
    CHECK(answer.rfind("HTTP/1.1 200 ", 0) == 0);
}

TEST_CASE("HttpServer: out of descriptors (EMFILE) the accept loop waits instead of spinning, and serves again after",
          "[http][server]")
{
    HttpServerOptions options;
    ServerThread s(options, answer_by_path);
    asio::io_context io;
    const tcp::endpoint at(asio::ip::make_address("127.0.0.1"), s.server.port());
    // The clients' sockets are made first; then the process may open no more descriptors, so the server's
    // accept fails with EMFILE while their connections wait in the kernel's queue.
    std::vector<std::unique_ptr<tcp::socket>> clients;
    for (int i = 0; i < 3; ++i) {
        clients.push_back(std::make_unique<tcp::socket>(io));
        clients.back()->open(tcp::v4());
    }
    rlimit before{};
    REQUIRE(::getrlimit(RLIMIT_NOFILE, &before) == 0);
    int highest = 0;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd"))
        highest = std::max(highest, std::stoi(entry.path().filename().string()));
    rlimit low = before;
    low.rlim_cur = static_cast<rlim_t>(highest + 1);
    REQUIRE(::setrlimit(RLIMIT_NOFILE, &low) == 0);
    std::vector<int> fillers;  // whatever slots are still free below the limit: none is left for accept
    for (int fd = ::dup(0); fd >= 0; fd = ::dup(0))
        fillers.push_back(fd);
    for (auto& c : clients)
        c->connect(at);
    auto cpu_seconds = [] {
        rusage u{};
        ::getrusage(RUSAGE_SELF, &u);
        return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
               static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
    };
    const double cpu_before = cpu_seconds();
    std::this_thread::sleep_for(1s);
    const double cpu_spent = cpu_seconds() - cpu_before;
    const std::size_t accepted_while_full = s.server.connections_accepted();
    REQUIRE(::setrlimit(RLIMIT_NOFILE, &before) == 0);
    for (int fd : fillers)
        ::close(fd);
    // A loop that retried at once would have used the whole second; waiting costs next to nothing.
    CHECK(cpu_spent < 0.3);
    // The spare descriptor went to the first connection, served as a reserved one: only /health would be
    // answered on it, anything else 503. The others waited in the kernel's queue.
    CHECK(accepted_while_full == 1);
    const std::string request = "GET /whole HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    asio::write(*clients[0], asio::buffer(request));
    std::string reserved = read_until_closed(*clients[0]);
    CHECK(reserved.rfind("HTTP/1.1 503 ", 0) == 0);
    CHECK_THAT(reserved, Catch::Contains("max_connections"));
    // With descriptors again, the queued connections are served.
    asio::write(*clients[1], asio::buffer(request));
    std::string answer = read_until_closed(*clients[1]);
    CHECK(answer.rfind("HTTP/1.1 200 ", 0) == 0);
}

TEST_CASE("HttpServer: past max_connections a reserved connection answers the health check, and 503 to the rest",
          "[http][server]")
{
    HttpServerOptions options;
    options.max_connections = 2;
    options.reserved_connections = 1;
    options.reserved_targets = {"/whole"};  // the health check of this test's handler
    ServerThread s(options, answer_by_path);
    asio::io_context io;
    const tcp::endpoint at(asio::ip::make_address("127.0.0.1"), s.server.port());
    auto wait_until = [](auto done) {
        for (int i = 0; i < 1000 && !done(); ++i)
            std::this_thread::sleep_for(10ms);
        return done();
    };
    // Two idle clients hold the two connections the server serves.
    std::vector<std::unique_ptr<tcp::socket>> idle;
    for (int i = 0; i < 2; ++i) {
        idle.push_back(std::make_unique<tcp::socket>(io));
        idle.back()->connect(at);
    }
    REQUIRE(wait_until([&] { return s.server.open_connections() == 2; }));
    // A third: the reserve. A reserved target is answered, and the connection closes after it.
    std::string health = raw_exchange(s.server.port(), "GET /whole HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(health.rfind("HTTP/1.1 200 ", 0) == 0);
    CHECK_THAT(health, Catch::Contains("Connection: close"));
    // A query does not change the path: admitted (this handler knows no query, so 404), not refused.
    std::string with_query = raw_exchange(s.server.port(), "GET /whole?probe=1 HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(with_query.rfind("HTTP/1.1 404 ", 0) == 0);
    std::string other = raw_exchange(s.server.port(), "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(other.rfind("HTTP/1.1 503 ", 0) == 0);
    CHECK_THAT(other, Catch::Contains("HttpServerOptions::max_connections"));
    CHECK_THAT(other, Catch::Contains("retry-after: 1", Catch::CaseSensitive::No));
    // Once an idle client leaves, the next connection is an ordinary one again.
    idle.front()->close();
    REQUIRE(wait_until([&] { return s.server.open_connections() == 1; }));
    std::string stream = raw_exchange(s.server.port(), "GET /stream HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    CHECK(stream.rfind("HTTP/1.1 200 ", 0) == 0);
}

TEST_CASE("HttpServer: a socket bound and listening before the server is made is served (listening_socket)",
          "[http][server]")
{
    // Bound first, as a program does whose setup must know the port (an OAuth redirect URI under port 0).
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd >= 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    REQUIRE(::listen(fd, 16) == 0);
    socklen_t length = sizeof address;
    REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0);
    const unsigned short bound = ntohs(address.sin_port);

    HttpServerOptions options;
    options.port = 1;  // not used: the socket given is
    options.listening_socket = fd;
    {
        ServerThread s(options, answer_by_path);
        CHECK(s.server.port() == bound);
        std::string answer = raw_exchange(bound, "GET /whole HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        CHECK(answer.rfind("HTTP/1.1 200 ", 0) == 0);
    }
    // The server took the socket over: it is closed with the server.
    CHECK(::fcntl(fd, F_GETFD) == -1);

    // A socket that does not listen is refused by name, and closed.
    const int idle = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(idle >= 0);
    asio::io_context io;
    HttpServerOptions not_listening;
    not_listening.listening_socket = idle;
    try {
        HttpServer server(io.get_executor(), not_listening, answer_by_path);
        FAIL("a socket that does not listen was taken");
    } catch (const adk::Error& e) {
        CHECK_THAT(e.what(), Catch::Contains("HttpServerOptions::listening_socket"));
        CHECK_THAT(e.what(), Catch::Contains("listen() on it first"));
    }
    CHECK(::fcntl(idle, F_GETFD) == -1);
}

TEST_CASE("HttpServer: start() twice is refused", "[http][server]")
{
    asio::io_context io;
    HttpServer server(io.get_executor(), HttpServerOptions{}, answer_by_path);
    server.start();
    CHECK_THROWS_WITH(server.start(), Catch::Contains("start() called twice"));
    server.stop();
    io.run();
}

TEST_CASE("HttpServer: a handler that throws, answers nothing, or writes a header that splits the response",
          "[http][server]")
{
    ServerThread s(HttpServerOptions(), answer_by_path);
    auto get = [&](const std::string& path) {
        return raw_exchange(s.server.port(), "GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    };
    std::string thrown = get("/throw");
    CHECK(thrown.rfind("HTTP/1.1 500 ", 0) == 0);
    CHECK_THAT(thrown, Catch::Contains("the handler refused it"));

    std::string silent = get("/silent");
    CHECK(silent.rfind("HTTP/1.1 500 ", 0) == 0);
    CHECK_THAT(silent, Catch::Contains("did not answer"));

    std::string split = get("/split-header");
    CHECK(split.rfind("HTTP/1.1 500 ", 0) == 0);
    CHECK_THAT(split, !Catch::Contains("evil=1\r\n"));  // nothing of the header was written

    // After the stream began, the connection is cut: the first frame arrived, the stream's end never does.
    std::string mid = get("/throw-mid-stream");
    CHECK(mid.rfind("HTTP/1.1 200 ", 0) == 0);
    CHECK_THAT(mid, Catch::Contains("data: first"));
    CHECK_THAT(mid, !Catch::Contains("\r\n0\r\n\r\n"));  // no last chunk
}

TEST_CASE("HttpServer: a client that sends nothing, or stops reading, is closed after the timeout",
          "[http][server]")
{
    HttpServerOptions options;
    options.read_timeout = 200ms;
    options.write_timeout = 200ms;
    std::promise<boost::system::error_code> handler_saw;
    auto flood = [&](IncomingRequest&, ResponseWriter& res) -> asio::awaitable<void> {
        co_await res.begin_stream(200, "text/plain");
        const std::string block(1 << 20, 'x');
        try {
            for (int i = 0; i < 1000; ++i)
                co_await res.write(block);
            handler_saw.set_value({});
        } catch (const boost::system::system_error& e) {
            handler_saw.set_value(e.code());
            throw;
        }
    };
    ServerThread s(options, flood);

    asio::io_context io;
    tcp::socket idle(io);
    idle.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), s.server.port()));
    char byte = 0;
    boost::system::error_code ec;
    idle.read_some(asio::buffer(&byte, 1), ec);  // returns when the server closes it
    CHECK(ec == asio::error::eof);

    tcp::socket reader(io);
    reader.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), s.server.port()));
    asio::write(reader, asio::buffer(std::string("GET / HTTP/1.1\r\nHost: x\r\n\r\n")));
    auto outcome = handler_saw.get_future();
    REQUIRE(outcome.wait_for(20s) == std::future_status::ready);  // the test never reads: the write times out
    CHECK(outcome.get() == boost::beast::error::timeout);
}

namespace {

// The body of a chunked answer (`raw`: the head, then the chunks); "!" when the chunks do not parse or do not end.
std::string dechunk(const std::string& raw)
{
    std::size_t at = raw.find("\r\n\r\n");
    if (at == std::string::npos)
        return "!";
    at += 4;
    std::string body;
    while (true) {
        const std::size_t line_end = raw.find("\r\n", at);
        if (line_end == std::string::npos)
            return "!";
        const std::size_t size = std::stoul(raw.substr(at, line_end - at), nullptr, 16);
        at = line_end + 2;
        if (size == 0)
            return body;
        if (raw.size() < at + size + 2 || raw.compare(at + size, 2, "\r\n") != 0)
            return "!";
        body.append(raw, at, size);
        at += size + 2;
    }
}

}  // namespace

TEST_CASE("HttpServer: write_now() writes a chunk without waiting, and what the socket did not take is kept and written "
          "first by flush() and the next write",
          "[http][server]")
{
    // The client does not read until the socket takes no more: the last write_now() is kept in part.
    std::promise<std::string> stalled;  // what the handler wrote, when the socket took no more
    std::promise<void> client_reads;
    std::shared_future<void> reading = client_reads.get_future().share();
    std::atomic<bool> flushed_ready{false};
    auto handler = [&](IncomingRequest&, ResponseWriter& res) -> asio::awaitable<void> {
        CHECK(!res.can_write_now());  // no stream yet
        co_await res.begin_stream(200, "text/plain");
        std::string wrote;
        for (int i = 0; i < 10000; ++i) {
            REQUIRE(res.can_write_now());
            const std::string chunk = "<" + std::to_string(i) + ":" + std::string(16 << 10, static_cast<char>('a' + i % 26)) + ">";
            wrote += chunk;
            if (!res.write_now(chunk))
                break;
        }
        CHECK(!res.can_write_now());  // the rest of the last one is kept
        stalled.set_value(wrote);
        // Waits (without blocking the connection's thread) for the client to read, then writes what was kept.
        asio::steady_timer poll(co_await asio::this_coro::executor);
        while (reading.wait_for(0s) != std::future_status::ready) {
            poll.expires_after(5ms);
            co_await poll.async_wait(asio::use_awaitable);
        }
        co_await res.flush();
        flushed_ready = res.can_write_now();
        co_await res.write("<tail>");
        // The last data with the stream's end: more than a small socket takes at once while the client reads.
        const std::string last = "<" + std::string(60000, 'z') + ">";
        co_await res.end_stream(last);
    };
    ServerThread s(HttpServerOptions(), handler);

    asio::io_context io;
    tcp::socket client(io);
    int small = 4096;
    ::setsockopt(client.native_handle(), SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    client.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), s.server.port()));
    asio::write(client, asio::buffer(std::string("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")));
    auto wrote = stalled.get_future();
    REQUIRE(wrote.wait_for(20s) == std::future_status::ready);
    const std::string expected = wrote.get() + "<tail><" + std::string(60000, 'z') + ">";
    client_reads.set_value();
    const std::string body = dechunk(read_until_closed(client));
    CHECK(body.size() == expected.size());
    CHECK(body == expected);  // every chunk whole and in order, the kept part before the tail
    CHECK(flushed_ready);
}

namespace {

// Gives the server's listening socket on `port` (found among this process's descriptors) a send buffer of about
// `bytes`, which the sockets it accepts inherit (Linux): what a server's socket takes at once is then far less than
// an answer, whatever loopback would otherwise queue.
void shrink_listener_send_buffer(unsigned short port, int bytes)
{
    int found = 0;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
        const int fd = std::stoi(entry.path().filename().string());
        int listening = 0;
        socklen_t size = sizeof listening;
        sockaddr_in address{};
        socklen_t address_size = sizeof address;
        if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &size) != 0 || !listening ||
            ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &address_size) != 0 ||
            address.sin_family != AF_INET || ntohs(address.sin_port) != port)
            continue;
        REQUIRE(::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes) == 0);
        ++found;
    }
    REQUIRE(found == 1);
}

}  // namespace

TEST_CASE("HttpServer: whole and streamed answers on either side of 64 KiB arrive whole to a client that reads late",
          "[http][server]")
{
    // Up to 64 KiB an answer (a whole one, or a stream's last data with its end) is written at once as far as the
    // socket takes it, and the rest under the write timeout; past it through Beast's write. The server's sockets
    // take a few KiB at once here (a small send buffer, the client's small receive buffer, a client that reads
    // only after 100 ms), so every answer below goes through the rest.
    auto handler = [](IncomingRequest& req, ResponseWriter& res) -> asio::awaitable<void> {
        const bool stream = req.target.starts_with("/stream/");
        const std::size_t size = std::stoul(req.target.substr(stream ? 8 : 1));
        std::string body;
        for (std::size_t i = 0; body.size() < size; ++i)
            body += "<" + std::to_string(i) + ">";
        body.resize(size);
        if (stream) {
            co_await res.begin_stream(200, "text/plain");
            co_await res.end_stream(body);
        } else {
            co_await res.send(200, "text/plain", body);
        }
    };
    ServerThread s(HttpServerOptions(), handler);
    shrink_listener_send_buffer(s.server.port(), 4096);
    for (const bool stream : {false, true}) {
        for (const std::size_t size : {std::size_t{60000}, std::size_t{65536}, std::size_t{200000}}) {
            INFO((stream ? "streamed, " : "whole, ") << size << " bytes");
            std::string expected;
            for (std::size_t i = 0; expected.size() < size; ++i)
                expected += "<" + std::to_string(i) + ">";
            expected.resize(size);
            asio::io_context io;
            tcp::socket client(io);
            int small = 4096;
            ::setsockopt(client.native_handle(), SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
            client.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), s.server.port()));
            const std::string request = "GET /" + std::string(stream ? "stream/" : "") + std::to_string(size) +
                                        " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
            asio::write(client, asio::buffer(request));
            std::this_thread::sleep_for(100ms);  // the server's write meets a full socket
            const std::string raw = read_until_closed(client);
            const std::size_t head_end = raw.find("\r\n\r\n");
            REQUIRE(head_end != std::string::npos);
            if (stream) {
                CHECK((dechunk(raw) == expected));
            } else {
                CHECK_THAT(raw.substr(0, head_end), Catch::Contains("Content-Length: " + std::to_string(size)));
                CHECK(raw.size() - head_end - 4 == size);
                CHECK((raw.compare(head_end + 4, std::string::npos, expected) == 0));
            }
        }
    }
}

TEST_CASE("HttpServer: a write_now() that fails is kept as the stream's failure, which flush() and write() throw",
          "[http][server]")
{
    std::promise<std::string> outcome;
    auto handler = [&](IncomingRequest&, ResponseWriter& res) -> asio::awaitable<void> {
        // What the handler saw, told to the test's thread (Catch's checks are made there alone).
        co_await res.begin_stream(200, "text/plain");
        std::string seen = res.write_now("first") ? "written, " : "not written, ";
        res.close();  // the connection fails under the stream
        seen += res.can_write_now() ? "ready, " : "not ready, ";  // nothing kept and nothing failed yet
        seen += res.write_now("second") ? "written, " : "not written, ";
        seen += res.can_write_now() ? "ready, " : "not ready, ";
        try {
            co_await res.flush();
            seen += "flushed";
        } catch (const boost::system::system_error& e) {
            seen += "flush threw: " + e.code().message();
        }
        try {
            co_await res.write("third");
            seen += ", wrote";
        } catch (const boost::system::system_error& e) {
            seen += ", write threw";
        }
        outcome.set_value(seen);
    };
    ServerThread s(HttpServerOptions(), handler);
    const std::string got = raw_exchange(s.server.port(), "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK_THAT(got, Catch::Contains("\r\n5\r\nfirst\r\n"));
    CHECK_THAT(got, !Catch::Contains("second"));
    auto seen = outcome.get_future();
    REQUIRE(seen.wait_for(10s) == std::future_status::ready);
    const std::string text = seen.get();
    CHECK_THAT(text, Catch::StartsWith("written, ready, not written, not ready, flush threw: "));
    CHECK_THAT(text, Catch::EndsWith(", write threw"));
}

TEST_CASE("HttpServer: over TLS a handler cannot write_now() and flush() has nothing to write", "[http][server]")
{
    HttpServerOptions options;
    options.cert_file = adk::test::test_certificate().cert_file;
    options.key_file = adk::test::test_certificate().key_file;
    std::promise<bool> could;
    auto handler = [&](IncomingRequest&, ResponseWriter& res) -> asio::awaitable<void> {
        co_await res.begin_stream(200, "text/plain");
        could.set_value(res.can_write_now());
        co_await res.flush();
        co_await res.write("over tls");
        co_await res.end_stream();
    };
    ServerThread s(options, handler);
    adk::net::HttpClientOptions client_options;
    client_options.ca_file = options.cert_file;
    adk::net::HttpClient client(client_options);
    asio::io_context ioc;
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        adk::net::HttpRequest req("GET", s.server.base_url() + "/");
        adk::net::HttpResponse res = co_await client.send(std::move(req));
        std::string body = co_await res.read_all();
        CHECK(body == "over tls");
    }());
    CHECK(!could.get_future().get());
}

TEST_CASE("HttpServer: stop() closes the listener and every connection, a handler mid-stream included",
          "[http][server]")
{
    std::promise<void> streaming;
    auto endless = [&](IncomingRequest&, ResponseWriter& res) -> asio::awaitable<void> {
        co_await res.begin_stream(200, "text/event-stream");
        co_await res.write("data: hello\n\n");
        streaming.set_value();
        asio::steady_timer forever(co_await asio::this_coro::executor, 1h);
        co_await forever.async_wait(asio::use_awaitable);
    };
    ServerThread s(HttpServerOptions(), endless);
    std::future<std::string> got = std::async(std::launch::async, [&] {
        return raw_exchange(s.server.port(), "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    });
    streaming.get_future().wait();
    CHECK(s.server.open_connections() == 1);
    s.server.stop();
    REQUIRE(got.wait_for(10s) == std::future_status::ready);
    CHECK_THAT(got.get(), Catch::Contains("data: hello"));
    for (int i = 0; i < 200 && s.server.open_connections() > 0; ++i)
        std::this_thread::sleep_for(10ms);
    CHECK(s.server.open_connections() == 0);
    asio::io_context io;
    tcp::socket refused(io);
    boost::system::error_code ec;
    refused.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), s.server.port()), ec);
    CHECK(ec);
}

TEST_CASE("HttpServer: TLS with the test certificate", "[http][server]")
{
    HttpServerOptions options;
    options.cert_file = adk::test::test_certificate().cert_file;
    options.key_file = adk::test::test_certificate().key_file;
    ServerThread s(options, answer_by_path);
    CHECK(s.server.base_url().rfind("https://127.0.0.1:", 0) == 0);
    adk::net::HttpClientOptions client_options;
    client_options.ca_file = options.cert_file;
    adk::net::HttpClient client(client_options);
    asio::io_context ioc;
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        for (const char* path : {"/stream", "/stream-end"}) {
            INFO(path);
            adk::net::HttpRequest req("GET", s.server.base_url() + path);
            adk::net::HttpResponse res = co_await client.send(std::move(req));
            std::string events = co_await res.read_all();
            CHECK(events == "data: 0\n\ndata: 1\n\ndata: 2\n\n");
        }
    }());

    HttpServerOptions missing;
    missing.cert_file = "/nonexistent/cert.pem";
    missing.key_file = "/nonexistent/key.pem";
    asio::io_context unused;
    CHECK_THROWS_WITH(HttpServer(unused.get_executor(), missing, answer_by_path),
                      Catch::Contains("cannot use the TLS certificate '/nonexistent/cert.pem'"));
}

TEST_CASE("HttpServer: a handler that waits mid-stream learns at once that its client left, over TCP and TLS",
          "[http][server]")
{
    const bool tls = GENERATE(false, true);
    HttpServerOptions options;
    if (tls) {
        options.cert_file = adk::test::test_certificate().cert_file;
        options.key_file = adk::test::test_certificate().key_file;
    }
    std::promise<bool> left;
    // Streams one frame, then waits 60 s for something that never comes, unless its client leaves.
    auto wait = [&left](IncomingRequest& req, ResponseWriter& res) -> asio::awaitable<void> {
        if (req.target != "/wait") {
            co_await answer_by_path(req, res);
            co_return;
        }
        co_await res.begin_stream(200, "text/event-stream");
        co_await res.write("data: started\n\n");
        asio::steady_timer timer(co_await asio::this_coro::executor, 60s);
        res.on_client_gone([&timer] { timer.cancel(); });
        auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
        (void)ec;
        left.set_value(res.client_gone());
    };
    ServerThread s(options, wait);
    adk::net::HttpClientOptions client_options;
    client_options.ca_file = adk::test::test_certificate().cert_file;
    adk::net::HttpClient client(client_options);
    asio::io_context ioc;
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        adk::net::HttpRequest req("GET", s.server.base_url() + "/wait");
        adk::net::HttpResponse res = co_await client.send(std::move(req));
        std::string first(co_await res.read_some());
        CHECK(first == "data: started\n\n");
    }());  // the response is dropped unread: the client closes the connection
    auto gone = left.get_future();
    REQUIRE(gone.wait_for(20s) == std::future_status::ready);
    CHECK(gone.get());

    // A stream that ends normally leaves the connection usable (over TCP): the watch of the connection took
    // none of the next request's bytes.
    if (!tls) {
        adk::test::run(ioc, [&]() -> asio::awaitable<void> {
            for (int i = 0; i < 2; ++i) {
                adk::net::HttpRequest stream_req("GET", s.server.base_url() + "/stream");
                adk::net::HttpResponse streamed = co_await client.send(std::move(stream_req));
                std::string events = co_await streamed.read_all();
                CHECK(events == "data: 0\n\ndata: 1\n\ndata: 2\n\n");
                CHECK(streamed.reused_connection() == (i == 1));
            }
        }());
    }
}

TEST_CASE("HttpServer: 200 requests from 20 clients at once on an io_context run by four threads",
          "[http][server][threads]")
{
    std::atomic<int> handled{0};
    auto count = [&](IncomingRequest& req, ResponseWriter& res) -> asio::awaitable<void> {
        ++handled;
        co_await answer_by_path(req, res);
    };
    ServerThread s(HttpServerOptions(), count, 4);
    asio::thread_pool clients(2);
    adk::net::HttpClient client;
    std::vector<std::future<int>> done;
    for (int c = 0; c < 20; ++c) {
        auto one_client = [&client, &s, c]() -> asio::awaitable<int> {
            int ok = 0;
            for (int i = 0; i < 10; ++i) {
                adk::net::HttpRequest req("POST", s.server.base_url() + (i % 2 ? "/stream" : "/whole"));
                req.set("x-test", std::to_string(c));
                adk::net::HttpResponse res = co_await client.send(std::move(req));
                std::string body = co_await res.read_all();
                ok += res.status() == 200 && !body.empty();
            }
            co_return ok;
        };
        done.push_back(asio::co_spawn(clients, one_client, asio::use_future));
    }
    int ok = 0;
    for (auto& f : done)
        ok += f.get();
    clients.join();
    CHECK(ok == 200);
    CHECK(handled == 200);
}
