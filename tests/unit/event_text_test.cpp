// to_json_text writes an event without its JSON tree: the text must be what serializing the tree gives, for
// every member, every kind of part, strings that need escaping, numbers of every size and extras whose names
// a known member already took.
#include <adk/core/event.hpp>
#include <adk/detail/json_writer.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <catch2/catch.hpp>

namespace json = boost::json;

namespace {

std::string by_tree(const adk::Event& e)
{
    return json::serialize(json::value_from(e));
}

}  // namespace

TEST_CASE("to_json_text writes what serializing the event's JSON tree writes", "[event][json]")
{
    SECTION("a streamed chunk")
    {
        adk::Event e("weather", adk::Content::model("It is sunny."));
        e.id = "e-1";
        e.invocation_id = "i-1";
        e.timestamp = 1764236789.123456;
        e.partial = true;
        e.usage_metadata = adk::UsageMetadata();
        e.usage_metadata->prompt_token_count = 12;
        e.usage_metadata->candidates_token_count = 3;
        e.model_version = "gemini-2.5-flash";
        CHECK(adk::to_json_text(e) == by_tree(e));
    }
    SECTION("strings that need escaping, and UTF-8 as it is")
    {
        std::string odd = "quote \" backslash \\ slash / tab \t newline \n cr \r bell \a nul ";
        odd += '\0';
        odd += " del \x7f unicode é 日本 \x01\x1f";
        adk::Event e(odd, adk::Content::model(odd));
        e.branch = odd;
        e.error_message = odd;
        CHECK(adk::to_json_text(e) == by_tree(e));
        // Each character that needs escaping, at every place of a string read eight bytes at a time.
        for (const char c : {'"', '\\', '\n', '\x01', '\x1f', '\0'})
            for (std::size_t at = 0; at < 20; ++at) {
                std::string s(19, 'a');
                s.insert(at, 1, c);
                s += "\xc3\xa9\x80\xff";  // bytes past 0x7f stay as they are
                adk::Event one("a", adk::Content::model(s));
                CHECK(adk::to_json_text(one) == by_tree(one));
            }
        // And in strings of every length up to three blocks of eight, plain or past 0x7f around it (the last
        // bytes are looked at as the eight that end the string).
        for (const char c : {'"', '\\', '\x1f'})
            for (std::size_t length = 0; length <= 24; ++length)
                for (const char fill : {'a', '\xe9'})
                    for (std::size_t at = 0; at <= length; ++at) {
                        std::string s(length, fill);
                        adk::Event plain("a", adk::Content::model(s));
                        CHECK(adk::to_json_text(plain) == by_tree(plain));
                        s.insert(at, 1, c);
                        adk::Event one("a", adk::Content::model(s));
                        CHECK(adk::to_json_text(one) == by_tree(one));
                    }
    }
    SECTION("long strings that are mostly escapes, and plain runs of every length between them")
    {
        // As JSON text kept in a string is (a model's request on a span): escapes every byte or every few bytes,
        // and plain runs of every length up to 600 between them, read eight bytes at a time.
        std::string s;
        for (std::size_t k = 0; k <= 601; ++k) {
            s += k % 3 == 0 ? '"' : k % 3 == 1 ? '\x01' : '\\';
            s.append(k * 89 % 601, k % 2 ? 'x' : '\xe9');  // every length from 0 to 600, long and short in turn
        }
        const std::string json_text = R"({"contents":[{"role":"user","parts":[{"text":"Weather in \"Paris\"?"}]}]})";
        for (const std::string& text : {s, json_text, std::string(2000, '"'), std::string(2000, '\x1f')}) {
            adk::Event e("a", adk::Content::model(text));
            CHECK(adk::to_json_text(e) == by_tree(e));
        }
    }
    SECTION("numbers of every size")
    {
        for (double t : {0.0, -0.0, 1.0, -1.0, 0.1, 1e-7, 1764236789.5, 1764236789.123456, 1.7976931348623157e308,
                         123456789012345.67, 5e-324, 2.2250738585072014e-308, 1e21, 1e22, 9007199254740993.0, 100.0,
                         -3.0000000000000002e82, 0.30000000000000004}) {
            adk::Event e("a", adk::Content::model("x"));
            e.timestamp = t;
            CHECK(adk::to_json_text(e) == by_tree(e));
        }
    }
    SECTION("every member, every kind of part, and extras named like known members")
    {
        const json::value v = json::parse(R"json({
          "id": "e", "invocationId": "i", "author": "agent", "branch": "root.child", "timestamp": 1.5,
          "content": {"role": "model", "parts": [
             {"text": "t", "thought": true, "flavour": [1, 2.5, null, {"a": "b"}]},
             {"functionCall": {"name": "f", "args": {"x": 1}, "id": "c1"}},
             {"functionResponse": {"name": "f", "id": "c1", "response": {"ok": true}}},
             {"inlineData": {"mimeType": "image/png", "data": "AAEC"}},
             {"fileData": {"mimeType": "text/plain", "fileUri": "gs://b/f"}},
             {"executableCode": {"language": "PYTHON", "code": "print(1)"}},
             {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1"}},
             {"text": "signed", "thoughtSignature": "c2ln"}], "mood": "calm"},
          "actions": {"stateDelta": {"k": [1, "v"], "n": -3}, "artifactDelta": {"b.txt": 2, "a.txt": 0},
             "skipSummarization": true, "transferToAgent": "other", "escalate": true,
             "requestedAuthConfigs": {"c1": {"x": 1}}, "requestedToolConfirmations": {"c2": {"hint": "h"}},
             "compaction": {"startTimestamp": 1.25, "endTimestamp": 2e10,
                            "compactedContent": {"role": "user", "parts": [{"text": "sum"}]}, "kept": 1},
             "endOfAgent": true, "agentState": {"step": 2}, "rewindBeforeInvocationId": "i0",
             "route": ["a", 1, true], "future": {"x": null}},
          "partial": true, "turnComplete": true, "interrupted": true, "finishReason": "STOP", "errorCode": "E",
          "errorMessage": "m", "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 2,
             "totalTokenCount": 3, "thoughtsTokenCount": 4, "cachedContentTokenCount": 5, "trafficType": "ON_DEMAND"},
          "modelVersion": "v", "longRunningToolIds": ["c1", "c2"], "customMetadata": {"m": 1.0e-300},
          "nodeInfo": {"path": "wf@1/n@1", "outputFor": ["wf@1/n@1", "wf@1"], "messageAsOutput": true, "z": 0},
          "output": {"answer": 42}, "isolationScope": "scope", "extraTop": "kept"})json");
        adk::Event e = json::value_to<adk::Event>(v);
        CHECK(adk::to_json_text(e) == by_tree(e));
        // An extra of a known member's name never comes from reading JSON, but a program may put one there:
        // the known member wins, as json::object's emplace lets it.
        e.extra["author"] = "shadow";
        e.extra["last"] = json::object{{"deep", json::array{1, 2}}};
        e.content->extra["parts"] = "shadow";
        e.content->parts[0].extra["text"] = "shadow";
        e.actions.extra["stateDelta"] = 1;
        e.usage_metadata->extra["promptTokenCount"] = 9;
        e.node_info->extra["path"] = "p";
        CHECK(adk::to_json_text(e) == by_tree(e));
    }
    SECTION("an event with nothing set")
    {
        adk::Event e;
        CHECK(adk::to_json_text(e) == by_tree(e));
    }
}

