// RemoteA2aAgent against adk::a2a::Server over real loopback HTTP, on both bindings: a remote answer streamed back
// as partial events and a final one, the same remote context on the next turn, a transfer to the remote agent and
// the remote agent as an AgentTool, a remote task that waits for a person answered through the local runner, a
// failed remote task as an error event, a cancelled invocation cancelling the remote task, and cards that cannot
// be used.
#include <adk/a2a/card_auth.hpp>
#include <adk/a2a/remote_agent.hpp>
#include <adk/a2a/server.hpp>
#include <adk/adk.hpp>
#include <adk/server/api_server.hpp>

#include "support/a2a_apps.hpp"
#include "support/api_client.hpp"
#include "support/manual_time.hpp"
#include "support/run.hpp"
#include "support/session_runner.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <catch2/catch.hpp>

namespace a2a = adk::a2a;
namespace asio = boost::asio;
namespace json = boost::json;
namespace apps = adk::test::a2a_apps;
using adk::test::options_with;
using Local = adk::test::SessionRunner;
using adk::testing::ScriptedModel;

namespace {

// The remote side: an ApiServer serving the scripted apps over A2A.
class Remote {
public:
    // `token`: the bearer token every request but the card's must carry (none: open).
    explicit Remote(asio::io_context& ioc, std::string token = {})
        : server(ioc.get_executor(),
                 {{"weather", apps::weather(10)},
                  {"bank", apps::bank(10)},
                  {"gated", apps::gated(10, [this] { return wait_for_gate(); })},
                  {"broken", apps::broken(10)},
                  {"vault", apps::vault(10)}},
                 with_token(options_with(std::make_shared<adk::InMemorySessionService>()), std::move(token))),
          a2a_server(server), gate(ioc, asio::steady_timer::time_point::max())
    {
        a2a_server.mount();
        server.start();
    }

    static adk::server::ApiServerOptions with_token(adk::server::ApiServerOptions options, std::string token)
    {
        options.bearer_token = std::move(token);
        return options;
    }

    std::string url(std::string_view app) const { return server.base_url() + "/a2a/" + std::string(app); }

    asio::awaitable<void> wait_for_gate()
    {
        gated_started = true;
        auto [ec] = co_await gate.async_wait(asio::as_tuple(asio::use_awaitable));
        (void)ec;
    }

    adk::server::ApiServer server;
    a2a::Server a2a_server;
    asio::steady_timer gate;
    bool gated_started = false;
};

adk::Content user_text(std::string text)
{
    return adk::Content("user", {adk::Part::from_text(std::move(text))});
}

std::string partial_text(const std::vector<adk::Event>& events)
{
    std::string out;
    for (const auto& e : events)
        if (e.partial)
            out += e.text();
    return out;
}

const adk::Event* final_answer(const std::vector<adk::Event>& events)
{
    for (auto it = events.rbegin(); it != events.rend(); ++it)
        if (!it->partial && it->is_final_response() && it->content)
            return &*it;
    return nullptr;
}

// The card of `app`, with only the interface of `binding` at `version` (how a test picks what the agent speaks).
// "0.3 card": none listed, the card's 0.3 members only (what a card written by a 0.3 server has).
asio::awaitable<a2a::AgentCard> card_with(const Remote& remote, std::string_view app, std::string_view binding,
                                          std::string_view version)
{
    auto reader = a2a::RemoteA2aAgent::create({.name = "reader", .card_url = remote.url(app)});
    a2a::AgentCard card = co_await reader->card();
    std::erase_if(card.supported_interfaces, [&](const a2a::AgentInterface& i) {
        return binding == "0.3 card" || i.protocol_binding != binding || i.protocol_version != version;
    });
    co_return card;
}

// A hostile remote's first SSE frame (HTTP+JSON binding): task t1 of context c1, working.
std::string working_task_frame()
{
    const json::value task = json::object{
        {"task", json::object{{"id", "t1"}, {"contextId", "c1"},
                              {"status", json::object{{"state", "TASK_STATE_WORKING"}}}}}};
    return "data: " + json::serialize(task) + "\n\n";
}

}  // namespace

