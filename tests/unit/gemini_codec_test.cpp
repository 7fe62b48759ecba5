// The Gemini wire codec against real recorded responses and requests.
#include <adk/providers/gemini/codec.hpp>
#include <adk/providers/gemini/gemini.hpp>

#include "support/run.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <adk/net/sse_parser.hpp>

#include <catch2/catch.hpp>

#include <random>

namespace json = boost::json;
using adk::test::fixture;

namespace {

// Through the stream decoder the model uses, which parses each chunk into a scratch buffer (heap blocks
// freed after each chunk under ASan): a decoded value that kept a pointer into it is reported when read.
std::vector<adk::LlmResponse> decode_stream(const std::string& name)
{
    adk::net::SseParser parser;
    std::vector<adk::net::SseEvent> events;
    parser.feed(fixture("providers/gemini/" + name), events);
    parser.finish(events);
    adk::gemini::GeminiOptions options;
    options.api_key = "test";
    auto decoder = adk::gemini::wire_format(options)->stream_decoder({});
    std::vector<adk::LlmResponse> out;
    for (const auto& e : events)
        decoder->on_event(e, out);
    decoder->finish(parser.unparsed(), out);
    return out;
}

std::string joined_text(const std::vector<adk::LlmResponse>& chunks)
{
    std::string text;
    for (const auto& c : chunks)
        if (c.content)
            text += c.content->text();
    return text;
}

}  // namespace

TEST_CASE("gemini: streamed text deltas join, usage is cumulative, the last chunk finishes", "[gemini]")
{
    auto chunks = decode_stream("usage_mid_stream.sse");
    REQUIRE(chunks.size() >= 3);
    CHECK(joined_text(chunks).rfind("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n", 0) == 0);  // "1" + "4"
    CHECK(chunks.back().finish_reason == "STOP");
    CHECK(chunks.front().partial);
    REQUIRE(chunks.back().usage_metadata);
    CHECK(*chunks.back().usage_metadata->total_token_count >= *chunks.front().usage_metadata->total_token_count);
    CHECK(chunks.back().usage_metadata->thoughts_token_count.has_value());
    CHECK(chunks.back().model_version.has_value());
}

TEST_CASE("gemini: function calls with and without ids, and their thought signatures", "[gemini]")
{
    auto chunks = decode_stream("tool_call_thought_signature.sse");
    const adk::Part& call = chunks.at(0).content->parts.at(0);
    REQUIRE(call.function_call);
    CHECK(call.function_call->name == "get_country");
    CHECK(call.function_call->id.empty());  // Gemini 2.x/3 without ids: the agent assigns one
    REQUIRE(call.thought_signature);
    std::string body = fixture("providers/gemini/tool_call_thought_signature.sse");
    json::value sent = json::parse(body.substr(6, body.find('\n') - 6));  // the first "data: " line
    const json::value& original = sent.at("candidates").at(0).at("content").at("parts").at(0).at("thoughtSignature");
    CHECK(json::value_from(call).at("thoughtSignature") == original);  // sent back byte for byte
    CHECK(chunks.back().finish_reason == "STOP");

    auto with_id = decode_stream("structured_output_turn1_function_call_id.sse");
    bool found = false;
    for (const auto& c : with_id)
        if (c.content)
            for (const auto& p : c.content->parts)
                if (p.function_call) {
                    CHECK(p.function_call->id == "96c1su3s");
                    found = true;
                }
    CHECK(found);

    // The arguments are read after each chunk's scratch parse is gone: they must be the decoder's own copy.
    bool san_francisco = false;
    for (const auto& c : decode_stream("vercel_tool_call_gemini3_signature.sse"))
        if (c.content)
            for (const auto& p : c.content->parts)
                if (p.function_call)
                    san_francisco = san_francisco || p.function_call->args.at("location") == "San Francisco";
    CHECK(san_francisco);

    auto parallel = adk::gemini::decode_response(json::parse(fixture("providers/gemini/firebase_unary_parallel_function_calls.json")), false);
    REQUIRE(parallel.content);
    int sums = 0;
    for (const auto& p : parallel.content->parts)
        sums += p.function_call && p.function_call->name == "sum";
    CHECK(sums == 3);
    CHECK(!parallel.partial);
    CHECK(parallel.turn_complete);
}

