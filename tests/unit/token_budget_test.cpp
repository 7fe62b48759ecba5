// Token budgets (RunConfig::max_invocation_tokens, max_session_tokens): real Runner and services, a model that
// reports usage as a provider does.
#include <adk/adk.hpp>

#include "support/agents.hpp"
#include "support/run.hpp"

#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

namespace asio = boost::asio;
namespace json = boost::json;
using adk::Content;
using adk::Event;
using adk::LlmRequest;
using adk::LlmResponse;

namespace {

LlmResponse with_usage(LlmResponse r, std::int64_t prompt, std::int64_t answer)
{
    r.usage_metadata = adk::UsageMetadata();
    r.usage_metadata->prompt_token_count = prompt;
    r.usage_metadata->candidates_token_count = answer;
    return r;
}

std::shared_ptr<adk::FunctionTool> lookup_tool()
{
    return adk::FunctionTool::create("lookup", "Looks something up.", json::parse(R"({"type":"object","properties":{}})"),
                                     [](adk::ToolContext&, json::object) -> asio::awaitable<json::value> {
                                         co_return json::object{{"found", "more to look up"}};
                                     });
}

}  // namespace

TEST_CASE("token budgets: an invocation over its budget ends with a final event that says so, nothing half-written",
          "[budget]")
{
    int calls = 0;
    // A model that never stops calling its tool: each call costs 300 prompt and 100 answer tokens.
    auto model = std::make_shared<adk::test::FnModel>([&](const LlmRequest&) {
        ++calls;
        return with_usage(LlmResponse::function_call("lookup", json::object{}), 300, 100);
    });
    auto agent = adk::LlmAgent::builder("agent").model(model).tool(lookup_tool()).build();
    adk::test::Harness h;
    adk::RunConfig config;
    config.max_invocation_tokens = 1000;
    const std::vector<Event> events = h.send(agent, "find everything", config);
    CHECK(calls == 3);  // 400, 800, then 1200 tokens: the third crossed the budget, no fourth was made
    REQUIRE_FALSE(events.empty());
    const Event& last = events.back();
    CHECK(last.error_code == "TOKEN_BUDGET_EXHAUSTED");
    CHECK(last.is_final_response());
    CHECK(last.text().find("invocation's token budget ran out") != std::string::npos);
    CHECK(last.error_message->find("1200 of the 1000 tokens RunConfig::max_invocation_tokens allows") !=
          std::string::npos);
    std::vector<std::int64_t> counts;
    for (const Event& e : events)
        if (e.usage_metadata)
            counts.push_back(e.custom_metadata.at("adk_token_budget").at("invocationTokens").as_int64());
    CHECK(counts == std::vector<std::int64_t>{400, 800, 1200});
    // Each call's response came before the stop: the stored history pairs every call with its answer.
    auto session = adk::test::run(h.ioc, h.sessions->get_session({"app", "user1", "s"}));
    REQUIRE(session);
    std::size_t responses = 0, calls_stored = 0;
    for (const Event& e : session->events) {
        calls_stored += e.function_calls().size();
        responses += e.function_responses().size();
        CHECK_FALSE(e.partial);
    }
    CHECK(calls_stored == 3);
    CHECK(responses == 3);
}

TEST_CASE("token budgets: a session's budget counts its earlier invocations, and stops before the model is called",
          "[budget]")
{
    int calls = 0;
    auto model = std::make_shared<adk::test::FnModel>([&](const LlmRequest&) {
        ++calls;
        return with_usage(LlmResponse::text("an answer"), 500, 200);
    });
    auto agent = adk::LlmAgent::builder("agent").model(model).build();
    adk::test::Harness h;
    adk::RunConfig config;
    config.max_session_tokens = 1000;
    CHECK(h.send(agent, "one", config).back().text() == "an answer");  // 0 before: 700 after
    const Event second = h.send(agent, "two", config).back();          // 700 before: 1400 after
    CHECK(second.text() == "an answer");
    CHECK(second.custom_metadata.at("adk_token_budget").at("sessionTokens") == 1400);
    const Event third = h.send(agent, "three", config).back();
    CHECK(calls == 2);
    CHECK(third.error_code == "TOKEN_BUDGET_EXHAUSTED");
    CHECK(third.error_message->find("session's token budget ran out") != std::string::npos);
    // Without budgets nothing is counted into the events.
    const Event free = h.send(agent, "four").back();
    CHECK(free.text() == "an answer");
    CHECK_FALSE(free.custom_metadata.contains("adk_token_budget"));
}