TEST_CASE("RemoteA2aAgent: the remote answer streams back as partial events, then whole, on both bindings and 0.3",
          "[a2a][remote]")
{
    asio::io_context ioc;
    Remote remote(ioc);
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        for (const auto& [binding, version] : std::vector<std::pair<std::string, std::string>>{
                 {"JSONRPC", "1.0"}, {"HTTP+JSON", "1.0"}, {"JSONRPC", "0.3"}, {"0.3 card", ""}}) {
            INFO(binding << " " << version);
            a2a::AgentCard card = co_await card_with(remote, "weather", binding, version);
            CHECK(card.supported_interfaces.size() == (binding == "0.3 card" ? 0u : 1u));
            auto agent = a2a::RemoteA2aAgent::create({.card = card});
            CHECK(agent->name() == "weather_agent");  // the card's
            CHECK(agent->description() == "Answers questions about the weather.");
            Local local(agent);
            adk::Content message1 = user_text("Weather in Paris?");
            std::vector<adk::Event> events = co_await local.say(std::move(message1));
            CHECK(partial_text(events) == "It is sunny in Paris.");
            const adk::Event* answer = final_answer(events);
            REQUIRE(answer);
            CHECK(answer->text() == "It is sunny in Paris.");
            CHECK(answer->author == "weather_agent");
            const std::string context = std::string(answer->custom_metadata.at("a2a:context_id").as_string());
            CHECK(!context.empty());
            // The remote's work came as events too: its call and its result.
            bool call = false, result = false;
            for (const auto& e : events) {
                call |= !e.function_calls().empty() && e.function_calls()[0].name == "get_weather";
                result |= !e.function_responses().empty();
            }
            CHECK(call);
            CHECK(result);

            // The next turn goes on in the same remote context.
            adk::Content message2 = user_text("And tomorrow?");
            std::vector<adk::Event> again = co_await local.say(std::move(message2));
            const adk::Event* second = final_answer(again);
            REQUIRE(second);
            CHECK(second->custom_metadata.at("a2a:context_id") == context.c_str());
            CHECK(second->custom_metadata.at("a2a:task_id") != answer->custom_metadata.at("a2a:task_id"));
        }
        remote.server.stop();
    }());
}

TEST_CASE("RemoteA2aAgent: a transfer target of an LlmAgent, and an AgentTool", "[a2a][remote]")
{
    asio::io_context ioc;
    Remote remote(ioc);
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        auto weather = a2a::RemoteA2aAgent::create(
            {.name = "remote_weather", .description = "The weather, from afar.", .card_url = remote.url("weather")});
        auto planner_model = std::make_shared<ScriptedModel>(std::vector<ScriptedModel::Turn>{
            adk::LlmResponse::function_call("transfer_to_agent", json::object{{"agent_name", "remote_weather"}})});
        auto planner = adk::LlmAgent::builder("planner").model(planner_model).sub_agent(weather).build();
        Local local(planner);
        adk::Content message3 = user_text("Weather in Paris?");
        std::vector<adk::Event> events = co_await local.say(std::move(message3));
        const adk::Event* answer = final_answer(events);
        REQUIRE(answer);
        CHECK(answer->author == "remote_weather");
        CHECK(answer->text() == "It is sunny in Paris.");

        auto as_tool = a2a::RemoteA2aAgent::create({.name = "remote_weather", .card_url = remote.url("weather")});
        auto caller_model = std::make_shared<ScriptedModel>(std::vector<ScriptedModel::Turn>{
            adk::LlmResponse::function_call("remote_weather", json::object{{"request", "Weather in Paris?"}}),
            adk::LlmResponse::text("The remote agent says it is sunny.")});
        auto caller = adk::LlmAgent::builder("caller")
                          .model(caller_model)
                          .tool(std::make_shared<adk::AgentTool>(as_tool))
                          .build();
        Local tool_local(caller);
        adk::Content message4 = user_text("Weather?");
        std::vector<adk::Event> tool_events = co_await tool_local.say(std::move(message4));
        bool answered = false;
        for (const auto& e : tool_events)
            for (const auto& r : e.function_responses())
                answered |= r.name == "remote_weather" && json::serialize(r.response).find("sunny in Paris") != std::string::npos;
        CHECK(answered);
        remote.server.stop();
    }());
}