TEST_CASE("gemini: thought parts stay thoughts", "[gemini]")
{
    auto chunks = decode_stream("thinking_thought_parts.sse");
    int thoughts = 0;
    int signed_answers = 0;
    for (const auto& c : chunks)
        if (c.content)
            for (const auto& p : c.content->parts) {
                thoughts += p.thought;
                signed_answers += !p.thought && p.thought_signature.has_value();
            }
    CHECK(thoughts == 4);
    CHECK(signed_answers >= 1);
    CHECK(!joined_text(chunks).empty());  // Content::text() leaves the thoughts out
}

TEST_CASE("gemini: error bodies become error codes, and RetryInfo gives the delay", "[gemini]")
{
    auto not_found = adk::gemini::decode_response(json::parse(fixture("providers/gemini/error_404_unknown_model.json")), false);
    CHECK(not_found.error_code == "NOT_FOUND");
    CHECK_THAT(*not_found.error_message, Catch::Contains("is not found for API version v1beta"));
    json::value quota = json::parse(fixture("providers/gemini/vercel_error_429_retry_info.json"));
    CHECK(adk::gemini::decode_response(quota, false).error_code == "RESOURCE_EXHAUSTED");
    CHECK(adk::gemini::retry_delay(quota) == std::chrono::milliseconds(34400));
    CHECK(!adk::gemini::retry_delay(json::parse(fixture("providers/gemini/error_404_unknown_model.json"))));
    CHECK(adk::gemini::decode_response(json::parse(R"({"promptFeedback":{"blockReason":"SAFETY"}})"), false).error_code ==
          "SAFETY");
    CHECK(adk::gemini::decode_response(json::parse("[1]"), true).error_code == "MALFORMED_RESPONSE");
}

TEST_CASE("gemini: the request body has the recorded shape", "[gemini]")
{
    json::value recorded = json::parse(fixture("providers/gemini/text_stream.request.json"));
    adk::LlmRequest request;
    request.contents.push_back(adk::Content::user("What is the capital of France?"));
    request.append_instruction("You are a helpful chatbot.");
    request.config.temperature = 0.0;
    json::object body = adk::gemini::encode_request(request);
    CHECK(body.at("contents") == recorded.at("contents"));
    CHECK(body.at("generationConfig") == recorded.at("generationConfig"));
    CHECK(body.at("systemInstruction").at("parts") == recorded.at("systemInstruction").at("parts"));

    // A follow-up turn: the call (with its thought signature) and the tool's response, as recorded.
    json::value followup = json::parse(fixture("providers/gemini/tool_result_followup.request.json"));
    adk::LlmRequest turn2;
    for (const json::value& c : followup.at("contents").as_array())
        turn2.contents.push_back(json::value_to<adk::Content>(c));
    json::object body2 = adk::gemini::encode_request(turn2);
    const json::array& sent = body2.at("contents").as_array();
    const json::array& expected = followup.at("contents").as_array();
    REQUIRE(sent.size() == expected.size());
    for (std::size_t i = 0; i < sent.size(); ++i) {
        CHECK(sent[i].at("role") == expected[i].at("role"));
        REQUIRE(sent[i].at("parts").as_array().size() == expected[i].at("parts").as_array().size());
        for (std::size_t k = 0; k < sent[i].at("parts").as_array().size(); ++k) {
            json::object part = sent[i].at("parts").at(k).as_object();
            json::object want = expected[i].at("parts").at(k).as_object();
            part.erase("thoughtSignature");  // standard base64 here; the recording used base64url for the same bytes
            want.erase("thoughtSignature");
            CHECK(json::value(part) == json::value(want));
        }
    }

    adk::LlmRequest with_tools;
    with_tools.tools.emplace_back("get_weather", "Weather.", json::parse(R"({"type":"object"})"));
    with_tools.config.response_schema = json::parse(R"({"type":"object"})");
    with_tools.config.response_mime_type = "application/json";
    with_tools.config.thinking_config.emplace();
    with_tools.config.thinking_config->include_thoughts = true;
    json::object body3 = adk::gemini::encode_request(with_tools);
    CHECK(body3.at("tools").at(0).at("functionDeclarations").at(0).at("parametersJsonSchema") == json::parse(R"({"type":"object"})"));
    CHECK(body3.at("generationConfig").at("responseMimeType") == "application/json");
    CHECK(body3.at("generationConfig").at("thinkingConfig").at("includeThoughts") == true);
}

