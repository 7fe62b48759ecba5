// The floor of a paced stream (tools/bench/pace.sh, server `floor`): what any server on this machine pays to
// carry one model chunk to one client, and nothing else. It answers http_bench's paced mode as an ADK server
// would (list-apps, a session's creation, /run_sse), but a /run_sse stream is a relay: one connection to the
// model (mock-llm, asked for the answer's turn at once), and for each chunk that comes, the one readiness wait,
// the one read and the one write an event loop cannot do without, with a frame holding the chunk's stamp. No
// agent, no session, no JSON: headers and chunks are found by searching bytes. One thread, Asio's reactor
// and coroutines, as adk-cpp's server. Not a server anyone should run: it trusts its peers.
//   relay_floor --port P --upstream http://127.0.0.1:PORT
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

struct Upstream {
    std::string host;
    std::string port;
};

std::size_t content_length(std::string_view head)
{
    std::string lower(head);
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    const auto at = lower.find("\r\ncontent-length:");
    if (at == std::string::npos)
        return 0;
    std::size_t i = at + 17;
    while (i < lower.size() && lower[i] == ' ')
        ++i;
    std::size_t n = 0;
    std::from_chars(lower.data() + i, lower.data() + lower.size(), n);
    return n;
}

// Writes `bytes` at once when the socket takes them (as adk-cpp's server does), else waits.
asio::awaitable<void> send(tcp::socket& socket, std::string_view bytes)
{
    boost::system::error_code ec;
    const std::size_t n = socket.write_some(asio::buffer(bytes), ec);
    if (ec && ec != asio::error::would_block)
        throw boost::system::system_error(ec);
    if (n < bytes.size())
        co_await asio::async_write(socket, asio::buffer(bytes.substr(n)), asio::use_awaitable);
}

asio::awaitable<void> answer(tcp::socket& socket, std::string_view status, std::string_view body)
{
    std::string out = "HTTP/1.1 ";
    out += status;
    out += "\r\ncontent-type: application/json\r\ncontent-length: " + std::to_string(body.size()) + "\r\n\r\n";
    out += body;
    co_await send(socket, out);
}

// One /run_sse stream: the model's chunks, each one frame, until either side closes.
asio::awaitable<void> relay(tcp::socket& client, const Upstream& up)
{
    auto executor = co_await asio::this_coro::executor;
    tcp::resolver resolver(executor);
    tcp::socket model(executor);
    co_await asio::async_connect(model, co_await resolver.async_resolve(up.host, up.port, asio::use_awaitable),
                                 asio::use_awaitable);
    // The history holds one model message: mock-llm answers with its script's second turn (the paced text).
    const std::string body =
        R"({"contents":[{"role":"user","parts":[{"text":"Weather in Paris?"}]},)"
        R"({"role":"model","parts":[{"functionCall":{"name":"get_weather","args":{"city":"Paris"}}}]},)"
        R"({"role":"user","parts":[{"functionResponse":{"name":"get_weather","response":{"sky":"sunny"}}}]}]})";
    co_await send(model, "POST /v1beta/models/m:streamGenerateContent?alt=sse HTTP/1.1\r\nhost: " + up.host +
                             "\r\ncontent-type: application/json\r\ncontent-length: " + std::to_string(body.size()) +
                             "\r\n\r\n" + body);
    co_await send(client, "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n");
    model.non_blocking(true);
    std::string in;  // what came from the model and holds no whole stamp yet
    std::string out;
    char buffer[4096];
    for (;;) {
        co_await model.async_wait(tcp::socket::wait_read, asio::use_awaitable);
        boost::system::error_code ec;
        const std::size_t n = model.read_some(asio::buffer(buffer), ec);
        if (ec == asio::error::would_block)
            continue;
        if (ec)
            break;
        in.append(buffer, n);
        out.clear();
        std::size_t done = 0;
        for (auto at = in.find("stamp:"); at != std::string::npos; at = in.find("stamp:", done)) {
            const auto end = in.find(' ', at);
            if (end == std::string::npos)
                break;
            const std::string frame = R"(data: {"partial":true,"content":{"role":"model","parts":[{"text":")" +
                                      in.substr(at, end + 1 - at) + "\"}]}}\n\n";
            char size[16];
            const auto [p, e] = std::to_chars(size, size + sizeof size, frame.size(), 16);
            out.append(size, p);
            out += "\r\n";
            out += frame;
            out += "\r\n";
            done = end + 1;
        }
        in.erase(0, done);
        if (in.size() > 1 << 16)
            in.erase(0, in.size() - 64);
        if (!out.empty())
            co_await send(client, out);
    }
    co_await send(client, "0\r\n\r\n");
}

