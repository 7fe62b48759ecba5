// The SSE parser: any bytes, whole or split anywhere, give the same events (or the same refusal), and only
// adk::Error escapes. A small event limit, so that the limit is reached often.
#include <adk/net/sse_parser.hpp>

#include "fuzz.hpp"

#include <algorithm>
#include <vector>

namespace {

struct Parsed {
    bool refused = false;
    std::vector<adk::net::SseEvent> events;
    std::string unparsed;
};

// Copies each event as the parser gives it (the parser reuses the event's strings for the next one).
class Copier final : public adk::net::SseParser::Receiver {
public:
    void on_event(adk::net::SseEvent& event) override { events.push_back(event); }
    std::vector<adk::net::SseEvent> events;
};

// Through a vector of events, or (`receiver`) through a Receiver.
Parsed parse(std::string_view body, const std::vector<std::size_t>& cuts, bool receiver = false)
{
    Parsed p;
    adk::net::SseParser parser(4096);
    Copier copier;
    auto feed = [&](std::string_view bytes) {
        if (receiver)
            parser.feed(bytes, copier);
        else
            parser.feed(bytes, p.events);
    };
    p.refused = !adk::fuzz::only_adk_errors([&] {
        std::size_t at = 0;
        for (std::size_t cut : cuts) {
            feed(body.substr(at, cut - at));
            at = cut;
        }
        feed(body.substr(at));
        if (receiver)
            parser.finish(copier);
        else
            parser.finish(p.events);
        p.unparsed = parser.unparsed();
    });
    if (receiver)
        p.events = std::move(copier.events);
    return p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size)
{
    const std::string_view body = adk::fuzz::as_text(data, size);
    const Parsed whole = parse(body, {});
    // Cuts drawn from the first byte, so that one input tries one set of cuts and the fuzzer can vary it; short
    // bodies are also fed one byte at a time.
    std::vector<std::size_t> cuts;
    if (size > 1) {
        const std::size_t seed = data[0];
        for (std::size_t j = 1; j <= 8; ++j)
            cuts.push_back((seed * 31 + j * 977) % size);
        std::sort(cuts.begin(), cuts.end());
    }
    std::vector<std::vector<std::size_t>> splits{cuts};
    if (size < 512) {
        std::vector<std::size_t> every;
        for (std::size_t i = 1; i < size; ++i)
            every.push_back(i);
        splits.push_back(every);
    }
    const Parsed received = parse(body, cuts, true);
    adk::fuzz::check(received.refused == whole.refused, "a Receiver is refused exactly when a vector is");
    if (!whole.refused)
        adk::fuzz::check(received.events == whole.events, "a Receiver is given the events a vector gets");
    for (const auto& split : splits) {
        const Parsed pieces = parse(body, split);
        adk::fuzz::check(pieces.refused == whole.refused, "a split body is refused exactly when the whole one is");
        if (whole.refused)
            continue;
        adk::fuzz::check(pieces.events == whole.events, "a split body gives the events of the whole one");
        adk::fuzz::check(pieces.unparsed == whole.unparsed, "a split body leaves the unparsed text of the whole one");
    }
    // The limit counts the bytes received; each byte that is not UTF-8 becomes U+FFFD (3 bytes) when the event
    // is dispatched, so the data handed on is at most three times the limit.
    for (const auto& e : whole.events)
        adk::fuzz::check(e.data.size() <= 3 * 4096, "no event's data is over three times the limit");
    return 0;
}
