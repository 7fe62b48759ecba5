// Human in the loop through ApiServer over loopback HTTP, as the ADK web UI does it: /run_sse shows the
// confirmation request, the answer comes back as a functionResponse with functionCallEventId, and a resumable
// app continues the same invocation; bad answers are 4xx with a JSON message, and change nothing.
#include <adk/adk.hpp>
#include <adk/server/api_server.hpp>

#include "support/agents.hpp"
#include "support/api_client.hpp"
#include "support/run.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

namespace asio = boost::asio;
namespace json = boost::json;
using adk::test::call;
using adk::test::Frame;
using adk::test::FrameReader;
using adk::test::Reply;
using adk::testing::ScriptedModel;

namespace {

struct Fixture {
    asio::io_context ioc;
    std::shared_ptr<adk::InMemorySessionService> sessions = std::make_shared<adk::InMemorySessionService>();
    std::shared_ptr<ScriptedModel> model;
    int transfers = 0;
    std::unique_ptr<adk::server::ApiServer> server;
    adk::net::HttpClient client{adk::test::no_retries()};

    // A second app, "slow": a resumable pipeline whose step hangs the first time it runs (until the run is
    // cancelled), then finishes.
    int slow_runs = 0;

    Fixture()
        : model(std::make_shared<ScriptedModel>(std::vector<ScriptedModel::Turn>{
              adk::LlmResponse::function_call("transfer_money", {{"amount", 100}}), adk::LlmResponse::text("Sent.")}))
    {
        auto tool = adk::FunctionTool::create(
            "transfer_money", "Sends money.",
            json::parse(R"({"type":"object","properties":{"amount":{"type":"number"}}})"),
            [this](adk::ToolContext&, json::object args) -> asio::awaitable<json::value> {
                ++transfers;
                co_return json::object{{"sent", args.at("amount")}};
            });
        tool->set_require_confirmation(true);
        auto banker = adk::LlmAgent::builder("banker").model(model).tool(tool).build();
        auto pipeline = std::make_shared<adk::SequentialAgent>(
            "pipeline", "Pays, then confirms.",
            std::vector<std::shared_ptr<adk::Agent>>{banker, adk::test::counting_agent("receipt", 1)});
        auto slow_step = std::make_shared<adk::test::FnAgent>(
            "slow_step", [this](adk::InvocationContext& ctx, adk::EventSink& out) -> asio::awaitable<void> {
                if (++slow_runs == 1) {
                    adk::Event working = ctx.make_event(adk::Content::model("working"));
                    co_await out.emit(std::move(working));
                    asio::steady_timer forever(co_await asio::this_coro::executor, std::chrono::hours(1));
                    co_await forever.async_wait(asio::use_awaitable);
                }
                adk::Event finished = ctx.make_event(adk::Content::model("finished"));
                co_await out.emit(std::move(finished));
            });
        auto slow = std::make_shared<adk::SequentialAgent>(
            "slow", "A first step, then a slow one.",
            std::vector<std::shared_ptr<adk::Agent>>{adk::test::counting_agent("first", 1), slow_step});
        const adk::ResumabilityConfig resumable{.is_resumable = true};
        server = std::make_unique<adk::server::ApiServer>(
            ioc.get_executor(),
            std::vector<adk::server::App>{adk::server::App("bank", pipeline, resumable),
                                          adk::server::App("slow", slow, resumable)},
            adk::test::options_with(sessions));
        server->start();
    }