TEST_CASE("RemoteA2aAgent: a remote task that waits for a person pauses the local invocation, and the answer goes on",
          "[a2a][remote]")
{
    asio::io_context ioc;
    Remote remote(ioc);
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
      for (const char* version : {"1.0", "0.3"}) {
        INFO(version);
        a2a::AgentCard card = co_await card_with(remote, "bank", "JSONRPC", version);
        auto bank = a2a::RemoteA2aAgent::create({.name = "bank", .card = card});
        Local local(bank);
        adk::Content message5 = user_text("Send 5000 euros to Bob.");
        std::vector<adk::Event> asked = co_await local.say(std::move(message5));
        const adk::Event* question = nullptr;
        for (const auto& e : asked)
            if (!e.long_running_tool_ids.empty())
                question = &e;
        REQUIRE(question);
        REQUIRE(question->function_calls().size() == 1);
        const adk::FunctionCall call = question->function_calls()[0];
        CHECK(call.name == "ask_for_approval");
        CHECK(question->long_running_tool_ids == std::vector<std::string>{call.id});
        CHECK(question->custom_metadata.at("a2a:task_state") == "TASK_STATE_INPUT_REQUIRED");
        CHECK(final_answer(asked) == question);  // no answer yet: the question is the last word

        adk::Part approval;
        approval.function_response.emplace(call.id, call.name, json::object{{"status", "approved"}});
        adk::Content message6 = adk::Content("user", {approval});
        std::vector<adk::Event> done = co_await local.say(std::move(message6));
        const adk::Event* answer = final_answer(done);
        REQUIRE(answer);
        CHECK(answer->text() == "Approved: sent.");
        // The same remote task went on.
        CHECK(answer->custom_metadata.at("a2a:task_id") == question->custom_metadata.at("a2a:task_id"));
      }
        remote.server.stop();
    }());
}

TEST_CASE("RemoteA2aAgent: a remote tool that needs confirmation is confirmed by the local person", "[a2a][remote]")
{
    asio::io_context ioc;
    Remote remote(ioc);
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
      for (const char* version : {"1.0", "0.3"}) {
        INFO(version);
        a2a::AgentCard card = co_await card_with(remote, "vault", "JSONRPC", version);
        Local local(a2a::RemoteA2aAgent::create({.name = "vault", .card = card}));
        adk::Content open = user_text("Open the vault.");
        std::vector<adk::Event> asked = co_await local.say(std::move(open));
        const adk::Event* question = nullptr;
        for (const auto& e : asked)
            if (!e.long_running_tool_ids.empty())
                question = &e;
        REQUIRE(question);
        std::optional<adk::FunctionCall> confirm;
        for (const auto& call : question->function_calls())
            if (call.name == "adk_request_confirmation")
                confirm = call;
        REQUIRE(confirm);
        CHECK(question->long_running_tool_ids == std::vector<std::string>{confirm->id});
        CHECK(confirm->args.at("originalFunctionCall").at("name") == "open_vault");
        CHECK(question->custom_metadata.at("a2a:task_state") == "TASK_STATE_INPUT_REQUIRED");

        // The local runner checks the answer as ADK's confirmation, and it goes to the remote task.
        adk::Part yes;
        yes.function_response.emplace(confirm->id, confirm->name, json::object{{"confirmed", true}});
        adk::Content answer_message("user", {yes});
        std::vector<adk::Event> done = co_await local.say(std::move(answer_message));
        const adk::Event* answer = final_answer(done);
        REQUIRE(answer);
        CHECK(answer->text() == "The vault is open.");
        CHECK(answer->custom_metadata.at("a2a:task_id") == question->custom_metadata.at("a2a:task_id"));
        bool opened = false;
        for (const auto& e : done)
            for (const auto& r : e.function_responses())
                opened |= r.name == "open_vault" && r.response.contains("open");
        CHECK(opened);  // the remote tool ran, and said so
      }
        remote.server.stop();
    }());
}

