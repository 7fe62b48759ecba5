// SseReader: a response body read as Server-Sent Events. One read of the body at a time, its bytes fed to an
// SseParser (adk/net/sse_parser.hpp: the events, their bound), the end of the body finishing the last event. What
// every SSE client of the runtime reads with: the models' streams, MCP's Streamable HTTP and old HTTP+SSE
// transports, remote A2A agents.
#pragma once

#include <adk/net/http_client.hpp>
#include <adk/net/sse_parser.hpp>

#include <boost/asio/awaitable.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace adk::net {

class SseReader {
public:
    SseReader(HttpResponse response, std::size_t max_event_bytes = SseParser::default_max_event_bytes);

    // Reads once (what arrived, as soon as anything does) and gives `out` the events it completes; at the end of the
    // body, the last line's and a pending event. Returns false once the body has ended, true while more may come
    // (a read may complete no event: a keep-alive comment, half an event). Throws what the read throws (adk::Error:
    // a broken connection, an idle timeout, abort()) and the parser's adk::Error for an event over the bound.
    asio::awaitable<bool> read(SseParser::Receiver& out);
    // The same, appending the events to `out`.
    asio::awaitable<bool> read(std::vector<SseEvent>& out);

    // Lines that were neither a known field nor a comment (SseParser::unparsed).
    const std::string& unparsed() const noexcept { return parser_.unparsed(); }
    HttpResponse& response() noexcept { return response_; }

private:
    template <class Out>
    asio::awaitable<bool> read_into(Out& out);

    HttpResponse response_;
    SseParser parser_;
    bool ended_ = false;
};

}  // namespace adk::net
