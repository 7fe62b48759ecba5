// LlmAgent: the builder, the request it builds, the model and tool loop, streaming, callbacks, limits.
#include <adk/adk.hpp>

#include "support/agents.hpp"
#include "support/run.hpp"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <catch2/catch.hpp>

namespace asio = boost::asio;
namespace json = boost::json;
using namespace std::chrono_literals;
using adk::LlmAgent;
using adk::test::run;
using adk::LlmResponse;
using adk::testing::ScriptedModel;
using Turns = std::vector<ScriptedModel::Turn>;

namespace {

std::shared_ptr<adk::FunctionTool> weather_tool(int* calls = nullptr)
{
    return adk::FunctionTool::create(
        "get_weather", "Returns the weather for a city.",
        json::parse(R"({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]})"),
        [calls](adk::ToolContext& ctx, json::object args) -> asio::awaitable<json::value> {
            if (calls)
                ++*calls;
            ctx.set_state("last_city", args.at("city"));
            co_return json::object{{"city", args.at("city")}, {"sky", "sunny"}};
        });
}

std::shared_ptr<ScriptedModel> scripted(Turns turns)
{
    return std::make_shared<ScriptedModel>(std::move(turns));
}

// A model that calls get_weather n times in a row.
std::shared_ptr<ScriptedModel> calling_weather(int n)
{
    Turns turns;
    for (int i = 0; i < n; ++i)
        turns.push_back(LlmResponse::function_call("get_weather", {{"city", "Rome"}}));
    return scripted(std::move(turns));
}

std::string error_of(const std::function<void()>& f)
{
    try {
        f();
    } catch (const adk::Error& e) {
        return e.message();
    }
    return "no error";
}

// A tool that waits for an hour, recording whether it was aborted.
std::shared_ptr<adk::FunctionTool> slow_tool(std::shared_ptr<int> aborted)
{
    return adk::FunctionTool::create("slow", "Takes an hour.", json::value(),
                                     [aborted](adk::ToolContext&, json::object) -> asio::awaitable<json::value> {
                                         asio::steady_timer t(co_await asio::this_coro::executor, 1h);
                                         try {
                                             co_await t.async_wait(asio::use_awaitable);
                                         } catch (const boost::system::system_error&) {
                                             *aborted = 1;
                                             throw;
                                         }
                                         co_return nullptr;
                                     });
}

}  // namespace

TEST_CASE("the builder refuses an incomplete or inconsistent agent with a clear error", "[llm]")
{
    auto model = scripted({});
    CHECK_THAT(error_of([&] { LlmAgent::builder("a").build(); }), Catch::Contains("no model"));
    CHECK_THAT(error_of([&] { LlmAgent::builder("").model(model).build(); }), Catch::Contains("not an identifier"));
    CHECK_THAT(error_of([&] { LlmAgent::builder("bad name").model(model).build(); }), Catch::Contains("not an identifier"));
    CHECK_THAT(error_of([&] { LlmAgent::builder("a").model(model).max_iterations(0).build(); }),
               Catch::Contains("max_iterations"));
    CHECK_THAT(error_of([&] { LlmAgent::builder("a").model(model).output_key("a/b").build(); }),
               Catch::Contains("path separator"));
    CHECK_THAT(error_of([&] { LlmAgent::builder("a").model(model).tool(weather_tool()).tool(weather_tool()).build(); }),
               Catch::Contains("two tools are named 'get_weather'"));
    CHECK_THAT(error_of([&] { LlmAgent::builder("a").model(model).output_schema(json::value("x")).build(); }),
               Catch::Contains("output_schema"));
    auto agent = LlmAgent::builder("a").description("d").model(model).build();
    CHECK(agent->name() == "a");
    CHECK(agent->description() == "d");
    CHECK(agent->config().max_iterations == 16);
    CHECK(adk::default_model_id == "gemini-2.5-flash");
}

TEST_CASE("the request: system instruction, identity, tools, config, schema, history", "[llm]")
{
    adk::test::Harness h;
    auto model = scripted({LlmResponse::text("first"), LlmResponse::text("second")});
    adk::GenerateContentConfig gen;
    gen.temperature = 0.25;
    gen.top_p = 0.9;
    gen.top_k = 20;
    gen.max_output_tokens = 256;
    gen.stop_sequences = {"END"};
    gen.thinking_config.emplace();
    gen.thinking_config->include_thoughts = true;
    gen.safety_settings.push_back(json::object{{"category", "HARM_CATEGORY_HATE_SPEECH"}, {"threshold", "BLOCK_NONE"}});
    json::value schema = json::parse(R"({"type":"object","properties":{"sky":{"type":"string"}}})");
    auto agent = LlmAgent::builder("forecaster")
                     .description("Forecasts weather.")
                     .model(model)
                     .global_instruction("Be brief.")
                     .instruction("Answer about {city?}.")
                     .generate_content_config(gen)
                     .tool(weather_tool())
                     .output_schema(schema)
                     .build();
    h.send(agent, "hello");
    h.send(agent, "again");

    auto requests = model->requests();
    REQUIRE(requests.size() == 2);
    const adk::LlmRequest& r = requests[1];
    CHECK(r.model == "scripted-model");
    CHECK(r.system_text() == "Be brief.\n\nAnswer about .\n\nYou are an agent. Your internal name is \"forecaster\"."
                             " The description about you is \"Forecasts weather.\".");
    REQUIRE(r.tools.size() == 1);
    CHECK(r.tools[0].name == "get_weather");
    CHECK(r.tools[0].parameters.at("required").at(0) == "city");
    CHECK(r.config.temperature == 0.25);
    CHECK(r.config.top_k == 20);
    CHECK(r.config.max_output_tokens == 256);
    CHECK(r.config.stop_sequences == std::vector<std::string>{"END"});
    CHECK(r.config.thinking_config->include_thoughts == true);
    CHECK(r.config.safety_settings.size() == 1);
    CHECK(r.config.response_schema == schema);
    CHECK(r.config.response_mime_type == "application/json");
    REQUIRE(r.contents.size() == 3);  // hello, first, again
    CHECK(r.contents[0].role == "user");
    CHECK(r.contents[0].text() == "hello");
    CHECK(r.contents[1].role == "model");
    CHECK(r.contents[1].text() == "first");
    CHECK(r.contents[2].text() == "again");
}

