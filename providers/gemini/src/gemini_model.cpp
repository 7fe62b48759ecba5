#include "context_cache.hpp"

#include <adk/providers/gemini/codec.hpp>
#include <adk/providers/gemini/gemini.hpp>

#include <adk/core/error.hpp>
#include <adk/detail/provider_json.hpp>
#include <adk/net/url.hpp>

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>

#include <cstdlib>

namespace adk::gemini {

namespace provider = detail::provider;
namespace {

using provider::environment;

json::value parse_or_throw(std::string_view text, std::string_view what, json::storage_ptr storage = {})
{
    return provider::parse_json(text, "Gemini", what, std::move(storage));
}

class ChunkDecoder final : public WireFormat::StreamDecoder {
public:
    void on_event(const net::SseEvent& event, std::vector<LlmResponse>& out) override
    {
        if (event.data.empty())
            return;
        // The SSE parser made the data valid UTF-8.
        if (decode_text_chunk(event.data, true, out.emplace_back(), Utf8::valid))
            return;
        out.pop_back();
        // A chunk's JSON lives only while it is decoded (decode_response copies what it keeps), so it is
        // parsed into a buffer on the stack rather than the heap. Under ASan the buffer is left out: the
        // parse then takes heap blocks that are freed after it, so a value kept by mistake is reported.
#if defined(__SANITIZE_ADDRESS__)
        json::monotonic_resource scratch;
#else
        unsigned char buffer[4096];
        json::monotonic_resource scratch(buffer, sizeof buffer);
#endif
        out.push_back(decode_response(parse_or_throw(event.data, "a stream event", &scratch), true));
    }
    void finish(std::string_view unparsed, std::vector<LlmResponse>& out) override
    {
        // A bare JSON error object in the middle of the stream (Gemini sends one with status 200 when an answer fails midway).
        if (unparsed.find_first_not_of(" \t\r\n") == std::string_view::npos)
            return;
        boost::system::error_code ec;
        json::value v = json::parse(unparsed, ec);
        if (!ec && v.is_object() && v.get_object().contains("error"))
            out.push_back(decode_response(v, true));
        else
            throw Error(errc::bad_response,
                        "Gemini's stream held text that is not an event: " + std::string(unparsed.substr(0, 200)));
    }
};

class Format final : public WireFormat {
public:
    explicit Format(GeminiOptions o) : options_(std::move(o)) {}

    net::HttpRequest encode(const LlmRequest& request, bool stream) const override
    {
        // Each piece of the path is percent-encoded: a model id is data, and one holding "\r\n" or "/../" must not
        // change the request.
        const std::string model = net::encode_path_segment(request.model.empty() ? options_.model : request.model);
        const std::string method = stream ? ":streamGenerateContent?alt=sse" : ":generateContent";
        std::string url;
        net::HttpRequest r("POST", "");
        if (options_.vertex) {
            url = net::join_url(options_.base_url, "/v1beta1/projects/" + net::encode_path_segment(options_.project) +
                                                       "/locations/" + net::encode_path_segment(options_.location) +
                                                       "/publishers/google/models/" + model + method);
            r.set("authorization", "Bearer " + options_.access_token);
        } else {
            url = net::join_url(options_.base_url,
                                "/" + net::encode_path_segment(options_.api_version) + "/models/" + model + method);
            if (!options_.api_key.empty())
                r.set("x-goog-api-key", options_.api_key);
        }
        r.url = std::move(url);
        r.set("content-type", "application/json");
        for (const auto& [name, value] : options_.headers)
            r.set(name, value);
        r.body = encode_request_text(request);
        r.retry_hint = [](std::string_view body) -> std::optional<std::chrono::milliseconds> {
            boost::system::error_code ec;
            json::value v = json::parse(body, ec);
            return ec ? std::nullopt : retry_delay(v);
        };
        return r;
    }

    LlmResponse decode(std::string_view body) const override
    {
        return decode_response(parse_or_throw(body, "a response"), false);
    }

