// LlmAgent end to end over HTTPS against tools/mock-llm, in each provider's wire format: a tool call, a
// streamed answer, errors as events, cancellation mid-stream, and a recorded stream replayed in pieces.
#include <adk/adk.hpp>
#include <adk/providers/gemini/codec.hpp>
#include <adk/providers/gemini/gemini.hpp>
#include <adk/providers/anthropic/anthropic.hpp>
#include <adk/providers/openai/openai.hpp>

#include "support/agents.hpp"
#include "support/manual_time.hpp"
#include "support/mock_llm.hpp"
#include "support/run.hpp"
#include "support/tls.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

namespace asio = boost::asio;
namespace json = boost::json;
using namespace std::chrono_literals;
using adk::LlmAgent;
using adk::test::MockLlm;
using adk::test::run;

namespace {

using MakeModel = std::function<std::shared_ptr<adk::Model>(const std::string& base_url,
                                                              std::shared_ptr<adk::net::HttpClient> http)>;

struct Provider {
    std::string name;
    MakeModel make;
};

std::vector<Provider> providers()
{
    return {
        {"gemini",
         [](const std::string& base_url, std::shared_ptr<adk::net::HttpClient> http) {
             adk::gemini::GeminiOptions o;
             o.api_key = "test-key";
             o.base_url = base_url;
             o.http = std::move(http);
             return adk::gemini::make_model(o);
         }},
        {"openai",
         [](const std::string& base_url, std::shared_ptr<adk::net::HttpClient> http) {
             adk::openai::OpenAIOptions o;
             o.api_key = "test-key";
             o.base_url = base_url + "/v1";
             o.http = std::move(http);
             return adk::openai::make_model(o);
         }},
        {"anthropic",
         [](const std::string& base_url, std::shared_ptr<adk::net::HttpClient> http) {
             adk::anthropic::AnthropicOptions o;
             o.api_key = "test-key";
             o.base_url = base_url;
             o.http = std::move(http);
             return adk::anthropic::make_model(o);
         }},
    };
}

// A client that trusts the test certificate.
std::shared_ptr<adk::net::HttpClient> trusting_client()
{
    adk::net::HttpClientOptions o;
    o.ca_file = adk::test::test_certificate().cert_file;
    o.retry.initial_backoff = 10ms;
    return std::make_shared<adk::net::HttpClient>(o);
}

adk::mock_llm::ServerOptions tls_script(const std::string& script)
{
    adk::mock_llm::ServerOptions o;
    o.tls = true;
    o.cert_file = adk::test::test_certificate().cert_file;
    o.key_file = adk::test::test_certificate().key_file;
    o.script = json::parse(script);
    return o;
}

std::string localhost_url(const MockLlm& mock)
{
    std::string url = mock.base_url();
    return url.replace(url.find("127.0.0.1"), 9, "localhost");
}

std::shared_ptr<adk::FunctionTool> e2e_weather_tool()
{
    return adk::FunctionTool::create(
        "get_weather", "Returns the weather for a city.",
        json::parse(R"({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]})"),
        [](adk::ToolContext&, json::object args) -> asio::awaitable<json::value> {
            co_return json::object{{"city", args.at("city")}, {"sky", "sunny"}};
        });
}

adk::RunConfig streaming()
{
    adk::RunConfig c;
    c.streaming_mode = adk::StreamingMode::sse;
    return c;
}

}  // namespace