    // POST /run_sse; the status and the frames' events (or the error's body).
    struct Answer {
        unsigned status = 0;
        std::vector<json::value> events;
    };
    asio::awaitable<Answer> run_sse(json::object body)
    {
        if (!body.contains("appName"))
            body["appName"] = "bank";
        body["userId"] = "u";
        body["sessionId"] = "s";
        body["streaming"] = false;
        adk::net::HttpRequest req("POST", server->base_url() + "/run_sse");
        req.set("content-type", "application/json");
        req.body = json::serialize(body);
        adk::net::HttpResponse res = co_await client.send(std::move(req));
        Answer answer;
        answer.status = res.status();
        if (res.status() != 200) {
            std::string text = co_await res.read_all();
            answer.events.push_back(json::parse(text));
            co_return answer;
        }
        FrameReader reader(res);
        std::vector<Frame> frames = co_await reader.read_all();
        for (const Frame& f : frames)
            answer.events.push_back(f.json());
        co_return answer;
    }

    asio::awaitable<std::size_t> stored()
    {
        adk::GetSessionRequest get("bank", "u", "s");
        auto s = co_await sessions->get_session(std::move(get));
        co_return s->events.size();
    }
};

json::object message(json::array parts)
{
    return json::object{{"newMessage", json::object{{"role", "user"}, {"parts", std::move(parts)}}}};
}

json::object answer(std::string_view id, std::string_view name, json::object response, std::string_view event_id)
{
    json::object body = message(json::array{json::object{
        {"functionResponse", json::object{{"id", id}, {"name", name}, {"response", std::move(response)}}}}});
    body["functionCallEventId"] = event_id;
    return body;
}

}  // namespace

TEST_CASE("ApiServer: a confirmation asked over /run_sse and answered as the web UI answers it resumes the "
          "invocation",
          "[server][hitl]")
{
    Fixture f;
    adk::test::run(f.ioc, [&]() -> asio::awaitable<void> {
        Reply created = co_await call(f.client, *f.server, "POST", "/apps/bank/users/u/sessions/s");
        REQUIRE(created.status == 200);

        json::object question_request = message(json::array{json::object{{"text", "send 100"}}});
        Fixture::Answer asked = co_await f.run_sse(std::move(question_request));
        REQUIRE(asked.status == 200);
        const json::value* question = nullptr;
        for (const json::value& e : asked.events)
            if (e.as_object().contains("content") &&
                e.at("content").at("parts").at(0).as_object().contains("functionCall") &&
                e.at("content").at("parts").at(0).at("functionCall").at("name") == "adk_request_confirmation")
                question = &e;
        REQUIRE(question);
        const std::string qid(question->at("content").at("parts").at(0).at("functionCall").at("id").as_string());
        const std::string event_id(question->at("id").as_string());
        const std::string invocation(question->at("invocationId").as_string());
        CHECK(question->at("longRunningToolIds").at(0) == qid.c_str());
        CHECK(f.transfers == 0);
        const std::size_t before = co_await f.stored();

        // Bad answers: a JSON message, 4xx, and nothing stored.
        json::object wrong_id_request = answer("nope", "adk_request_confirmation", {{"confirmed", true}}, event_id);
        Fixture::Answer wrong_id_answer = co_await f.run_sse(std::move(wrong_id_request));
        CHECK(wrong_id_answer.status == 400);
        CHECK_THAT(std::string(wrong_id_answer.events.at(0).at("error").as_string()),
                   Catch::Contains("has no function call"));
        json::object not_bool_request = answer(qid, "adk_request_confirmation", {{"confirmed", "yes"}}, event_id);
        Fixture::Answer not_bool_answer = co_await f.run_sse(std::move(not_bool_request));
        CHECK(not_bool_answer.status == 400);
        json::object unknown_invocation = message(json::array{json::object{{"text", "go on"}}});
        unknown_invocation["invocationId"] = "e-unknown";
        Fixture::Answer unknown_answer = co_await f.run_sse(unknown_invocation);
        CHECK(unknown_answer.status == 404);
        const std::size_t after_bad_answers = co_await f.stored();
        CHECK(after_bad_answers == before);

        // The UI's answer: confirmed, with the payload it shows.
        json::object approval_request =
            answer(qid, "adk_request_confirmation", {{"confirmed", true}, {"payload", {{"amount", 100}}}}, event_id);
        Fixture::Answer approved = co_await f.run_sse(std::move(approval_request));
        REQUIRE(approved.status == 200);
        CHECK(f.transfers == 1);
        std::vector<std::string> texts;
        for (const json::value& e : approved.events) {
            CHECK(e.at("invocationId") == invocation.c_str());  // the same invocation, continued
            const json::value* content = e.as_object().if_contains("content");
            if (content && content->at("parts").at(0).as_object().contains("text"))
                texts.push_back(std::string(content->at("parts").at(0).at("text").as_string()));
        }
        CHECK(texts == std::vector<std::string>{"Sent.", "1"});

        json::object again_request = answer(qid, "adk_request_confirmation", {{"confirmed", true}}, event_id);
        Fixture::Answer again_answer = co_await f.run_sse(std::move(again_request));
        CHECK(again_answer.status == 409);
        CHECK(f.transfers == 1);
        json::object finished = message(json::array{json::object{{"text", "again"}}});
        finished["invocationId"] = invocation;
        Fixture::Answer done_answer = co_await f.run_sse(finished);
        CHECK(done_answer.status == 400);
        CHECK_THAT(std::string(done_answer.events.at(0).at("error").as_string()), Catch::Contains("has finished"));
        f.server->stop();
    }());
}

