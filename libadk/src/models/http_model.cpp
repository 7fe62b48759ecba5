#include <adk/models/http_model.hpp>

#include <boost/json/parse.hpp>

#include <cstdlib>


namespace adk {

HttpModel::HttpModel(std::string name, std::shared_ptr<const WireFormat> format, std::shared_ptr<net::HttpClient> http)
    : name_(std::move(name)), format_(std::move(format)), http_(http ? std::move(http) : net::default_http_client())
{
}

namespace {

// An error status, or an answer that is not streamed: one response from the whole body. A coroutine of its
// own so that the streaming loop's frame (alive while the model streams) holds none of this.
asio::awaitable<void> emit_whole_body(const WireFormat& format, net::HttpResponse& response, Sink<LlmResponse>& sink)
{
    if (!response.ok()) {
        const std::string body = co_await response.read_all(std::size_t{1} << 20);
        co_await sink.emit(format.decode_error(response.status(), body));
        co_return;
    }
    const std::string body = co_await response.read_all();
    co_await sink.emit(format.decode(body));
}

}  // namespace

asio::awaitable<Stream<LlmResponse>> HttpModel::generate(LlmRequest request, bool stream)
{
    net::HttpRequest http_request = format_->encode(request, stream);
    auto ex = co_await asio::this_coro::executor;
    net::HttpResponse response = co_await http_->send(std::move(http_request));

    auto read = [format = format_, stream, response = std::move(response)](
                    Sink<LlmResponse> sink) mutable -> asio::awaitable<void> {
        if (!stream || !response.ok()) {
            co_await emit_whole_body(*format, response, sink);
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
            for (auto& r : out) {
                auto item = std::make_unique<LlmResponse>(std::move(r));
                if (!sink.try_emit(item))
                    co_await sink.emit(std::move(item));
            }
            out.clear();
        }
    };
    co_return spawn_stream<LlmResponse>(ex, std::move(read));
}

namespace provider {

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

boost::json::value parse_json(std::string_view text, std::string_view provider, std::string_view what,
                              boost::json::storage_ptr storage)
{
    boost::system::error_code ec;
    boost::json::value v = boost::json::parse(text, ec, std::move(storage));
    if (ec)
        throw Error(errc::bad_response, std::string(provider) + " sent " + std::string(what) + " that is not JSON (" +
                                            ec.message() + "): " + std::string(text.substr(0, 200)));
    return v;
}

std::optional<boost::json::object> error_object(std::string_view body)
{
    boost::system::error_code ec;
    boost::json::value v = boost::json::parse(body, ec);
    if (ec || !v.is_object() || !v.get_object().contains("error"))
        return std::nullopt;
    return std::move(v.get_object());
}

std::string string_at(const boost::json::object& o, std::string_view key)
{
    const boost::json::value* v = o.if_contains(key);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

std::string environment(const char* name)
{
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
}

FunctionCall function_call(std::string id, std::string name, std::string_view arguments)
{
    boost::json::object args;
    if (arguments.find_first_not_of(" \t\r\n") != std::string_view::npos) {
        boost::system::error_code ec;
        boost::json::value v = boost::json::parse(arguments, ec);
        if (ec || !v.is_object())
            throw Error(errc::bad_response, "the arguments of the call to '" + name +
                                                "' are not a JSON object: " + std::string(arguments.substr(0, 200)));
        args = std::move(v.get_object());
    }
    return FunctionCall(std::move(id), std::move(name), std::move(args));
}

LlmResponse chunk(Part part)
{
    LlmResponse r(Content("model", {std::move(part)}));
    r.partial = true;
    return r;
}

}  // namespace provider

}  // namespace adk