TEST_CASE("instructions: templated from state, a provider bypasses templating, static stays byte-identical", "[llm]")
{
    adk::test::Harness h;
    auto model = scripted({LlmResponse::text("a"), LlmResponse::text("b"), LlmResponse::text("c")});
    auto templated = LlmAgent::builder("t").model(model).instruction("City: {user:city}. Literal {\"k\": 1}.").build();
    run(h.ioc, [&]() -> asio::awaitable<void> {
        json::object state{{"user:city", "Lyon"}};
        co_await h.sessions->create_session({"app", "user1", "s", std::move(state)});
    }());
    h.send(templated, "x");
    CHECK(model->requests()[0].system_text().rfind("City: Lyon. Literal {\"k\": 1}.", 0) == 0);

    auto provided = LlmAgent::builder("p")
                        .model(model)
                        .instruction_provider([](adk::ReadonlyContext& ctx) -> asio::awaitable<std::string> {
                            co_return "Raw {user:city} for " + ctx.agent_name();
                        })
                        .build();
    h.send(provided, "y");
    CHECK(model->requests()[1].system_text().rfind("Raw {user:city} for p", 0) == 0);

    auto static_model = scripted({LlmResponse::text("1"), LlmResponse::text("2")});
    auto cached = LlmAgent::builder("cached")
                      .model(static_model)
                      .static_instruction("You are a {careful} assistant.")
                      .instruction("Turn for {user:city}.")
                      .build();
    h.send(cached, "first", {}, "s2");
    run(h.ioc, [&]() -> asio::awaitable<void> {
        auto s = co_await h.sessions->get_session({"app", "user1", "s2"});
        adk::Event change("user", adk::Content());
        change.content.reset();
        change.actions.state_delta["user:city"] = "Nice";
        co_await h.sessions->append_event(*s, change);
    }());
    h.send(cached, "second", {}, "s2");
    auto reqs = static_model->requests();
    REQUIRE(reqs.size() == 2);
    CHECK(reqs[0].system_instruction == reqs[1].system_instruction);  // identical, turn after turn
    CHECK(reqs[0].system_text().rfind("You are a {careful} assistant.", 0) == 0);  // never templated
    CHECK(reqs[0].contents.back().text() == "Turn for Lyon.");  // the dynamic part rides in the contents
    CHECK(reqs[1].contents.back().text() == "Turn for Nice.");
    CHECK(reqs[1].contents.back().role == "user");

    auto strict = LlmAgent::builder("strict").model(scripted({})).instruction("Hi {missing}").build();
    CHECK_THAT(error_of([&] { h.send(strict, "z"); }), Catch::Contains("`missing`"));
}

TEST_CASE("the loop: a function call, the tool, the response, then the answer", "[llm]")
{
    adk::test::Harness h;
    int calls = 0;
    auto model = scripted({LlmResponse::function_call("get_weather", {{"city", "Paris"}}),
                           LlmResponse::text("It is sunny in Paris.")});
    auto agent = LlmAgent::builder("weather").model(model).tool(weather_tool(&calls)).output_key("answer").build();
    auto events = h.send(agent, "Weather in Paris?");

    REQUIRE(events.size() == 3);
    const adk::FunctionCall& call = events[0].content->parts.at(0).function_call.value();
    CHECK(events[0].author == "weather");
    CHECK(call.id.rfind("adk-", 0) == 0);  // the model gave none
    CHECK(!events[0].is_final_response());
    const adk::FunctionResponse& response = events[1].content->parts.at(0).function_response.value();
    CHECK(events[1].content->role == "user");
    CHECK(response.id == call.id);
    CHECK(response.response.at("sky") == "sunny");
    CHECK(events[1].actions.state_delta.at("last_city") == "Paris");  // the tool's state change rides here
    CHECK(events[2].text() == "It is sunny in Paris.");
    CHECK(events[2].is_final_response());
    CHECK(events[2].actions.state_delta.at("answer") == "It is sunny in Paris.");
    CHECK(calls == 1);

    auto second = model->requests().at(1);
    REQUIRE(second.contents.size() == 3);
    CHECK(second.contents[1].parts[0].function_call->id.empty());  // adk- ids are not sent to the model
    CHECK(second.contents[2].parts[0].function_response->response.at("city") == "Paris");

    run(h.ioc, [&]() -> asio::awaitable<void> {
        auto s = co_await h.sessions->get_session({"app", "user1", "s"});
        CHECK(s->events.size() == 4);
        CHECK(s->state.at("answer") == "It is sunny in Paris.");
        CHECK(s->state.at("last_city") == "Paris");
    }());
}

TEST_CASE("output_schema: the answer's JSON is stored, and an answer that does not fit is an error", "[llm]")
{
    adk::test::Harness h;
    json::value schema = json::parse(R"({"type":"object","properties":{"sky":{"type":"string"}},"required":["sky"]})");
    auto good = LlmAgent::builder("json_agent")
                    .model(scripted({LlmResponse::text(R"({"sky": "clear"})")}))
                    .output_schema(schema)
                    .output_key("report")
                    .build();
    auto events = h.send(good, "report");
    CHECK(events.back().actions.state_delta.at("report") == json::parse(R"({"sky": "clear"})"));

    auto bad = LlmAgent::builder("json_agent")
                   .model(scripted({LlmResponse::text("not json at all")}))
                   .output_schema(schema)
                   .output_key("report")
                   .build();
    CHECK_THAT(error_of([&] { h.send(bad, "report", {}, "s2"); }), Catch::Contains("does not fit") && Catch::Contains("not JSON"));
    auto wrong = LlmAgent::builder("json_agent")
                     .model(scripted({LlmResponse::text(R"({"rain": 1})")}))
                     .output_schema(schema)
                     .output_key("report")
                     .build();
    CHECK_THAT(error_of([&] { h.send(wrong, "report", {}, "s3"); }), Catch::Contains("'sky' is required"));
}