TEST_CASE("RemoteA2aAgent: a failed remote task is an error event, never an answer", "[a2a][remote]")
{
    asio::io_context ioc;
    Remote remote(ioc);
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        for (const char* version : {"1.0", "0.3"})
        for (bool streaming : {true, false}) {
            INFO(version << (streaming ? " streaming" : ""));
            a2a::AgentCard card = co_await card_with(remote, "broken", "JSONRPC", version);
            auto broken = a2a::RemoteA2aAgent::create({.name = "broken", .card = card, .streaming = streaming});
            Local local(broken);
            adk::Content message7 = user_text("Hello?");
            std::vector<adk::Event> events = co_await local.say(std::move(message7));
            REQUIRE(!events.empty());
            const adk::Event& last = events.back();
            CHECK(last.error_code == "A2A_TASK_FAILED");
            REQUIRE(last.error_message);
            CHECK_THAT(*last.error_message, Catch::Contains("overloaded"));
            CHECK(!last.content);
        }
        remote.server.stop();
    }());
}

TEST_CASE("RemoteA2aAgent: a remote that streams artifact chunks and never the last one is stopped at "
          "RunConfig::max_answer_bytes",
          "[a2a][remote]")
{
    asio::io_context ioc;
    Remote remote(ioc);
    // The hostile remote: a task, then 512 KiB chunks of one artifact, appended, none of them the last.
    int chunks_sent = 0;
    adk::net::HttpServer hostile(
        ioc.get_executor(), adk::net::HttpServerOptions(),
        [&](adk::net::IncomingRequest&, adk::net::ResponseWriter& res) -> asio::awaitable<void> {
            co_await res.begin_stream(200, "text/event-stream");
            const std::string first = working_task_frame();
            co_await res.write(first);
            const std::string text(512 << 10, 'x');
            for (int i = 0; i < 64; ++i) {
                const json::value chunk = json::object{
                    {"artifactUpdate",
                     json::object{{"taskId", "t1"}, {"contextId", "c1"}, {"append", i > 0}, {"lastChunk", false},
                                  {"artifact", json::object{{"artifactId", "a1"},
                                                            {"parts", json::array{json::object{{"text", text}}}}}}}}};
                const std::string frame = "data: " + json::serialize(chunk) + "\n\n";
                co_await res.write(frame);
                ++chunks_sent;
            }
            co_await res.end_stream();
        });
    hostile.start();
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        a2a::AgentCard card = co_await card_with(remote, "weather", "HTTP+JSON", "1.0");
        REQUIRE(card.supported_interfaces.size() == 1);
        card.supported_interfaces[0].url = hostile.base_url() + "/a2a/weather";
        auto agent = a2a::RemoteA2aAgent::create({.card = card});
        Local local(agent);
        local.config.max_answer_bytes = std::size_t{2} << 20;
        std::optional<std::string> failure;
        try {
            (void)co_await local.say(user_text("Weather?"));
        } catch (const adk::Error& e) {
            failure = e.message();
        }
        REQUIRE(failure);
        CHECK_THAT(*failure, Catch::Contains("without their last chunk (RunConfig::max_answer_bytes)"));
        CHECK(chunks_sent < 64);  // the stream was left, not read to its end
        hostile.stop();
        remote.server.stop();
    }());
}

TEST_CASE("RemoteA2aAgent: a remote that sends keep-alives and no update is left at update_timeout, its task "
          "cancelled",
          "[a2a][remote]")
{
    // On the test's clock, moved a second at each turn: keep-alives every 15 s, an update_timeout of 2 minutes.
    adk::testing::ManualClock clock;
    asio::io_context ioc;
    Remote remote(ioc);
    // The hostile remote: a task, then an SSE comment every 15 s, forever; it notes a CancelTask.
    bool cancel_asked = false;
    adk::net::HttpServer hostile(
        ioc.get_executor(), adk::net::HttpServerOptions(),
        [&](adk::net::IncomingRequest& req, adk::net::ResponseWriter& res) -> asio::awaitable<void> {
            if (req.target.find(":cancel") != std::string::npos) {
                cancel_asked = true;
                co_await res.send(404, "application/json", "{}");
                co_return;
            }
            co_await res.begin_stream(200, "text/event-stream");
            const std::string first = working_task_frame();
            co_await res.write(first);
            adk::Timer pause(co_await asio::this_coro::executor);
            for (;;) {
                pause.expires_after(std::chrono::seconds(15));
                co_await pause.async_wait(asio::use_awaitable);
                const std::string keep_alive = ": keep-alive\n\n";
                co_await res.write(keep_alive);  // throws once the client has left
            }
        });
    hostile.start();
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        a2a::AgentCard card = co_await card_with(remote, "weather", "HTTP+JSON", "1.0");
        REQUIRE(card.supported_interfaces.size() == 1);
        card.supported_interfaces[0].url = hostile.base_url() + "/a2a/weather";
        auto agent = a2a::RemoteA2aAgent::create({.card = card, .update_timeout = std::chrono::minutes(2)});
        Local local(agent);
        std::optional<adk::Error> failure;
        const adk::Clock::time_point asked = adk::Clock::now();
        try {
            auto saying = local.say(user_text("Weather?"));
            (void)co_await adk::test::passing_time(clock, std::chrono::seconds(1), std::move(saying));
        } catch (const adk::Error& e) {
            failure = e;
        }
        REQUIRE(failure);
        CHECK(adk::Clock::now() - asked >= std::chrono::minutes(2));  // left when the timeout passed, not before
        CHECK(failure->code() == adk::errc::timed_out);
        CHECK_THAT(failure->message(), Catch::Contains("sent only keep-alives for"));
        CHECK_THAT(failure->message(), Catch::Contains("RemoteAgentOptions::update_timeout"));
        const bool cancelled = co_await adk::test::eventually([&] { return cancel_asked; });
        CHECK(cancelled);
        hostile.stop();
        remote.server.stop();
    }());
}