TEST_CASE("DeltaJson writes an answer's deltas from its first delta's pieces, as to_json_text writes each",
          "[event][json]")
{
    std::vector<adk::Event> bases;
    adk::Event plain("weather", adk::Content::model("It is "));
    plain.id = "e-1";
    plain.invocation_id = "i-1";
    plain.timestamp = 1764236789.123456;
    plain.partial = true;
    plain.model_version = "gemini-2.5-flash";
    bases.push_back(plain);
    bases.push_back(plain);
    bases.back().branch = "root.\"helper\"";  // escaped in the head
    bases.back().content->role.clear();
    bases.push_back(plain);
    bases.back().content->parts.front().thought = true;  // after the text, in the middle
    bases.back().content->parts.front().extra["partMetadata"] = json::object{{"partial", true}};
    bases.push_back(plain);
    bases.back().custom_metadata["k"] = "v";  // after the usage, in the tail
    bases.back().long_running_tool_ids = {"call-1"};
    bases.back().extra["groundingMetadata"] = json::object{{"text", "\"partial\":true"}};
    bases.push_back(plain);
    bases.back().actions.state_delta["x"] = 1;
    bases.back().usage_metadata.emplace();  // the base's own usage and finish reason are not the delta's
    bases.back().finish_reason = "OTHER";

    std::vector<std::string> texts = {"", "sunny", "quote \" backslash \\ newline \n \x01 \xc3\xa9 and a longer run"};
    adk::UsageMetadata usage;
    usage.prompt_token_count = 10;
    usage.candidates_token_count = 3;
    adk::UsageMetadata usage_extra = usage;
    usage_extra.extra["promptTokensDetails"] = json::array{json::object{{"modality", "TEXT"}}};
    for (const adk::Event& base : bases) {
        const adk::detail::DeltaJson pieces(base);
        REQUIRE(pieces.usable());
        for (const std::string& text : texts)
            for (const auto& u : {std::optional<adk::UsageMetadata>(), std::optional(usage), std::optional(usage_extra)})
                for (const auto& finish : {std::optional<std::string>(), std::optional<std::string>("STOP")}) {
                    adk::Event delta = base;
                    delta.content->parts.front().text = text;
                    delta.usage_metadata = u;
                    delta.finish_reason = finish;
                    std::string out = "before:";
                    pieces.append(out, text, u ? &*u : nullptr, finish ? &*finish : nullptr);
                    CHECK(out == "before:" + adk::to_json_text(delta));
                    CHECK(adk::to_json_text(delta) == by_tree(delta));
                }
    }
    // What could come between "partial" and the delta's members, or a content other than one text part: not used.
    adk::Event turn = plain;
    turn.turn_complete = true;
    adk::Event error = plain;
    error.error_code = "E";
    adk::Event two = plain;
    two.content->parts.push_back(adk::Part::from_text("more"));
    adk::Event whole = plain;
    whole.partial = false;
    adk::Event none = plain;
    none.content.reset();
    for (const adk::Event& e : {turn, error, two, whole, none})
        CHECK(!adk::detail::DeltaJson(e).usable());
}