TEST_CASE("gemini: a request written as text is the text of its JSON tree, byte for byte", "[gemini]")
{
    const auto same = [](const adk::LlmRequest& r) {
        CHECK(adk::gemini::encode_request_text(r) == json::serialize(adk::gemini::encode_request(r)));
    };
    adk::LlmRequest empty;
    same(empty);

    // Every kind of part, roles given and not, extra members (one named "role" where the role is empty).
    adk::LlmRequest r;
    r.model = "gemini-2.5-flash";
    r.contents.push_back(adk::Content::user("What is the weather in \"Paris\"?\n"));
    adk::Content no_role;
    no_role.parts.emplace_back().text = "no role: the user's";
    r.contents.push_back(no_role);
    adk::Content odd = no_role;
    odd.extra = json::object{{"first", 1}, {"role", "ignored"}, {"last", json::array{1, 2}}};
    r.contents.push_back(odd);
    adk::Content extra_after_role = adk::Content::model("x");
    extra_after_role.extra = json::object{{"z", nullptr}};
    r.contents.push_back(extra_after_role);
    const json::value followup = json::parse(fixture("providers/gemini/tool_result_followup.request.json"));
    for (const json::value& c : followup.at("contents").as_array())
        r.contents.push_back(json::value_to<adk::Content>(c));
    adk::Content thinking = adk::Content::model("thinking...");
    thinking.parts[0].thought = true;
    thinking.parts[0].extra = json::object{{"partMetadata", json::object{{"a", 1.5}}}};
    r.contents.push_back(thinking);
    same(r);

    // The system instruction: its role left out, with extra members and without.
    r.append_instruction("You are a helpful chatbot.");
    same(r);
    r.system_instruction->role = "system";
    same(r);
    r.system_instruction->extra = json::object{{"a", 1}, {"b", 2}, {"c", 3}};
    same(r);
    r.system_instruction->role.clear();
    r.system_instruction->extra = json::object{{"role", "x"}, {"b", 2}};
    same(r);

    // Tools (with and without parameters), code execution with and without them, every setting.
    adk::LlmRequest t = r;
    t.code_execution = true;
    same(t);
    t.tools.emplace_back("get_weather", "Weather \"now\".", json::parse(R"({"type":"object","properties":{"city":{"type":"string"}}})"));
    t.tools.emplace_back("ping", "", nullptr);
    same(t);
    t.code_execution = false;
    same(t);
    t.cached_content = "cachedContents/abc";
    t.config.tool_config = json::object{{"functionCallingConfig", json::object{{"mode", "ANY"}}}};
    t.config.temperature = 0.7;
    t.config.top_p = 0.95;
    t.config.top_k = 40;
    t.config.max_output_tokens = 1024;
    t.config.stop_sequences = {"END", "\u00e9"};
    t.config.response_mime_type = "application/json";
    t.config.response_schema = json::parse(R"({"type":"object"})");
    t.config.thinking_config.emplace();
    same(t);
    t.config.thinking_config->include_thoughts = false;
    t.config.thinking_config->thinking_budget = 512;
    t.config.safety_settings = json::array{json::object{{"category", "HARM"}, {"threshold", "BLOCK_NONE"}}};
    same(t);
    t.config.temperature = 1e-7;
    t.config.top_p = -0.0;
    same(t);
}