TEST_CASE("RemoteA2aAgent: cancelling the local invocation cancels the remote task", "[a2a][remote]")
{
    asio::io_context ioc;
    Remote remote(ioc);
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        auto gated = a2a::RemoteA2aAgent::create({.name = "gated", .card_url = remote.url("gated")});
        Local local(gated);
        co_await local.create();
        adk::RunRequest request("u", "s", user_text("Go through."));
        request.run_config.streaming_mode = adk::StreamingMode::sse;
        adk::Runner::Started started = co_await local.runner.start(std::move(request));
        std::string task_id;
        while (auto e = co_await started.events.next()) {  // up to the remote's call, which waits at the gate
            if (!e->function_calls().empty()) {
                task_id = std::string(e->custom_metadata.at("a2a:task_id").as_string());
                break;
            }
        }
        REQUIRE(!task_id.empty());
        CHECK(local.runner.cancel(started.invocation_id));
        try {
            while (co_await started.events.next()) {
            }
        } catch (const adk::Error& e) {
            CHECK(e.code() == adk::errc::cancelled);
        }
        // The remote task is cancelled (the CancelTask goes out after the local invocation stops).
        adk::net::HttpClient client;
        std::string state;
        for (int i = 0; i < 500 && state != "TASK_STATE_CANCELED"; ++i) {
            adk::net::HttpRequest get("GET", remote.url("gated") + "/tasks/" + task_id);
            adk::net::HttpResponse res = co_await client.send(std::move(get));
            const std::string body = co_await res.read_all();
            state = std::string(json::parse(body).at("status").at("state").as_string());
            asio::steady_timer poll(ioc, std::chrono::milliseconds(2));
            co_await poll.async_wait(asio::use_awaitable);
        }
        CHECK(state == "TASK_STATE_CANCELED");
        remote.server.stop();
    }());
}

TEST_CASE("RemoteA2aAgent: cards it cannot use are refused with what is wrong", "[a2a][remote]")
{
    CHECK_THROWS_WITH(a2a::RemoteA2aAgent::create({.name = "x"}), Catch::Contains("card"));
    CHECK_THROWS_WITH(a2a::RemoteA2aAgent::create({.card_url = "http://127.0.0.1:1/a2a/x"}), Catch::Contains("name"));
    CHECK_THROWS_AS(a2a::RemoteA2aAgent::create({.name = "x", .card_url = "ftp://host/card.json"}), adk::Error);

    asio::io_context ioc;
    Remote remote(ioc);
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        auto missing = a2a::RemoteA2aAgent::create({.name = "missing", .card_url = remote.url("nope")});
        Local local(missing);
        std::string why;
        try {
            adk::Content message8 = user_text("Hello?");
            (void)co_await local.say(std::move(message8));
        } catch (const adk::Error& e) {
            why = e.what();
        }
        CHECK_THAT(why, Catch::Contains("HTTP 404"));

        a2a::AgentCard old_card = co_await card_with(remote, "weather", "GRPC", "1.0");  // none it speaks
        old_card.extra.erase("url");
        auto old = a2a::RemoteA2aAgent::create({.card = old_card});
        Local old_local(old);
        std::string old_why;
        try {
            adk::Content message9 = user_text("Hello?");
            (void)co_await old_local.say(std::move(message9));
        } catch (const adk::Error& e) {
            old_why = e.what();
        }
        CHECK_THAT(old_why, Catch::Contains("no interface RemoteA2aAgent speaks"));
        remote.server.stop();
    }());
}

