// The OpenAI-compatible and Anthropic wire formats on the recorded fixtures: every stream decoded, the
// error bodies, and the request bodies built for a tool-result turn against the recorded requests.
#include <adk/core/error.hpp>
#include <adk/core/log.hpp>
#include <adk/net/sse_parser.hpp>
#include <adk/net/url.hpp>
#include <adk/providers/anthropic/anthropic.hpp>
#include <adk/providers/gemini/codec.hpp>
#include <adk/providers/gemini/gemini.hpp>
#include <adk/providers/make_model.hpp>
#include <adk/providers/openai/openai.hpp>

#include "support/run.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>

namespace json = boost::json;

namespace {

struct Decoded {
    std::string text;
    std::string thoughts;
    std::vector<adk::FunctionCall> calls;
    std::optional<adk::UsageMetadata> usage;
    std::optional<std::string> finish;
    std::optional<std::string> error_code;
    std::string error_message;
    std::size_t thought_signatures = 0;
    std::size_t redacted = 0;
    std::size_t responses = 0;
};

Decoded decode_stream(const adk::WireFormat& format, const std::string& body)
{
    adk::net::SseParser parser;
    std::vector<adk::net::SseEvent> events;
    parser.feed(body, events);
    parser.finish(events);
    auto decoder = format.stream_decoder({});
    std::vector<adk::LlmResponse> out;
    for (const auto& e : events)
        decoder->on_event(e, out);
    decoder->finish(parser.unparsed(), out);
    Decoded d;
    d.responses = out.size();
    for (const auto& r : out) {
        CHECK(r.partial);
        if (r.content)
            for (const auto& p : r.content->parts) {
                if (p.text && p.thought)
                    d.thoughts += *p.text;
                else if (p.text)
                    d.text += *p.text;
                if (p.function_call)
                    d.calls.push_back(*p.function_call);
                if (p.thought_signature)
                    ++d.thought_signatures;
                if (p.extra.contains(adk::anthropic::redacted_thinking_key))
                    ++d.redacted;
            }
        if (r.usage_metadata)
            d.usage = r.usage_metadata;
        if (r.finish_reason)
            d.finish = r.finish_reason;
        if (r.error_code) {
            d.error_code = r.error_code;
            d.error_message = r.error_message.value_or("");
        }
    }
    return d;
}

std::shared_ptr<const adk::WireFormat> openai_format()
{
    adk::openai::OpenAIOptions o;
    o.api_key = "k";
    return adk::openai::wire_format(o);
}

std::shared_ptr<const adk::WireFormat> anthropic_format()
{
    adk::anthropic::AnthropicOptions o;
    o.api_key = "k";
    return adk::anthropic::wire_format(o);
}

// The LlmRequest of the recorded tool-result turns: a question, the model's call, the tool's answer.
adk::LlmRequest tool_result_request(const std::string& model, const std::string& tool, json::object args,
                                    const std::string& id, json::object result)
{
    adk::LlmRequest r;
    r.model = model;
    r.contents.push_back(adk::Content::user("question"));
    r.contents.push_back(adk::Content("model", {adk::Part::from_function_call(tool, args, id)}));
    r.contents.push_back(adk::Content("user", {adk::Part::from_function_response(tool, result, id)}));
    r.tools.emplace_back(tool, "a tool", json::parse(R"({"type":"object","properties":{}})"));
    return r;
}

bool has_header(const adk::net::HttpRequest& r, std::string_view name, std::string_view value)
{
    for (const auto& [n, v] : r.headers)
        if (n == name && v == value)
            return true;
    return false;
}

}  // namespace

TEST_CASE("openai: text, usage and finish from a recorded stream", "[openai]")
{
    auto d = decode_stream(*openai_format(), adk::test::fixture("providers/openai_chat/text_stream_usage.sse"));
    CHECK(d.text == "The capital of Mexico is Mexico City.");
    CHECK(d.finish == "STOP");
    REQUIRE(d.usage);
    CHECK(d.usage->prompt_token_count == 14);
    CHECK(d.usage->candidates_token_count == 8);
    CHECK(d.calls.empty());
}