TEST_CASE("providers: a tool call, then a streamed answer, over HTTPS", "[provider][threads]")
{
    for (const auto& provider : providers()) {
        DYNAMIC_SECTION(provider.name)
        {
            MockLlm mock(tls_script(R"({"turns": [
                {"function_calls": [{"name": "get_weather", "args": {"city": "Paris"}}]},
                {"chunks": ["It is ", "sunny ", "in Paris."]}]})"));
            auto model = provider.make(localhost_url(mock), trusting_client());
            auto agent = LlmAgent::builder("weather").model(model).instruction("Answer about the weather.")
                             .tool(e2e_weather_tool()).build();
            adk::test::Harness h;
            auto events = h.send(agent, "Weather in Paris?", streaming());

            std::vector<std::string> partial_texts;
            const adk::Event* final_event = nullptr;
            const adk::FunctionCall* call = nullptr;
            for (const auto& e : events) {
                if (e.partial && !e.text().empty())
                    partial_texts.push_back(e.text());
                else if (e.is_final_response())
                    final_event = &e;
                if (!e.partial && e.content && !e.content->parts.empty() && e.content->parts[0].function_call)
                    call = &*e.content->parts[0].function_call;
            }
            REQUIRE(call);
            CHECK(call->name == "get_weather");
            CHECK(call->args.at("city") == "Paris");
            CHECK(partial_texts == std::vector<std::string>{"It is ", "sunny ", "in Paris."});
            REQUIRE(final_event);
            CHECK(final_event->text() == "It is sunny in Paris.");
            CHECK(final_event->author == "weather");
            CHECK(final_event->usage_metadata.has_value());
            CHECK(final_event->model_version.has_value());  // each provider's response names its model

            const auto requests = mock.server().requests();
            REQUIRE(requests.size() == 2);
            // The second request carries the call and the tool's answer back.
            CHECK_THAT(requests[1].body, Catch::Contains("get_weather"));
            CHECK_THAT(requests[1].body, Catch::Contains("sunny"));
            CHECK_THAT(requests[0].body, Catch::Contains("Answer about the weather."));
            if (provider.name == "gemini") {
                CHECK(requests[0].target == "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
                CHECK(requests[0].header("x-goog-api-key") == "test-key");
            } else if (provider.name == "openai") {
                CHECK(requests[0].target == "/v1/chat/completions");
                CHECK(requests[0].header("authorization") == "Bearer test-key");
            } else {
                CHECK(requests[0].target == "/v1/messages");
                CHECK(requests[0].header("x-api-key") == "test-key");
                CHECK(requests[0].header("anthropic-version") == "2023-06-01");
            }
        }
    }
}

TEST_CASE("providers: HTTP errors and errors inside a 200 stream become error events", "[provider]")
{
    for (const auto& provider : providers()) {
        DYNAMIC_SECTION(provider.name)
        {
            MockLlm mock(tls_script(R"({"turns": [{"error": {"status": 400, "message": "bad tool schema"}}]})"));
            auto agent = LlmAgent::builder("a").model(provider.make(localhost_url(mock), trusting_client())).build();
            adk::test::Harness h;
            auto events = h.send(agent, "hi", streaming());
            REQUIRE(events.size() == 1);
            CHECK(events[0].error_code.has_value());
            CHECK_THAT(events[0].error_message.value_or(""), Catch::Contains("bad tool schema"));

            MockLlm broken(tls_script(R"({"turns": [{"chunks": ["Hel", "lo"], "stream_error": "overloaded now"}]})"));
            auto agent2 = LlmAgent::builder("a").model(provider.make(localhost_url(broken), trusting_client())).build();
            auto events2 = h.send(agent2, "hi", streaming(), "s2");
            REQUIRE_FALSE(events2.empty());
            CHECK(events2.back().error_code.has_value());
            CHECK_THAT(events2.back().error_message.value_or(""), Catch::Contains("overloaded now"));
        }
    }
}

TEST_CASE("providers: cancelling mid-stream closes the socket and ends the agent's stream promptly", "[provider][threads]")
{
    for (const auto& provider : providers()) {
        DYNAMIC_SECTION(provider.name)
        {
            auto options = tls_script(R"({"turns": [{"chunks": ["word "], "repeat": 100000}]})");
            options.chunk_delay = 2ms;  // 200 s for the whole answer
            MockLlm mock(options);
            auto agent = LlmAgent::builder("a").model(provider.make(localhost_url(mock), trusting_client())).build();
            asio::io_context ioc;
            auto sessions = std::make_shared<adk::InMemorySessionService>();
            adk::Runner runner({.app_name = "app", .agent = agent, .session_service = sessions});
            std::size_t partials = 0;
            std::string ended;
            std::chrono::steady_clock::duration cancel_to_end{};
            std::size_t open_before = 0;
            run(ioc, [&]() -> asio::awaitable<void> {
                co_await sessions->create_session({"app", "user1", "s"});
                auto stream = co_await runner.run("user1", "s", adk::Content::user("talk"), streaming());
                while (partials < 5) {
                    auto e = co_await stream.next();
                    if (e && e->partial)
                        ++partials;
                }
                open_before = mock.server().open_connections();
                const auto start = std::chrono::steady_clock::now();
                stream.cancel();
                try {
                    while (co_await stream.next()) {
                    }
                    ended = "end";
                } catch (const adk::Error& e) {
                    ended = e.message();
                }
                cancel_to_end = std::chrono::steady_clock::now() - start;
            }());  // run() also checks that nothing was left running on the client side
            CHECK(partials == 5);
            CHECK(open_before == 1);
            CHECK(ended == "end");
            CHECK(cancel_to_end < 1s);
            // The server sees the socket closed at its next write.
            for (int i = 0; i < 100 && mock.server().open_connections() > 0; ++i)
                std::this_thread::sleep_for(10ms);
            CHECK(mock.server().open_connections() == 0);
        }
    }
}

