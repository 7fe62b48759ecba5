#include <adk/models/http_model.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>

namespace adk {

HttpModel::HttpModel(std::string name, std::shared_ptr<const WireFormat> format, std::shared_ptr<net::HttpClient> http,
                     ResponseLimits limits)
    : name_(std::move(name)), format_(std::move(format)), http_(http ? std::move(http) : net::default_http_client()),
      limits_(limits)
{
}

namespace {

// The answer, read by its consumer: each Stream::next() reads the socket only when no decoded chunk is
// left, so nothing is read while a chunk waits for the consumer, and cancelling the consumer aborts the
// read. Destroying the source closes the connection unless its body was read to the end.
class ResponseSource final : public StreamSource<LlmResponse> {
public:
    ResponseSource(std::shared_ptr<const WireFormat> format, bool stream, net::HttpResponse response,
                   const ResponseLimits& limits)
        : format_(std::move(format)), stream_(stream), response_(std::move(response)), limits_(limits),
          parser_(limits.max_event_bytes)
    {
    }

    // Reads the socket until a chunk is decoded (a read may hold half an event) or the body ends.
    asio::awaitable<void> pull(std::unique_ptr<LlmResponse>& item) override
    {
        while (next_ == out_.size() && !end_) {
            out_.clear();
            next_ = 0;
            if (!stream_ || !response_.ok()) {
                co_await read_whole_body();
                continue;
            }
            if (!decoder_)
                decoder_ = format_->stream_decoder(limits_);
            std::string_view bytes = co_await response_.read_some();
            end_ = bytes.empty();
            if (end_)
                parser_.finish(events_);
            else
                parser_.feed(bytes, events_);
            for (const auto& e : events_)
                decoder_->on_event(e, out_);
            events_.clear();
            if (end_)
                decoder_->finish(parser_.unparsed(), out_);
        }
        if (next_ < out_.size())
            item = std::make_unique<LlmResponse>(std::move(out_[next_++]));
    }

    // Stream::cancel or a Canceller, from any thread: the read under way fails at once.
    void abort() noexcept override { response_.abort(); }

private:
    // An error status, or an answer that is not streamed: one response from the whole body.
    asio::awaitable<void> read_whole_body()
    {
        end_ = true;
        if (!response_.ok()) {
            const std::string body = co_await response_.read_all(std::size_t{1} << 20);
            out_.push_back(format_->decode_error(response_.status(), body));
            co_return;
        }
        const std::string body = co_await response_.read_all(limits_.max_answer_bytes);
        out_.push_back(format_->decode(body));
    }

    std::shared_ptr<const WireFormat> format_;
    bool stream_;
    net::HttpResponse response_;
    ResponseLimits limits_;
    net::SseParser parser_;
    std::unique_ptr<WireFormat::StreamDecoder> decoder_;
    std::vector<net::SseEvent> events_;
    std::vector<LlmResponse> out_;  // decoded, handed out from next_
    std::size_t next_ = 0;
    bool end_ = false;
};

}  // namespace

asio::awaitable<Stream<LlmResponse>> HttpModel::generate(LlmRequest request, bool stream)
{
    net::HttpRequest http_request = format_->encode(request, stream);
    net::HttpResponse response = co_await http_->send(std::move(http_request));
    co_return pull_stream<LlmResponse>(std::make_unique<ResponseSource>(format_, stream, std::move(response), limits_));
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

const boost::json::object& object_of(const boost::json::value& v, std::string_view provider, std::string_view what)
{
    if (!v.is_object())
        throw Error(errc::bad_response, std::string(provider) + " sent " + std::string(what) +
                                            " that is not a JSON object: " +
                                            boost::json::serialize(v).substr(0, 200));
    return v.get_object();
}

std::optional<std::int64_t> count_at(const boost::json::object& o, std::string_view key)
{
    const boost::json::value* v = o.if_contains(key);
    if (!v)
        return std::nullopt;
    if (v->is_int64() && v->get_int64() >= 0)
        return v->get_int64();
    if (v->is_uint64() && v->get_uint64() <= static_cast<std::uint64_t>(INT64_MAX))
        return static_cast<std::int64_t>(v->get_uint64());
    if (v->is_double() && v->get_double() >= 0 && v->get_double() < 9.0e18 &&
        std::trunc(v->get_double()) == v->get_double())
        return static_cast<std::int64_t>(v->get_double());
    return std::nullopt;
}

std::string environment(const char* name)
{
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
}

void check_answer_size(std::size_t size, std::size_t limit, std::string_view provider, std::string_view what)
{
    if (size > limit)
        throw Error(errc::bad_response, std::string(provider) + " sent " + std::string(what) + " over " +
                                            std::to_string(limit) +
                                            " bytes in one answer (ResponseLimits::max_answer_bytes): the stream is "
                                            "broken; raise the limit if it is right");
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