TEST_CASE("openai: tool_calls assembled by index from split arguments, parallel calls, empty arguments", "[openai]")
{
    auto single = decode_stream(*openai_format(), adk::test::fixture("providers/openai_chat/single_tool_call_args_split.sse"));
    REQUIRE(single.calls.size() == 1);
    CHECK(single.calls[0].name == "get_capital");
    CHECK(single.calls[0].args == json::object{{"country", "UK"}});
    CHECK(single.calls[0].id.rfind("call_", 0) == 0);

    auto parallel = decode_stream(*openai_format(), adk::test::fixture("providers/openai_chat/parallel_tool_calls_args_split.sse"));
    REQUIRE(parallel.calls.size() == 2);
    CHECK(parallel.calls[0].name == "get_weather");
    CHECK(parallel.calls[0].args == json::object{{"city", "Mexico City"}});
    CHECK(parallel.calls[1].name == "get_product_name");
    CHECK(parallel.calls[1].args.empty());
    CHECK(parallel.calls[0].id != parallel.calls[1].id);

    auto empty = decode_stream(*openai_format(), adk::test::fixture("providers/openai_chat/parallel_tool_calls_empty_args.sse"));
    REQUIRE(empty.calls.size() == 2);
    CHECK(empty.calls[0].name == "get_country");

    // Anthropic's compatible endpoint numbers the call 1 after a text part.
    auto index1 = decode_stream(*openai_format(), adk::test::fixture("providers/openai_chat/compat_anthropic_openai_endpoint_tool_index1.sse"));
    CHECK(index1.text == "Reading it.");
    REQUIRE(index1.calls.size() == 1);
    CHECK(index1.calls[0].name == "read_file");
    CHECK(index1.calls[0].args == json::object{{"path", "a.txt"}});
}

TEST_CASE("openai: reasoning fields of compatible servers become thought parts", "[openai]")
{
    auto deepseek = decode_stream(*openai_format(), adk::test::fixture("providers/openai_chat/compat_deepseek_reasoning_content.sse"));
    CHECK(deepseek.text == "Hello there! \xF0\x9F\x98\x8A How can I help you today?");
    CHECK(deepseek.thoughts.size() == 882);
    CHECK(deepseek.usage->candidates_token_count == 212);

    auto openrouter = decode_stream(*openai_format(), adk::test::fixture("providers/openai_chat/compat_openrouter_reasoning_comments.sse"));
    CHECK(openrouter.text == "2 + 2 = 4");
    CHECK(openrouter.thoughts.size() == 51);
}

TEST_CASE("openai: errors inside a 200 stream (Groq's event, OpenRouter's chunk) and error bodies", "[openai]")
{
    auto groq = decode_stream(*openai_format(), adk::test::fixture("providers/openai_chat/compat_groq_event_error_midstream.sse"));
    CHECK(groq.error_code == "tool_use_failed");
    CHECK_THAT(groq.error_message, Catch::Contains("Tool call validation failed"));

    auto openrouter = decode_stream(*openai_format(), adk::test::fixture("providers/openai_chat/compat_openrouter_comments_error_chunk.sse"));
    CHECK(openrouter.error_code == "400");
    CHECK(openrouter.error_message == "Token limit reached");

    auto format = openai_format();
    auto not_found = format->decode_error(404, adk::test::fixture("providers/openai_chat/error_404_model_not_found.json"));
    CHECK(not_found.error_code == "model_not_found");
    CHECK_THAT(not_found.error_message.value_or(""), Catch::Contains("does not exist"));
    auto rate = format->decode_error(429, adk::test::fixture("providers/openai_chat/compat_openrouter_error_429.json"));
    CHECK(rate.error_code == "429");
    auto html = format->decode_error(502, "<html>Bad Gateway</html>");
    CHECK(html.error_code == "HTTP_502");
    CHECK_THAT(html.error_message.value_or(""), Catch::Contains("Bad Gateway"));
}

