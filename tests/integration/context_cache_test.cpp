// Context caching over the wire: Gemini's cachedContents against mock-llm (made, named, reused, replaced after
// cache_intervals requests, deleted by Runner::close), and Anthropic's cache_control breakpoints and cached counts.
#include <adk/adk.hpp>
#include <adk/providers/anthropic/anthropic.hpp>
#include <adk/providers/gemini/gemini.hpp>
#include <adk/providers/openai/openai.hpp>
#include <adk/testing/manual_clock.hpp>

#include "support/mock_llm.hpp"
#include "support/run.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

class Chat {
public:
    explicit Chat(std::optional<adk::ContextCacheConfig> cache)
        : mock([] {
              adk::mock_llm::ServerOptions o;
              o.script = json::parse(R"({"turns": [{"text": "one"}, {"text": "two"}, {"text": "three"},
                                                   {"text": "four"}, {"text": "five"}]})");
              return o;
          }())
    {
        adk::gemini::GeminiOptions go;
        go.base_url = mock.base_url();
        go.api_key = "test";
        go.model = "gemini-2.5-flash";
        auto agent = adk::LlmAgent::builder("cached")
                         .model(adk::gemini::make_model(go))
                         .instruction("You answer in one word. " + std::string(4000, 'x'))
                         .build();
        runner = std::make_unique<adk::Runner>(adk::RunnerOptions{
            .app_name = "app", .agent = agent, .session_service = sessions, .context_cache = cache});
    }

    // Sends `text`; the model's answer event.
    adk::Event send(const std::string& text)
    {
        return adk::test::run(ioc, [&]() -> asio::awaitable<adk::Event> {
            if (!created) {
                adk::CreateSessionRequest create("app", "u", "s");
                co_await sessions->create_session(std::move(create));
                created = true;
            }
            adk::Content message = adk::Content::user(text);
            auto stream = co_await runner->run("u", "s", std::move(message));
            std::optional<adk::Event> last;
            while (auto ev = co_await stream.next())
                last = std::move(*ev);
            co_return std::move(*last);
        }());
    }

    // The generate requests mock-llm received, and the others (cachedContents routes), by method and path.
    std::vector<json::object> generates()
    {
        std::vector<json::object> out;
        for (const auto& r : mock.server().requests())
            if (r.target.find(":generateContent") != std::string::npos ||
                r.target.find(":streamGenerateContent") != std::string::npos)
                out.push_back(json::parse(r.body).as_object());
        return out;
    }
    std::vector<std::string> cache_calls()
    {
        std::vector<std::string> out;
        for (const auto& r : mock.server().requests())
            if (r.target.find("cachedContents") != std::string::npos)
                out.push_back(r.method + " " + r.target.substr(0, r.target.find('?')));
        return out;
    }

    asio::io_context ioc;
    adk::test::MockLlm mock;
    std::shared_ptr<adk::InMemorySessionService> sessions = std::make_shared<adk::InMemorySessionService>();
    std::unique_ptr<adk::Runner> runner;
    bool created = false;
};

}  // namespace

TEST_CASE("context cache, Gemini: the request's start goes into a cachedContents that later requests name", "[context_cache]")
{
    adk::ContextCacheConfig config;
    config.cache_intervals = 3;
    Chat chat(config);
    std::vector<std::string> answers;
    std::vector<std::int64_t> cached;
    for (const char* text : {"a", "b", "c", "d", "e"}) {
        adk::Event answer = chat.send(text);
        answers.push_back(answer.content ? answer.content->text() : "");
        REQUIRE(answer.usage_metadata);
        cached.push_back(answer.usage_metadata->cached_content_token_count.value_or(0));
    }
    // The script's turns in order: mock-llm counted the model turns of the cache and of the request together.
    CHECK(answers == std::vector<std::string>{"one", "two", "three", "four", "five"});
    const std::vector<json::object> sent = chat.generates();
    REQUIRE(sent.size() == 5);
    for (const auto& body : sent) {
        CHECK(body.contains("cachedContent"));
        CHECK_FALSE(body.contains("systemInstruction"));  // it is in the cache
    }
    // Requests 1-3 name the first cache (the instruction alone; all contents sent), 4-5 the second (the
    // instruction and the six contents before turn 4).
    CHECK(sent[0].at("cachedContent") == "cachedContents/1");
    CHECK(sent[2].at("cachedContent") == "cachedContents/1");
    CHECK(sent[2].at("contents").as_array().size() == 5);
    CHECK(sent[3].at("cachedContent") == "cachedContents/2");
    CHECK(sent[3].at("contents").as_array().size() == 1);
    CHECK(sent[4].at("contents").as_array().size() == 3);
    CHECK(chat.cache_calls() == std::vector<std::string>{"POST /v1beta/cachedContents",
                                                         "DELETE /v1beta/cachedContents/1",
                                                         "POST /v1beta/cachedContents"});
    for (std::int64_t n : cached)
        CHECK(n > 1000);  // the 4,000-byte instruction, at least, came from the cache
    CHECK(cached[4] > cached[0]);
    // The app stops: its caches are deleted.
    CHECK(chat.mock.server().cached_contents() == 1);
    adk::test::run(chat.ioc, chat.runner->close());
    CHECK(chat.mock.server().cached_contents() == 0);
    CHECK(chat.cache_calls().back() == "DELETE /v1beta/cachedContents/2");
}