namespace {

// Every field of an LlmResponse, compared.
void require_same(const adk::LlmResponse& fast, const adk::LlmResponse& general, const std::string& chunk)
{
    INFO("chunk: " << chunk);
    CHECK(fast.content == general.content);
    CHECK(fast.partial == general.partial);
    CHECK(fast.turn_complete == general.turn_complete);
    CHECK(fast.interrupted == general.interrupted);
    CHECK(fast.finish_reason == general.finish_reason);
    CHECK(fast.usage_metadata == general.usage_metadata);
    CHECK(fast.error_code == general.error_code);
    CHECK(fast.error_message == general.error_message);
    CHECK(fast.model_version == general.model_version);
    CHECK(fast.custom_metadata == general.custom_metadata);
    CHECK(fast.provider_metadata == general.provider_metadata);
}

// decode_text_chunk either declines or gives what decode_response gives. Returns whether it decoded.
bool fast_path_agrees(const std::string& chunk)
{
    std::optional<adk::LlmResponse> fast(std::in_place);
    if (!adk::gemini::decode_text_chunk(chunk, true, *fast))
        fast.reset();
    std::optional<adk::LlmResponse> general;
    try {
        general = adk::gemini::decode_response(json::parse(chunk), true);
    } catch (const std::exception& e) {
        INFO("chunk: " << chunk << "\nthe general path failed: " << e.what());
        CHECK(!fast);  // what the general path rejects, the fast path must not accept
        return false;
    }
    if (fast)
        require_same(*fast, *general, chunk);
    return fast.has_value();
}

}  // namespace

TEST_CASE("gemini: text chunks decode without a JSON tree exactly as with one, from every recorded stream", "[gemini]")
{
    int decoded = 0;
    int declined = 0;
    for (const char* name : {"text_stream.sse", "usage_mid_stream.sse", "thinking_thought_parts.sse",
                             "firebase_utf8_multibyte.sse", "firebase_thinking_function_call_signature.sse",
                             "tool_call_thought_signature.sse", "tool_result_followup.sse",
                             "structured_output_turn1_function_call_id.sse", "structured_output_turn2_json.sse",
                             "vercel_tool_call_gemini3_signature.sse", "vercel_vertex_partial_args_two_calls.sse",
                             "firebase_error_mid_stream.sse"}) {
        adk::net::SseParser parser;
        std::vector<adk::net::SseEvent> events;
        parser.feed(fixture(std::string("providers/gemini/") + name), events);
        parser.finish(events);
        for (const auto& e : events) {
            (fast_path_agrees(e.data) ? decoded : declined)++;
            // The SSE parser's data is valid UTF-8: vouched for, it decodes as when checked.
            adk::LlmResponse checked;
            adk::LlmResponse trusted;
            const bool checked_ok = adk::gemini::decode_text_chunk(e.data, true, checked);
            const bool trusted_ok = adk::gemini::decode_text_chunk(e.data, true, trusted, adk::gemini::Utf8::valid);
            CHECK(checked_ok == trusted_ok);
            if (checked_ok && trusted_ok)
                require_same(trusted, checked, e.data);
        }
    }
    // Recorded text chunks (with usage details and service tier) take the fast path; function calls and
    // signatures do not.
    CHECK(decoded >= 20);
    CHECK(declined >= 5);
}

TEST_CASE("gemini: the text-chunk decoder checks UTF-8 unless its caller vouches for it", "[gemini]")
{
    const std::string bad = "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\xff\xfe b\"}]}}]}";
    adk::LlmResponse out;
    CHECK_FALSE(adk::gemini::decode_text_chunk(bad, true, out));  // and the JSON tree refuses it too
    // What the SSE parser hands over instead: the invalid bytes became U+FFFD, decoded without a second check.
    const std::string mended = adk::net::to_valid_utf8(bad);
    adk::LlmResponse trusted;
    REQUIRE(adk::gemini::decode_text_chunk(mended, true, trusted, adk::gemini::Utf8::valid));
    REQUIRE(trusted.content);
    REQUIRE(trusted.content->parts.size() == 1);
    CHECK(trusted.content->parts[0].text == "a\xef\xbf\xbd\xef\xbf\xbd b");
    CHECK(fast_path_agrees(mended));
}

