// Micro-benchmarks of the pieces every streamed chunk goes through, on one thread:
//   * the SSE parser, MB/s, on a Gemini stream as mock-llm writes it, fed in 16 KiB reads;
//   * each provider's stream decoder, chunks/s (JSON parse + mapping to LlmResponse);
//   * Event JSON (ADK's wire format), encode and decode per second.
// Prints the best and the median of several rounds.
//
//   build/release/tools/bench/codec_bench [rounds]
#include <adk/adk.hpp>
#include <adk/providers/anthropic/anthropic.hpp>
#include <adk/providers/gemini/gemini.hpp>
#include <adk/providers/openai/openai.hpp>

#include "render.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace json = boost::json;
using Clock = std::chrono::steady_clock;

namespace {

// A streamed answer of `chunks` text chunks in `format`, as mock-llm sends it.
std::string stream_body(adk::mock_llm::Format format, int chunks)
{
    const json::value script = json::parse(R"({"turns": [{"chunks": ["The quick brown fox jumps "], "repeat": )" +
                                           std::to_string(chunks) + "}]}");
    const char* request = format == adk::mock_llm::Format::gemini
                              ? R"({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})"
                              : R"({"model": "m", "stream": true, "messages": [{"role": "user", "content": "hi"}]})";
    auto answer = adk::mock_llm::render(script, format, true, "bench-model", request);
    std::string body;
    for (const auto& f : answer.plan.head)
        body += f;
    for (std::size_t i = 0; i < answer.plan.text_count; ++i)
        body += answer.plan.text_frame(i);
    for (const auto& f : answer.plan.tail)
        body += f;
    return body;
}

// Runs `round` (which returns units done and their count label) `rounds` times; prints best and median rate.
void report(const char* label, const char* unit, int rounds, const std::function<double()>& round)
{
    std::vector<double> rates;
    for (int r = 0; r < rounds; ++r) {
        const auto t0 = Clock::now();
        const double units = round();
        rates.push_back(units / std::chrono::duration<double>(Clock::now() - t0).count());
    }
    std::sort(rates.begin(), rates.end());
    std::printf("%-52s best %12.0f %s   median %12.0f %s\n", label, rates.back(), unit, rates[rates.size() / 2], unit);
}

}  // namespace

int main(int argc, char** argv)
{
    const int rounds = argc > 1 ? std::atoi(argv[1]) : 5;
    constexpr int chunks = 20000;

    const std::string gemini = stream_body(adk::mock_llm::Format::gemini, chunks);
    report("SSE parser (Gemini stream, 16 KiB reads)", "MB/s", rounds, [&] {
        adk::net::SseParser parser;
        std::vector<adk::net::SseEvent> events;
        std::size_t n = 0;
        for (std::size_t at = 0; at < gemini.size(); at += 16384) {
            parser.feed(std::string_view(gemini).substr(at, 16384), events);
            n += events.size();
            events.clear();
        }
        parser.finish(events);
        if (n + events.size() != chunks)
            std::abort();
        return static_cast<double>(gemini.size()) / 1e6;
    });

    struct Provider {
        const char* label;
        std::shared_ptr<const adk::WireFormat> format;
        std::string body;
    };
    adk::gemini::GeminiOptions go;
    go.api_key = "bench";
    adk::openai::OpenAIOptions oo;
    oo.api_key = "bench";
    adk::anthropic::AnthropicOptions ao;
    ao.api_key = "bench";
    const std::vector<Provider> providers = {
        {"decode: Gemini stream chunks", adk::gemini::wire_format(go), gemini},
        {"decode: OpenAI stream chunks", adk::openai::wire_format(oo), stream_body(adk::mock_llm::Format::openai, chunks)},
        {"decode: Anthropic stream events", adk::anthropic::wire_format(ao),
         stream_body(adk::mock_llm::Format::anthropic, chunks)},
    };
    for (const auto& p : providers) {
        adk::net::SseParser parser;
        std::vector<adk::net::SseEvent> events;
        parser.feed(p.body, events);
        parser.finish(events);
        report(p.label, "chunks/s", rounds, [&] {
            auto decoder = p.format->stream_decoder({});
            std::vector<adk::LlmResponse> out;
            for (const auto& e : events) {
                decoder->on_event(e, out);
                out.clear();
            }
            decoder->finish({}, out);
            return static_cast<double>(events.size());
        });
    }

    adk::Event event("weather", adk::Content("model", {adk::Part::from_text("It is sunny in Paris."),
                                                       adk::Part::from_function_call("get_weather", {{"city", "Paris"}}, "call_1")}));
    event.id = "e-0123456789";
    event.invocation_id = "e-inv-0123456789";
    event.actions.state_delta["last_city"] = "Paris";
    const std::string encoded = json::serialize(json::value_from(event));
    constexpr int events_per_round = 200000;
    report("Event JSON encode", "events/s", rounds, [&] {
        std::size_t bytes = 0;
        for (int i = 0; i < events_per_round; ++i)
            bytes += json::serialize(json::value_from(event)).size();
        if (bytes != encoded.size() * events_per_round)
            std::abort();
        return static_cast<double>(events_per_round);
    });
    report("Event JSON decode", "events/s", rounds, [&] {
        std::size_t parts = 0;
        for (int i = 0; i < events_per_round; ++i)
            parts += json::value_to<adk::Event>(json::parse(encoded)).content->parts.size();
        if (parts != 2u * events_per_round)
            std::abort();
        return static_cast<double>(events_per_round);
    });
}