asio::awaitable<void> serve(tcp::socket client, const Upstream& up)
{
    client.set_option(tcp::no_delay(true));
    std::string buffer;
    std::size_t sessions = 0;
    try {
        for (;;) {
            const std::size_t head_end =
                co_await asio::async_read_until(client, asio::dynamic_buffer(buffer), "\r\n\r\n", asio::use_awaitable);
            const std::string head = buffer.substr(0, head_end);
            const std::size_t length = content_length(head);
            if (buffer.size() < head_end + length)
                co_await asio::async_read(client, asio::dynamic_buffer(buffer),
                                          asio::transfer_exactly(head_end + length - buffer.size()), asio::use_awaitable);
            buffer.erase(0, head_end + length);
            const std::string_view line = std::string_view(head).substr(0, head.find("\r\n"));
            if (line.find(" /list-apps") != std::string_view::npos)
                co_await answer(client, "200 OK", R"(["weather"])");
            else if (line.starts_with("POST ") && line.find("/sessions") != std::string_view::npos)
                co_await answer(client, "200 OK",
                                R"({"id":"s)" + std::to_string(++sessions) +
                                    R"(","appName":"weather","userId":"u","state":{},"events":[],"lastUpdateTime":0})");
            else if (line.starts_with("POST /run_sse ")) {
                co_await relay(client, up);
                co_return;
            } else
                co_await answer(client, "404 Not Found", R"({"error":"relay_floor serves list-apps, sessions, run_sse"})");
        }
    } catch (const std::exception&) {
        // The client left (http_bench aborts its streams at the end) or the model did.
    }
}

asio::awaitable<void> accept_loop(tcp::acceptor& acceptor, const Upstream& up)
{
    for (;;) {
        auto [ec, socket] = co_await acceptor.async_accept(asio::as_tuple(asio::use_awaitable));
        if (ec == asio::error::operation_aborted)
            co_return;
        if (!ec)
            asio::co_spawn(acceptor.get_executor(), serve(std::move(socket), up), asio::detached);
    }
}

}  // namespace

int main(int argc, char** argv)
{
    std::string port;
    std::string upstream;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string_view a = argv[i];
        if (a == "--port")
            port = argv[i + 1];
        else if (a == "--upstream")
            upstream = argv[i + 1];
    }
    constexpr std::string_view scheme = "http://";
    if (port.empty() || !upstream.starts_with(scheme) || upstream.find(':', scheme.size()) == std::string::npos) {
        std::cerr << "usage: relay_floor --port P --upstream http://HOST:PORT\n";
        return 2;
    }
    const std::string authority = upstream.substr(scheme.size(), upstream.find('/', scheme.size()) - scheme.size());
    const Upstream up{authority.substr(0, authority.rfind(':')), authority.substr(authority.rfind(':') + 1)};
    asio::io_context ioc(1);
    tcp::acceptor acceptor(ioc, tcp::endpoint(asio::ip::make_address("127.0.0.1"),
                                              static_cast<unsigned short>(std::atoi(port.c_str()))));
    asio::signal_set signals(ioc, SIGINT, SIGTERM);
    signals.async_wait([&](auto, int) { ioc.stop(); });
    asio::co_spawn(ioc, accept_loop(acceptor, up), asio::detached);
    ioc.run();
    return 0;
}