namespace {

// The question an agent asked for a credential (adk_request_credential) among `events`; null when none.
const adk::Event* credential_question(const std::vector<adk::Event>& events)
{
    for (const auto& e : events)
        for (const auto& call : e.function_calls())
            if (call.name == "adk_request_credential")
                return &e;
    return nullptr;
}

// The person's answer to that question: the auth config asked with, a bearer token filled in.
adk::Content bearer_answer(const adk::Event& question, std::string token)
{
    const adk::FunctionCall call = question.function_calls()[0];
    json::object config = call.args.at("authConfig").as_object();
    config["rawAuthCredential"] = json::object{
        {"authType", "http"},
        {"http", json::object{{"scheme", "bearer"}, {"credentials", json::object{{"token", std::move(token)}}}}}};
    adk::Part answer;
    answer.function_response.emplace(call.id, call.name, std::move(config));
    return adk::Content("user", {answer});
}

}  // namespace

TEST_CASE("RemoteA2aAgent: a card that requires a bearer token: the person is asked, the token kept and presented",
          "[a2a][remote]")
{
    asio::io_context ioc;
    Remote remote(ioc, "s3cret-token");
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        for (const auto& [binding, version] : std::vector<std::pair<std::string, std::string>>{
                 {"JSONRPC", "1.0"}, {"HTTP+JSON", "1.0"}, {"JSONRPC", "0.3"}}) {
            INFO(binding << " " << version);
            a2a::AgentCard card = co_await card_with(remote, "weather", binding, version);  // public: no token
            Local local(a2a::RemoteA2aAgent::create({.card = card}));

            // No credential kept: the person is asked, and nothing goes to the remote agent.
            adk::Content hello = user_text("Weather in Paris?");
            std::vector<adk::Event> asked = co_await local.say(std::move(hello));
            const adk::Event* question = credential_question(asked);
            REQUIRE(question);
            CHECK(question->author == "weather_agent");
            const adk::FunctionCall call = question->function_calls()[0];
            CHECK(question->long_running_tool_ids == std::vector<std::string>{call.id});
            const json::object& config = call.args.at("authConfig").as_object();
            CHECK(config.at("authScheme") == json::object{{"type", "http"}, {"scheme", "bearer"}});
            CHECK_THAT(std::string(config.at("credentialKey").as_string()), Catch::StartsWith("a2a http://127.0.0.1:"));
            CHECK_THAT(std::string(call.args.at("message").as_string()),
                       Catch::Contains("requires a credential") && Catch::Contains("a bearer token"));
            CHECK(final_answer(asked) == question);

            // A wrong token: the remote refuses it (401), and the person is asked again.
            adk::Content wrong = bearer_answer(*question, "not-the-token");
            std::vector<adk::Event> refused = co_await local.say(std::move(wrong));
            const adk::Event* again = credential_question(refused);
            REQUIRE(again);
            CHECK_THAT(std::string(again->function_calls()[0].args.at("message").as_string()),
                       Catch::Contains("refused the credential kept for it (HTTP 401"));

            // The right one: the turn the person began goes to the remote agent.
            adk::Content right = bearer_answer(*again, "s3cret-token");
            std::vector<adk::Event> done = co_await local.say(std::move(right));
            const adk::Event* answer = final_answer(done);
            REQUIRE(answer);
            CHECK(answer->text() == "It is sunny in Paris.");
            CHECK(credential_question(done) == nullptr);

            // Kept: the next turn is not asked about it.
            adk::Content next = user_text("And tomorrow?");
            std::vector<adk::Event> later = co_await local.say(std::move(next));
            CHECK(credential_question(later) == nullptr);
            REQUIRE(final_answer(later));
            CHECK(final_answer(later)->text() == "It is sunny in Paris.");

            // The token is kept by the credential service, never in the session.
            adk::GetSessionRequest get("local", "u", "s");
            std::optional<adk::Session> session = co_await local.sessions->get_session(std::move(get));
            REQUIRE(session);
            for (const adk::Event& e : session->events)
                CHECK(json::serialize(json::value_from(e)).find("s3cret-token") == std::string::npos);
        }

        // A credential kept beforehand (the operator's, for this user): no question.
        a2a::AgentCard card = co_await card_with(remote, "weather", "JSONRPC", "1.0");
        const std::optional<a2a::CardAuth> auth = a2a::card_auth(card, card.supported_interfaces[0].url);
        REQUIRE(auth);
        Local local(a2a::RemoteA2aAgent::create({.card = card}));
        json::object kept = auth->auth_config;
        kept["rawAuthCredential"] = json::object{
            {"authType", "http"}, {"http", json::object{{"credentials", json::object{{"token", "s3cret-token"}}}}}};
        co_await local.credentials->save_credential(
            adk::CredentialKey("local", "u", adk::credential_key_of(auth->auth_config)), std::move(kept));
        adk::Content hello = user_text("Weather in Rome?");
        std::vector<adk::Event> events = co_await local.say(std::move(hello));
        CHECK(credential_question(events) == nullptr);
        REQUIRE(final_answer(events));
        CHECK(final_answer(events)->text() == "It is sunny in Paris.");

        // Inside an AgentTool: the tool's runner (app: the agent's name) reads the caller's CredentialService.
        auto caller_model = std::make_shared<ScriptedModel>(std::vector<ScriptedModel::Turn>{
            adk::LlmResponse::function_call("weather_agent", json::object{{"request", "Weather in Paris?"}}),
            adk::LlmResponse::text("Sunny, it says.")});
        auto caller = adk::LlmAgent::builder("caller")
                          .model(caller_model)
                          .tool(std::make_shared<adk::AgentTool>(a2a::RemoteA2aAgent::create({.card = card})))
                          .build();
        Local tool_local(caller);
        json::object for_tool = auth->auth_config;
        for_tool["rawAuthCredential"] = json::object{
            {"authType", "http"}, {"http", json::object{{"credentials", json::object{{"token", "s3cret-token"}}}}}};
        co_await tool_local.credentials->save_credential(
            adk::CredentialKey("weather_agent", "u", adk::credential_key_of(auth->auth_config)), std::move(for_tool));
        adk::Content ask = user_text("Weather?");
        std::vector<adk::Event> tool_events = co_await tool_local.say(std::move(ask));
        bool answered = false;
        for (const auto& e : tool_events)
            for (const auto& r : e.function_responses())
                answered |= json::serialize(r.response).find("sunny in Paris") != std::string::npos;
        CHECK(answered);

        // A bearer_token in the options: presented as it is, nobody asked.
        Local given(a2a::RemoteA2aAgent::create({.card = card, .bearer_token = "s3cret-token"}));
        adk::Content hi = user_text("Weather in Oslo?");
        std::vector<adk::Event> direct = co_await given.say(std::move(hi));
        CHECK(credential_question(direct) == nullptr);
        REQUIRE(final_answer(direct));
        CHECK(final_answer(direct)->text() == "It is sunny in Paris.");
        remote.server.stop();
    }());
}

TEST_CASE("RemoteA2aAgent: a card that requires a scheme it does not speak is refused with what is wrong",
          "[a2a][remote]")
{
    asio::io_context ioc;
    Remote remote(ioc);
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        a2a::AgentCard card = co_await card_with(remote, "weather", "JSONRPC", "1.0");
        card.security_schemes["mtls"] = json::object{{"mtlsSecurityScheme", json::object{}}};
        card.security_requirements.push_back(
            json::object{{"schemes", json::object{{"mtls", json::object{{"list", json::array{}}}}}}});
        Local local(a2a::RemoteA2aAgent::create({.card = card}));
        std::string why;
        try {
            adk::Content hello = user_text("Hello?");
            (void)co_await local.say(std::move(hello));
        } catch (const adk::Error& e) {
            why = e.what();
        }
        CHECK_THAT(why, Catch::Contains("requires 'mtls'") && Catch::Contains("does not speak"));
        remote.server.stop();
    }());
}
