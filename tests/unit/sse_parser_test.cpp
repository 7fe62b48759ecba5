// The SSE parser: the specification's rules, and every recorded provider stream re-split at every byte.
#include <adk/core/error.hpp>
#include <adk/net/sse_parser.hpp>

#include "support/run.hpp"

#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

#include <filesystem>

using adk::net::SseEvent;
using adk::net::SseParser;

namespace {

std::vector<SseEvent> parse_in_pieces(std::string_view body, const std::vector<std::size_t>& cuts, std::string* unparsed = nullptr)
{
    SseParser parser;
    std::vector<SseEvent> out;
    std::size_t at = 0;
    for (std::size_t cut : cuts) {
        parser.feed(body.substr(at, cut - at), out);
        at = cut;
    }
    parser.feed(body.substr(at), out);
    parser.finish(out);
    if (unparsed)
        *unparsed = parser.unparsed();
    return out;
}

std::vector<SseEvent> parse(std::string_view body)
{
    return parse_in_pieces(body, {});
}

// Copies each event as the parser gives it, and where its data's characters were.
class Copier final : public SseParser::Receiver {
public:
    void on_event(SseEvent& event) override
    {
        events.push_back(event);
        data_at.push_back(event.data.data());
    }
    std::vector<SseEvent> events;
    std::vector<const char*> data_at;
};

}  // namespace

TEST_CASE("SSE: fields, comments, multi-line data, blank-line dispatch", "[sse]")
{
    auto events = parse(": a comment\n"
                        "event: update\n"
                        "data: first line\n"
                        "data:second line\n"
                        "data:  two spaces keep one\n"
                        "id: 7\n"
                        "retry: 1500\n"
                        "\n"
                        "data\n"
                        "\n"
                        "event: ignored without data\n"
                        "\n"
                        "data: after\n"
                        "unknown: field\n"
                        "\n");
    REQUIRE(events.size() == 3);
    CHECK(events[0].event == "update");
    CHECK(events[0].data == "first line\nsecond line\n two spaces keep one");
    CHECK(events[0].id == "7");
    CHECK(events[0].retry == 1500);
    CHECK(events[1].event == "message");  // a bare "data" line: an empty data value
    CHECK(events[1].data.empty());
    CHECK(events[1].id == "7");  // the last event id carries on
    CHECK(!events[1].retry);
    CHECK(events[2].event == "message");  // the type was reset by the blank line that dispatched nothing
    CHECK(events[2].data == "after");
}

TEST_CASE("SSE: LF, CRLF and CR line endings, split anywhere", "[sse]")
{
    std::vector<SseEvent> expected{SseEvent("message", "a"), SseEvent("e", "b\nc")};
    for (const char* body : {"data: a\n\nevent: e\ndata: b\ndata: c\n\n",
                             "data: a\r\n\r\nevent: e\r\ndata: b\r\ndata: c\r\n\r\n",
                             "data: a\r\revent: e\rdata: b\rdata: c\r\r",
                             "data: a\r\n\nevent: e\rdata: b\r\ndata: c\n\r"}) {
        std::string_view text(body);
        CHECK(parse(text) == expected);
        for (std::size_t cut = 0; cut <= text.size(); ++cut)
            CHECK(parse_in_pieces(text, {cut}) == expected);
    }
}

TEST_CASE("SSE: the end of the body dispatches a pending event, and a BOM is skipped", "[sse]")
{
    auto events = parse("data: no blank line at the end");
    REQUIRE(events.size() == 1);
    CHECK(events[0].data == "no blank line at the end");
    CHECK(parse("\xEF\xBB\xBF" "data: x\n\n") == std::vector<SseEvent>{SseEvent("message", "x")});
    CHECK(parse_in_pieces("\xEF\xBB\xBF" "data: x\n\n", {1, 2, 3}) == std::vector<SseEvent>{SseEvent("message", "x")});
    CHECK(parse("").empty());
    using namespace std::string_view_literals;
    auto ids = parse("id: a\0b\ndata: x\n\nretry: 12x\ndata: y\n\n"sv);
    REQUIRE(ids.size() == 2);
    CHECK(ids[0].id.empty());  // an id holding NUL is ignored
    CHECK(!ids[1].retry);      // so is a retry that is not all digits
}