TEST_CASE("output_key skips thoughts, and include_contents none sends only the current turn", "[llm]")
{
    adk::test::Harness h;
    LlmResponse thinking(adk::Content("model", {adk::Part::from_thought("hmm"), adk::Part::from_text("42")}));
    auto model = scripted({thinking, LlmResponse::text("second answer")});
    auto agent = LlmAgent::builder("solo").model(model).output_key("out").include_contents(adk::IncludeContents::none).build();
    auto first = h.send(agent, "q1");
    CHECK(first.back().actions.state_delta.at("out") == "42");
    h.send(agent, "q2");
    auto second = model->requests().at(1);
    REQUIRE(second.contents.size() == 1);
    CHECK(second.contents[0].text() == "q2");
}

TEST_CASE("max_iterations ends a looping agent with a MAX_ITERATIONS event", "[llm]")
{
    adk::test::Harness h;
    auto model = calling_weather(3);
    auto agent = LlmAgent::builder("looper").model(model).tool(weather_tool()).max_iterations(3).build();
    auto events = h.send(agent, "loop");
    REQUIRE(events.size() == 7);
    CHECK(events.back().error_code == "MAX_ITERATIONS");
    CHECK_THAT(*events.back().error_message, Catch::Contains("3 model calls"));
    CHECK(model->requests().size() == 3);
}

TEST_CASE("RunConfig::max_llm_calls ends the invocation with an error", "[llm]")
{
    adk::test::Harness h;
    auto model = calling_weather(5);
    auto agent = LlmAgent::builder("looper").model(model).tool(weather_tool()).build();
    adk::RunConfig config;
    config.max_llm_calls = 2;
    CHECK_THAT(error_of([&] { h.send(agent, "loop", config); }), Catch::Contains("max_llm_calls (2"));
    CHECK(model->requests().size() == 2);
}

TEST_CASE("streaming: chunks become partial events, the final event joins them", "[llm]")
{
    adk::test::Harness h;
    std::vector<LlmResponse> chunks;
    chunks.push_back(LlmResponse(adk::Content("model", {adk::Part::from_thought("Let me think. ")})));
    chunks.push_back(LlmResponse(adk::Content("model", {adk::Part::from_thought("Done.")})));
    chunks.push_back(LlmResponse::text("It is "));
    chunks.push_back(LlmResponse::text("sunny "));
    LlmResponse last = LlmResponse::text("in Paris.");
    last.usage_metadata.emplace();
    last.usage_metadata->total_token_count = 42;
    chunks.push_back(last);
    auto model = scripted({ScriptedModel::Turn::streamed(chunks)});
    auto agent = LlmAgent::builder("streamer").model(model).output_key("said").build();
    adk::RunConfig sse;
    sse.streaming_mode = adk::StreamingMode::sse;
    auto events = h.send(agent, "stream", sse);

    REQUIRE(events.size() == 6);
    for (int i = 0; i < 5; ++i) {
        CHECK(events[i].partial);
        CHECK(events[i].id == events[5].id);  // one id for the deltas and the whole, as ADK does
        CHECK(events[i].invocation_id == events[5].invocation_id);
        CHECK(events[i].author == "streamer");
        CHECK(events[i].timestamp == events[0].timestamp);  // the model call's start: one answer to a run's log
    }
    CHECK(events[5].timestamp >= events[0].timestamp);  // the whole: when it was whole
    CHECK(events[2].text() == "It is ");
    const adk::Event& final = events[5];
    CHECK(!final.partial);
    REQUIRE(final.content->parts.size() == 2);
    CHECK(final.content->parts[0].thought);
    CHECK(*final.content->parts[0].text == "Let me think. Done.");
    CHECK(final.text() == "It is sunny in Paris.");
    CHECK(final.usage_metadata->total_token_count == 42);
    CHECK(final.finish_reason == "STOP");
    CHECK(final.actions.state_delta.at("said") == "It is sunny in Paris.");  // never from partials
    run(h.ioc, [&]() -> asio::awaitable<void> {
        auto s = co_await h.sessions->get_session({"app", "user1", "s"});
        CHECK(s->events.size() == 2);  // partial events are not stored
    }());

    // The same script without streaming: one whole event.
    auto plain = scripted({ScriptedModel::chunks({"It is ", "sunny."})});
    auto quiet = LlmAgent::builder("quiet").model(plain).build();
    auto whole = h.send(quiet, "no stream", {}, "s2");
    REQUIRE(whole.size() == 1);
    CHECK(whole[0].text() == "It is sunny.");
}

TEST_CASE("streaming: the final event keeps the last usage a chunk gave, whole, and the latest model version", "[llm]")
{
    auto usage = [](std::int64_t candidates, std::optional<std::int64_t> total, json::object extra) {
        adk::UsageMetadata u;
        u.prompt_token_count = 5;
        u.candidates_token_count = candidates;
        u.total_token_count = total;
        u.extra = std::move(extra);
        return u;
    };
    auto chunk = [](std::string text, std::optional<adk::UsageMetadata> u, std::optional<std::string> version) {
        LlmResponse r = LlmResponse::text(std::move(text));
        r.usage_metadata = std::move(u);
        r.model_version = std::move(version);
        return r;
    };
    auto final_of = [](std::vector<LlmResponse> chunks) {
        adk::test::Harness h;
        auto model = scripted({ScriptedModel::Turn::streamed(std::move(chunks))});
        auto agent = LlmAgent::builder("streamer").model(model).build();
        adk::RunConfig sse;
        sse.streaming_mode = adk::StreamingMode::sse;
        auto events = h.send(agent, "stream", sse);
        REQUIRE(!events.empty());
        REQUIRE(!events.back().partial);
        return events.back();
    };

    // Members of the usage that a later chunk's usage does not have are gone; chunks without usage or version
    // leave the last ones.
    const adk::UsageMetadata second = usage(2, 7, {});
    adk::Event whole = final_of({chunk("a", usage(1, std::nullopt, {{"promptTokensDetails", json::array{1}}}), "v1"),
                                 chunk("b", second, "v1"), chunk("c", std::nullopt, "v2"),
                                 chunk("d", std::nullopt, std::nullopt)});
    REQUIRE(whole.usage_metadata);
    CHECK(*whole.usage_metadata == second);
    CHECK(whole.usage_metadata->extra.empty());
    CHECK(whole.model_version == "v2");
    CHECK(whole.text() == "abcd");

    // And members a later chunk's usage brings are kept.
    const adk::UsageMetadata tiered = usage(3, std::nullopt, {{"serviceTier", "standard"}});
    whole = final_of({chunk("a", usage(1, 6, {}), std::nullopt), chunk("b", tiered, std::nullopt)});
    REQUIRE(whole.usage_metadata);
    CHECK(*whole.usage_metadata == tiered);
    CHECK(!whole.usage_metadata->total_token_count);
    CHECK(!whole.model_version);
}