    LlmResponse decode_error(unsigned status, std::string_view body) const override
    {
        auto error = provider::error_object(body);
        return error ? decode_response(json::value(std::move(*error)), false) : provider::http_error_response(status, body);
    }

    // Gemini's chunks are whole (no fragments to assemble): the SSE parser's event limit bounds them.
    std::unique_ptr<WireFormat::StreamDecoder> stream_decoder(const ResponseLimits&) const override
    {
        return std::make_unique<ChunkDecoder>();
    }

private:
    GeminiOptions options_;
};

GeminiOptions resolved(GeminiOptions o)
{
    if (!o.vertex) {
        const std::string flag = environment("GOOGLE_GENAI_USE_VERTEXAI");
        o.vertex = flag == "true" || flag == "True" || flag == "1";
    }
    if (o.vertex) {
        if (o.project.empty())
            o.project = environment("GOOGLE_CLOUD_PROJECT");
        if (o.location.empty())
            o.location = environment("GOOGLE_CLOUD_LOCATION");
        if (o.location.empty())
            o.location = "us-central1";
        if (o.access_token.empty())
            o.access_token = environment("GOOGLE_OAUTH_ACCESS_TOKEN");
        if (o.base_url.empty())
            o.base_url = o.location == "global" ? "https://aiplatform.googleapis.com"
                                                : "https://" + o.location + "-aiplatform.googleapis.com";
        if (o.project.empty() || o.access_token.empty())
            throw Error(errc::invalid_argument,
                        "Gemini on Vertex AI needs a project and an access token: set GOOGLE_CLOUD_PROJECT and "
                        "GOOGLE_OAUTH_ACCESS_TOKEN (e.g. $(gcloud auth print-access-token)), or GeminiOptions");
        return o;
    }
    if (o.api_key.empty())
        o.api_key = environment("GEMINI_API_KEY");
    if (o.api_key.empty())
        o.api_key = environment("GOOGLE_API_KEY");
    const bool custom_url = !o.base_url.empty() || !environment("GOOGLE_GEMINI_BASE_URL").empty();
    if (o.base_url.empty())
        o.base_url = environment("GOOGLE_GEMINI_BASE_URL");
    if (o.base_url.empty())
        o.base_url = "https://generativelanguage.googleapis.com";
    if (o.api_key.empty() && !custom_url)
        throw Error(errc::invalid_argument,
                    "Gemini needs an API key: set GEMINI_API_KEY (or GOOGLE_API_KEY), or GeminiOptions::api_key; "
                    "get one at https://aistudio.google.com/apikey");
    net::parse_url(o.base_url);  // a bad base URL fails here, not at the first request
    return o;
}

// The HTTP model with Gemini's context caching before each request (context_cache.hpp).
class CachingModel final : public Model {
public:
    CachingModel(std::shared_ptr<HttpModel> inner, GeminiOptions options, std::shared_ptr<net::HttpClient> http)
        : inner_(std::move(inner)), caches_(std::move(options), std::move(http))
    {
    }
    std::string_view name() const override { return inner_->name(); }
    asio::awaitable<Stream<LlmResponse>> generate(LlmRequest request, bool stream) override
    {
        co_await caches_.prepare(request);
        co_return co_await inner_->generate(std::move(request), stream);
    }
    asio::awaitable<void> close() override { co_await caches_.close(); }

private:
    std::shared_ptr<HttpModel> inner_;
    ContextCaches caches_;
};

}  // namespace

std::shared_ptr<const WireFormat> wire_format(GeminiOptions options)
{
    return std::make_shared<Format>(resolved(std::move(options)));
}

std::shared_ptr<Model> make_model(GeminiOptions options)
{
    GeminiOptions full = resolved(std::move(options));
    auto http = full.http ? full.http : net::default_http_client();
    auto inner = std::make_shared<HttpModel>(full.model, std::make_shared<Format>(full), http, full.limits);
    return std::make_shared<CachingModel>(std::move(inner), std::move(full), std::move(http));
}

}  // namespace adk::gemini