TEST_CASE("openai: whole responses, structured output and Ollama's", "[openai]")
{
    auto format = openai_format();
    auto structured = format->decode(adk::test::fixture("providers/openai_chat/structured_output_json_schema_nonstream.json"));
    REQUIRE(structured.content);
    CHECK_FALSE(structured.partial);
    CHECK(json::parse(structured.content->text()).is_object());
    CHECK(structured.usage_metadata.has_value());

    auto ollama = format->decode(adk::test::fixture("providers/ollama/openai_compat_retry_then_tool_call_nonstream.json"));
    REQUIRE(ollama.content);
    bool has_call = false;
    for (const auto& p : ollama.content->parts)
        has_call = has_call || p.function_call.has_value();
    CHECK(has_call);
}

TEST_CASE("openai: the request body of a tool-result turn has the recorded shape", "[openai]")
{
    const json::value recorded = json::parse(adk::test::fixture("providers/openai_chat/tool_result_followup_text.request.json"));
    auto request = tool_result_request("gpt-4o-mini", "get_capital", {{"country", "UK"}}, "call_ZR5UUuTt3pf61kjwAJIYdVMj",
                                       {{"result", "London"}});
    adk::openai::OpenAIOptions o;
    o.api_key = "sk-test";
    auto http = adk::openai::wire_format(o)->encode(request, true);
    CHECK(http.url == "https://api.openai.com/v1/chat/completions");
    const json::value body = json::parse(http.body);
    CHECK(body.at("stream") == recorded.at("stream"));
    CHECK(body.at("stream_options") == recorded.at("stream_options"));
    const auto& ours = body.at("messages").as_array();
    const auto& theirs = recorded.at("messages").as_array();
    REQUIRE(ours.size() == theirs.size());
    for (std::size_t i = 0; i < ours.size(); ++i)
        CHECK(ours[i].at("role") == theirs[i].at("role"));
    CHECK(ours[1].at("content").is_null());
    CHECK(ours[1].at("tool_calls").at(0).at("id") == theirs[1].at("tool_calls").at(0).at("id"));
    CHECK(ours[1].at("tool_calls").at(0).at("function").at("arguments") ==
          theirs[1].at("tool_calls").at(0).at("function").at("arguments"));
    CHECK(ours[2].at("tool_call_id") == theirs[2].at("tool_call_id"));
    CHECK(body.at("tools").at(0).at("type") == "function");
    CHECK(body.at("tools").at(0).at("function").at("name") == "get_capital");
    CHECK(has_header(http, "authorization", "Bearer sk-test"));
}

TEST_CASE("anthropic: text, tool use with input_json_delta, usage, stop reason", "[anthropic]")
{
    auto text = decode_stream(*anthropic_format(), adk::test::fixture("providers/anthropic/text_stream.sse"));
    CHECK(text.text == "2");
    CHECK(text.finish == "STOP");
    CHECK(text.usage->prompt_token_count == 20);
    CHECK(text.usage->candidates_token_count == 5);

    auto tool = decode_stream(*anthropic_format(), adk::test::fixture("providers/anthropic/single_tool_use.sse"));
    REQUIRE(tool.calls.size() == 1);
    CHECK(tool.calls[0].name == "get_weather");
    CHECK(tool.calls[0].args == json::object{{"location", "San Francisco, CA"}, {"units", "f"}});
    CHECK(tool.calls[0].id.rfind("toolu_", 0) == 0);
    CHECK(tool.usage->candidates_token_count == 74);

    auto padded = decode_stream(*anthropic_format(), adk::test::fixture("providers/anthropic/structured_output_json_schema_padded.sse"));
    CHECK(padded.text == "[12345,67890]");

    auto followup = decode_stream(*anthropic_format(), adk::test::fixture("providers/anthropic/tool_result_followup_text.sse"));
    CHECK(followup.text.size() == 118);  // 117 characters, the degree sign takes two bytes
    CHECK_THAT(followup.text, Catch::Contains("\xC2\xB0"));  // the degree sign arrives whole
}

