#include <adk/models/http_model.hpp>

#include <adk/net/sse_reader.hpp>

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
        : format_(std::move(format)), stream_(stream), reader_(std::move(response), limits.max_event_bytes),
          limits_(limits)
    {
    }

    // Reads the socket until a chunk is decoded (a read may hold half an event) or the body ends.
    asio::awaitable<void> pull(std::unique_ptr<LlmResponse>& item) override
    {
        while (next_ == out_.size() && !end_) {
            out_.clear();
            next_ = 0;
            if (!stream_ || !reader_.response().ok()) {
                co_await read_whole_body();
                continue;
            }
            if (!decoder_)
                decoder_ = format_->stream_decoder(limits_);
            Decoding decoding(*decoder_, out_);
            end_ = !(co_await reader_.read(decoding));
            if (end_)
                decoder_->finish(reader_.unparsed(), out_);
        }
        if (next_ < out_.size())
            item = std::make_unique<LlmResponse>(std::move(out_[next_++]));
    }

    // Stream::cancel or a Canceller, from any thread: the read under way fails at once.
    void abort() noexcept override { reader_.response().abort(); }

private:
    // Decodes each event as the parser dispatches it.
    class Decoding final : public net::SseParser::Receiver {
    public:
        Decoding(WireFormat::StreamDecoder& decoder, std::vector<LlmResponse>& out) : decoder_(decoder), out_(out) {}
        void on_event(net::SseEvent& event) override { decoder_.on_event(event, out_); }

    private:
        WireFormat::StreamDecoder& decoder_;
        std::vector<LlmResponse>& out_;
    };

    // An error status, or an answer that is not streamed: one response from the whole body.
    asio::awaitable<void> read_whole_body()
    {
        end_ = true;
        net::HttpResponse& response = reader_.response();
        if (!response.ok()) {
            const std::string body = co_await response.read_all(std::size_t{1} << 20);
            out_.push_back(format_->decode_error(response.status(), body));
            co_return;
        }
        const std::string body = co_await response.read_all(limits_.max_answer_bytes);
        out_.push_back(format_->decode(body));
    }

    std::shared_ptr<const WireFormat> format_;
    bool stream_;
    net::SseReader reader_;  // the response, read as events when it streams
    ResponseLimits limits_;
    std::unique_ptr<WireFormat::StreamDecoder> decoder_;
    std::vector<LlmResponse> out_;  // decoded, handed out from next_
    std::size_t next_ = 0;
    bool end_ = false;
};

}  // namespace

asio::awaitable<Stream<LlmResponse>> HttpModel::generate(LlmRequest request, bool stream)
{
    net::HttpRequest http_request = format_->encode(request, stream);
    if (request.span_context.valid()) {
        http_request.set("traceparent", request.span_context.traceparent());
        if (!request.span_context.trace_state.empty())
            http_request.set("tracestate", request.span_context.trace_state);
    }
    net::HttpResponse response = co_await http_->send(std::move(http_request));
    co_return pull_stream<LlmResponse>(std::make_unique<ResponseSource>(format_, stream, std::move(response), limits_));
}


}  // namespace adk