TEST_CASE("context cache, Gemini: a request under min_tokens, or without a cache config, is sent whole", "[context_cache]")
{
    adk::ContextCacheConfig config;
    config.min_tokens = 1'000'000;
    for (std::optional<adk::ContextCacheConfig> c : {std::optional(config), std::optional<adk::ContextCacheConfig>()}) {
        Chat chat(c);
        adk::Event answer = chat.send("a");
        CHECK(answer.content->text() == "one");
        CHECK_FALSE(answer.usage_metadata->cached_content_token_count);
        const std::vector<json::object> sent = chat.generates();
        REQUIRE(sent.size() == 1);
        CHECK_FALSE(sent[0].contains("cachedContent"));
        CHECK(sent[0].contains("systemInstruction"));
        CHECK(chat.cache_calls().empty());
    }
}

TEST_CASE("context cache, Gemini: mock-llm refuses what Gemini refuses", "[context_cache]")
{
    adk::mock_llm::ServerOptions o;
    o.script = json::parse(R"({"turns": [{"text": "ok"}]})");
    adk::test::MockLlm mock(o);
    asio::io_context ioc;
    auto http = adk::net::default_http_client();
    auto send = [&](std::string method, std::string path, std::string body) {
        adk::net::HttpRequest r(std::move(method), mock.base_url() + path);
        r.set("content-type", "application/json");
        r.body = std::move(body);
        return adk::test::run(ioc, [&]() -> asio::awaitable<std::pair<unsigned, std::string>> {
            adk::net::HttpResponse response = co_await http->send(std::move(r));
            std::string text = co_await response.read_all();
            co_return std::pair(response.status(), std::move(text));
        }());
    };
    const auto made = send("POST", "/v1beta/cachedContents",
                           R"({"model": "models/m", "ttl": "60s", "contents": [{"role": "user", "parts": [{"text": "hi"}]}]})");
    CHECK(made.first == 200);
    const std::string name(json::parse(made.second).at("name").as_string());
    CHECK(send("GET", "/v1beta/" + name, "").first == 200);
    CHECK(send("PATCH", "/v1beta/" + name + "?updateMask=ttl", R"({"ttl": "120s"})").first == 200);
    // Naming a cache and setting a system instruction is refused; an unknown cache is not found.
    CHECK(send("POST", "/v1beta/models/m:generateContent",
               R"({"cachedContent": ")" + name + R"(", "systemInstruction": {"parts": [{"text": "x"}]}, "contents": []})")
              .first == 400);
    CHECK(send("POST", "/v1beta/models/m:generateContent", R"({"cachedContent": "cachedContents/999", "contents": []})")
              .first == 404);
    CHECK(send("POST", "/v1beta/cachedContents", R"({"model": "models/m", "ttl": "forever"})").first == 400);
    CHECK(send("DELETE", "/v1beta/" + name, "").first == 200);
    CHECK(send("GET", "/v1beta/" + name, "").first == 404);
}