TEST_CASE("anthropic: thinking with its signature, and redacted thinking kept to send back", "[anthropic]")
{
    auto thinking = decode_stream(*anthropic_format(), adk::test::fixture("providers/anthropic/thinking_signature_delta.sse"));
    CHECK(thinking.thoughts.size() == 202);
    CHECK(thinking.thought_signatures == 1);
    CHECK(thinking.text.size() == 1021);

    auto redacted = decode_stream(*anthropic_format(), adk::test::fixture("providers/anthropic/thinking_redacted.sse"));
    CHECK(redacted.redacted == 2);
    CHECK(redacted.text.size() == 359);
}

TEST_CASE("anthropic: error bodies and parallel tool use in a whole response", "[anthropic]")
{
    auto format = anthropic_format();
    auto rate = format->decode_error(429, adk::test::fixture("providers/anthropic/error_429_rate_limit.json"));
    CHECK(rate.error_code == "rate_limit_error");
    CHECK_THAT(rate.error_message.value_or(""), Catch::Contains("rate limit"));
    auto orphan = format->decode_error(400, adk::test::fixture("providers/anthropic/error_400_orphan_tool_result.json"));
    CHECK(orphan.error_code == "invalid_request_error");

    auto whole = format->decode(adk::test::fixture("providers/anthropic/parallel_tool_use_nonstream.json"));
    REQUIRE(whole.content);
    std::size_t calls = 0;
    for (const auto& p : whole.content->parts)
        calls += p.function_call ? 1 : 0;
    CHECK(calls == 4);  // text, then four tool_use blocks
    CHECK(whole.finish_reason == "STOP");
}

TEST_CASE("anthropic: the request body of a tool-result turn has the recorded shape", "[anthropic]")
{
    const json::value recorded = json::parse(adk::test::fixture("providers/anthropic/tool_result_followup_text.request.json"));
    auto request = tool_result_request("claude-haiku-4-5", "get_weather", {{"location", "San Francisco, CA"}, {"units", "f"}},
                                       "toolu_018acGYLtfR52q9yDbWaEdQZ", {{"condition", "Sunny"}});
    request.system_instruction = adk::Content("user", {adk::Part::from_text("Be brief.")});
    auto http = anthropic_format()->encode(request, true);
    CHECK(http.url == "https://api.anthropic.com/v1/messages");
    const json::value body = json::parse(http.body);
    CHECK(body.at("max_tokens").is_number());
    CHECK(body.at("system") == "Be brief.");
    CHECK(body.at("stream") == true);
    const auto& ours = body.at("messages").as_array();
    const auto& theirs = recorded.at("messages").as_array();
    REQUIRE(ours.size() == theirs.size());
    for (std::size_t i = 0; i < ours.size(); ++i)
        CHECK(ours[i].at("role") == theirs[i].at("role"));
    const auto& use = ours[1].at("content").at(0);
    CHECK(use.at("type") == "tool_use");
    CHECK(use.at("id") == theirs[1].at("content").at(0).at("id"));
    CHECK(use.at("input") == theirs[1].at("content").at(0).at("input"));
    const auto& result = ours[2].at("content").at(0);
    CHECK(result.at("type") == "tool_result");
    CHECK(result.at("tool_use_id") == theirs[2].at("content").at(0).at("tool_use_id"));
    CHECK(body.at("tools").at(0).at("input_schema").at("type") == "object");
    CHECK(has_header(http, "anthropic-version", "2023-06-01"));
}