TEST_CASE("gemini: the text-chunk decoder takes what it can decode exactly and declines the rest", "[gemini]")
{
    const std::string long_text = [] {
        std::string t;
        for (int i = 0; i < 3000; ++i)
            t += "line \\\"" + std::to_string(i) + "\\\"\\n";
        return t;
    }();
    // Decoded on the fast path, and the same as through the JSON tree.
    for (const std::string& chunk : std::vector<std::string>{
             R"({"candidates":[{"content":{"parts":[{"text":"w1 "}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":54,"candidatesTokenCount":1,"totalTokenCount":55},"modelVersion":"m","responseId":"r"})",
             R"({"candidates":[{"content":{"parts":[{"text":"esc \" \\ \/ \b\f\n\r\t \u00e9 \ud83d\ude00 ü"}],"role":"model"}}]})",
             R"({"candidates":[{"content":{"parts":[{"text":"thinking","thought":true},{"text":"answer","thought":false}],"role":"model"}}]})",
             R"({"candidates":[{"content":{"parts":[{"text":"done"}],"role":"model"},"finishReason":"STOP","index":0,"avgLogprobs":-0.5,"tokenCount":3}],"usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":2,"totalTokenCount":3,"thoughtsTokenCount":4,"cachedContentTokenCount":5,"promptTokensDetails":[{"modality":"TEXT","tokenCount":1}],"serviceTier":"standard","trafficType":null}})",
             R"({"createTime":"2025","sdkHttpResponse":{"headers":{"a":["b",null,1.5,true]},"n":[[],{}]},"candidates":[{"content":{"parts":[{"text":"x"}]}},{"content":null,"whatever":[1,{"functionCall":{}}]},7]})",
             R"({"candidates":[{"content":{"parts":[],"role":"model"}}]})",
             R"({"candidates":[{"content":{"role":"model"}}],"usageMetadata":{}})",
             R"({"candidates":[{"content":{"parts":[{"text":"x","videoMetadata":{"fps":2,"start":"1s"},"partMetadata":null}],"role":"model","extraField":[1,2]}}]})",
             R"({"candidates":[{"content":{"parts":[{"text":"x"}]},"groundingMetadata":{"webSearchQueries":["q"]},"citationMetadata":null,"safetyRatings":[{"category":"HARM","probability":"NEGLIGIBLE"}]}]})",
             R"({"candidates":[{"finish_reason":"STOP","content":{"parts":[{"text":"snake at the root is ignored by both"}]}}],"usage_metadata":{"x":1},"model_version":"v"})",
             R"({"candidates":[{"content":{"parts":[{"t\u0065xt":"an escaped key"}]}}],"modelVersion":"m\u00e9"})",
             R"({"candidates":[{"content":{"parts":[{"text":")" + long_text + R"("}]}}]})",
             R"(  {"candidates":[{"content":{"parts":[{"text":"spaces around"}]}}]}  )",
         }) {
        CHECK(fast_path_agrees(chunk));
    }

    // Declined: the general path decodes these (or rejects them with its own error).
    for (const std::string& chunk : std::vector<std::string>{
             R"({"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{}}}],"role":"model"}}]})",
             R"({"candidates":[{"content":{"parts":[{"text":"x","thoughtSignature":"AAEC"}]}}]})",
             R"({"candidates":[{"content":{"parts":[{"text":"x","thought_signature":"AAEC"}]}}]})",
             R"({"candidates":[{"content":{"parts":[{"text":null}]}}]})",
             R"({"candidates":[{"content":{"parts":[{"text":1}]}}]})",
             R"({"candidates":[{"content":{"parts":["text"]}}]})",
             R"({"candidates":[{"content":{"parts":{"text":"x"}}}]})",
             R"({"candidates":[{"content":"x"}]})",
             R"({"candidates":[{"content":{"parts":[{"text":"a","text":"b"}]}}]})",
             R"({"candidates":[{"content":{"parts":[{"text":"x","videoMetadata":1,"videoMetadata":2}]}}]})",
             R"({"candidates":[{"content":{"parts":[{"text":"x"}]},"finishReason":7}]})",
             R"({"candidates":[]})",
             R"({"candidates":{}})",
             R"({"candidates":["x"]})",
             R"({"candidates":[{"content":{"parts":[{"text":"x"}]}}],"usageMetadata":{"totalTokenCount":1.0}})",
             R"({"candidates":[{"content":{"parts":[{"text":"x"}]}}],"usageMetadata":{"total_token_count":3}})",
             R"({"candidates":[{"content":{"parts":[{"text":"x"}]}}],"usageMetadata":{"totalTokenCount":null}})",
             R"({"candidates":[{"content":{"parts":[{"text":"x"}]}}],"usageMetadata":[1]})",
             R"({"candidates":[{"content":{"parts":[{"text":"x"}]}}],"modelVersion":1})",
             R"({"usageMetadata":{"promptTokenCount":18446744073709551615},"candidates":[{}]})",
             R"({"error":{"code":429,"message":"slow down","status":"RESOURCE_EXHAUSTED"}})",
             R"({"promptFeedback":{"blockReason":"SAFETY"}})",
             R"({"candidates":[{"content":{"parts":[{"text":"x"}]},"groundingMetadata":{},"groundingMetadata":{}}]})",
             R"([{"candidates":[]}])",
             R"("text")",
             R"({"candidates":[{"content":{"parts":[{"text":"x"}]}}]} trailing)",
             R"({"candidates":[{"content":{"parts":[{"text":"unterminated)",
             R"({"candidates":[{"content":{"parts":[{"text":"bad utf-8 )" "\xff" R"("}]}}]})",
         }) {
        CHECK(!fast_path_agrees(chunk));
    }
}

