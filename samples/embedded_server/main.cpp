// An agent inside a server of your own: a small Beast HTTP server that co_awaits Runner::run and streams the
// agent's events, partial text included, to a browser page over Server-Sent Events, with a stop button that
// cancels the run. No adk::server here: this is what embedding adk-cpp in an async C++ server looks like.
//
//   build/release/samples/embedded_server [PORT]       then open http://127.0.0.1:PORT/
//   GET  /                    the page
//   POST /chat  QUESTION      text/event-stream: one "data: <ADK Event JSON>" frame per event
//   POST /stop  INVOCATION    cancels that run (Runner::cancel); a client that closes the stream does too
//
// The model: ADK_MODEL, gemini-2.5-flash by default (adk::make_model: GEMINI_API_KEY). Offline, mock-llm plays
// it, slowly enough to press Stop:
//   build/release/tools/mock_llm/mock-llm --script samples/weather_agent/mock_script.json --chunk-delay-ms 300 &
//   GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:PORT GEMINI_API_KEY=x build/release/samples/embedded_server
#include <adk/adk.hpp>
#include <adk/providers/make_model.hpp>

#include "../weather_agent/get_weather.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>

#include <cstdlib>
#include <iostream>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using asio::ip::tcp;

namespace {

constexpr std::string_view page = R"(<!doctype html>
<meta charset="utf-8"><title>adk-cpp, embedded</title>
<form id="ask"><input id="q" size="60" value="What is the weather in Paris?"> <button>Send</button>
<button type="button" id="stop" disabled>Stop</button></form><pre id="out"></pre>
<script>
const out = document.getElementById('out'), stop = document.getElementById('stop');
let invocation = null;
document.getElementById('ask').onsubmit = async e => {
  e.preventDefault();
  out.textContent = '';
  stop.disabled = false;
  const res = await fetch('/chat', {method: 'POST', body: document.getElementById('q').value});
  const reader = res.body.getReader(), decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const {value, done} = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, {stream: true});
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {  // one "data: {event}" frame
      const ev = JSON.parse(buffer.slice(6, end));
      buffer = buffer.slice(end + 2);
      invocation = ev.invocationId || invocation;
      for (const p of (ev.content && ev.content.parts) || []) {
        if (p.text && ev.partial) out.textContent += p.text;
        if (p.functionCall) out.textContent += '[' + p.functionCall.name + ' ' + JSON.stringify(p.functionCall.args) + ']\n';
      }
      if (ev.error) out.textContent += '\n[' + ev.error + ']';
    }
  }
  stop.disabled = true;
};
stop.onclick = () => fetch('/stop', {method: 'POST', body: invocation});
</script>
)";

std::shared_ptr<adk::Agent> make_agent()
{
    const char* id = std::getenv("ADK_MODEL");
    return adk::LlmAgent::builder("weather_agent")
        .model(adk::make_model(id && *id ? id : "gemini-2.5-flash"))
        .instruction("You answer questions about the weather; use get_weather.")
        .tool(samples::get_weather_tool())
        .build();
}

// --- The core: a run's events as Server-Sent Events, one write per event. ------------------------------
asio::awaitable<void> stream_run(beast::tcp_stream& stream, adk::Runner& runner, adk::SessionService& sessions,
                                 std::string question)
{
    constexpr std::string_view head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                                      "cache-control: no-cache\r\nconnection: close\r\n\r\n";
    co_await asio::async_write(stream, asio::buffer(head), asio::use_awaitable);
    adk::Session session = co_await sessions.create_session({"embedded", "user"});
    adk::RunConfig config;
    config.streaming_mode = adk::StreamingMode::sse;  // partial text as it comes
    adk::Content message = adk::Content::user(std::move(question));
    auto events = co_await runner.run("user", session.id, std::move(message), config);
    std::string frame;
    try {
        while (auto ev = co_await events.next()) {
            frame = "data: " + json::serialize(json::value_from(*ev)) + "\n\n";
            co_await asio::async_write(stream, asio::buffer(frame), asio::use_awaitable);
        }  // a write to a browser that left throws: `events` is dropped, which cancels the run
        co_return;
    } catch (const adk::Error& e) {  // cancelled (POST /stop), or the model failed
        frame = "data: " + json::serialize(json::value(json::object{{"error", e.message()}})) + "\n\n";
    }
    co_await asio::async_write(stream, asio::buffer(frame), asio::use_awaitable);
}
// ---------------------------------------------------------------------------------------------------------

asio::awaitable<void> reply(beast::tcp_stream& stream, http::status status, std::string_view type, std::string body)
{
    http::response<http::string_body> res{status, 11};
    res.set(http::field::content_type, type);
    res.body() = std::move(body);
    res.prepare_payload();
    co_await http::async_write(stream, res, asio::use_awaitable);
}

asio::awaitable<void> serve(tcp::socket socket, adk::Runner& runner, adk::SessionService& sessions)
{
    beast::tcp_stream stream(std::move(socket));
    stream.socket().set_option(tcp::no_delay(true));
    beast::flat_buffer buffer;
    http::request_parser<http::string_body> parser;
    parser.header_limit(8 << 10);
    parser.body_limit(4 << 10);
    co_await http::async_read(stream, buffer, parser, asio::use_awaitable);
    const auto& req = parser.get();
    const bool post = req.method() == http::verb::post;
    if (req.method() == http::verb::get && req.target() == "/") {
        co_await reply(stream, http::status::ok, "text/html; charset=utf-8", std::string(page));
    } else if (post && req.target() == "/chat") {
        co_await stream_run(stream, runner, sessions, req.body());
    } else if (post && req.target() == "/stop") {
        const bool stopped = runner.cancel(req.body());
        co_await reply(stream, stopped ? http::status::ok : http::status::not_found, "text/plain",
                       stopped ? "stopped\n" : "no such run\n");
    } else {
        co_await reply(stream, http::status::not_found, "text/plain", "not found\n");
    }
    beast::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
}

asio::awaitable<void> listen(tcp::acceptor& acceptor, adk::Runner& runner, adk::SessionService& sessions)
{
    for (;;) {
        tcp::socket socket = co_await acceptor.async_accept(asio::use_awaitable);
        asio::co_spawn(acceptor.get_executor(), serve(std::move(socket), runner, sessions),
                       [](std::exception_ptr) {});  // a client that leaves ends its own connection only
    }
}

}  // namespace

int main(int argc, char** argv)
{
    try {
        asio::io_context ioc(1);
        auto sessions = std::make_shared<adk::InMemorySessionService>();
        adk::Runner runner({.app_name = "embedded", .agent = make_agent(), .session_service = sessions,
                            .single_threaded = true});
        const auto port = static_cast<unsigned short>(argc > 1 ? std::atoi(argv[1]) : 8080);
        tcp::acceptor acceptor(ioc, {asio::ip::make_address("127.0.0.1"), port});
        std::cout << "embedded_server: http://127.0.0.1:" << acceptor.local_endpoint().port() << "/" << std::endl;
        asio::co_spawn(ioc, listen(acceptor, runner, *sessions), asio::detached);
        asio::signal_set stop(ioc, SIGINT, SIGTERM);
        stop.async_wait([&](auto, int) { ioc.stop(); });
        ioc.run();
    } catch (const std::exception& e) {
        std::cerr << "embedded_server: " << e.what() << "\n";
        return 1;
    }
}