TEST_CASE("make_model: ids as users write them, and missing keys named", "[providers]")
{
    ::setenv("GEMINI_API_KEY", "g", 1);
    ::setenv("OPENAI_API_KEY", "o", 1);
    ::setenv("ANTHROPIC_API_KEY", "a", 1);
    CHECK(adk::make_model("gemini-2.5-flash")->name() == "gemini-2.5-flash");
    CHECK(adk::make_model("gemini/gemini-2.5-pro")->name() == "gemini-2.5-pro");
    CHECK(adk::make_model("openai/gpt-4o-mini")->name() == "gpt-4o-mini");
    CHECK(adk::make_model("gpt-4o")->name() == "gpt-4o");
    CHECK(adk::make_model("anthropic/claude-sonnet-4-5")->name() == "claude-sonnet-4-5");
    CHECK(adk::make_model("ollama/llama3.2")->name() == "llama3.2");
    ::unsetenv("GEMINI_API_KEY");
    ::unsetenv("OPENAI_API_KEY");
    ::unsetenv("ANTHROPIC_API_KEY");
    ::unsetenv("GOOGLE_API_KEY");

    auto message_of = [](std::string_view id) {
        try {
            adk::make_model(id);
        } catch (const adk::Error& e) {
            return e.message();
        }
        return std::string("no error");
    };
    CHECK_THAT(message_of("gemini-2.5-flash"), Catch::Contains("GEMINI_API_KEY"));
    CHECK_THAT(message_of("openai/gpt-4o"), Catch::Contains("OPENAI_API_KEY"));
    CHECK_THAT(message_of("anthropic/claude-sonnet-4-5"), Catch::Contains("ANTHROPIC_API_KEY"));
    CHECK_THAT(message_of("groq/llama-3.3-70b"), Catch::Contains("GROQ_API_KEY"));
    CHECK_THAT(message_of("mistral-large"), Catch::Contains("no provider for the model id 'mistral-large'"));
    CHECK(adk::make_model("ollama/qwen3")->name() == "qwen3");  // a local server needs no key
}

TEST_CASE("gemini: Google AI and Vertex AI endpoints, keys, and RetryInfo as the retry hint", "[gemini]")
{
    adk::gemini::GeminiOptions google;
    google.api_key = "AIza-test";
    adk::LlmRequest request;
    request.contents.push_back(adk::Content::user("hi"));
    auto streamed = adk::gemini::wire_format(google)->encode(request, true);
    CHECK(streamed.url ==
          "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
    auto unary = adk::gemini::wire_format(google)->encode(request, false);
    CHECK(unary.url == "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent");
    CHECK(has_header(streamed, "x-goog-api-key", "AIza-test"));
    REQUIRE(streamed.retry_hint);
    auto hint = streamed.retry_hint(adk::test::fixture("providers/gemini/vercel_error_429_retry_info.json"));
    REQUIRE(hint);
    CHECK(hint->count() > 0);
    CHECK_FALSE(streamed.retry_hint("not json"));
    // Delays no server means (a day and more, negative, beyond any clock) are no hint, and never overflow.
    auto body_with = [](const std::string& delay) {
        return R"({"error":{"code":429,"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":")" +
               delay + R"("}]}})";
    };
    CHECK(streamed.retry_hint(body_with("34.4s")) == std::chrono::milliseconds(34400));
    for (const char* bad : {"86401s", "-5s", "1e30s", "1e400s", "nans", "infs", "s", "12", "0x10s", "3.5 s"}) {
        INFO(bad);
        CHECK_FALSE(streamed.retry_hint(body_with(bad)));
    }

    adk::gemini::GeminiOptions vertex;
    vertex.vertex = true;
    vertex.project = "my-project";
    vertex.location = "europe-west4";
    vertex.access_token = "ya29.token";
    request.model = "gemini-2.5-pro";
    auto v = adk::gemini::wire_format(vertex)->encode(request, true);
    CHECK(v.url == "https://europe-west4-aiplatform.googleapis.com/v1beta1/projects/my-project/locations/europe-west4/"
                   "publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse");
    // A model id is data: percent-encoded into its path segment, it cannot split the request or climb the path.
    request.model = "x\r\nX-Smuggled: 1/../../admin";
    auto smuggled = adk::gemini::wire_format(google)->encode(request, true);
    CHECK(smuggled.url == "https://generativelanguage.googleapis.com/v1beta/models/"
                          "x%0D%0AX-Smuggled%3A%201%2F..%2F..%2Fadmin:streamGenerateContent?alt=sse");
    CHECK_NOTHROW(adk::net::parse_url(smuggled.url));
    CHECK(has_header(v, "authorization", "Bearer ya29.token"));

    adk::gemini::GeminiOptions no_token;
    no_token.vertex = true;
    no_token.project = "p";
    ::unsetenv("GOOGLE_OAUTH_ACCESS_TOKEN");
    CHECK_THROWS_WITH(adk::gemini::wire_format(no_token), Catch::Contains("GOOGLE_OAUTH_ACCESS_TOKEN"));
}