TEST_CASE("streaming: function calls in chunks arrive whole and run", "[llm]")
{
    adk::test::Harness h;
    std::vector<LlmResponse> chunks;
    chunks.push_back(LlmResponse::text("Checking. "));
    LlmResponse call = LlmResponse::function_call("get_weather", {{"city", "Oslo"}}, "server-1");
    call.content->parts[0].thought_signature = std::string("sig");
    chunks.push_back(call);
    auto model = scripted({ScriptedModel::Turn::streamed(chunks), ScriptedModel::chunks({"Cold."})});
    auto agent = LlmAgent::builder("streamer").model(model).tool(weather_tool()).build();
    adk::RunConfig sse;
    sse.streaming_mode = adk::StreamingMode::sse;
    auto events = h.send(agent, "go", sse);
    // 1 partial (the text; a chunk with only a call is not shown partially), the call, the response,
    // 1 partial, the answer
    REQUIRE(events.size() == 5);
    CHECK(events[0].partial);
    CHECK(events[0].text() == "Checking. ");
    const adk::Event& call_event = events[1];
    CHECK_FALSE(call_event.partial);
    REQUIRE(call_event.content->parts.size() == 2);
    CHECK(call_event.content->parts[0].text == "Checking. ");
    CHECK(call_event.content->parts[1].function_call->id == "server-1");
    CHECK(call_event.content->parts[1].thought_signature == "sig");
    CHECK(events[2].content->parts[0].function_response->id == "server-1");
    CHECK(events[4].text() == "Cold.");
}

TEST_CASE("several calls in one turn run concurrently and answer in call order", "[llm]")
{
    adk::test::Harness h;
    // "first" cannot finish until "second" has run: run one after the other, they would never end.
    auto second_ran = std::make_shared<asio::steady_timer>(h.ioc, asio::steady_timer::time_point::max());
    auto first = adk::FunctionTool::create("first", "Waits for second.", json::value(),
                                           [second_ran](adk::ToolContext& ctx, json::object) -> asio::awaitable<json::value> {
                                               boost::system::error_code ec;
                                               co_await second_ran->async_wait(asio::redirect_error(asio::use_awaitable, ec));
                                               ctx.set_state("order", "first");
                                               co_return json::object{{"n", 1}};
                                           });
    auto second = adk::FunctionTool::create("second", "Releases first.", json::value(),
                                            [second_ran](adk::ToolContext& ctx, json::object) -> asio::awaitable<json::value> {
                                                second_ran->cancel();
                                                ctx.set_state("order", "second");
                                                co_return json::object{{"n", 2}};
                                            });
    std::vector<adk::FunctionCall> calls;
    calls.emplace_back("", "first", json::object{});
    calls.emplace_back("", "second", json::object{});
    auto model = scripted({LlmResponse::function_calls(calls), LlmResponse::text("both done")});
    auto agent = LlmAgent::builder("parallel").model(model).tool(first).tool(second).build();
    auto events = h.send(agent, "go");
    REQUIRE(events.size() == 3);
    const auto& parts = events[1].content->parts;
    REQUIRE(parts.size() == 2);
    CHECK(parts[0].function_response->name == "first");  // call order, though "second" finished first
    CHECK(parts[1].function_response->name == "second");
    CHECK(parts[0].function_response->id == events[0].content->parts[0].function_call->id);
    // Merged in call order: the later call's write wins, whichever tool finished last ("first" did).
    CHECK(events[1].actions.state_delta.at("order") == "second");
}

TEST_CASE("media a tool sends go after the responses, and to the model right after them, stored and read back",
          "[llm]")
{
    adk::test::Harness h;
    auto camera = adk::FunctionTool::create("snap", "Takes a picture.", json::value(),
                                            [](adk::ToolContext& ctx, json::object args) -> asio::awaitable<json::value> {
                                                const std::string name(args.at("name").as_string());
                                                ctx.add_response_part(adk::Part::from_bytes("\x89PNG " + name, "image/png"));
                                                co_return json::object{{"picture", name}};
                                            });
    auto asker = adk::FunctionTool::create("ask", "Asks first.", json::value(),
                                           [](adk::ToolContext& ctx, json::object) -> asio::awaitable<json::value> {
                                               ctx.add_response_part(adk::Part::from_bytes("never", "image/png"));
                                               ctx.request_confirmation("sure?");
                                               co_return json::object{};
                                           });
    std::vector<adk::FunctionCall> calls;
    calls.emplace_back("", "snap", json::object{{"name", "one"}});
    calls.emplace_back("", "snap", json::object{{"name", "two"}});
    auto model = scripted({LlmResponse::function_calls(calls), LlmResponse::text("two pictures")});
    auto agent = LlmAgent::builder("photographer").model(model).tool(camera).tool(asker).build();
    auto events = h.send(agent, "take two");
    REQUIRE(events.size() == 3);
    const auto& parts = events[1].content->parts;
    REQUIRE(parts.size() == 4);
    CHECK(parts[0].function_response->response.at("picture") == "one");
    CHECK(parts[1].function_response->response.at("picture") == "two");
    CHECK(parts[2].inline_data->data == "\x89PNG one");  // in call order, after every response
    CHECK(parts[3].inline_data->data == "\x89PNG two");

    const adk::LlmRequest second = model->requests().at(1);
    REQUIRE(second.contents.size() == 3);
    REQUIRE(second.contents[2].parts.size() == 4);
    CHECK(second.contents[2].parts[1].function_response);
    CHECK(second.contents[2].parts[2].inline_data->mime_type == "image/png");

    run(h.ioc, [&]() -> asio::awaitable<void> {
        auto s = co_await h.sessions->get_session({"app", "user1", "s"});
        const json::value stored = json::value_from(s->events.at(2));
        const adk::Event back = json::value_to<adk::Event>(stored);
        CHECK(back.content->parts.at(3).inline_data->data == "\x89PNG two");
        CHECK(json::value_from(back) == stored);
    }());

    // A call that waits for a person sends no media: its response is not given yet.
    auto waiting_model = scripted({LlmResponse::function_call("ask", {}), LlmResponse::text("unused")});
    auto waiting = LlmAgent::builder("asker").model(waiting_model).tool(asker).build();
    auto asked = h.send(waiting, "ask", {}, "s2");
    for (const adk::Event& e : asked)
        if (e.content)
            for (const adk::Part& p : e.content->parts)
                CHECK_FALSE(p.inline_data);
}