TEST_CASE("SSE: long lines up to the event limit, and UTF-8 decoded per event", "[sse]")
{
    std::string big(5'000'000, 'x');
    auto events = parse("data: " + big + "\n\n");
    REQUIRE(events.size() == 1);
    CHECK(events[0].data.size() == big.size());

    std::string text = "data: caf\xC3\xA9 \xE4\xB8\xAD\xE6\x96\x87 \xF0\x9F\x98\x80\n\n";
    for (std::size_t cut = 0; cut <= text.size(); ++cut) {  // a character split across reads arrives whole
        auto split = parse_in_pieces(text, {cut});
        REQUIRE(split.size() == 1);
        CHECK(split[0].data == "caf\xC3\xA9 \xE4\xB8\xAD\xE6\x96\x87 \xF0\x9F\x98\x80");
    }
    CHECK(adk::net::to_valid_utf8("ok\xFF\xC3") == "ok\xEF\xBF\xBD\xEF\xBF\xBD");
    CHECK(adk::net::to_valid_utf8("\xC0\xAF") == "\xEF\xBF\xBD\xEF\xBF\xBD");      // overlong
    CHECK(adk::net::to_valid_utf8("\xED\xA0\x80") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate
}

TEST_CASE("SSE: every recorded provider stream parses the same however it is split", "[sse]")
{
    namespace fs = std::filesystem;
    int files = 0;
    for (const auto& entry : fs::recursive_directory_iterator(adk::test::paths::fixtures() + "/providers")) {
        if (entry.path().extension() != ".sse")
            continue;
        ++files;
        std::string relative = fs::relative(entry.path(), adk::test::paths::fixtures()).string();
        std::string body = adk::test::fixture(relative);
        INFO(relative);
        std::string unparsed;
        auto whole = parse_in_pieces(body, {}, &unparsed);
        REQUIRE(!whole.empty());
        for (const auto& e : whole) {
            if (e.data == "[DONE]")
                continue;
            boost::system::error_code ec;
            boost::json::parse(e.data, ec);
            CHECK(!ec);  // every payload of every provider is one JSON document
        }
        // Two pieces, cut at every offset of the first 512 bytes (the first events, with every kind of
        // line ending the recording uses) and at 64 offsets spread over the rest: each cut parses the
        // whole body, so every offset of a 66 KB recording would take minutes under the sanitizers. The
        // byte-at-a-time parse below has a cut at every offset of every recording.
        bool all_cuts_agree = true;
        std::size_t stride = std::max<std::size_t>(1, body.size() / 64);
        for (std::size_t cut = 1; cut < body.size(); ++cut)
            if (cut <= 512 || cut % stride == 0)
                all_cuts_agree = all_cuts_agree && parse_in_pieces(body, {cut}) == whole;
        CHECK(all_cuts_agree);
        // One byte at a time: every offset is a cut at once.
        std::vector<std::size_t> every_byte;
        for (std::size_t cut = 1; cut < body.size(); ++cut)
            every_byte.push_back(cut);
        CHECK(parse_in_pieces(body, every_byte) == whole);
        if (relative.find("firebase_error_mid_stream") != std::string::npos)
            CHECK_THAT(unparsed, Catch::Contains("\"status\": \"CANCELLED\""));  // the bare JSON error is kept
    }
    CHECK(files >= 30);
}

TEST_CASE("SSE: a Receiver is given the events a vector gets in storage reused for the next event unless it is large", "[sse]")
{
    // Types, ids and retries that come and go, invalid UTF-8 in data, type and id: nothing of an event may stay
    // in the next one.
    const std::string body = "event: first\nid: 1\nretry: 30\ndata: " + std::string(300, 'a') +
                             "\n\ndata: " + std::string(300, 'b') + "\xff\n\nevent: t\xfe\nid: \xfd\ndata: x\n\n" +
                             "data: " + std::string(300, 'c') + "\n\ndata: " + std::string(300, 'd') + "\n\ndata: end";
    const std::vector<SseEvent> appended = parse(body);
    REQUIRE(appended.size() == 6);
    for (const std::size_t piece : {std::size_t{1}, std::size_t{7}, body.size()}) {
        INFO("fed in pieces of " << piece << " bytes");
        SseParser parser;
        Copier copier;
        for (std::size_t at = 0; at < body.size(); at += piece)
            parser.feed(std::string_view(body).substr(at, piece), copier);
        parser.finish(copier);
        CHECK(copier.events == appended);
    }
    // The data of the fourth and sixth events lies where the second's did (the parser's two data strings
    // take turns): once they have grown, events cost no allocation.
    SseParser parser;
    Copier copier;
    parser.feed(body, copier);
    parser.finish(copier);
    REQUIRE(copier.data_at.size() == 6);
    CHECK(copier.data_at[3] == copier.data_at[1]);
    CHECK(copier.data_at[5] == copier.data_at[3]);
    CHECK(appended[1].data == std::string(300, 'b') + "\xEF\xBF\xBD");
    CHECK(appended[2].event == "t\xEF\xBF\xBD");
    CHECK(appended[3].event == "message");
    CHECK(appended[3].retry == std::nullopt);
    CHECK(appended[3].id == "\xEF\xBF\xBD");  // the last id seen stays, as the specification says

    // An event over 64 KiB is given whole, and its room is not kept for the next one.
    class Sizes final : public SseParser::Receiver {
    public:
        void on_event(SseEvent& event) override { sizes.push_back(event.data.size()); }
        std::vector<std::size_t> sizes;
    } sizes;
    SseParser large;
    large.feed("data: " + std::string(100'000, 'z') + "\n\ndata: small\n\n", sizes);
    CHECK(sizes.sizes == std::vector<std::size_t>{100'000, 5});
    SseParser after_large;
    Copier copies;
    after_large.feed("data: " + std::string(100'000, 'z') + "\n\ndata: a\n\ndata: b\n\n", copies);
    REQUIRE(copies.data_at.size() == 3);
    CHECK(copies.data_at[2] != copies.data_at[0]);  // the large event's storage went back
}

TEST_CASE("SSE: the events of known recordings", "[sse]")
{
    auto anthropic = parse(adk::test::fixture("providers/anthropic/text_stream.sse"));
    REQUIRE(!anthropic.empty());
    CHECK(anthropic.front().event == "message_start");
    CHECK(anthropic.back().event == "message_stop");
    auto openrouter = parse(adk::test::fixture("providers/openai_chat/compat_openrouter_comments_error_chunk.sse"));
    CHECK(openrouter.back().data == "[DONE]");  // the 17 comment keep-alives are not events
    for (const auto& e : openrouter)
        CHECK(e.data.find("OPENROUTER PROCESSING") == std::string::npos);
    auto groq = parse(adk::test::fixture("providers/openai_chat/compat_groq_event_error_midstream.sse"));
    CHECK(groq.back().event == "error");
}

namespace {

// The message of the adk::Error that feeding `pieces` (then finishing) throws with a limit of `limit` bytes.
std::string overflow(std::size_t limit, const std::vector<std::string>& pieces)
{
    SseParser parser(limit);
    std::vector<SseEvent> out;
    try {
        for (const auto& p : pieces)
            parser.feed(p, out);
        parser.finish(out);
    } catch (const adk::Error& e) {
        CHECK(e.code() == adk::errc::bad_response);
        return e.message();
    }
    return "";
}

}  // namespace

TEST_CASE("SSE: a line or an event over the limit is refused, however it arrives", "[sse]")
{
    // A line that never ends, fed in small pieces (a server that sends no newline): refused once it passes
    // the limit, not held whole.
    std::vector<std::string> endless(100, std::string(100, 'x'));
    CHECK_THAT(overflow(1000, endless), Catch::Contains("an SSE event over 1000 bytes"));
    // The same in one read.
    CHECK_THAT(overflow(1000, {std::string(5000, 'x') + "\n"}), Catch::Contains("over 1000 bytes"));
    // Data lines that never meet a blank line: each short, together too long.
    std::string lines;
    for (int i = 0; i < 100; ++i)
        lines += "data: " + std::string(50, 'y') + "\n";
    CHECK_THAT(overflow(1000, {lines}), Catch::Contains("over 1000 bytes"));
    // Just under the limit passes, as do many events that are each under it.
    CHECK(overflow(1000, {"data: " + std::string(990, 'z') + "\n\n"}).empty());
    std::string many;
    for (int i = 0; i < 100; ++i)
        many += "data: " + std::string(500, 'w') + "\n\n";
    CHECK(overflow(1000, {many}).empty());
    // The default limit fits the largest real events by far.
    CHECK(SseParser::default_max_event_bytes >= std::size_t{16} << 20);
}

TEST_CASE("SSE: the limit counts bytes received, and invalid bytes still become U+FFFD (found by fuzzing)", "[sse]")
{
    // 1,000 bytes that are not UTF-8 fit a 1,000-byte limit; each is handed on as U+FFFD, three bytes.
    SseParser parser(1000);
    std::vector<SseEvent> out;
    parser.feed("data:" + std::string(994, '\xFF') + "\n\n", out);
    REQUIRE(out.size() == 1);
    CHECK(out[0].data.size() == 3 * 994);
    CHECK(out[0].data.substr(0, 3) == "\xEF\xBF\xBD");
}