TEST_CASE("every recorded error body of each provider keeps the provider's code and message", "[providers]")
{
    struct Case {
        std::shared_ptr<const adk::WireFormat> format;
        std::string file;
        std::string code_key;  // where the provider puts its code inside "error"
    };
    adk::gemini::GeminiOptions g;
    g.api_key = "k";
    auto gemini = adk::gemini::wire_format(g);
    const std::vector<Case> cases = {
        {gemini, "gemini/error_404_unknown_model.json", "status"},
        {gemini, "gemini/firebase_error_400_api_key.json", "status"},
        {gemini, "gemini/firebase_error_429_quota_exceeded.json", "status"},
        {gemini, "gemini/vercel_error_429_retry_info.json", "status"},
        {openai_format(), "openai_chat/error_400_unsupported_system_role.json", "code"},
        {openai_format(), "openai_chat/error_404_model_not_found.json", "code"},
        {openai_format(), "openai_chat/compat_openrouter_error_429.json", "code"},
        {anthropic_format(), "anthropic/error_400_invalid_request.json", "type"},
        {anthropic_format(), "anthropic/error_400_orphan_tool_result.json", "type"},
        {anthropic_format(), "anthropic/error_404_not_found.json", "type"},
        {anthropic_format(), "anthropic/error_429_rate_limit.json", "type"},
    };
    for (const auto& c : cases) {
        INFO(c.file);
        const std::string body = adk::test::fixture("providers/" + c.file);
        const json::value parsed = json::parse(body);
        const json::object& error = parsed.at("error").as_object();
        auto r = c.format->decode_error(400, body);
        const json::value& code = error.at(c.code_key);
        CHECK(r.error_code == (code.is_string() ? std::string(code.get_string()) : json::serialize(code)));
        CHECK(r.error_message == std::string(error.at("message").get_string()));
        CHECK_FALSE(r.content.has_value());
    }
}

TEST_CASE("openai: Ollama's whole answers, with reasoning as thoughts", "[openai]")
{
    for (const char* file : {"openai_compat_local_json_schema_nonstream.json", "openai_compat_retry_then_tool_call_nonstream.json",
                             "openai_compat_text_reasoning_tool_ignored_nonstream.json"}) {
        INFO(file);
        const std::string body = adk::test::fixture(std::string("providers/ollama/") + file);
        const json::value parsed = json::parse(body);
        const json::object& message = parsed.at("choices").at(0).at("message").as_object();
        auto r = openai_format()->decode(body);
        REQUIRE(r.content);
        CHECK(r.finish_reason == "STOP");
        CHECK(r.usage_metadata.has_value());
        std::string text, thoughts;
        std::size_t calls = 0;
        for (const auto& p : r.content->parts) {
            (p.thought ? thoughts : text) += p.text.value_or("");
            calls += p.function_call ? 1 : 0;
        }
        CHECK(text == std::string(message.at("content").get_string()));
        if (message.contains("reasoning"))
            CHECK(thoughts == std::string(message.at("reasoning").get_string()));
        CHECK(calls == (message.contains("tool_calls") ? message.at("tool_calls").as_array().size() : 0));
    }
}

