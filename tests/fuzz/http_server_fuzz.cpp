// Any bytes a client sends to HttpServer, over a real loopback connection: whatever comes back is HTTP/1.1
// answers; the server reads within its limits (a connection's read buffer never grows past max_header_bytes +
// 16 KiB, no body over max_body_bytes and no refused request reaches the handler); and the connection ends.
#include <adk/net/http_server.hpp>

#include "fuzz.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>

#include <atomic>
#include <optional>
#include <string>
#include <thread>

#include <sys/socket.h>
#include <sys/time.h>

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

constexpr std::size_t max_header_bytes = 1024;
constexpr std::size_t max_body_bytes = 4096;

std::atomic<bool> oversized_body{false};
std::atomic<bool> refused_handled{false};

asio::awaitable<void> answer(adk::net::IncomingRequest& req, adk::net::ResponseWriter& res)
{
    if (req.body.size() > max_body_bytes)
        oversized_body = true;
    if (!req.header("x-refuse").empty())
        refused_handled = true;
    if (req.target == "/stream") {
        co_await res.begin_stream(200, "text/event-stream");
        co_await res.write("data: 1\n\n");
        co_await res.end_stream();
        co_return;
    }
    std::string body = std::to_string(req.body.size());
    co_await res.send(200, "text/plain", body);
}

// The server, on an io_context of its own run by a thread for the fuzzer's life.
class Server {
public:
    Server()
    {
        adk::net::HttpServerOptions options;
        options.max_header_bytes = max_header_bytes;
        options.max_body_bytes = max_body_bytes;
        options.read_timeout = std::chrono::milliseconds(500);
        options.write_timeout = std::chrono::milliseconds(500);
        auto check = [](const adk::net::IncomingRequest& head) -> std::optional<adk::net::Refusal> {
            if (!head.header("x-refuse").empty())
                return adk::net::Refusal(403, R"({"error":"refused"})");
            return std::nullopt;
        };
        server.emplace(ioc.get_executor(), options, answer, check);
        server->start();
        thread = std::thread([this] { ioc.run(); });
        thread.detach();  // for the process's life
    }
    asio::io_context ioc;
    asio::executor_work_guard<asio::io_context::executor_type> guard{ioc.get_executor()};
    std::optional<adk::net::HttpServer> server;
    std::thread thread;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size)
{
    static Server* s = new Server();  // never destroyed: its thread runs until the process ends
    asio::io_context io;
    tcp::socket socket(io);
    // libFuzzer's -timeout rings SIGALRM every second: a blocking connect or read it interrupts (EINTR) is tried
    // again, not taken for the server's doing.
    const tcp::endpoint server_endpoint(asio::ip::make_address("127.0.0.1"), s->server->port());
    boost::system::error_code connect_ec;
    for (int attempt = 0; attempt < 100; ++attempt) {
        if (socket.is_open())
            socket.close(connect_ec);
        socket.connect(server_endpoint, connect_ec);
        if (connect_ec != asio::error::interrupted)
            break;
    }
    if (connect_ec)
        throw boost::system::system_error(connect_ec, "connect to the fuzzed server");
    timeval five_seconds{5, 0};
    ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &five_seconds, sizeof five_seconds);
    boost::system::error_code ec;
    asio::write(socket, asio::buffer(data, size), ec);
    socket.shutdown(tcp::socket::shutdown_send, ec);
    std::string answers;
    char buffer[4096];
    boost::system::error_code read_ec;
    while (!read_ec || read_ec == asio::error::interrupted) {
        read_ec.clear();
        std::size_t n = socket.read_some(asio::buffer(buffer), read_ec);
        answers.append(buffer, n);
    }
    adk::fuzz::check(read_ec != asio::error::would_block && read_ec != asio::error::try_again,
                     "the server ends the connection (no read waits 5 s)");
    adk::fuzz::check(answers.empty() || answers.rfind("HTTP/1.1 ", 0) == 0, "what comes back is HTTP/1.1");
    adk::fuzz::check(!oversized_body, "no body over max_body_bytes reaches the handler");
    adk::fuzz::check(!refused_handled, "a request the head check refused never reaches the handler");
    adk::fuzz::check(s->server->peak_read_buffer_bytes() <= max_header_bytes + (std::size_t{16} << 10),
                     "a connection's read buffer stays within max_header_bytes + 16 KiB");
    return 0;
}
