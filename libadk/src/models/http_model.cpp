#include <adk/models/http_model.hpp>


namespace adk {

HttpModel::HttpModel(std::string name, std::shared_ptr<const WireFormat> format, std::shared_ptr<net::HttpClient> http)
    : name_(std::move(name)), format_(std::move(format)), http_(http ? std::move(http) : net::default_http_client())
{
}

asio::awaitable<Stream<LlmResponse>> HttpModel::generate(LlmRequest request, bool stream)
{
    net::HttpRequest http_request = format_->encode(request, stream);
    auto ex = co_await asio::this_coro::executor;
    net::HttpResponse response = co_await http_->send(std::move(http_request));

    auto read = [format = format_, stream, response = std::move(response)](
                    Sink<LlmResponse> sink) mutable -> asio::awaitable<void> {
        if (!response.ok()) {
            const std::string body = co_await response.read_all(std::size_t{1} << 20);
            LlmResponse error = format->decode_error(response.status(), body);
            co_await sink.emit(std::move(error));
            co_return;
        }
        if (!stream) {
            const std::string body = co_await response.read_all();
            LlmResponse whole = format->decode(body);
            co_await sink.emit(std::move(whole));
            co_return;
        }
        net::SseParser parser;
        auto decoder = format->stream_decoder();
        std::vector<net::SseEvent> events;
        std::vector<LlmResponse> out;
        bool end = false;
        while (!end) {
            std::string_view bytes = co_await response.read_some();
            end = bytes.empty();
            if (end)
                parser.finish(events);
            else
                parser.feed(bytes, events);
            for (const auto& e : events)
                decoder->on_event(e, out);
            events.clear();
            if (end)
                decoder->finish(parser.unparsed(), out);
            // Nothing is read from the socket while a chunk waits for the consumer.
            for (auto& r : out)
                co_await sink.emit(std::move(r));
            out.clear();
        }
    };
    co_return spawn_stream<LlmResponse>(ex, std::move(read));
}

LlmResponse http_error_response(unsigned status, std::string_view body)
{
    constexpr std::size_t shown = 500;
    std::string text(body.substr(0, shown));
    if (body.size() > shown)
        text += "...";
    return LlmResponse::error("HTTP_" + std::to_string(status),
                              "the provider answered HTTP " + std::to_string(status) +
                                  (text.empty() ? std::string(" with no body") : ": " + text));
}

}  // namespace adk