TEST_CASE("to_json_text writes each timestamp as the tree does, when one repeats and when it changes", "[event][json]")
{
    // The writer keeps the numbers it wrote (64, by a hash of their bits); events of one answer share a timestamp,
    // others do not.
    adk::Event e("weather", adk::Content::model("chunk"));
    e.id = "e-1";
    e.partial = true;
    for (double t : {1764236789.123456, 1764236789.123456, 1764236789.5, 0.0, -0.0, -0.0, 0.0, 1e-7, 1e-7,
                     1764236789.123456, 2.5, 1e300}) {
        e.timestamp = t;
        CHECK(adk::to_json_text(e) == by_tree(e));
    }
    // The answers of many streams in turn: more timestamps than the writer keeps, so that slots are taken over.
    for (int round = 0; round < 3; ++round)
        for (int stream = 0; stream < 500; ++stream) {
            e.timestamp = 1764236789.0 + stream * 0.001953125 + stream * 1e-6;
            CHECK(adk::to_json_text(e) == by_tree(e));
        }
}

TEST_CASE("an Event fits malloc's per-thread cache, and its boxed members copy and compare as optionals", "[event]")
{
    // glibc's tcache serves blocks of up to 1,032 bytes without taking its arena's lists; a streaming server
    // allocates one Event per chunk (tools/bench/pace.sh). On 64-bit Linux with libstdc++, as CI builds.
    if constexpr (sizeof(void*) == 8)
        STATIC_REQUIRE(sizeof(adk::Event) <= 1032);

    adk::Event a;
    CHECK(!a.node_info);
    CHECK(!a.actions.compaction);
    a.node_info.emplace().path = "triage@1";
    a.actions.compaction.emplace().start_timestamp = 1.5;
    adk::Event b = a;  // a deep copy: the copy's boxes are its own
    REQUIRE(b.node_info);
    b.node_info->path = "route@1";
    CHECK(*a.node_info->path == "triage@1");
    CHECK(a != b);
    b.node_info->path = "triage@1";
    CHECK(a == b);
    b.actions.compaction = std::nullopt;
    CHECK(a != b);
    const adk::Event back = json::value_to<adk::Event>(json::parse(by_tree(a)));
    CHECK(back == a);
}

TEST_CASE("append_json_text appends the event text, and approximate_bytes counts what an event holds", "[event][json]")
{
    adk::Event e("agent", adk::Content::model("It is sunny."));
    e.invocation_id = "e-1";
    std::string out = "data: ";
    adk::append_json_text(out, e);
    CHECK(out == "data: " + adk::to_json_text(e));

    const std::size_t small = adk::approximate_bytes(e);
    CHECK(small >= sizeof(adk::Event));
    // Each kind of member adds what it holds: text, a file, a call's arguments, state, metadata.
    adk::Event text = e;
    text.content->parts[0].text = std::string(10000, 'x');
    CHECK(adk::approximate_bytes(text) >= small + 10000 - std::string_view("It is sunny.").size());
    adk::Event file = e;
    file.content->parts.push_back(adk::Part::from_bytes(std::string(50000, 'b'), "image/png"));
    CHECK(adk::approximate_bytes(file) >= small + 50000);
    adk::Event call = e;
    json::object args;
    args["city"] = std::string(20000, 'p');
    call.content->parts.push_back(adk::Part::from_function_call("get_weather", args));
    CHECK(adk::approximate_bytes(call) >= small + 20000);
    adk::Event state = e;
    state.actions.state_delta["k"] = json::array{std::string(30000, 's'), 1, true};
    CHECK(adk::approximate_bytes(state) >= small + 30000);
    adk::Event metadata = e;
    metadata.custom_metadata["note"] = std::string(40000, 'n');
    CHECK(adk::approximate_bytes(metadata) >= small + 40000);
    // Never far below what it writes as JSON (a bound counts it in place of the text).
    for (const adk::Event* each : {&text, &file, &call, &state, &metadata})
        CHECK(adk::approximate_bytes(*each) * 2 >= adk::to_json_text(*each).size());
}
