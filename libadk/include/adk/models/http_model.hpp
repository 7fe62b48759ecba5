// HttpModel: a Model that talks to a provider over HTTP. A provider supplies its WireFormat (how an
// LlmRequest becomes an HTTP request, and how bodies and streamed events become LlmResponses); HttpModel
// does the rest the same way for every provider: sending through net::HttpClient (pool, TLS, retries),
// then a pulled stream (adk::pull_stream): the consumer's next() reads the socket, one network read at a
// time through the SSE parser, and returns each chunk as soon as it is decoded. Nothing is read while the
// consumer does not ask (invariant 2); cancelling the consumer's coroutine aborts the read, and cancelling
// or dropping the stream closes the socket (invariant 4).
#pragma once

#include <adk/models/model.hpp>
#include <adk/models/response_limits.hpp>
#include <adk/net/http_client.hpp>
#include <adk/net/sse_parser.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace adk {

class WireFormat {
public:
    virtual ~WireFormat() = default;

    // Decodes the events of one streamed response; may keep state across events (tool-call fragments).
    class StreamDecoder {
    public:
        virtual ~StreamDecoder() = default;
        virtual void on_event(const net::SseEvent& event, std::vector<LlmResponse>& out) = 0;
        // The end of the body; `unparsed` holds the lines that were not SSE (a bare JSON error).
        virtual void finish(std::string_view unparsed, std::vector<LlmResponse>& out) = 0;
    };

    // The HTTP request (URL, headers, body) for `request`.
    virtual net::HttpRequest encode(const LlmRequest& request, bool stream) const = 0;
    // A whole response body (stream == false).
    virtual LlmResponse decode(std::string_view body) const = 0;
    // A response with a status that is not 2xx, as error_code / error_message.
    virtual LlmResponse decode_error(unsigned status, std::string_view body) const = 0;
    // A decoder for one streamed answer, which keeps what it assembles within `limits` (adk::Error,
    // errc::bad_response, beyond).
    virtual std::unique_ptr<StreamDecoder> stream_decoder(const ResponseLimits& limits) const = 0;
};

class HttpModel final : public Model {
public:
    HttpModel(std::string name, std::shared_ptr<const WireFormat> format, std::shared_ptr<net::HttpClient> http,
              ResponseLimits limits = {});

    std::string_view name() const override { return name_; }
    // Sends the request (connection failures throw from the co_await), then streams the answer.
    asio::awaitable<Stream<LlmResponse>> generate(LlmRequest request, bool stream) override;

private:
    std::string name_;
    std::shared_ptr<const WireFormat> format_;
    std::shared_ptr<net::HttpClient> http_;
    ResponseLimits limits_;
};

}  // namespace adk