TEST_CASE("an unknown tool, bad arguments and a throwing tool are errors the model sees", "[llm]")
{
    adk::test::Harness h;
    auto thrower = adk::FunctionTool::create("explode", "Throws.", json::value(),
                                             [](adk::ToolContext&, json::object) -> asio::awaitable<json::value> {
                                                 throw std::runtime_error("the database is down");
                                                 co_return nullptr;
                                             });
    std::vector<adk::FunctionCall> calls;
    calls.emplace_back("c1", "no_such_tool", json::object{});
    calls.emplace_back("c2", "get_weather", json::object{{"town", "Paris"}});
    calls.emplace_back("c3", "explode", json::object{});
    auto model = scripted({LlmResponse::function_calls(calls), LlmResponse::text("Sorry, I could not.")});
    auto agent = LlmAgent::builder("careful").model(model).tool(weather_tool()).tool(thrower).build();
    auto events = h.send(agent, "go");
    REQUIRE(events.size() == 3);
    const auto& parts = events[1].content->parts;
    REQUIRE(parts.size() == 3);
    CHECK_THAT(std::string(parts[0].function_response->response.at("error").as_string()),
               Catch::Contains("'no_such_tool' is not available") && Catch::Contains("get_weather, explode"));
    CHECK_THAT(std::string(parts[1].function_response->response.at("error").as_string()),
               Catch::Contains("'city' is required"));
    CHECK_THAT(std::string(parts[2].function_response->response.at("error").as_string()),
               Catch::Contains("the database is down"));
    CHECK(events[2].text() == "Sorry, I could not.");  // the run went on
    CHECK(model->requests().at(1).contents.back().parts.size() == 3);
}

TEST_CASE("model callbacks: short-circuit, request edits, replacement, error recovery", "[llm]")
{
    adk::test::Harness h;
    std::vector<std::string> order;
    auto model = scripted({LlmResponse::text("from the model"), ScriptedModel::Turn::raise(adk::Error(adk::errc::agent_failed, "503 overloaded"))});
    auto agent =
        LlmAgent::builder("cb")
            .model(model)
            .before_model_callback([&](adk::CallbackContext& ctx, adk::LlmRequest& req) -> asio::awaitable<std::optional<LlmResponse>> {
                order.push_back("before1");
                req.append_instruction("Added by a callback.");
                ctx.set_state("seen", true);
                co_return std::nullopt;
            })
            .before_model_callback([&](adk::CallbackContext& ctx, adk::LlmRequest&) -> asio::awaitable<std::optional<LlmResponse>> {
                order.push_back("before2");
                if (ctx.user_content()->text() == "cached")
                    co_return LlmResponse::text("from the cache");
                co_return std::nullopt;
            })
            .after_model_callback([&](adk::CallbackContext&, const LlmResponse& r) -> asio::awaitable<std::optional<LlmResponse>> {
                order.push_back("after");
                if (r.content && r.content->text() == "from the model")
                    co_return LlmResponse::text("edited");
                co_return std::nullopt;
            })
            .on_model_error_callback([&](adk::CallbackContext&, const adk::LlmRequest&, const adk::Error& e)
                                         -> asio::awaitable<std::optional<LlmResponse>> {
                order.push_back("error: " + e.message());
                co_return LlmResponse::text("recovered");
            })
            .build();

    auto cached = h.send(agent, "cached");
    CHECK(cached.back().text() == "from the cache");
    CHECK(cached.back().actions.state_delta.at("seen") == true);
    CHECK(model->requests().empty());  // the model was never called

    auto edited = h.send(agent, "live");
    CHECK(edited.back().text() == "edited");
    REQUIRE(model->requests().size() == 1);
    CHECK_THAT(model->requests()[0].system_text(), Catch::Contains("Added by a callback."));

    auto recovered = h.send(agent, "fails");
    CHECK(recovered.back().text() == "recovered");
    CHECK(order == std::vector<std::string>{"before1", "before2", "after", "before1", "before2", "after", "before1",
                                            "before2", "error: 503 overloaded", "after"});

    auto no_recovery = LlmAgent::builder("plain").model(scripted({ScriptedModel::Turn::raise(adk::Error(adk::errc::agent_failed, "401 bad key"))})).build();
    CHECK_THAT(error_of([&] { h.send(no_recovery, "x", {}, "s2"); }), Catch::Contains("401 bad key"));

    auto throwing = LlmAgent::builder("throwing")
                        .model(scripted({}))
                        .before_model_callback([](adk::CallbackContext&, adk::LlmRequest&) -> asio::awaitable<std::optional<LlmResponse>> {
                            throw adk::Error(adk::errc::invalid_argument, "policy callback failed");
                            co_return std::nullopt;
                        })
                        .build();
    CHECK_THAT(error_of([&] { h.send(throwing, "x", {}, "s3"); }), Catch::Contains("policy callback failed"));

    auto data_error = LlmAgent::builder("data").model(scripted({LlmResponse::error("SAFETY", "blocked")})).build();
    auto blocked = h.send(data_error, "x", {}, "s4");
    REQUIRE(blocked.size() == 1);
    CHECK(blocked[0].error_code == "SAFETY");
    CHECK(blocked[0].error_message == "blocked");
}

