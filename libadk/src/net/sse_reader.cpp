#include <adk/net/sse_reader.hpp>

namespace adk::net {

SseReader::SseReader(HttpResponse response, std::size_t max_event_bytes)
    : response_(std::move(response)), parser_(max_event_bytes)
{
}

template <class Out>
asio::awaitable<bool> SseReader::read_into(Out& out)
{
    if (ended_)
        co_return false;
    const std::string_view bytes = co_await response_.read_some();
    if (bytes.empty()) {
        ended_ = true;
        parser_.finish(out);
        co_return false;
    }
    parser_.feed(bytes, out);
    co_return true;
}

asio::awaitable<bool> SseReader::read(SseParser::Receiver& out)
{
    return read_into(out);
}

asio::awaitable<bool> SseReader::read(std::vector<SseEvent>& out)
{
    return read_into(out);
}

}  // namespace adk::net