TEST_CASE("ApiServer: a run cancelled through the cancel route is resumed with invocationId and finishes where it "
          "stopped",
          "[server][hitl]")
{
    Fixture f;
    adk::test::run(f.ioc, [&]() -> asio::awaitable<void> {
        Reply created = co_await call(f.client, *f.server, "POST", "/apps/slow/users/u/sessions/s");
        REQUIRE(created.status == 200);
        // Start the run and read until the slow step says it works; then cancel it from another request.
        adk::net::HttpRequest req("POST", f.server->base_url() + "/run_sse");
        req.set("content-type", "application/json");
        req.body = R"({"appName":"slow","userId":"u","sessionId":"s","newMessage":{"role":"user","parts":[{"text":"go"}]}})";
        adk::net::HttpResponse res = co_await f.client.send(std::move(req));
        const std::string run_id(res.header("x-adk-run-id"));
        FrameReader reader(res);
        std::string invocation;
        while (true) {
            std::vector<Frame> frames = co_await reader.read(1);
            REQUIRE(frames.size() == 1);
            const json::value e = frames[0].json();
            invocation = std::string(e.at("invocationId").as_string());
            if (e.as_object().contains("content") && e.at("content").at("parts").at(0).at("text") == "working")
                break;
        }
        adk::net::HttpClient other{adk::test::no_retries()};
        const std::string cancel_path = "/apps/slow/users/u/sessions/s/runs/" + run_id + "/cancel";
        Reply cancelled = co_await call(other, *f.server, "POST", cancel_path);
        CHECK(cancelled.status == 200);
        std::vector<Frame> rest = co_await reader.read_all();
        REQUIRE(!rest.empty());
        CHECK(rest.back().json().as_object().contains("error"));  // the run ended with its cancellation

        json::object resume{{"appName", "slow"}, {"invocationId", invocation}};
        Fixture::Answer resumed = co_await f.run_sse(std::move(resume));
        REQUIRE(resumed.status == 200);
        std::vector<std::string> texts;
        for (const json::value& e : resumed.events) {
            CHECK(e.at("invocationId") == invocation.c_str());
            if (e.as_object().contains("content"))
                texts.push_back(std::string(e.at("content").at("parts").at(0).at("text").as_string()));
        }
        CHECK(texts == std::vector<std::string>{"finished"});  // "first" finished before: it did not run again
        CHECK(f.slow_runs == 2);
        CHECK(resumed.events.back().at("author") == "slow");
        CHECK(resumed.events.back().at("actions").at("endOfAgent") == true);
        f.server->stop();
    }());
}