TEST_CASE("tool callbacks: order, short-circuit, replacement, error recovery", "[llm]")
{
    adk::test::Harness h;
    std::vector<std::string> order;
    int weather_calls = 0;
    auto thrower = adk::FunctionTool::create("explode", "Throws.", json::value(),
                                             [](adk::ToolContext&, json::object) -> asio::awaitable<json::value> {
                                                 throw adk::Error(adk::errc::not_found, "no such record");
                                                 co_return nullptr;
                                             });
    std::vector<adk::FunctionCall> calls;
    calls.emplace_back("c1", "get_weather", json::object{{"city", "Paris"}});
    calls.emplace_back("c2", "get_weather", json::object{{"city", "Blocked"}});
    calls.emplace_back("c3", "explode", json::object{});
    auto model = scripted({LlmResponse::function_calls(calls), LlmResponse::text("done")});
    auto agent =
        LlmAgent::builder("tools")
            .model(model)
            .tool(weather_tool(&weather_calls))
            .tool(thrower)
            .before_tool_callback([&](adk::Tool& tool, json::object& args, adk::ToolContext& ctx) -> asio::awaitable<std::optional<json::value>> {
                order.push_back("before1 " + tool.name() + " " + ctx.function_call_id());
                if (args.contains("city") && args.at("city") == "Paris")
                    args["city"] = "Paris, France";  // callbacks may edit the arguments
                co_return std::nullopt;
            })
            .before_tool_callback([&](adk::Tool&, json::object& args, adk::ToolContext&) -> asio::awaitable<std::optional<json::value>> {
                if (args.contains("city") && args.at("city") == "Blocked")
                    co_return json::object{{"blocked", true}};
                co_return std::nullopt;
            })
            .after_tool_callback([&](adk::Tool& tool, const json::object&, adk::ToolContext&, const json::value& result)
                                     -> asio::awaitable<std::optional<json::value>> {
                order.push_back("after " + tool.name());
                if (result.is_object() && result.as_object().contains("sky"))
                    co_return json::object{{"sky", "sunny (checked)"}, {"city", result.at("city")}};
                co_return std::nullopt;
            })
            .on_tool_error_callback([&](adk::Tool& tool, const json::object&, adk::ToolContext& ctx, const adk::Error& e)
                                        -> asio::awaitable<std::optional<json::value>> {
                order.push_back("error " + tool.name() + ": " + e.message());
                ctx.set_state("recovered", true);
                co_return json::object{{"fallback", "cached record"}};
            })
            .build();
    auto events = h.send(agent, "go");
    REQUIRE(events.size() == 3);
    const auto& parts = events[1].content->parts;
    CHECK(parts[0].function_response->response.at("sky") == "sunny (checked)");
    CHECK(parts[0].function_response->response.at("city") == "Paris, France");
    CHECK(parts[1].function_response->response.at("blocked") == true);
    CHECK(parts[2].function_response->response.at("fallback") == "cached record");
    CHECK(events[1].actions.state_delta.at("recovered") == true);
    CHECK(weather_calls == 1);  // the blocked call never reached the tool
    std::sort(order.begin(), order.end());  // the three calls interleave; each call's own order is fixed below
    CHECK(order == std::vector<std::string>{"after explode", "after get_weather", "after get_weather",
                                            "before1 explode c3", "before1 get_weather c1", "before1 get_weather c2",
                                            "error explode: no such record"});
}

TEST_CASE("a long-running tool: its call is marked, and a pending result ends the turn", "[llm]")
{
    adk::test::Harness h;
    auto approval = adk::FunctionTool::create("ask_approval", "Asks a human.", json::value(),
                                              [](adk::ToolContext&, json::object) -> asio::awaitable<json::value> {
                                                  co_return nullptr;  // the answer comes later
                                              },
                                              /*is_long_running=*/true);
    auto model = scripted({LlmResponse::function_call("ask_approval", {})});
    auto agent = LlmAgent::builder("approver").model(model).tool(approval).build();
    auto events = h.send(agent, "buy it");
    REQUIRE(events.size() == 1);
    REQUIRE(events[0].long_running_tool_ids.size() == 1);
    CHECK(events[0].long_running_tool_ids[0] == events[0].content->parts[0].function_call->id);
    CHECK(events[0].is_final_response());
}

TEST_CASE("skip_summarization makes the tool's answer final", "[llm]")
{
    adk::test::Harness h;
    auto direct = adk::FunctionTool::create("lookup", "Answers directly.", json::value(),
                                            [](adk::ToolContext& ctx, json::object) -> asio::awaitable<json::value> {
                                                ctx.actions().skip_summarization = true;
                                                co_return json::object{{"answer", 42}};
                                            });
    auto model = scripted({LlmResponse::function_call("lookup", {})});
    auto agent = LlmAgent::builder("direct").model(model).tool(direct).build();
    auto events = h.send(agent, "q");
    REQUIRE(events.size() == 2);
    CHECK(events[1].is_final_response());
    CHECK(model->requests().size() == 1);
}

TEST_CASE("sub-agents: transfer_to_agent is declared with the roster, and the target answers", "[llm]")
{
    adk::test::Harness h;
    auto helper_model = scripted({LlmResponse::text("helper here")});
    auto helper = LlmAgent::builder("helper").description("Helps with everything.").model(helper_model).build();
    auto root_model = scripted({LlmResponse::function_call("transfer_to_agent", {{"agent_name", "nobody"}}),
                                LlmResponse::function_call("transfer_to_agent", {{"agent_name", "helper"}})});
    auto root = LlmAgent::builder("root").model(root_model).global_instruction("Global rule.").sub_agent(helper).build();
    auto events = h.send(root, "help me");
    REQUIRE(events.size() == 5);
    CHECK_THAT(std::string(events[1].content->parts[0].function_response->response.at("error").as_string()),
               Catch::Contains("cannot transfer to 'nobody'") && Catch::Contains("helper"));
    CHECK(events[3].actions.transfer_to_agent == "helper");
    CHECK(events[4].author == "helper");
    CHECK(events[4].text() == "helper here");

    auto root_requests = root_model->requests();
    const adk::LlmRequest& first = root_requests.at(0);
    REQUIRE(first.tools.size() == 1);
    CHECK(first.tools[0].name == "transfer_to_agent");
    CHECK_THAT(first.system_text(), Catch::Contains("Agent name: helper\nAgent description: Helps with everything."));
    // The root's global instruction applies to the sub-agent too; the sub-agent may go back to its parent.
    auto helper_requests = helper_model->requests();
    const adk::LlmRequest& helped = helper_requests.at(0);
    CHECK(helped.system_text().rfind("Global rule.", 0) == 0);
    CHECK_THAT(helped.system_text(), Catch::Contains("Your parent agent is root"));
    REQUIRE(helped.tools.size() == 1);

    auto lonely = LlmAgent::builder("lonely").model(scripted({LlmResponse::text("x")})).disable_transfer().sub_agent(
        LlmAgent::builder("child").model(scripted({})).build()).build();
    h.send(lonely, "x", {}, "s2");
    CHECK(std::dynamic_pointer_cast<ScriptedModel>(lonely->config().model)->requests().at(0).tools.empty());
}