TEST_CASE("gemini: the text-chunk decoder never disagrees with decode_response on damaged chunks", "[gemini]")
{
    // Recorded chunks, damaged at random (a fixed seed: the same cases every run): characters swapped for
    // JSON's own, spans cut out or doubled, known keys swapped for other known keys.
    std::vector<std::string> chunks;
    for (const char* name : {"usage_mid_stream.sse", "thinking_thought_parts.sse", "firebase_utf8_multibyte.sse"}) {
        adk::net::SseParser parser;
        std::vector<adk::net::SseEvent> events;
        parser.feed(fixture(std::string("providers/gemini/") + name), events);
        parser.finish(events);
        for (const auto& e : events)
            chunks.push_back(e.data);
    }
    REQUIRE(!chunks.empty());
    std::mt19937 random(7);
    auto pick = [&](std::size_t n) { return static_cast<std::size_t>(random() % n); };
    const std::string specials = "\"{}[],:n1.-e\\ \x01";
    const std::vector<std::pair<std::string, std::string>> keys = {
        {"\"text\"", "\"thought\""}, {"\"role\"", "\"parts\""}, {"\"candidates\"", "\"usageMetadata\""},
        {"\"content\"", "\"finishReason\""}, {"\"totalTokenCount\"", "\"total_token_count\""},
        {"\"modelVersion\"", "\"error\""}, {"\"parts\"", "\"extra\""}, {"\"index\"", "\"groundingMetadata\""}};
    int decoded = 0;
    for (int i = 0; i < 3000; ++i) {
        std::string chunk = chunks[pick(chunks.size())];
        switch (pick(4)) {
        case 0: chunk[pick(chunk.size())] = specials[pick(specials.size())]; break;
        case 1: chunk.erase(pick(chunk.size()), 1 + pick(8)); break;
        case 2: {
            const std::size_t at = pick(chunk.size());
            chunk.insert(at, chunk.substr(at, 1 + pick(16)));
            break;
        }
        default: {
            const auto& [from, to] = keys[pick(keys.size())];
            if (auto at = chunk.find(from); at != std::string::npos)
                chunk.replace(at, from.size(), to);
        }
        }
        if (fast_path_agrees(chunk))
            ++decoded;
    }
    CHECK(decoded > 100);  // some damage leaves a chunk the fast path takes
}
