// ADK's JSON read back: any JSON read as an Event, a Session, a Content or a Part either fails with
// adk::Error or gives a value whose JSON parses again and reads back to the same value. An event read is also
// written by to_json_text (and, when it can be a streamed delta's base, from detail::DeltaJson's pieces), and a
// content read goes into a Gemini request written by encode_request_text: each must give the text of its JSON tree
// exactly.
//
// "The same" allows a double to come back a unit in the last place off (adk::fuzz::json_close says why).
#include <adk/core/content.hpp>
#include <adk/core/event.hpp>
#include <adk/detail/json_writer.hpp>
#include <adk/providers/gemini/codec.hpp>
#include <adk/sessions/session.hpp>

#include "fuzz.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <cstdio>

namespace json = boost::json;

namespace {

template <class T>
void round_trip(const json::value& v)
{
    T decoded;
    if (!adk::fuzz::only_adk_errors([&] { decoded = json::value_to<T>(v); }))
        return;
    json::value written;
    const bool wrote = adk::fuzz::only_adk_errors([&] { written = json::value_from(decoded); });
    adk::fuzz::check(wrote, "what was read can be written");
    const std::string text = json::serialize(written);
    boost::system::error_code ec;
    const json::value reparsed = json::parse(text, ec);
    adk::fuzz::check(!ec, "what is written is JSON");
    T again;
    const bool reread = adk::fuzz::only_adk_errors([&] { again = json::value_to<T>(reparsed); });
    adk::fuzz::check(reread, "what is written reads back");
    // value_from writes every member (nulls and false flags, which read back as absent, left out), so its JSON
    // compared stands for the value compared.
    if (!adk::fuzz::json_close(json::value_from(again), written)) {
        std::fprintf(stderr, "read:    %s\nwritten: %s\nagain:   %s\n", json::serialize(v).c_str(), text.c_str(),
                     json::serialize(json::value_from(again)).c_str());
        adk::fuzz::check(false, "what is written reads back to the same value, and is written again the same");
    }
}

// The server's writer of events (no JSON tree) against the tree's text.
void event_text(const json::value& v)
{
    adk::Event e;
    if (!adk::fuzz::only_adk_errors([&] { e = json::value_to<adk::Event>(v); }))
        return;
    const std::string tree = json::serialize(json::value_from(e));
    const std::string text = adk::to_json_text(e);
    if (text != tree) {
        std::fprintf(stderr, "tree:         %s\nto_json_text: %s\n", tree.c_str(), text.c_str());
        adk::fuzz::check(false, "to_json_text writes what the event's JSON tree serializes to");
    }
    // A server writes a streamed delta from its answer's pieces: the event as its own base, and as the base of
    // an event that differs only in what a delta sets (text, usage, finish reason) from another one.
    const adk::detail::DeltaJson pieces(e);
    if (!pieces.usable())
        return;
    std::string from_pieces;
    pieces.append(from_pieces, *e.content->parts.front().text, e.usage_metadata ? &*e.usage_metadata : nullptr,
                  e.finish_reason ? &*e.finish_reason : nullptr);
    adk::fuzz::check(from_pieces == text, "a delta written from its own pieces is the event's text");
    adk::Event other = e;
    other.content->parts.front().text = e.author + e.id;
    other.usage_metadata.reset();
    other.finish_reason = e.branch;
    from_pieces.clear();
    pieces.append(from_pieces, *other.content->parts.front().text, nullptr, &*other.finish_reason);
    if (from_pieces != adk::to_json_text(other)) {
        std::fprintf(stderr, "pieces: %s\nevent:  %s\n", from_pieces.c_str(), adk::to_json_text(other).c_str());
        adk::fuzz::check(false, "a delta written from its answer's pieces is the delta's text");
    }
}

// Gemini's request writer (no JSON tree) against the tree's text: the content as a turn, as a turn without its
// role, and as the system instruction.
void gemini_request_text(const json::value& v)
{
    adk::Content c;
    if (!adk::fuzz::only_adk_errors([&] { c = json::value_to<adk::Content>(v); }))
        return;
    adk::fuzz::check(c.parts.size() <= adk::max_content_parts, "a content read holds at most max_content_parts parts");
    adk::LlmRequest request;
    request.contents.push_back(c);
    request.contents.push_back(c);
    request.contents.back().role.clear();
    request.system_instruction = c;
    const std::string tree = json::serialize(adk::gemini::encode_request(request));
    const std::string text = adk::gemini::encode_request_text(request);
    if (text != tree) {
        std::fprintf(stderr, "tree: %s\ntext: %s\n", tree.c_str(), text.c_str());
        adk::fuzz::check(false, "encode_request_text writes what the request's JSON tree serializes to");
    }
}

void each_type(const json::value& v)
{
    round_trip<adk::Event>(v);
    event_text(v);
    gemini_request_text(v);
    round_trip<adk::Session>(v);
    round_trip<adk::Content>(v);
    round_trip<adk::Part>(v);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size)
{
    boost::system::error_code ec;
    const json::value v = json::parse(adk::fuzz::as_text(data, size), ec);
    if (ec)
        return 0;
    each_type(v);
    if (v.is_array())  // a list of events (the HTTP API's /run answer)
        for (const auto& item : v.get_array())
            each_type(item);
    return 0;
}