TEST_CASE("cancellation mid-tool stops the tool, and mid-stream stops the model", "[llm]")
{
    adk::test::Harness h;
    auto aborted = std::make_shared<int>(0);
    auto model = scripted({LlmResponse::function_call("slow", {})});
    auto agent = LlmAgent::builder("patient").model(model).tool(slow_tool(aborted)).build();
    adk::Runner runner({.app_name = "app", .agent = agent, .session_service = h.sessions});
    run(h.ioc, [&]() -> asio::awaitable<void> {
        co_await h.sessions->create_session({"app", "user1", "s"});
        auto stream = co_await runner.run("user1", "s", adk::Content::user("go"));
        auto call = co_await stream.next();  // the function call: the tool now runs
        CHECK(call->function_calls().size() == 1);
        asio::steady_timer t(co_await asio::this_coro::executor, 5ms);
        co_await t.async_wait(asio::use_awaitable);
        CHECK(runner.cancel(call->invocation_id));
        std::string ended;
        try {
            while (co_await stream.next()) {
            }
        } catch (const adk::Error& e) {
            ended = e.message();
        }
        CHECK_THAT(ended, Catch::Contains("cancelled"));
    }());
    CHECK(*aborted == 1);  // and run() checked that nothing is left running

    auto hanging = scripted({ScriptedModel::chunks({"Once ", "upon "}).then_hang()});
    auto teller = LlmAgent::builder("teller").model(hanging).build();
    adk::Runner runner2({.app_name = "app", .agent = teller, .session_service = h.sessions});
    adk::RunConfig sse;
    sse.streaming_mode = adk::StreamingMode::sse;
    run(h.ioc, [&]() -> asio::awaitable<void> {
        co_await h.sessions->create_session({"app", "user1", "s2"});
        auto stream = co_await runner2.run("user1", "s2", adk::Content::user("story"), sse);
        auto a = co_await stream.next();
        auto b = co_await stream.next();
        CHECK(a->text() == "Once ");
        CHECK(b->text() == "upon ");
        stream.cancel();  // the model is still "streaming"
        auto end = co_await stream.next();
        CHECK(!end);
    }());
}

namespace {
// Offers the "vip" tool only to users whose state says so: resolved anew for every invocation.
class VipToolset final : public adk::Toolset {
public:
    VipToolset() : Toolset("vip", {}, adk::ToolListing::per_invocation) {}
    int resolved = 0;

protected:
    asio::awaitable<std::vector<std::shared_ptr<adk::Tool>>> list_tools(const adk::ReadonlyContext& ctx) override
    {
        ++resolved;
        std::vector<std::shared_ptr<adk::Tool>> out;
        if (std::optional<json::value> vip = ctx.state("user:vip"); vip && vip->as_bool())
            out.push_back(adk::FunctionTool::create("vip_lounge", "Books the lounge.", json::value(),
                                                    [](adk::ToolContext&, json::object) -> asio::awaitable<json::value> {
                                                        co_return json::object{{"booked", true}};
                                                    }));
        co_return out;
    }
};
}  // namespace

TEST_CASE("more builder options: toolsets per invocation, tool lists, static content, transfer rules, agent callbacks", "[llm]")
{
    adk::test::Harness h;
    auto toolset = std::make_shared<VipToolset>();
    auto model = scripted({LlmResponse::text("a"), LlmResponse::function_call("vip_lounge", {}), LlmResponse::text("b")});
    std::vector<std::shared_ptr<adk::Tool>> list{weather_tool()};
    adk::Content static_content("", {adk::Part::from_text("Part one."), adk::Part::from_text("Part two.")});
    std::vector<std::string> order;
    auto agent = LlmAgent::builder("concierge")
                     .model(model)
                     .tools(list)
                     .toolset(toolset)
                     .static_instruction_content(static_content)
                     .input_schema(json::parse(R"({"type":"object"})"))
                     .before_agent_callback([&](adk::CallbackContext&) -> asio::awaitable<std::optional<adk::Content>> {
                         order.push_back("before");
                         co_return std::nullopt;
                     })
                     .after_agent_callback([&](adk::CallbackContext&) -> asio::awaitable<std::optional<adk::Content>> {
                         order.push_back("after");
                         co_return std::nullopt;
                     })
                     .build();
    CHECK(agent->config().input_schema->is_object());
    h.send(agent, "plain user");
    run(h.ioc, [&]() -> asio::awaitable<void> {
        auto s = co_await h.sessions->get_session({"app", "user1", "s"});
        adk::Event upgrade("user", adk::Content());
        upgrade.content.reset();
        upgrade.actions.state_delta["user:vip"] = true;
        co_await h.sessions->append_event(*s, upgrade);
    }());
    auto events = h.send(agent, "vip now");
    CHECK(toolset->resolved == 2);
    auto requests = model->requests();
    REQUIRE(requests.size() == 3);
    CHECK(requests[0].tools.size() == 1);
    CHECK(requests[1].tools.size() == 2);
    CHECK(requests[1].tools[1].name == "vip_lounge");
    CHECK(events.at(1).content->parts.at(0).function_response->response.at("booked") == true);
    REQUIRE(requests[0].system_instruction->parts.size() == 3);  // the static parts as given, then identity
    CHECK(*requests[0].system_instruction->parts[1].text == "Part two.");
    CHECK(order == std::vector<std::string>{"before", "after", "before", "after"});

    // Transfer rules: a child may go to its parent and peers unless disallowed.
    auto make_child = [&](const std::string& name, bool no_parent, bool no_peers) {
        auto b = LlmAgent::builder(name).description(name + " desc").model(scripted({LlmResponse::text("hi")}));
        if (no_parent)
            b.disallow_transfer_to_parent();
        if (no_peers)
            b.disallow_transfer_to_peers();
        return b.build();
    };
    auto open = make_child("open_child", false, false);
    auto closed = make_child("closed_child", true, true);
    auto parent = LlmAgent::builder("parent").model(scripted({})).sub_agent(open).sub_agent(closed).build();
    auto system_of = [&](const std::shared_ptr<LlmAgent>& child) {
        adk::test::Harness hh;
        hh.send(child, "x");  // the child knows its place in the parent's tree
        return std::dynamic_pointer_cast<ScriptedModel>(child->config().model)->requests().at(0);
    };
    auto open_request = system_of(open);
    CHECK_THAT(open_request.system_text(), Catch::Contains("Agent name: parent") &&
                                               Catch::Contains("Agent name: closed_child") &&
                                               Catch::Contains("Your parent agent is parent"));
    auto closed_request = system_of(closed);
    CHECK(closed_request.tools.empty());  // no parent, no peers, no children: nothing to transfer to
    CHECK(closed_request.system_text().find("Agent name:") == std::string::npos);
}