TEST_CASE("gemini: a recorded stream replayed in 5-byte pieces decodes as the codec decodes it whole", "[provider]")
{
    const std::string body = adk::test::fixture("providers/gemini/usage_mid_stream.sse");
    adk::mock_llm::ServerOptions options;
    options.replay_body = body;
    options.split_bytes = 5;
    MockLlm mock(options);
    adk::gemini::GeminiOptions go;
    go.base_url = mock.base_url();
    auto model = adk::gemini::make_model(go);
    asio::io_context ioc;
    std::string text;
    std::optional<adk::UsageMetadata> usage;
    std::optional<std::string> finish;
    run(ioc, [&]() -> asio::awaitable<void> {
        adk::LlmRequest request;
        request.contents.push_back(adk::Content::user("hi"));
        auto stream = co_await model->generate(request, true);
        while (auto r = co_await stream.next()) {
            CHECK(r->partial);
            if (r->content)
                text += r->content->text();
            if (r->usage_metadata)
                usage = r->usage_metadata;
            if (r->finish_reason)
                finish = r->finish_reason;
        }
    }());
    // What the codec makes of the same body parsed whole.
    std::string expected_text;
    for (std::size_t at = 0; (at = body.find("data: ", at)) != std::string::npos; at += 6) {
        const auto end = body.find("\r\n", at);
        auto r = adk::gemini::decode_response(json::parse(body.substr(at + 6, end - at - 6)), true);
        if (r.content)
            expected_text += r.content->text();
    }
    CHECK(!expected_text.empty());
    CHECK(text == expected_text);
    CHECK(finish == "STOP");
    REQUIRE(usage);
    CHECK(usage->candidates_token_count.value_or(0) > 0);
}

TEST_CASE("providers: whole (unary) answers, and a 429 with Retry-After retried", "[provider]")
{
    for (const auto& provider : providers()) {
        DYNAMIC_SECTION(provider.name)
        {
            auto options = tls_script(R"({"turns": [{"chunks": ["It is ", "sunny."]}]})");
            options.status = 429;
            options.retry_after = "0.02";
            options.status_times = 1;
            MockLlm mock(options);
            auto model = provider.make(localhost_url(mock), trusting_client());
            asio::io_context ioc;
            std::vector<adk::LlmResponse> responses;
            run(ioc, [&]() -> asio::awaitable<void> {
                adk::LlmRequest request;
                request.contents.push_back(adk::Content::user("Weather?"));
                auto stream = co_await model->generate(request, false);
                while (auto r = co_await stream.next())
                    responses.push_back(std::move(*r));
            }());
            REQUIRE(responses.size() == 1);
            CHECK_FALSE(responses[0].partial);
            CHECK_FALSE(responses[0].error_code.has_value());
            REQUIRE(responses[0].content);
            CHECK(responses[0].content->text() == "It is sunny.");
            CHECK(responses[0].usage_metadata.has_value());
            CHECK(responses[0].finish_reason == "STOP");
            CHECK(mock.server().requests().size() == 2);  // the 429, then the answer
        }
    }
}