namespace {

// The message of the adk::Error that decoding `body` with `format` throws, or "".
std::string decoding_failure(const adk::WireFormat& format, const std::string& body, const adk::ResponseLimits& limits)
{
    adk::net::SseParser parser;
    std::vector<adk::net::SseEvent> events;
    parser.feed(body, events);
    parser.finish(events);
    auto decoder = format.stream_decoder(limits);
    std::vector<adk::LlmResponse> out;
    try {
        for (const auto& e : events)
            decoder->on_event(e, out);
        decoder->finish(parser.unparsed(), out);
    } catch (const adk::Error& e) {
        CHECK(e.code() == adk::errc::bad_response);
        return e.message();
    }
    return "";
}

}  // namespace

TEST_CASE("openai and anthropic: what a streamed answer assembles is bounded (ResponseLimits)", "[openai][anthropic]")
{
    adk::ResponseLimits limits;
    limits.max_answer_bytes = 10'000;
    limits.max_function_calls = 8;

    // OpenAI: argument fragments that never end, and calls at ever new indexes.
    auto fragments_of = [](int n) {
        std::string out;
        for (int i = 0; i < n; ++i)
            out += R"(data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":")" +
                   std::string(100, 'a') + "\"}}]}}]}\n\n";
        return out;
    };
    CHECK_THAT(decoding_failure(*openai_format(), fragments_of(200), limits),
               Catch::Contains("tool call arguments over 10000 bytes") && Catch::Contains("max_answer_bytes"));
    std::string indexes;
    for (int i = 0; i < 20; ++i)
        indexes += R"(data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":)" + std::to_string(i * 1000) +
                   R"(,"id":"c","function":{"name":"f","arguments":"{}"}}]}}]})" "\n\n";
    CHECK_THAT(decoding_failure(*openai_format(), indexes, limits), Catch::Contains("more than 8 tool calls"));
    // Under the limits the same shapes decode.
    CHECK_THAT(decoding_failure(*openai_format(), fragments_of(50), limits),
               Catch::Contains("arguments of the call") && Catch::Contains("are not a JSON object"));

    // Anthropic: input_json_delta fragments of one tool_use block that never stops.
    std::string input = "event: content_block_start\ndata: "
                        R"({"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"f","input":{}}})"
                        "\n\n";
    for (int i = 0; i < 200; ++i)
        input += "event: content_block_delta\ndata: "
                 R"({"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":")" +
                 std::string(100, 'b') + "\"}}\n\n";
    CHECK_THAT(decoding_failure(*anthropic_format(), input, limits),
               Catch::Contains("tool input over 10000 bytes"));
}

TEST_CASE("openai, anthropic and gemini: malformed chunks are bad_response naming the provider", "[providers]")
{
    adk::ResponseLimits limits;
    CHECK_THAT(decoding_failure(*openai_format(), "data: {\"choices\":[42]}\n\n", limits),
               Catch::Contains("OpenAI-compatible server sent a choice that is not a JSON object"));
    CHECK_THAT(decoding_failure(*openai_format(),
                                R"(data: {"choices":[{"delta":{"tool_calls":["x"]}}]})"
                                "\n\n",
                                limits),
               Catch::Contains("a tool call delta that is not a JSON object"));
    CHECK_THAT(decoding_failure(*anthropic_format(), "data: {\"type\":\"content_block_delta\"}\n\n", limits),
               Catch::Contains("Anthropic sent a content_block_delta event without its \"delta\""));
    CHECK_THAT(decoding_failure(*anthropic_format(),
                                R"(data: {"type":"content_block_start","content_block":[]})"
                                "\n\n",
                                limits),
               Catch::Contains("Anthropic sent a content_block that is not a JSON object"));
    adk::gemini::GeminiOptions google;
    google.api_key = "k";
    auto gemini = adk::gemini::wire_format(google);
    CHECK_THAT(decoding_failure(*gemini, "data: {\"candidates\":[7]}\n\n", limits),
               Catch::Contains("Gemini sent a candidate that is not a JSON object"));
    CHECK_THAT(decoding_failure(*gemini, R"(data: {"candidates":[{"content":{"parts":"x"}}]})"
                                         "\n\n",
                                limits),
               Catch::Contains("Gemini sent a response that does not fit its format") && Catch::Contains("parts"));
    // Counts that are no counts (a fraction, a negative, beyond 2^63) are dropped, not thrown as Boost errors.
    CHECK(decoding_failure(*openai_format(),
                           R"(data: {"choices":[],"usage":{"prompt_tokens":1.5,"completion_tokens":-3,"total_tokens":18446744073709551615}})"
                           "\n\n",
                           limits)
              .empty());
}