TEST_CASE("tool calls of one turn run at most max_concurrent_tools at a time, the rest queued in order", "[llm]")
{
    // The audit's 1,001 calls in one turn ran 1,000 tools at once.
    for (auto [calls_in_turn, cap] : std::vector<std::pair<int, int>>{{20, 3}, {1001, 0}}) {
        INFO(calls_in_turn << " calls, cap " << cap);
        adk::test::Harness h;
        auto running = std::make_shared<int>(0);
        auto most = std::make_shared<int>(0);
        auto order = std::make_shared<std::vector<int>>();
        auto tool = adk::FunctionTool::create(
            "work", "Takes a moment.", json::value(),
            [running, most, order](adk::ToolContext&, json::object args) -> asio::awaitable<json::value> {
                order->push_back(static_cast<int>(args.at("i").as_int64()));
                *most = std::max(*most, ++*running);
                asio::steady_timer t(co_await asio::this_coro::executor, 1ms);
                co_await t.async_wait(asio::use_awaitable);
                --*running;
                co_return json::object{{"done", args.at("i")}};
            });
        std::vector<adk::FunctionCall> calls;
        for (int i = 0; i < calls_in_turn; ++i)
            calls.emplace_back("c" + std::to_string(i), "work", json::object{{"i", i}});
        auto model = scripted({LlmResponse::function_calls(calls), LlmResponse::text("done")});
        auto builder = LlmAgent::builder("busy").model(model).tool(tool);
        if (cap > 0)
            builder.max_concurrent_tools(cap);
        auto events = h.send(builder.build(), "go");
        const int expected_cap = cap > 0 ? cap : adk::LlmAgentConfig().max_concurrent_tools;
        CHECK(*most == expected_cap);
        REQUIRE(static_cast<int>(order->size()) == calls_in_turn);
        CHECK(std::is_sorted(order->begin(), order->end()));  // started in call order
        REQUIRE(events.size() == 3);
        const auto& parts = events[1].content->parts;
        REQUIRE(static_cast<int>(parts.size()) == calls_in_turn);
        for (int i = 0; i < calls_in_turn; ++i)
            CHECK(parts[i].function_response->response.at("done") == i);
    }
    CHECK_THAT(error_of([] { LlmAgent::builder("a").model(scripted({})).max_concurrent_tools(0).build(); }),
               Catch::Contains("max_concurrent_tools must be at least 1"));
    CHECK_THAT(error_of([] { LlmAgent::builder("a").model(scripted({})).tool_timeout(0ms).build(); }),
               Catch::Contains("tool_timeout must be positive"));
}

TEST_CASE("a tool past its timeout is cancelled, and the model sees an error and goes on", "[llm]")
{
    for (bool own_timeout : {true, false}) {
        INFO("the tool's own timeout: " << own_timeout);
        // A timeout of 30 s on the test's clock: the tool is cut off when they have passed, not before.
        adk::testing::ManualClock clock;
        adk::test::Harness h;
        h.clock = &clock;
        auto aborted = std::make_shared<int>(0);
        auto stuck = slow_tool(aborted);
        auto model = scripted({LlmResponse::function_call("slow", {}), LlmResponse::text("it timed out")});
        auto builder = LlmAgent::builder("patient").model(model).tool(stuck);
        if (own_timeout) {
            stuck->set_timeout(30s);
            builder.tool_timeout(1h);  // the tool's own wins
        } else {
            builder.tool_timeout(30s);
        }
        const auto start = adk::Clock::now();
        auto events = h.send(builder.build(), "go");
        CHECK(adk::Clock::now() - start >= 30s);
        CHECK(adk::Clock::now() - start < 31s);
        CHECK(*aborted == 1);  // the tool saw the cancellation
        REQUIRE(events.size() == 3);
        const auto& response = events[1].content->parts.at(0).function_response->response;
        CHECK_THAT(std::string(response.at("error").as_string()),
                   Catch::Contains("Tool 'slow' failed") && Catch::Contains("did not finish within 30000 ms"));
        CHECK(events[2].text() == "it timed out");
        // The model's second request carried the error.
        CHECK(model->requests().size() == 2);
    }
}

TEST_CASE("streaming: an answer over RunConfig::max_answer_bytes fails the model call", "[llm]")
{
    adk::test::Harness h;
    std::vector<LlmResponse> chunks;
    for (int i = 0; i < 100; ++i)
        chunks.push_back(LlmResponse::text(std::string(100, 'w')));
    auto model = scripted({ScriptedModel::Turn::streamed(chunks)});
    auto agent = LlmAgent::builder("talker").model(model).build();
    adk::RunConfig sse;
    sse.streaming_mode = adk::StreamingMode::sse;
    sse.max_answer_bytes = 5000;
    CHECK_THAT(error_of([&] { h.send(agent, "talk", sse); }),
               Catch::Contains("streamed an answer over 5000 bytes of text (RunConfig::max_answer_bytes)"));
}