TEST_CASE("gemini: a bare JSON error in the middle of a 200 stream ends the answer as an error", "[provider]")
{
    adk::mock_llm::ServerOptions options;
    options.replay_body = adk::test::fixture("providers/gemini/firebase_error_mid_stream.sse");
    MockLlm mock(options);
    adk::gemini::GeminiOptions go;
    go.base_url = mock.base_url();
    auto agent = LlmAgent::builder("a").model(adk::gemini::make_model(go)).build();
    adk::test::Harness h;
    auto events = h.send(agent, "hi", streaming());
    REQUIRE_FALSE(events.empty());
    std::string streamed;
    for (const auto& e : events)
        if (e.partial)
            streamed += e.text();
    CHECK(streamed == "First Second ");
    CHECK(events.back().error_code == "CANCELLED");
    CHECK(events.back().error_message == "The operation was cancelled.");
}

TEST_CASE("providers: Stream::cancel while another coroutine awaits the model's next() aborts the read", "[provider]")
{
    // The audit's crash: cancel() destroyed the HTTP response while the reader was suspended in it.
    adk::testing::ManualClock clock;
    for (const auto& provider : providers()) {
        DYNAMIC_SECTION(provider.name)
        {
            auto options = tls_script(R"({"turns": [{"chunks": ["one ", "two "]}]})");
            options.chunk_delay = 1min;  // between frames (the client's idle timeout is 5)
            MockLlm mock(options);
            auto model = provider.make(localhost_url(mock), trusting_client());
            asio::io_context ioc;
            bool second_done = false;
            std::optional<adk::LlmResponse> second;
            std::chrono::steady_clock::duration cancel_to_end{};
            run(ioc, [&]() -> asio::awaitable<void> {
                adk::LlmRequest request;
                request.contents.push_back(adk::Content::user("talk"));
                auto stream = co_await model->generate(std::move(request), true);
                std::optional<adk::LlmResponse> first;
                // The first text chunk (OpenAI and Anthropic start with frames of metadata, a minute apart on the
                // clock, which moves until then); the next comes a minute after it, on the clock that stands still.
                auto first_text = [&]() -> asio::awaitable<void> {
                    while (!first || !first->content)
                        first = co_await stream.next();
                };
                co_await adk::test::passing_time(clock, 2s, first_text());  // 30 turns short of the next
                CHECK(first->content->text() == "one ");
                auto reader = [&]() -> asio::awaitable<void> {
                    second = co_await stream.next();
                    second_done = true;
                };
                auto ex = co_await asio::this_coro::executor;
                asio::co_spawn(ex, reader, asio::detached);
                co_await asio::post(ex, asio::use_awaitable);  // the reader ran into its read, posted before this
                CHECK(!second_done);
                asio::steady_timer t(ex);
                const auto start = std::chrono::steady_clock::now();
                stream.cancel();
                while (!second_done) {
                    t.expires_after(1ms);
                    co_await t.async_wait(asio::use_awaitable);
                }
                cancel_to_end = std::chrono::steady_clock::now() - start;
            }());
            CHECK(second_done);
            CHECK(!second);
            CHECK(cancel_to_end < 250ms);
        }
    }
}

TEST_CASE("providers: a stream that never sends a newline fails with bad_response, memory bounded", "[provider]")
{
    adk::mock_llm::ServerOptions options;
    options.replay_body = "data: " + std::string(4 << 20, 'x');  // 4 MiB, no line end
    MockLlm mock(options);
    adk::gemini::GeminiOptions o;
    o.api_key = "k";
    o.base_url = mock.base_url();
    o.limits.max_event_bytes = 64 << 10;
    auto model = adk::gemini::make_model(o);
    asio::io_context ioc;
    std::string failure;
    std::size_t delivered = 0;
    run(ioc, [&]() -> asio::awaitable<void> {
        adk::LlmRequest request;
        request.contents.push_back(adk::Content::user("talk"));
        auto stream = co_await model->generate(std::move(request), true);
        try {
            while (co_await stream.next())
                ++delivered;
        } catch (const adk::Error& e) {
            CHECK(e.code() == adk::errc::bad_response);
            failure = e.message();
        }
    }());
    CHECK(delivered == 0);
    CHECK_THAT(failure, Catch::Contains("an SSE event over 65536 bytes") &&
                            Catch::Contains("ResponseLimits::max_event_bytes"));
    // It stopped reading once over the limit: most of the 4 MiB were never read.
    CHECK(mock.server().body_bytes_written() < std::size_t{4} << 20);
}