TEST_CASE("anthropic: usage near the largest count does not overflow the total", "[anthropic]")
{
    const std::string body =
        "event: message_start\ndata: "
        R"({"type":"message_start","message":{"model":"m","usage":{"input_tokens":9223372036854775807,"output_tokens":1}}})"
        "\n\nevent: message_delta\ndata: "
        R"({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":9223372036854775807}})"
        "\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    Decoded d = decode_stream(*anthropic_format(), body);
    REQUIRE(d.usage);
    CHECK(d.usage->total_token_count == INT64_MAX);
    CHECK(d.usage->prompt_token_count == INT64_MAX);
}

TEST_CASE("code execution on the wire: Gemini gets its codeExecution tool, the others warn once and leave code out", "[openai][anthropic]")
{
    adk::LlmRequest request;
    request.model = "m";
    request.code_execution = true;
    request.tools.emplace_back("get_weather", "Weather.", json::parse(R"({"type":"object"})"));
    adk::Part code, result;
    code.executable_code = adk::ExecutableCode("PYTHON", "print(1)");
    result.code_execution_result = adk::CodeExecutionResult("OUTCOME_OK", "1\n");
    request.contents = {adk::Content::user("run it"),
                        adk::Content("model", {adk::Part::from_text("Running."), code, result}),
                        adk::Content::user("thanks")};

    const json::object gemini = adk::gemini::encode_request(request);
    REQUIRE(gemini.at("tools").as_array().size() == 2);
    CHECK(gemini.at("tools").at(0).at("functionDeclarations").at(0).at("name") == "get_weather");
    CHECK(gemini.at("tools").at(1) == json::parse(R"({"codeExecution": {}})"));
    CHECK(gemini.at("contents").at(1).at("parts").at(1).at("executableCode").at("code") == "print(1)");
    CHECK(gemini.at("contents").at(1).at("parts").at(2).at("codeExecutionResult").at("output") == "1\n");

    std::vector<std::string> warnings;
    adk::set_log_handler([&warnings](adk::LogLevel level, std::string_view m) {
        if (level == adk::LogLevel::warning)
            warnings.emplace_back(m);
    });
    adk::openai::OpenAIOptions oo;
    oo.api_key = "sk-test";
    adk::anthropic::AnthropicOptions ao;
    ao.api_key = "test";
    const json::value openai_body = json::parse(adk::openai::wire_format(oo)->encode(request, false).body);
    const json::value anthropic_body = json::parse(adk::anthropic::wire_format(ao)->encode(request, false).body);
    adk::openai::wire_format(oo)->encode(request, false);  // a second request: no second warning
    adk::set_log_handler(nullptr);
    for (const json::value* body : {&openai_body, &anthropic_body}) {
        const std::string text = json::serialize(*body);
        CHECK(text.find("print(1)") == std::string::npos);
        CHECK(text.find("codeExecution") == std::string::npos);
        CHECK(text.find("Running.") != std::string::npos);
    }
    // One warning each: no other test of this program sends code to them.
    CHECK(warnings.size() == 2);
    for (const auto& w : warnings)
        CHECK_THAT(w, Catch::Contains("has no code execution of its own") && Catch::Contains("SandboxedCodeExecutor"));
}
