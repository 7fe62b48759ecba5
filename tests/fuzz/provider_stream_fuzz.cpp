// Each provider's stream decoder on any bytes: the first byte picks the provider ('g' Gemini, 'o' OpenAI,
// 'a' Anthropic; otherwise by its value), the rest is the body. Only adk::Error escapes, with small limits so
// that they are reached. For Gemini, the fast text-chunk decoder either declines an event or agrees with
// the general decoder on every field.
#include <adk/net/sse_parser.hpp>
#include <adk/providers/anthropic/anthropic.hpp>
#include <adk/providers/gemini/codec.hpp>
#include <adk/providers/gemini/gemini.hpp>
#include <adk/providers/openai/openai.hpp>

#include "fuzz.hpp"

#include <boost/json/parse.hpp>

#include <memory>
#include <vector>

namespace {

const adk::WireFormat& format(int which)
{
    static const auto gemini = [] {
        adk::gemini::GeminiOptions o;
        o.api_key = "k";
        return adk::gemini::wire_format(o);
    }();
    static const auto openai = [] {
        adk::openai::OpenAIOptions o;
        o.api_key = "k";
        return adk::openai::wire_format(o);
    }();
    static const auto anthropic = [] {
        adk::anthropic::AnthropicOptions o;
        o.api_key = "k";
        return adk::anthropic::wire_format(o);
    }();
    return which == 0 ? *gemini : which == 1 ? *openai : *anthropic;
}

void agree(const adk::LlmResponse& fast, const adk::LlmResponse& general)
{
    using adk::fuzz::check;
    check(fast.content == general.content, "gemini: the fast decoder's content is the general one's");
    check(fast.partial == general.partial && fast.turn_complete == general.turn_complete &&
              fast.interrupted == general.interrupted,
          "gemini: the fast decoder's flags are the general one's");
    check(fast.finish_reason == general.finish_reason, "gemini: the fast decoder's finish reason is the general one's");
    check(fast.usage_metadata == general.usage_metadata, "gemini: the fast decoder's usage is the general one's");
    check(fast.error_code == general.error_code && fast.error_message == general.error_message,
          "gemini: the fast decoder's error is the general one's");
    check(fast.model_version == general.model_version, "gemini: the fast decoder's model version is the general one's");
    check(fast.custom_metadata == general.custom_metadata && fast.provider_metadata == general.provider_metadata,
          "gemini: the fast decoder's metadata is the general one's");
}

void gemini_decoders_agree(const std::string& data)
{
    // Text the SSE parser gives is valid UTF-8, and decoded as such without a second check: it must come out
    // as it does checked.
    const std::string valid = adk::net::to_valid_utf8(data);
    adk::LlmResponse checked;
    adk::LlmResponse trusted;
    const bool checked_ok = adk::gemini::decode_text_chunk(valid, true, checked);
    const bool trusted_ok = adk::gemini::decode_text_chunk(valid, true, trusted, adk::gemini::Utf8::valid);
    adk::fuzz::check(checked_ok == trusted_ok, "gemini: valid UTF-8 decodes the same whether checked or not");
    if (checked_ok)
        agree(trusted, checked);
    adk::LlmResponse fast;
    if (!adk::gemini::decode_text_chunk(data, true, fast))
        return;
    boost::system::error_code ec;
    const boost::json::value v = boost::json::parse(data, ec);
    adk::fuzz::check(!ec, "gemini: the fast decoder accepts only JSON");
    adk::LlmResponse general;
    const bool decoded = adk::fuzz::only_adk_errors([&] { general = adk::gemini::decode_response(v, true); });
    adk::fuzz::check(decoded, "gemini: what the fast decoder accepts, the general one decodes");
    agree(fast, general);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size)
{
    if (size == 0)
        return 0;
    const int which = data[0] == 'g' ? 0 : data[0] == 'o' ? 1 : data[0] == 'a' ? 2 : data[0] % 3;
    const std::string_view body = adk::fuzz::as_text(data + 1, size - 1);
    adk::ResponseLimits limits;
    limits.max_event_bytes = 8192;
    limits.max_answer_bytes = 4096;
    limits.max_function_calls = 16;
    adk::net::SseParser parser(limits.max_event_bytes);
    std::vector<adk::net::SseEvent> events;
    if (!adk::fuzz::only_adk_errors([&] {
            parser.feed(body, events);
            parser.finish(events);
        }))
        return 0;
    if (which == 0)
        for (const auto& e : events)
            gemini_decoders_agree(e.data);
    auto decoder = format(which).stream_decoder(limits);
    std::vector<adk::LlmResponse> out;
    adk::fuzz::only_adk_errors([&] {
        for (const auto& e : events)
            decoder->on_event(e, out);
        decoder->finish(parser.unparsed(), out);
    });
    // A whole (not streamed) body and an error body, as the same provider reads them.
    adk::fuzz::only_adk_errors([&] { (void)format(which).decode(body); });
    adk::fuzz::only_adk_errors([&] { (void)format(which).decode_error(500, body); });
    return 0;
}