TEST_CASE("context cache, Anthropic: cache_control breakpoints on the system prompt, the tools and the history", "[context_cache][anthropic]")
{
    adk::LlmRequest request;
    request.model = "claude-sonnet-4-5";
    request.cache_config = adk::ContextCacheConfig();
    request.append_instruction("Be brief.");
    request.tools.emplace_back("get_weather", "Weather.", json::parse(R"({"type":"object"})"));
    request.tools.emplace_back("get_time", "Time.", json::parse(R"({"type":"object"})"));
    request.contents = {adk::Content::user("hi"), adk::Content::model("hello"), adk::Content::user("weather?")};
    adk::anthropic::AnthropicOptions ao;
    ao.api_key = "test";
    const json::value body = json::parse(adk::anthropic::wire_format(ao)->encode(request, false).body);
    const json::value ephemeral = json::parse(R"({"type": "ephemeral"})");
    CHECK(body.at("system") == json::parse(R"([{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}])"));
    CHECK_FALSE(body.at("tools").at(0).as_object().contains("cache_control"));
    CHECK(body.at("tools").at(1).at("cache_control") == ephemeral);
    CHECK(body.at("messages").at(2).at("content").at(0).at("cache_control") == ephemeral);
    CHECK_FALSE(body.at("messages").at(0).at("content").at(0).as_object().contains("cache_control"));

    request.cache_config.reset();
    const json::value plain = json::parse(adk::anthropic::wire_format(ao)->encode(request, false).body);
    CHECK(plain.at("system") == "Be brief.");
    CHECK(json::serialize(plain).find("cache_control") == std::string::npos);

    // What it read from the cache counts in the prompt, and as cached.
    const adk::LlmResponse answer = adk::anthropic::wire_format(ao)->decode(R"({"id": "m", "type": "message",
        "role": "assistant", "content": [{"type": "text", "text": "Sunny."}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 12, "cache_read_input_tokens": 2000, "cache_creation_input_tokens": 30,
                  "output_tokens": 3}})");
    REQUIRE(answer.usage_metadata);
    CHECK(answer.usage_metadata->prompt_token_count == 2042);
    CHECK(answer.usage_metadata->cached_content_token_count == 2000);
    CHECK(answer.usage_metadata->total_token_count == 2045);
}

TEST_CASE("context cache, OpenAI: its automatic cache is reported as cachedContentTokenCount", "[context_cache][openai]")
{
    adk::openai::OpenAIOptions oo;
    oo.api_key = "sk-test";
    const adk::LlmResponse answer = adk::openai::wire_format(oo)->decode(R"({"id": "c", "object": "chat.completion",
        "model": "gpt-4o-mini", "choices": [{"index": 0, "message": {"role": "assistant", "content": "Sunny."},
        "finish_reason": "stop"}], "usage": {"prompt_tokens": 2006, "completion_tokens": 3, "total_tokens": 2009,
        "prompt_tokens_details": {"cached_tokens": 1920}}})");
    REQUIRE(answer.usage_metadata);
    CHECK(answer.usage_metadata->prompt_token_count == 2006);
    CHECK(answer.usage_metadata->cached_content_token_count == 1920);
}

TEST_CASE("context cache, Gemini: a cache in use is refreshed past half its TTL, and made anew near its end",
          "[context_cache]")
{
    adk::testing::ManualClock clock;  // the runtime's time, moved by the test (mock-llm keeps the real one)
    adk::ContextCacheConfig config;
    config.ttl_seconds = 600;
    config.cache_intervals = 10;
    Chat chat(config);
    using std::chrono::seconds;
    chat.send("a");  // made: 600 s left
    clock.advance(seconds(200));
    chat.send("b");  // 400 s left: used as it is
    CHECK(chat.cache_calls() == std::vector<std::string>{"POST /v1beta/cachedContents"});
    clock.advance(seconds(150));
    chat.send("c");  // 250 s left, under half: its TTL is set again, 600 s from now
    CHECK(chat.cache_calls() == std::vector<std::string>{"POST /v1beta/cachedContents",
                                                         "PATCH /v1beta/cachedContents/1"});
    clock.advance(seconds(450));
    chat.send("d");  // 150 s left: refreshed again
    clock.advance(seconds(570));
    chat.send("e");  // 30 s left, within the last minute: a request naming it could fail, so it is made anew
    CHECK(chat.cache_calls() == std::vector<std::string>{"POST /v1beta/cachedContents",
                                                         "PATCH /v1beta/cachedContents/1",
                                                         "PATCH /v1beta/cachedContents/1",
                                                         "DELETE /v1beta/cachedContents/1",
                                                         "POST /v1beta/cachedContents"});
    const std::vector<json::object> sent = chat.generates();
    REQUIRE(sent.size() == 5);
    CHECK(sent[3].at("cachedContent") == "cachedContents/1");
    CHECK(sent[4].at("cachedContent") == "cachedContents/2");
    adk::test::run(chat.ioc, chat.runner->close());
}
