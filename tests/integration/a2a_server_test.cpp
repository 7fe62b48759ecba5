// adk::a2a::Server mounted on an ApiServer, over real loopback HTTP: the agent card of each app, and tasks sent,
// streamed, read and cancelled on both bindings (JSON-RPC and HTTP+JSON).
#include <adk/a2a/server.hpp>
#include <adk/a2a/v03.hpp>
#include <adk/adk.hpp>
#include <adk/core/ids.hpp>
#include <adk/core/log.hpp>
#include <adk/net/http_client.hpp>
#include <adk/server/api_server.hpp>
#include <adk/telemetry/metered_session_service.hpp>

#include "support/a2a_apps.hpp"
#include "support/api_client.hpp"
#include "support/run.hpp"
#include "support/workflow_nodes.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_to.hpp>

#include <catch2/catch.hpp>

#include <map>
#include <mutex>

namespace a2a = adk::a2a;
namespace asio = boost::asio;
namespace json = boost::json;
using adk::test::FrameReader;
using adk::test::no_retries;
using adk::test::options_with;
using adk::testing::ScriptedModel;

namespace {

std::shared_ptr<adk::Agent> travel_agent()
{
    auto tool = adk::FunctionTool::create(
        "find_hotel", "Finds a hotel in a city.", json::parse(R"({"type":"object","properties":{}})"),
        [](adk::ToolContext&, json::object) -> asio::awaitable<json::value> { co_return json::object{}; });
    auto model = std::make_shared<adk::testing::ScriptedModel>(std::vector<adk::testing::ScriptedModel::Turn>{});
    auto flights = adk::LlmAgent::builder("flight_agent").description("Books flights.").model(model).build();
    return adk::LlmAgent::builder("travel_planner")
        .description("Plans trips.")
        .model(model)
        .tool(tool)
        .sub_agent(flights)
        .build();
}

std::shared_ptr<adk::Agent> weather_agent(std::shared_ptr<ScriptedModel> model)
{
    auto tool = adk::FunctionTool::create(
        "get_weather", "Returns the weather for a city.", json::parse(R"({"type":"object","properties":{"city":{"type":"string"}}})"),
        [](adk::ToolContext&, json::object args) -> asio::awaitable<json::value> {
            co_return json::object{{"city", args["city"]}, {"sky", "sunny"}};
        });
    return adk::LlmAgent::builder("weather_agent").model(std::move(model)).tool(tool).build();
}

asio::awaitable<adk::net::HttpResponse> post(adk::net::HttpClient& client, const adk::server::ApiServer& server,
                                             std::string_view path, const json::value& body)
{
    adk::net::HttpRequest req("POST", server.base_url() + std::string(path));
    req.set("content-type", "application/json");
    req.body = json::serialize(body);
    co_return co_await client.send(std::move(req));
}

json::value user_message(std::string_view text, std::string_view context = {})
{
    json::object m{{"messageId", adk::new_uuid()}, {"role", "ROLE_USER"},
                   {"parts", json::array{json::object{{"text", text}}}}};
    if (!context.empty())
        m["contextId"] = context;
    return m;
}

json::value rpc_request(std::string_view method, json::value params, int id = 1)
{
    return json::object{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}

// A weather app: a call, its answer streamed in chunks, for each task sent.
class WeatherServer {
public:
    explicit WeatherServer(int tasks)
    {
        std::vector<ScriptedModel::Turn> turns;
        for (int i = 0; i < tasks; ++i) {
            turns.push_back(adk::LlmResponse::function_call("get_weather", json::object{{"city", "Paris"}}));
            turns.push_back(ScriptedModel::chunks({"It is ", "sunny ", "in Paris."}));
        }
        model = std::make_shared<ScriptedModel>(std::move(turns));
        // The sessions are read through MeteredSessionService: the tests count the reads a request makes.
        auto metered = std::make_shared<adk::telemetry::MeteredSessionService>(sessions, meter, "memory");
        server = std::make_unique<adk::server::ApiServer>(ioc.get_executor(),
                                                          std::vector<adk::server::App>{{"weather", weather_agent(model)}},
                                                          options_with(metered));
        a2a = std::make_unique<a2a::Server>(*server);
        a2a->mount();
        server->start();
    }

    // Sessions read so far (GetSession of the session service).
    std::uint64_t session_reads() const
    {
        for (const auto& m : meter->collect().metrics)
            if (m.name == "db.client.operation.duration")
                for (const auto& p : m.points)
                    for (const auto& [key, value] : p.attributes)
                        if (key == "db.operation.name" && value == "get_session")
                            return p.count;
        return 0;
    }

    asio::io_context ioc;
    std::shared_ptr<adk::InMemorySessionService> sessions = std::make_shared<adk::InMemorySessionService>();
    std::shared_ptr<adk::telemetry::Meter> meter = std::make_shared<adk::telemetry::Meter>();
    std::shared_ptr<ScriptedModel> model;
    std::unique_ptr<adk::server::ApiServer> server;
    std::unique_ptr<a2a::Server> a2a;
    adk::net::HttpClient client{no_retries()};
};

asio::awaitable<adk::net::HttpResponse> get(adk::net::HttpClient& client, const adk::server::ApiServer& server,
                                            std::string_view path, std::string_view token)
{
    adk::net::HttpRequest req("GET", server.base_url() + std::string(path));
    if (!token.empty())
        req.set("authorization", "Bearer " + std::string(token));
    co_return co_await client.send(std::move(req));
}

}  // namespace

TEST_CASE("A2A: an app's agent card names its skills, its interfaces and the bearer scheme, and is public", "[a2a][server]")
{
    asio::io_context ioc;
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::server::ApiServerOptions options = options_with(sessions);
    options.bearer_token = "s3cret";
    adk::server::ApiServer server(ioc.get_executor(), {{"travel", travel_agent()}}, options);
    a2a::Server a2a_server(server);
    a2a_server.mount();
    server.start();

    adk::net::HttpClient client(no_retries());
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        adk::net::HttpResponse res = co_await get(client, server, "/a2a/travel/.well-known/agent-card.json", "s3cret");
        CHECK(res.status() == 200);
        CHECK(res.header("content-type") == "application/json");
        const std::string body = co_await res.read_all();
        const auto card = json::value_to<a2a::AgentCard>(json::parse(body));
        CHECK(card.name == "travel_planner");
        CHECK(card.description == "Plans trips.");
        const std::string endpoint = server.base_url() + "/a2a/travel";
        REQUIRE(card.find_interface("JSONRPC", "1.0"));
        CHECK(card.find_interface("JSONRPC", "1.0")->url == endpoint);
        REQUIRE(card.find_interface("HTTP+JSON", "1.0"));
        CHECK(card.find_interface("HTTP+JSON", "1.0")->url == endpoint);
        CHECK(card.capabilities.streaming == true);
        REQUIRE(card.skills.size() == 3);  // the agent, its tool, its sub-agent
        CHECK(card.skills[0].id == "travel_planner");
        CHECK(card.skills[1].name == "find_hotel");
        CHECK(card.skills[1].description == "Finds a hotel in a city.");
        CHECK(card.skills[1].tags == std::vector<std::string>{"tool"});
        CHECK(card.skills[2].id == "travel_planner-flight_agent");
        CHECK(card.skills[2].description == "Books flights.");
        REQUIRE(card.security_schemes.contains("bearer"));
        CHECK(card.security_schemes.at("bearer").at("httpAuthSecurityScheme").at("scheme") == "Bearer");
        CHECK(card.security_requirements.size() == 1);

        // The card is public (clients read it to learn how to authenticate); the tasks are not.
        adk::net::HttpResponse open = co_await get(client, server, "/a2a/travel/.well-known/agent-card.json", "");
        CHECK(open.status() == 200);
        const std::string open_body = co_await open.read_all();
        CHECK(json::value_to<a2a::AgentCard>(json::parse(open_body)) == card);
        adk::net::HttpResponse refused = co_await get(client, server, "/a2a/travel/tasks", "");
        CHECK(refused.status() == 401);
        (void)co_await refused.read_all();
        adk::net::HttpResponse sessions_refused = co_await get(client, server, "/list-apps", "");
        CHECK(sessions_refused.status() == 401);  // ADK's routes stay behind the token
        (void)co_await sessions_refused.read_all();
        adk::net::HttpRequest rpc_request("POST", server.base_url() + "/a2a/travel");
        rpc_request.body = R"({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}})";
        adk::net::HttpResponse rpc_refused = co_await client.send(std::move(rpc_request));
        CHECK(rpc_refused.status() == 401);
        (void)co_await rpc_refused.read_all();
        adk::net::HttpResponse tasks = co_await get(client, server, "/a2a/travel/tasks", "s3cret");
        CHECK(tasks.status() == 200);
        (void)co_await tasks.read_all();

        adk::net::HttpResponse unknown = co_await get(client, server, "/a2a/nope/.well-known/agent-card.json", "s3cret");
        CHECK(unknown.status() == 404);
        const std::string why = co_await unknown.read_all();
        CHECK_THAT(why, Catch::Contains("App not found: nope"));
        server.stop();
    }());
}

TEST_CASE("A2A: a card names the public URL it is given, under the mount path chosen", "[a2a][server]")
{
    asio::io_context ioc;
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::server::ApiServer server(ioc.get_executor(), {{"travel", travel_agent()}}, options_with(sessions));
    a2a::ServerOptions a2a_options;
    a2a_options.path = "/agents/";
    a2a_options.public_url = "https://agents.example.com/agents/";
    a2a::Server a2a_server(server, a2a_options);
    a2a_server.mount();
    server.start();
    CHECK_THROWS_AS(a2a::Server(server, [] {
                        a2a::ServerOptions bad;
                        bad.path = "a2a";
                        return bad;
                    }()),
                    adk::Error);

    adk::net::HttpClient client(no_retries());
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        adk::net::HttpResponse res = co_await get(client, server, "/agents/travel/.well-known/agent-card.json", "");
        CHECK(res.status() == 200);
        const std::string body = co_await res.read_all();
        const auto card = json::value_to<a2a::AgentCard>(json::parse(body));
        REQUIRE(!card.supported_interfaces.empty());
        CHECK(card.supported_interfaces[0].url == "https://agents.example.com/agents/travel");
        CHECK(card.security_schemes.empty());  // no token: no scheme
        server.stop();
    }());
}

TEST_CASE("A2A: SendMessage over HTTP+JSON runs the agent and answers the finished task", "[a2a][server]")
{
    WeatherServer f(1);
    adk::test::run(f.ioc, [&]() -> asio::awaitable<void> {
        const json::value body = json::object{{"message", user_message("Weather in Paris?", "trip-1")}};
        adk::net::HttpResponse res = co_await post(f.client, *f.server, "/a2a/weather/message:send", body);
        const unsigned status = res.status();
        const std::string text = co_await res.read_all();
        INFO(text);
        REQUIRE(status == 200);
        const json::value answer = json::parse(text);
        const auto task = json::value_to<a2a::Task>(answer.at("task"));
        CHECK(task.context_id == "trip-1");
        CHECK(task.status.state == a2a::TaskState::completed);
        REQUIRE(task.artifacts.size() == 1);
        CHECK(task.artifacts[0].parts.at(0).text() != nullptr);
        CHECK(*task.artifacts[0].parts.at(0).text() == "It is sunny in Paris.");
        REQUIRE(task.history.size() == 3);  // the client's message, the call, its result
        CHECK(task.history[0].role == a2a::Role::user);
        CHECK(task.history[0].task_id == task.id);
        CHECK(task.history[1].parts.at(0).metadata.at("adk_type") == "function_call");

        // The task is the invocation, the context the ADK session of user A2A_USER_<context>.
        adk::GetSessionRequest stored("weather", "A2A_USER_trip-1", "trip-1");
        std::optional<adk::Session> session = co_await f.sessions->get_session(std::move(stored));
        REQUIRE(session);
        REQUIRE(!session->events.empty());
        CHECK(session->events.back().invocation_id == task.id);

        adk::net::HttpResponse got = co_await get(f.client, *f.server, "/a2a/weather/tasks/" + task.id + "?historyLength=1", "");
        CHECK(got.status() == 200);
        const std::string got_text = co_await got.read_all();
        const auto again = json::value_to<a2a::Task>(json::parse(got_text));
        CHECK(again.status.state == a2a::TaskState::completed);
        CHECK(again.artifacts == task.artifacts);
        CHECK(again.history.size() == 1);  // historyLength

        adk::net::HttpResponse missing = co_await get(f.client, *f.server, "/a2a/weather/tasks/nope", "");
        CHECK(missing.status() == 404);
        (void)co_await missing.read_all();
        const json::value no_parts = json::object{{"message", json::object{{"messageId", "m"}, {"role", "ROLE_USER"}, {"parts", json::array{}}}}};
        adk::net::HttpResponse empty = co_await post(f.client, *f.server, "/a2a/weather/message:send", no_parts);
        CHECK(empty.status() == 400);
        (void)co_await empty.read_all();
        // A message of more parts than one may hold is refused before a part is made; no task starts.
        json::array many;
        for (std::size_t i = 0; i <= adk::max_content_parts; ++i)
            many.push_back(json::object{{"text", "a"}});
        const json::value too_many = json::object{
            {"message", json::object{{"messageId", "m2"}, {"contextId", "trip-2"}, {"role", "ROLE_USER"}, {"parts", many}}}};
        adk::net::HttpResponse refused = co_await post(f.client, *f.server, "/a2a/weather/message:send", too_many);
        const unsigned refused_status = refused.status();
        const std::string refused_text = co_await refused.read_all();
        CHECK(refused_status == 413);
        CHECK_THAT(refused_text, Catch::Contains("Message.parts holds 4097 parts"));
        adk::GetSessionRequest refused_session("weather", "A2A_USER_trip-2", "trip-2");
        const std::optional<adk::Session> none_stored = co_await f.sessions->get_session(std::move(refused_session));
        CHECK(!none_stored);
        f.server->stop();
    }());
}

TEST_CASE("A2A: SendStreamingMessage over JSON-RPC streams the task, its work, its answer chunk by chunk, its end",
          "[a2a][server]")
{
    WeatherServer f(1);
    adk::test::run(f.ioc, [&]() -> asio::awaitable<void> {
        const json::value request = rpc_request("SendStreamingMessage", json::object{{"message", user_message("Weather?")}}, 7);
        adk::net::HttpResponse res = co_await post(f.client, *f.server, "/a2a/weather", request);
        CHECK(res.status() == 200);
        CHECK(res.header("content-type") == "text/event-stream");
        FrameReader reader(res);
        std::vector<adk::test::Frame> frames = co_await reader.read_all();
        std::vector<a2a::StreamResponse> updates;
        for (const auto& frame : frames) {
            const json::value v = frame.json();
            CHECK(v.at("jsonrpc") == "2.0");
            CHECK(v.at("id") == 7);
            updates.push_back(a2a::stream_response_from_json(v.at("result")));
        }
        REQUIRE(updates.size() >= 6);
        const auto& first = std::get<a2a::Task>(updates.front());
        CHECK(first.status.state == a2a::TaskState::submitted);
        CHECK(!first.context_id.empty());
        CHECK(std::get<a2a::TaskStatusUpdateEvent>(updates[1]).status.state == a2a::TaskState::working);
        std::string streamed;
        bool whole = false;
        for (const auto& u : updates)
            if (const auto* a = std::get_if<a2a::TaskArtifactUpdateEvent>(&u)) {
                CHECK(a->task_id == first.id);
                if (a->last_chunk) {
                    whole = true;
                    CHECK(*a->artifact.parts.at(0).text() == "It is sunny in Paris.");
                } else {
                    streamed += *a->artifact.parts.at(0).text();
                }
            }
        CHECK(whole);
        CHECK(streamed == "It is sunny in Paris.");  // the deltas, appended
        const auto& last = std::get<a2a::TaskStatusUpdateEvent>(updates.back());
        CHECK(last.status.state == a2a::TaskState::completed);

        // GetTask, CancelTask of a finished task, and JSON-RPC's errors.
        const json::value get_task = rpc_request("GetTask", json::object{{"id", first.id}}, 8);
        adk::net::HttpResponse got = co_await post(f.client, *f.server, "/a2a/weather", get_task);
        const std::string got_text = co_await got.read_all();
        const json::value got_json = json::parse(got_text);
        CHECK(got_json.at("id") == 8);
        CHECK(json::value_to<a2a::Task>(got_json.at("result")).status.state == a2a::TaskState::completed);

        const json::value cancel = rpc_request("CancelTask", json::object{{"id", first.id}}, 9);
        adk::net::HttpResponse refused = co_await post(f.client, *f.server, "/a2a/weather", cancel);
        const std::string refused_text = co_await refused.read_all();
        CHECK(json::parse(refused_text).at("error").at("code") == a2a::code::task_not_cancelable);

        const json::value unknown_task = rpc_request("GetTask", json::object{{"id", "nope"}}, 10);
        adk::net::HttpResponse not_found = co_await post(f.client, *f.server, "/a2a/weather", unknown_task);
        const std::string not_found_text = co_await not_found.read_all();
        CHECK(json::parse(not_found_text).at("error").at("code") == a2a::code::task_not_found);

        const json::value unknown_method = rpc_request("Teleport", json::object{}, 11);
        adk::net::HttpResponse no_method = co_await post(f.client, *f.server, "/a2a/weather", unknown_method);
        const std::string no_method_text = co_await no_method.read_all();
        CHECK(json::parse(no_method_text).at("error").at("code") == -32601);

        adk::net::HttpRequest garbage("POST", f.server->base_url() + "/a2a/weather");
        garbage.body = "{not json";
        adk::net::HttpResponse parse_failed = co_await f.client.send(std::move(garbage));
        const std::string parse_text = co_await parse_failed.read_all();
        CHECK(json::parse(parse_text).at("error").at("code") == -32700);
        CHECK(json::parse(parse_text).at("id").is_null());
        f.server->stop();
    }());
}

namespace {

// An agent whose tool waits at `gate` (a timer the test cancels to let it through) before the answer.
class GatedServer {
public:
    // `grace`: how long the server keeps a run nobody follows (ApiServerOptions::run_grace).
    explicit GatedServer(std::chrono::milliseconds grace = std::chrono::seconds(30))
    {
        auto tool = adk::FunctionTool::create(
            "wait_for_gate", "Waits.", json::parse(R"({"type":"object","properties":{}})"),
            [this](adk::ToolContext&, json::object) -> asio::awaitable<json::value> {
                auto [ec] = co_await gate.async_wait(asio::as_tuple(asio::use_awaitable));
                (void)ec;  // cancelled by the test: go on
                co_return json::object{{"opened", true}};
            });
        std::vector<ScriptedModel::Turn> turns;
        for (int i = 0; i < 2; ++i) {
            turns.push_back(adk::LlmResponse::function_call("wait_for_gate", json::object{}));
            turns.push_back(ScriptedModel::chunks({"Through ", "the gate."}));
        }
        auto agent = adk::LlmAgent::builder("gated_agent")
                         .model(std::make_shared<ScriptedModel>(std::move(turns)))
                         .tool(tool)
                         .build();
        adk::server::ApiServerOptions options = options_with(sessions);
        options.run_grace = grace;
        server = std::make_unique<adk::server::ApiServer>(ioc.get_executor(),
                                                          std::vector<adk::server::App>{{"gated", agent}}, options);
        a2a = std::make_unique<a2a::Server>(*server);
        a2a->mount();
        server->start();
    }

    asio::io_context ioc;
    asio::steady_timer gate{ioc, asio::steady_timer::time_point::max()};
    std::shared_ptr<adk::InMemorySessionService> sessions = std::make_shared<adk::InMemorySessionService>();
    std::unique_ptr<adk::server::ApiServer> server;
    std::unique_ptr<a2a::Server> a2a;
    adk::net::HttpClient client{no_retries()};
};

std::vector<a2a::StreamResponse> updates_of(const std::vector<adk::test::Frame>& frames)
{
    std::vector<a2a::StreamResponse> out;
    for (const auto& frame : frames)
        out.push_back(a2a::stream_response_from_json(frame.json()));
    return out;
}

}  // namespace

TEST_CASE("A2A: a client that drops its stream subscribes to the task and gets the task, then the rest",
          "[a2a][server]")
{
    GatedServer f;
    adk::test::run(f.ioc, [&]() -> asio::awaitable<void> {
        const json::value body = json::object{{"message", user_message("Go through.")}};
        std::string task_id;
        {
            adk::net::HttpResponse res = co_await post(f.client, *f.server, "/a2a/gated/message:stream", body);
            FrameReader reader(res);
            std::vector<adk::test::Frame> first = co_await reader.read(2);  // the task, and the call (the tool waits)
            REQUIRE(first.size() == 2);
            const auto updates = updates_of(first);
            task_id = std::get<a2a::Task>(updates[0]).id;
            CHECK(std::get<a2a::TaskStatusUpdateEvent>(updates[1]).status.state == a2a::TaskState::working);
        }  // the connection drops; the task goes on
        adk::net::HttpResponse again =
            co_await get(f.client, *f.server, "/a2a/gated/tasks/" + task_id + ":subscribe", "");
        CHECK(again.status() == 200);
        FrameReader reader(again);
        std::vector<adk::test::Frame> head = co_await reader.read(1);
        REQUIRE(head.size() == 1);
        const auto now = std::get<a2a::Task>(a2a::stream_response_from_json(head[0].json()));
        CHECK(now.id == task_id);
        CHECK(now.status.state == a2a::TaskState::working);
        REQUIRE(now.history.size() == 2);  // the client's message and the call waiting at the gate
        CHECK(now.history[1].parts.at(0).metadata.at("adk_type") == "function_call");
        f.gate.cancel();  // the tool goes on: the rest comes to the new subscriber
        std::vector<adk::test::Frame> rest = co_await reader.read_all();
        const auto updates = updates_of(rest);
        REQUIRE(updates.size() >= 3);
        CHECK(std::get<a2a::TaskStatusUpdateEvent>(updates[0]).status.message->parts.at(0).metadata.at("adk_type") ==
              "function_response");
        const auto& answer = std::get<a2a::TaskArtifactUpdateEvent>(updates[updates.size() - 2]);
        CHECK(answer.last_chunk);
        CHECK(*answer.artifact.parts.at(0).text() == "Through the gate.");
        CHECK(std::get<a2a::TaskStatusUpdateEvent>(updates.back()).status.state == a2a::TaskState::completed);
        f.server->stop();
    }());
}

TEST_CASE("A2A: CancelTask cancels the running invocation, and its stream ends CANCELED", "[a2a][server]")
{
    GatedServer f;
    adk::test::run(f.ioc, [&]() -> asio::awaitable<void> {
        const json::value request = rpc_request("SendStreamingMessage", json::object{{"message", user_message("Go.")}}, 1);
        adk::net::HttpResponse res = co_await post(f.client, *f.server, "/a2a/gated", request);
        FrameReader reader(res);
        std::vector<adk::test::Frame> first = co_await reader.read(2);
        REQUIRE(first.size() == 2);
        const std::string task_id =
            std::get<a2a::Task>(a2a::stream_response_from_json(first[0].json().at("result"))).id;

        adk::net::HttpRequest cancel("POST", f.server->base_url() + "/a2a/gated/tasks/" + task_id + ":cancel");
        adk::net::HttpResponse cancelled = co_await f.client.send(std::move(cancel));
        CHECK(cancelled.status() == 200);
        const std::string text = co_await cancelled.read_all();
        CHECK(json::value_to<a2a::Task>(json::parse(text)).status.state == a2a::TaskState::canceled);

        std::vector<adk::test::Frame> rest = co_await reader.read_all();
        REQUIRE(!rest.empty());
        const auto last = a2a::stream_response_from_json(rest.back().json().at("result"));
        CHECK(std::get<a2a::TaskStatusUpdateEvent>(last).status.state == a2a::TaskState::canceled);

        const json::value get_task = rpc_request("GetTask", json::object{{"id", task_id}}, 2);
        adk::net::HttpResponse got = co_await post(f.client, *f.server, "/a2a/gated", get_task);
        const std::string got_text = co_await got.read_all();
        CHECK(json::value_to<a2a::Task>(json::parse(got_text).at("result")).status.state == a2a::TaskState::canceled);
        adk::net::HttpRequest again("POST", f.server->base_url() + "/a2a/gated/tasks/" + task_id + ":cancel");
        adk::net::HttpResponse not_running = co_await f.client.send(std::move(again));
        CHECK(not_running.status() == 400);  // TaskNotCancelableError
        (void)co_await not_running.read_all();
        f.server->stop();
    }());
}

namespace {

// An app whose agent asks a manager (a long-running tool) before it answers: its tasks wait for their client.
class ApprovalServer {
public:
    ApprovalServer()
    {
        auto agent = adk::test::a2a_apps::bank(1);
        server = std::make_unique<adk::server::ApiServer>(ioc.get_executor(),
                                                          std::vector<adk::server::App>{{"bank", agent}},
                                                          options_with(sessions));
        a2a = std::make_unique<a2a::Server>(*server);
        a2a->mount();
        server->start();
    }

    asio::io_context ioc;
    std::shared_ptr<adk::InMemorySessionService> sessions = std::make_shared<adk::InMemorySessionService>();
    std::unique_ptr<adk::server::ApiServer> server;
    std::unique_ptr<a2a::Server> a2a;
    adk::net::HttpClient client{no_retries()};
};

asio::awaitable<json::value> read_json(adk::net::HttpResponse& res)
{
    const std::string text = co_await res.read_all();
    co_return json::parse(text);
}

}  // namespace

TEST_CASE("A2A: a task that waits for its client is answered by a message with its id, and goes on to its end",
          "[a2a][server]")
{
    ApprovalServer f;
    adk::test::run(f.ioc, [&]() -> asio::awaitable<void> {
        const json::value body = json::object{{"message", user_message("Send 5000 euros to Bob.", "bank-1")}};
        adk::net::HttpResponse res = co_await post(f.client, *f.server, "/a2a/bank/message:send", body);
        CHECK(res.status() == 200);
        const json::value res_json = co_await read_json(res);
        const auto asked = json::value_to<a2a::Task>(res_json.at("task"));
        REQUIRE(asked.status.state == a2a::TaskState::input_required);
        REQUIRE(asked.status.message);
        const a2a::Part& call = asked.status.message->parts.at(0);
        CHECK(call.metadata.at("adk_is_long_running") == true);
        const json::object& call_data = std::get<a2a::Part::Data>(call.content).value.as_object();

        auto answer = [&](json::value parts, std::string_view context) {
            json::object m{{"messageId", adk::new_uuid()}, {"role", "ROLE_USER"}, {"taskId", asked.id},
                           {"parts", std::move(parts)}};
            if (!context.empty())
                m["contextId"] = context;
            return json::value(json::object{{"message", std::move(m)}});
        };
        // Text does not answer the call; another context is not the task's: both refused, the task still waits.
        const json::value text_answer = answer(json::array{json::object{{"text", "yes"}}}, "");
        adk::net::HttpResponse text_only = co_await post(f.client, *f.server, "/a2a/bank/message:send", text_answer);
        CHECK(text_only.status() == 400);
        const json::value why = co_await read_json(text_only);
        CHECK(why.at("error").at("status") == "INVALID_ARGUMENT");
        CHECK_THAT(std::string(why.at("error").at("message").as_string()), Catch::Contains("function_response"));
        const json::value response_part = json::object{
            {"data", json::object{{"id", call_data.at("id")}, {"name", "ask_for_approval"},
                                  {"response", json::object{{"status", "approved"}}}}},
            {"metadata", json::object{{"adk_type", "function_response"}}}};
        const json::value other_context = answer(json::array{response_part}, "bank-2");
        adk::net::HttpResponse elsewhere = co_await post(f.client, *f.server, "/a2a/bank/message:send", other_context);
        CHECK(elsewhere.status() == 400);
        (void)co_await elsewhere.read_all();

        // The answer, streamed: the task as it stands (WORKING, the answer in its history), the rest, its end.
        const json::value approved = answer(json::array{response_part}, "bank-1");
        adk::net::HttpResponse go_on = co_await post(f.client, *f.server, "/a2a/bank/message:stream", approved);
        CHECK(go_on.status() == 200);
        FrameReader reader(go_on);
        const std::vector<adk::test::Frame> frames = co_await reader.read_all();
        const auto updates = updates_of(frames);
        REQUIRE(updates.size() >= 3);
        const auto& now = std::get<a2a::Task>(updates.front());
        CHECK(now.id == asked.id);
        CHECK(now.status.state == a2a::TaskState::working);
        REQUIRE(now.history.size() == 3);  // the request, the call, the answer
        CHECK(now.history[2].role == a2a::Role::user);
        const auto& whole = std::get<a2a::TaskArtifactUpdateEvent>(updates[updates.size() - 2]);
        CHECK(whole.task_id == asked.id);
        CHECK(whole.last_chunk);
        CHECK(*whole.artifact.parts.at(0).text() == "Approved: sent.");
        CHECK(std::get<a2a::TaskStatusUpdateEvent>(updates.back()).status.state == a2a::TaskState::completed);

        // GetTask reads both invocations as one task.
        adk::net::HttpResponse got = co_await get(f.client, *f.server, "/a2a/bank/tasks/" + asked.id, "");
        const json::value got_json = co_await read_json(got);
        const auto done = json::value_to<a2a::Task>(got_json);
        CHECK(done.status.state == a2a::TaskState::completed);
        REQUIRE(done.artifacts.size() == 1);
        CHECK(*done.artifacts[0].parts.at(0).text() == "Approved: sent.");
        CHECK(done.history.size() >= 3);

        // An ended task takes no more messages (UnsupportedOperationError, with its ErrorInfo).
        const json::value late = rpc_request("SendMessage", answer(json::array{response_part}, ""), 3);
        adk::net::HttpResponse refused = co_await post(f.client, *f.server, "/a2a/bank", late);
        const json::value refused_json = co_await read_json(refused);
        const json::value error = refused_json.at("error");
        CHECK(error.at("code") == a2a::code::unsupported_operation);
        CHECK(error.at("data").at(0).at("reason") == "UNSUPPORTED_OPERATION");
        CHECK(error.at("data").at(0).at("domain") == "a2a-protocol.org");
        f.server->stop();
    }());
}

TEST_CASE("A2A: a task that waits for its client can be cancelled, and then takes no answer", "[a2a][server]")
{
    ApprovalServer f;
    adk::test::run(f.ioc, [&]() -> asio::awaitable<void> {
        const json::value body = json::object{{"message", user_message("Send 5000 euros to Bob.")}};
        adk::net::HttpResponse res = co_await post(f.client, *f.server, "/a2a/bank/message:send", body);
        const json::value res_json = co_await read_json(res);
        const auto asked = json::value_to<a2a::Task>(res_json.at("task"));
        REQUIRE(asked.status.state == a2a::TaskState::input_required);
        adk::net::HttpRequest cancel("POST", f.server->base_url() + "/a2a/bank/tasks/" + asked.id + ":cancel");
        adk::net::HttpResponse cancelled = co_await f.client.send(std::move(cancel));
        CHECK(cancelled.status() == 200);
        const json::value cancelled_json = co_await read_json(cancelled);
        CHECK(json::value_to<a2a::Task>(cancelled_json).status.state == a2a::TaskState::canceled);
        adk::net::HttpResponse got = co_await get(f.client, *f.server, "/a2a/bank/tasks/" + asked.id, "");
        const json::value got_json = co_await read_json(got);
        CHECK(json::value_to<a2a::Task>(got_json).status.state == a2a::TaskState::canceled);
        adk::net::HttpResponse subscribed =
            co_await get(f.client, *f.server, "/a2a/bank/tasks/" + asked.id + ":subscribe", "");
        CHECK(subscribed.status() == 400);
        const json::value subscribed_json = co_await read_json(subscribed);
        CHECK(subscribed_json.at("error").at("details").at(0).at("reason") == "UNSUPPORTED_OPERATION");
        f.server->stop();
    }());
}

TEST_CASE("A2A: ListTasks filters by context and state, the most recent first, page by page", "[a2a][server]")
{
    WeatherServer f(3);
    adk::test::run(f.ioc, [&]() -> asio::awaitable<void> {
        std::vector<std::string> ids;
        for (const char* context : {"ctx-a", "ctx-b", "ctx-a"}) {
            const json::value body = json::object{{"message", user_message("Weather?", context)}};
            adk::net::HttpResponse res = co_await post(f.client, *f.server, "/a2a/weather/message:send", body);
            const json::value res_json = co_await read_json(res);
            ids.push_back(json::value_to<a2a::Task>(res_json.at("task")).id);
        }
        const std::uint64_t reads_before = f.session_reads();
        adk::net::HttpResponse all = co_await get(f.client, *f.server, "/a2a/weather/tasks", "");
        CHECK(all.status() == 200);
        const json::value all_json = co_await read_json(all);
        CHECK(f.session_reads() - reads_before == 2);  // one per context listed, not one per task
        const auto listed = json::value_to<a2a::ListTasksResponse>(all_json);
        CHECK(listed.total_size == 3);
        CHECK(listed.page_size == 50);
        CHECK(listed.next_page_token.empty());
        REQUIRE(listed.tasks.size() == 3);
        CHECK(listed.tasks[0].id == ids[2]);  // the most recently updated first
        CHECK(listed.tasks[2].id == ids[0]);
        CHECK(listed.tasks[0].artifacts.empty());  // without includeArtifacts
        CHECK(!listed.tasks[0].history.empty());

        // One context, a page at a time, with artifacts and no history.
        std::vector<std::string> paged;
        std::string token;
        do {
            std::string path = "/a2a/weather/tasks?contextId=ctx-a&pageSize=1&includeArtifacts=true&historyLength=0";
            if (!token.empty())
                path += "&pageToken=" + token;
            adk::net::HttpResponse page = co_await get(f.client, *f.server, path, "");
            REQUIRE(page.status() == 200);
            const json::value page_json = co_await read_json(page);
            const auto one = json::value_to<a2a::ListTasksResponse>(page_json);
            CHECK(one.total_size == 2);
            REQUIRE(one.tasks.size() == 1);
            CHECK(one.tasks[0].context_id == "ctx-a");
            CHECK(one.tasks[0].history.empty());
            CHECK(one.tasks[0].artifacts.size() == 1);
            paged.push_back(one.tasks[0].id);
            token = one.next_page_token;
        } while (!token.empty() && paged.size() < 5);
        CHECK(paged == std::vector<std::string>{ids[2], ids[0]});

        // Over JSON-RPC, by state; a timestamp after them all finds none.
        const json::value working = rpc_request("ListTasks", json::object{{"status", "TASK_STATE_WORKING"}}, 4);
        adk::net::HttpResponse none = co_await post(f.client, *f.server, "/a2a/weather", working);
        const json::value none_json = co_await read_json(none);
        CHECK(none_json.at("result").at("totalSize") == 0);
        CHECK(none_json.at("result").at("nextPageToken") == "");
        const json::value completed =
            rpc_request("ListTasks", json::object{{"status", "TASK_STATE_COMPLETED"}, {"contextId", "ctx-b"}}, 5);
        adk::net::HttpResponse b = co_await post(f.client, *f.server, "/a2a/weather", completed);
        const json::value b_json = co_await read_json(b);
        const auto b_list = json::value_to<a2a::ListTasksResponse>(b_json.at("result"));
        REQUIRE(b_list.tasks.size() == 1);
        CHECK(b_list.tasks[0].id == ids[1]);
        adk::net::HttpResponse future =
            co_await get(f.client, *f.server, "/a2a/weather/tasks?statusTimestampAfter=2999-01-01T00:00:00Z", "");
        const json::value future_json = co_await read_json(future);
        CHECK(json::value_to<a2a::ListTasksResponse>(future_json).total_size == 0);

        // Bad filters: a clear 400 each.
        for (const char* bad : {"?pageSize=0", "?pageSize=many", "?status=DONE", "?pageToken=nope",
                                "?statusTimestampAfter=yesterday", "?includeArtifacts=1"}) {
            const std::string path = std::string("/a2a/weather/tasks") + bad;
            adk::net::HttpResponse refused = co_await get(f.client, *f.server, path, "");
            CHECK(refused.status() == 400);
            const json::value refused_json = co_await read_json(refused);
            CHECK(refused_json.at("error").at("status") == "INVALID_ARGUMENT");
        }
        f.server->stop();
    }());
}

TEST_CASE("A2A: a task sent to return at once runs to its end with nobody following it", "[a2a][server]")
{
    adk::testing::ManualClock clock;  // the server's grace (30 s) passes on the test's clock
    GatedServer f;
    adk::test::run(f.ioc, [&]() -> asio::awaitable<void> {
        const json::value body = json::object{{"message", user_message("Go.")},
                                              {"configuration", json::object{{"returnImmediately", true}}}};
        adk::net::HttpResponse res = co_await post(f.client, *f.server, "/a2a/gated/message:send", body);
        const json::value res_json = co_await read_json(res);
        const auto task = json::value_to<a2a::Task>(res_json.at("task"));
        CHECK(task.status.state == a2a::TaskState::submitted);
        // Past the server's grace for a run nobody follows: the task goes on. (Three moves, each past the grace: the
        // grace's timer starts when the answer's writer lets the run go, a turn or two after the client read it.)
        for (int i = 0; i < 3; ++i)
            co_await clock.elapse(f.server->options().run_grace + std::chrono::seconds(1));
        f.gate.cancel();
        a2a::Task now;
        for (int polls = 0; polls < 500; ++polls) {
            adk::net::HttpResponse got = co_await get(f.client, *f.server, "/a2a/gated/tasks/" + task.id, "");
            const json::value got_json = co_await read_json(got);
            now = json::value_to<a2a::Task>(got_json);
            if (a2a::is_terminal(now.status.state))
                break;
            asio::steady_timer poll(f.ioc, std::chrono::milliseconds(2));
            co_await poll.async_wait(asio::use_awaitable);
        }
        CHECK(now.status.state == a2a::TaskState::completed);
        REQUIRE(now.artifacts.size() == 1);
        CHECK(*now.artifacts[0].parts.at(0).text() == "Through the gate.");
        f.server->stop();
    }());
}

TEST_CASE("A2A: a request for a version this server does not speak is refused with VersionNotSupportedError",
          "[a2a][server]")
{
    WeatherServer f(1);
    adk::test::run(f.ioc, [&]() -> asio::awaitable<void> {
        adk::net::HttpRequest rest("GET", f.server->base_url() + "/a2a/weather/tasks");
        rest.set("a2a-version", "0.5");
        adk::net::HttpResponse refused = co_await f.client.send(std::move(rest));
        CHECK(refused.status() == 400);
        const json::value refused_json = co_await read_json(refused);
        const json::value status = refused_json.at("error");
        CHECK(status.at("status") == "FAILED_PRECONDITION");
        CHECK(status.at("details").at(0).at("reason") == "VERSION_NOT_SUPPORTED");
        CHECK(status.at("details").at(0).at("@type") == "type.googleapis.com/google.rpc.ErrorInfo");

        adk::net::HttpResponse by_query =
            co_await get(f.client, *f.server, "/a2a/weather/tasks?A2A-Version=2.0", "");
        CHECK(by_query.status() == 400);
        (void)co_await by_query.read_all();

        adk::net::HttpRequest old_version("POST", f.server->base_url() + "/a2a/weather");
        old_version.set("a2a-version", "0.5");
        old_version.body = json::serialize(rpc_request("ListTasks", json::object{}, 2));
        adk::net::HttpResponse rpc_refused = co_await f.client.send(std::move(old_version));
        const json::value rpc_refused_json = co_await read_json(rpc_refused);
        CHECK(rpc_refused_json.at("error").at("code") == a2a::code::version_not_supported);

        adk::net::HttpRequest current("GET", f.server->base_url() + "/a2a/weather/tasks");
        current.set("a2a-version", "1.0");
        adk::net::HttpResponse served = co_await f.client.send(std::move(current));
        CHECK(served.status() == 200);
        (void)co_await served.read_all();

        adk::net::HttpResponse missing = co_await get(f.client, *f.server, "/a2a/weather/tasks/nope", "");
        CHECK(missing.status() == 404);
        const json::value missing_json = co_await read_json(missing);
        const json::value not_found = missing_json.at("error");
        CHECK(not_found.at("code") == 404);
        CHECK(not_found.at("status") == "NOT_FOUND");
        CHECK(not_found.at("details").at(0).at("reason") == "TASK_NOT_FOUND");
        f.server->stop();
    }());
}

namespace {

// A webhook: an HTTP server that keeps what is posted to it; the first `failures` posts to each path get a 500.
class Webhook {
public:
    Webhook(asio::io_context& ioc, int failures_)
        : failures(failures_),
          server(ioc.get_executor(), adk::net::HttpServerOptions(),
                 [this](adk::net::IncomingRequest& req, adk::net::ResponseWriter& res) -> asio::awaitable<void> {
                     ++attempts[req.target];
                     if (attempts[req.target] <= failures) {
                         co_await res.send(500, "text/plain", "not now");
                         co_return;
                     }
                     posts.push_back(req);
                     co_await res.send(200, "application/json", "{}");
                 })
    {
        server.start();
    }

    int failures;
    std::map<std::string, int> attempts;  // by path
    std::vector<adk::net::IncomingRequest> posts;
    adk::net::HttpServer server;
};

}  // namespace

TEST_CASE("A2A: push notifications post each status and whole artifact to the task's webhooks, retried",
          "[a2a][server]")
{
    asio::io_context ioc;
    Webhook hook(ioc, 1);  // the first post to each path fails: that notification is tried again
    auto model = std::make_shared<ScriptedModel>(std::vector<ScriptedModel::Turn>{
        adk::LlmResponse::function_call("get_weather", json::object{{"city", "Paris"}}),
        ScriptedModel::chunks({"It is ", "sunny."})});
    adk::server::ApiServer server(ioc.get_executor(), {{"weather", weather_agent(model)}},
                                  options_with(std::make_shared<adk::InMemorySessionService>()));
    a2a::ServerOptions a2a_options;
    a2a_options.push_allowed_urls = {hook.server.base_url() + "/hooks/"};
    a2a_options.push_retry_delay = std::chrono::milliseconds(1);
    a2a::Server a2a_server(server, a2a_options);
    a2a_server.mount();
    server.start();
    adk::net::HttpClient client(no_retries());
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        adk::net::HttpResponse card_res = co_await get(client, server, "/a2a/weather/.well-known/agent-card.json", "");
        const json::value card_json = co_await read_json(card_res);
        CHECK(json::value_to<a2a::AgentCard>(card_json).capabilities.push_notifications == true);

        const json::value webhook = json::object{
            {"url", hook.server.base_url() + "/hooks/a"}, {"token", "t0k"},
            {"authentication", json::object{{"scheme", "Bearer"}, {"credentials", "hook-secret"}}}};
        const json::value body = json::object{
            {"message", user_message("Weather?")},
            {"configuration", json::object{{"returnImmediately", true}, {"taskPushNotificationConfig", webhook}}}};
        adk::net::HttpResponse res = co_await post(client, server, "/a2a/weather/message:send", body);
        const json::value res_json = co_await read_json(res);
        const auto task = json::value_to<a2a::Task>(res_json.at("task"));
        // The webhook hears of the task until its end.
        for (int i = 0; i < 1000; ++i) {
            if (!hook.posts.empty() && hook.posts.back().body.find("TASK_STATE_COMPLETED") != std::string::npos)
                break;
            asio::steady_timer poll(ioc, std::chrono::milliseconds(2));
            co_await poll.async_wait(asio::use_awaitable);
        }
        REQUIRE(hook.posts.size() == 4);  // WORKING (the call), WORKING (its result), the answer, COMPLETED
        std::vector<a2a::StreamResponse> updates;
        for (const auto& p : hook.posts) {
            CHECK(p.header("authorization") == "Bearer hook-secret");
            CHECK(p.header("x-a2a-notification-token") == "t0k");
            CHECK(p.header("content-type") == "application/a2a+json");
            updates.push_back(a2a::stream_response_from_json(json::parse(p.body)));
        }
        CHECK(std::get<a2a::TaskStatusUpdateEvent>(updates[0]).task_id == task.id);
        const auto& answer = std::get<a2a::TaskArtifactUpdateEvent>(updates[2]);
        CHECK(answer.last_chunk);  // whole artifacts only: no streamed delta
        CHECK(*answer.artifact.parts.at(0).text() == "It is sunny.");
        CHECK(std::get<a2a::TaskStatusUpdateEvent>(updates[3]).status.state == a2a::TaskState::completed);
        CHECK(hook.attempts["/hooks/a"] == 5);  // the first notification twice

        // The configs of a task: listed, read, set, deleted; a URL the operator did not allow is refused.
        const std::string configs = "/a2a/weather/tasks/" + task.id + "/pushNotificationConfigs";
        adk::net::HttpResponse listed = co_await get(client, server, configs, "");
        const json::value listed_json = co_await read_json(listed);
        REQUIRE(listed_json.at("configs").as_array().size() == 1);
        const auto first = json::value_to<a2a::PushNotificationConfig>(listed_json.at("configs").at(0));
        CHECK(first.task_id == task.id);
        CHECK(first.url == hook.server.base_url() + "/hooks/a");
        CHECK(!first.id.empty());
        const json::value second = json::object{{"id", "second"}, {"url", hook.server.base_url() + "/hooks/b"}};
        adk::net::HttpResponse created = co_await post(client, server, configs, second);
        CHECK(created.status() == 200);
        const json::value created_json = co_await read_json(created);
        CHECK(created_json.at("taskId") == task.id.c_str());
        adk::net::HttpResponse one = co_await get(client, server, configs + "/second", "");
        const json::value one_json = co_await read_json(one);
        CHECK(one_json.at("url") == (hook.server.base_url() + "/hooks/b").c_str());
        adk::net::HttpRequest del("DELETE", server.base_url() + configs + "/second");
        adk::net::HttpResponse deleted = co_await client.send(std::move(del));
        CHECK(deleted.status() == 200);
        (void)co_await deleted.read_all();
        adk::net::HttpResponse gone = co_await get(client, server, configs + "/second", "");
        CHECK(gone.status() == 404);
        (void)co_await gone.read_all();
        for (const std::string& url : {hook.server.base_url() + "/elsewhere", std::string("http://127.0.0.1:1/hooks/"),
                                      hook.server.base_url() + "/hooks-evil/x", std::string("not a url")}) {
            const json::value refused_body = json::object{{"url", url}};
            adk::net::HttpResponse refused = co_await post(client, server, configs, refused_body);
            CHECK(refused.status() == 400);
            (void)co_await refused.read_all();
        }
        const json::value rpc_list = rpc_request("ListTaskPushNotificationConfigs", json::object{{"taskId", task.id}}, 3);
        adk::net::HttpResponse rpc_listed = co_await post(client, server, "/a2a/weather", rpc_list);
        const json::value rpc_json = co_await read_json(rpc_listed);
        CHECK(rpc_json.at("result").at("configs").as_array().size() == 1);
        server.stop();
        hook.server.stop();
    }());
}

TEST_CASE("A2A: a webhook keeps no member the server does not know, and the webhooks of every task are bounded "
          "together",
          "[a2a][server]")
{
    asio::io_context ioc;
    Webhook hook(ioc, 0);
    auto model = std::make_shared<ScriptedModel>(
        std::vector<ScriptedModel::Turn>{adk::LlmResponse::text("one"), adk::LlmResponse::text("two")});
    adk::server::ApiServer server(ioc.get_executor(), {{"weather", weather_agent(model)}},
                                  options_with(std::make_shared<adk::InMemorySessionService>()));
    a2a::ServerOptions a2a_options;
    a2a_options.push_allowed_urls = {hook.server.base_url() + "/hooks/"};
    a2a_options.max_push_config_bytes = 4000;  // a few webhooks of the size below
    a2a::Server a2a_server(server, a2a_options);
    a2a_server.mount();
    server.start();
    adk::net::HttpClient client(no_retries());
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        std::vector<std::string> tasks;
        for (const char* context : {"c1", "c2"}) {
            const json::value body = json::object{{"message", user_message("Weather?", context)}};
            adk::net::HttpResponse res = co_await post(client, server, "/a2a/weather/message:send", body);
            const json::value answer = co_await read_json(res);
            tasks.push_back(json::value_to<a2a::Task>(answer.at("task")).id);
        }
        // The audit's member: two million numbers, sent ten times per task.
        json::array numbers;
        numbers.resize(2'000'000, json::value(7));
        const std::string configs = "/a2a/weather/tasks/" + tasks[0] + "/pushNotificationConfigs";
        const json::value big = json::object{{"id", "big"}, {"url", hook.server.base_url() + "/hooks/a"},
                                             {"padding", numbers}, {"authentication", json::object{
                                                 {"scheme", "Bearer"}, {"credentials", "s"}, {"more", numbers}}}};
        adk::net::HttpResponse created = co_await post(client, server, configs, big);
        CHECK(created.status() == 200);
        const json::value created_json = co_await read_json(created);
        CHECK(!created_json.as_object().contains("padding"));
        CHECK(!created_json.at("authentication").as_object().contains("more"));
        const std::string big_path = configs + "/big";
        adk::net::HttpResponse read = co_await get(client, server, big_path, "");
        const json::value read_json_value = co_await read_json(read);
        CHECK(read_json_value.as_object().size() == created_json.as_object().size());
        CHECK(!read_json_value.as_object().contains("padding"));
        // A token or credentials past 4 KiB are refused; the server's webhooks together past their bound, 413.
        const json::value long_token = json::object{{"url", hook.server.base_url() + "/hooks/b"},
                                                    {"token", std::string(4097, 't')}};
        adk::net::HttpResponse refused = co_await post(client, server, configs, long_token);
        CHECK(refused.status() == 400);
        const std::string refused_text = co_await refused.read_all();
        CHECK_THAT(refused_text, Catch::Contains("token is longer than 4096 bytes"));
        int accepted = 1;
        unsigned last_status = 200;
        std::string last_text;
        for (int i = 0; i < 20 && last_status == 200; ++i) {
            const std::string task = tasks[static_cast<std::size_t>(i % 2)];
            const json::value config = json::object{{"id", "h" + std::to_string(i)},
                                                    {"url", hook.server.base_url() + "/hooks/" + std::string(300, 'p')}};
            const std::string path = "/a2a/weather/tasks/" + task + "/pushNotificationConfigs";
            adk::net::HttpResponse res = co_await post(client, server, path, config);
            last_status = res.status();
            last_text = co_await res.read_all();
            if (last_status == 200)
                ++accepted;
        }
        CHECK(last_status == 413);
        CHECK_THAT(last_text, Catch::Contains("max_push_config_bytes"));
        CHECK(accepted > 2);
        CHECK(accepted < 10);
        // Deleting one makes room for one.
        adk::net::HttpRequest del("DELETE", server.base_url() + configs + "/big");
        adk::net::HttpResponse deleted = co_await client.send(std::move(del));
        CHECK(deleted.status() == 200);
        (void)co_await deleted.read_all();
        const json::value again = json::object{{"id", "again"}, {"url", hook.server.base_url() + "/hooks/c"}};
        adk::net::HttpResponse room = co_await post(client, server, configs, again);
        CHECK(room.status() == 200);
        (void)co_await room.read_all();
        server.stop();
        hook.server.stop();
    }());
}

TEST_CASE("A2A: a task answered the moment SendMessage says it waits is taken, though its webhook is slow",
          "[a2a][server]")
{
    // The task's watch (which posts its updates to the webhooks) is held up by a webhook that answers after 300 ms,
    // so that it learns of the run's end after SendMessage has told the client: the task's state the server keeps
    // must already say INPUT_REQUIRED, or the answer is refused as "still working".
    asio::io_context ioc;
    adk::net::HttpServer slow_hook(ioc.get_executor(), adk::net::HttpServerOptions(),
                                   [](adk::net::IncomingRequest&, adk::net::ResponseWriter& res) -> asio::awaitable<void> {
                                       asio::steady_timer delay(co_await asio::this_coro::executor,
                                                                std::chrono::milliseconds(300));
                                       co_await delay.async_wait(asio::use_awaitable);
                                       co_await res.send(200, "application/json", "{}");
                                   });
    slow_hook.start();
    adk::server::ApiServer server(ioc.get_executor(), {{"bank", adk::test::a2a_apps::bank(1)}},
                                  options_with(std::make_shared<adk::InMemorySessionService>()));
    a2a::ServerOptions a2a_options;
    a2a_options.push_allowed_urls = {slow_hook.base_url() + "/hooks/"};
    a2a::Server a2a_server(server, a2a_options);
    a2a_server.mount();
    server.start();
    adk::net::HttpClient client(no_retries());
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        const json::value webhook = json::object{{"url", slow_hook.base_url() + "/hooks/a"}};
        const json::value body = json::object{{"message", user_message("Send 5 euros.")},
                                              {"configuration", json::object{{"taskPushNotificationConfig", webhook}}}};
        adk::net::HttpResponse res = co_await post(client, server, "/a2a/bank/message:send", body);
        const json::value res_json = co_await read_json(res);
        const auto asked = json::value_to<a2a::Task>(res_json.at("task"));
        REQUIRE(asked.status.state == a2a::TaskState::input_required);
        REQUIRE(asked.status.message);
        const json::object& call = std::get<a2a::Part::Data>(asked.status.message->parts.at(0).content).value.as_object();
        const json::value part = json::object{
            {"data", json::object{{"id", call.at("id")}, {"name", "ask_for_approval"},
                                  {"response", json::object{{"status", "approved"}}}}},
            {"metadata", json::object{{"adk_type", "function_response"}}}};
        const json::value answer = json::object{
            {"message", json::object{{"messageId", adk::new_uuid()}, {"role", "ROLE_USER"}, {"taskId", asked.id},
                                     {"parts", json::array{part}}}}};
        adk::net::HttpResponse answered = co_await post(client, server, "/a2a/bank/message:send", answer);
        const json::value answered_json = co_await read_json(answered);
        INFO(json::serialize(answered_json));
        CHECK(answered.status() == 200);
        REQUIRE(answered_json.as_object().contains("task"));
        const auto done = json::value_to<a2a::Task>(answered_json.at("task"));
        CHECK(done.id == asked.id);
        CHECK(done.status.state == a2a::TaskState::completed);
        server.stop();
        slow_hook.stop();
    }(), std::chrono::seconds(30));
}

TEST_CASE("A2A: a webhook that never answers holds back no state, and a webhook URL's dot segments are resolved "
          "before the allowed prefix is checked",
          "[a2a][server]")
{
    asio::io_context ioc;
    std::vector<std::string> posted;
    adk::net::HttpServer silent_hook(ioc.get_executor(), adk::net::HttpServerOptions(),
                                     [&](adk::net::IncomingRequest& req, adk::net::ResponseWriter&) -> asio::awaitable<void> {
                                         posted.push_back(req.target);
                                         asio::steady_timer never(co_await asio::this_coro::executor,
                                                                  std::chrono::hours(1));
                                         co_await never.async_wait(asio::as_tuple(asio::use_awaitable));
                                     });
    silent_hook.start();
    auto model = std::make_shared<ScriptedModel>(std::vector<ScriptedModel::Turn>{
        adk::LlmResponse::function_call("get_weather", json::object{{"city", "Paris"}}),
        ScriptedModel::chunks({"It is ", "sunny."})});
    adk::server::ApiServer server(ioc.get_executor(), {{"weather", weather_agent(model)}},
                                  options_with(std::make_shared<adk::InMemorySessionService>()));
    a2a::ServerOptions a2a_options;
    a2a_options.push_allowed_urls = {silent_hook.base_url() + "/hooks/"};
    a2a_options.push_attempts = 1;
    a2a::Server a2a_server(server, a2a_options);
    a2a_server.mount();
    server.start();
    adk::net::HttpClient client(no_retries());
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        const json::value webhook = json::object{{"url", silent_hook.base_url() + "/hooks/a"}};
        const json::value body = json::object{
            {"message", user_message("Weather?")},
            {"configuration", json::object{{"returnImmediately", true}, {"taskPushNotificationConfig", webhook}}}};
        adk::net::HttpResponse res = co_await post(client, server, "/a2a/weather/message:send", body);
        const json::value res_json = co_await read_json(res);
        const auto task = json::value_to<a2a::Task>(res_json.at("task"));
        // The webhook holds the task's first post (a 10 s timeout); its run ends meanwhile.
        for (int i = 0; i < 2000 && posted.empty(); ++i) {
            asio::steady_timer poll(ioc, std::chrono::milliseconds(2));
            co_await poll.async_wait(asio::use_awaitable);
        }
        REQUIRE(posted.size() == 1);
        a2a::TaskState state = a2a::TaskState::unspecified;
        for (int i = 0; i < 2000 && state != a2a::TaskState::completed; ++i) {
            asio::steady_timer poll(ioc, std::chrono::milliseconds(2));
            co_await poll.async_wait(asio::use_awaitable);
            const std::string task_path = "/a2a/weather/tasks/" + task.id;
            adk::net::HttpResponse got = co_await get(client, server, task_path, "");
            const json::value got_json = co_await read_json(got);
            state = json::value_to<a2a::Task>(got_json).status.state;
        }
        CHECK(state == a2a::TaskState::completed);
        CHECK(posted.size() == 1);  // still waiting for its answer

        // "..", as written or percent-encoded, cannot climb out of the allowed prefix; a URL that stays under it
        // is kept resolved.
        const std::string configs = "/a2a/weather/tasks/" + task.id + "/pushNotificationConfigs";
        for (const std::string path : {"/hooks/../admin", "/hooks/%2e%2e/admin", "/hooks/.%2E/admin", "/hooks/a/../../x"}) {
            const json::value climbing = json::object{{"url", silent_hook.base_url() + path}};
            adk::net::HttpResponse refused = co_await post(client, server, configs, climbing);
            const unsigned refused_status = refused.status();
            const std::string refused_text = co_await refused.read_all();
            INFO(path);
            CHECK(refused_status == 400);
            CHECK_THAT(refused_text, Catch::Contains("is not under one this server allows"));
        }
        const json::value resolved = json::object{{"id", "r"}, {"url", silent_hook.base_url() + "/hooks/a/./%2e%2E/b"}};
        adk::net::HttpResponse kept = co_await post(client, server, configs, resolved);
        CHECK(kept.status() == 200);
        const json::value kept_json = co_await read_json(kept);
        CHECK(kept_json.at("url") == (silent_hook.base_url() + "/hooks/b").c_str());
        server.stop();
        silent_hook.stop();
    }());
}

TEST_CASE("A2A: a webhook that cannot be reached is logged with what to check, not with where Boost failed",
          "[a2a][server]")
{
    std::mutex mutex;
    std::vector<std::string> warnings;
    adk::set_log_handler([&](adk::LogLevel level, std::string_view m) {
        std::lock_guard lock(mutex);
        if (level == adk::LogLevel::warning)
            warnings.emplace_back(m);
    });
    asio::io_context ioc;
    auto model = std::make_shared<ScriptedModel>(std::vector<ScriptedModel::Turn>{ScriptedModel::chunks({"Sunny."})});
    adk::server::ApiServer server(ioc.get_executor(), {{"weather", weather_agent(model)}},
                                  options_with(std::make_shared<adk::InMemorySessionService>()));
    a2a::ServerOptions a2a_options;
    a2a_options.push_allowed_urls = {"http://127.0.0.1:1/hooks/"};  // nothing listens on port 1
    a2a_options.push_attempts = 1;
    a2a::Server a2a_server(server, a2a_options);
    a2a_server.mount();
    server.start();
    adk::net::HttpClient client(no_retries());
    std::string logged;
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        const json::value webhook = json::object{{"url", "http://127.0.0.1:1/hooks/a"}};
        const json::value body = json::object{
            {"message", user_message("Weather?")},
            {"configuration", json::object{{"returnImmediately", true}, {"taskPushNotificationConfig", webhook}}}};
        adk::net::HttpResponse res = co_await post(client, server, "/a2a/weather/message:send", body);
        (void)co_await read_json(res);
        for (int i = 0; i < 2500 && logged.empty(); ++i) {
            asio::steady_timer poll(ioc, std::chrono::milliseconds(2));
            co_await poll.async_wait(asio::use_awaitable);
            std::lock_guard lock(mutex);
            for (const std::string& w : warnings)
                if (w.find("push notification") != std::string::npos)
                    logged = w;
        }
        server.stop();
    }());
    adk::set_log_handler({});
    CHECK_THAT(logged, Catch::Contains("failed 1 times, the last: cannot connect to http://127.0.0.1:1"));
    CHECK_THAT(logged, Catch::EndsWith("check that the server runs and that the URL is right"));
}

TEST_CASE("A2A: with no webhook allowed, push notifications are off and said to be", "[a2a][server]")
{
    WeatherServer f(1);
    adk::test::run(f.ioc, [&]() -> asio::awaitable<void> {
        const json::value body = json::object{
            {"message", user_message("Weather?")},
            {"configuration", json::object{{"taskPushNotificationConfig", json::object{{"url", "http://127.0.0.1:9/h"}}}}}};
        adk::net::HttpResponse refused = co_await post(f.client, *f.server, "/a2a/weather/message:send", body);
        CHECK(refused.status() == 400);
        const json::value why = co_await read_json(refused);
        CHECK(why.at("error").at("details").at(0).at("reason") == "PUSH_NOTIFICATION_NOT_SUPPORTED");
        const json::value create = rpc_request("CreateTaskPushNotificationConfig",
                                       json::object{{"taskId", "t"}, {"url", "http://127.0.0.1:9/h"}}, 2);
        adk::net::HttpResponse rpc_refused = co_await post(f.client, *f.server, "/a2a/weather", create);
        const json::value rpc_json = co_await read_json(rpc_refused);
        CHECK(rpc_json.at("error").at("code") == a2a::code::push_notification_not_supported);
        f.server->stop();
    }());
}

TEST_CASE("A2A 0.3: a 0.3 client's JSON-RPC methods are served in 0.3's JSON, and its card's members are there",
          "[a2a][server]")
{
    WeatherServer f(2);
    adk::test::run(f.ioc, [&]() -> asio::awaitable<void> {
        adk::net::HttpResponse card_res = co_await get(f.client, *f.server, "/a2a/weather/.well-known/agent-card.json", "");
        const json::value card = co_await read_json(card_res);
        CHECK(card.at("protocolVersion") == "0.3.0");
        CHECK(card.at("url") == (f.server->base_url() + "/a2a/weather").c_str());
        CHECK(card.at("preferredTransport") == "JSONRPC");
        CHECK(json::value_to<a2a::AgentCard>(card).find_interface("JSONRPC", "0.3"));

        const json::value message = json::parse(
            R"({"kind": "message", "messageId": "m-1", "role": "user", "parts": [{"kind": "text", "text": "Weather?"}]})");
        const json::value send = rpc_request("message/send", json::object{{"message", message}}, 1);
        adk::net::HttpResponse sent = co_await post(f.client, *f.server, "/a2a/weather", send);
        const json::value sent_json = co_await read_json(sent);
        const json::value& task = sent_json.at("result");
        CHECK(task.at("kind") == "task");
        CHECK(task.at("status").at("state") == "completed");
        CHECK(task.at("artifacts").at(0).at("parts").at(0).at("kind") == "text");
        CHECK(task.at("artifacts").at(0).at("parts").at(0).at("text") == "It is sunny in Paris.");
        CHECK(task.at("history").at(0).at("role") == "user");

        const json::value stream = rpc_request("message/stream", json::object{{"message", message}}, 2);
        adk::net::HttpResponse streamed = co_await post(f.client, *f.server, "/a2a/weather", stream);
        FrameReader reader(streamed);
        const std::vector<adk::test::Frame> frames = co_await reader.read_all();
        REQUIRE(frames.size() >= 4);
        CHECK(frames.front().json().at("result").at("kind") == "task");
        bool chunk = false;
        for (const auto& frame : frames)
            chunk |= frame.json().at("result").at("kind") == "artifact-update";
        CHECK(chunk);
        const json::value last = frames.back().json().at("result");
        CHECK(last.at("kind") == "status-update");
        CHECK(last.at("status").at("state") == "completed");
        CHECK(last.at("final") == true);

        const json::value get_task = rpc_request("tasks/get", json::object{{"id", task.at("id")}, {"historyLength", 1}}, 3);
        adk::net::HttpResponse got = co_await post(f.client, *f.server, "/a2a/weather", get_task);
        const json::value got_json = co_await read_json(got);
        CHECK(got_json.at("result").at("kind") == "task");
        CHECK(got_json.at("result").at("history").as_array().size() == 1);

        const json::value unknown = rpc_request("tasks/unheardOf", json::object{}, 4);
        adk::net::HttpResponse not_served = co_await post(f.client, *f.server, "/a2a/weather", unknown);
        const json::value not_served_json = co_await read_json(not_served);
        CHECK(not_served_json.at("error").at("code") == -32601);
        // This server allows no webhook: 0.3's push methods say so.
        const json::value push = rpc_request("tasks/pushNotificationConfig/set",
                                     json::object{{"taskId", "t"},
                                                  {"pushNotificationConfig", json::object{{"url", "http://h/x"}}}},
                                     4);
        adk::net::HttpResponse push_res = co_await post(f.client, *f.server, "/a2a/weather", push);
        const json::value push_json = co_await read_json(push_res);
        CHECK(push_json.at("error").at("code") == a2a::code::push_notification_not_supported);
        // A 1.0 message in a 0.3 method is refused with what is wrong.
        const json::value mixed = rpc_request("message/send", json::object{{"message", user_message("Weather?")}}, 5);
        adk::net::HttpResponse refused = co_await post(f.client, *f.server, "/a2a/weather", mixed);
        const json::value refused_json = co_await read_json(refused);
        CHECK(refused_json.at("error").at("code") == -32602);
        f.server->stop();
    }());
}

namespace {

// A JSON-RPC request with the bearer token.
asio::awaitable<json::value> rpc_with_token(adk::net::HttpClient& client, const adk::server::ApiServer& server,
                                            std::string_view path, const json::value& body, std::string_view token)
{
    adk::net::HttpRequest req("POST", server.base_url() + std::string(path));
    req.set("content-type", "application/json");
    if (!token.empty())
        req.set("authorization", "Bearer " + std::string(token));
    req.body = json::serialize(body);
    adk::net::HttpResponse res = co_await client.send(std::move(req));
    co_return co_await read_json(res);
}

}  // namespace

TEST_CASE("A2A: the extended agent card, for authenticated clients only, on both bindings and 0.3", "[a2a][server]")
{
    asio::io_context ioc;
    adk::server::ApiServerOptions options = options_with(std::make_shared<adk::InMemorySessionService>());
    options.bearer_token = "s3cret";
    adk::server::ApiServer server(ioc.get_executor(), {{"travel", travel_agent()}, {"plain", travel_agent()}}, options);
    a2a::ServerOptions a2a_options;
    a2a_options.extended_card = [](const std::string& app, const a2a::AgentCard& card) -> std::optional<a2a::AgentCard> {
        if (app != "travel")
            return std::nullopt;
        a2a::AgentCard extended = card;
        a2a::AgentSkill vip;
        vip.id = "vip_lounge";
        vip.name = "vip_lounge";
        vip.description = "Books lounges, for members.";
        extended.skills.push_back(std::move(vip));
        return extended;
    };
    a2a::Server a2a_server(server, a2a_options);
    a2a_server.mount();
    server.start();

    adk::net::HttpClient client(no_retries());
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        adk::net::HttpResponse res = co_await get(client, server, "/a2a/travel/.well-known/agent-card.json", "");
        const std::string body = co_await res.read_all();
        const auto card = json::value_to<a2a::AgentCard>(json::parse(body));
        CHECK(card.capabilities.extended_agent_card == true);
        CHECK(card.skills.size() == 3);

        // HTTP+JSON: GET /extendedAgentCard, behind the token.
        adk::net::HttpResponse refused = co_await get(client, server, "/a2a/travel/extendedAgentCard", "");
        CHECK(refused.status() == 401);
        (void)co_await refused.read_all();
        adk::net::HttpResponse ext = co_await get(client, server, "/a2a/travel/extendedAgentCard", "s3cret");
        CHECK(ext.status() == 200);
        const auto extended = json::value_to<a2a::AgentCard>(co_await read_json(ext));
        REQUIRE(extended.skills.size() == 4);
        CHECK(extended.skills[3].id == "vip_lounge");
        CHECK(extended.name == card.name);

        // JSON-RPC, 1.0 and 0.3.
        const json::value get_extended = rpc_request("GetExtendedAgentCard", json::object{});
        const json::value one = co_await rpc_with_token(client, server, "/a2a/travel", get_extended, "s3cret");
        CHECK(json::value_to<a2a::AgentCard>(one.at("result")) == extended);
        json::value legacy_request = rpc_request("agent/getAuthenticatedExtendedCard", json::object{});
        const json::value legacy = co_await rpc_with_token(client, server, "/a2a/travel", legacy_request, "s3cret");
        CHECK(legacy.at("result").at("skills").as_array().size() == 4);
        CHECK(legacy.at("result").at("protocolVersion") == "0.3.0");
        const json::value no_token = co_await rpc_with_token(client, server, "/a2a/travel", get_extended, "");
        CHECK(!no_token.as_object().contains("result"));

        // An app the hook has no card for.
        adk::net::HttpResponse none = co_await get(client, server, "/a2a/plain/extendedAgentCard", "s3cret");
        CHECK(none.status() == 400);
        const json::value why = co_await read_json(none);
        CHECK(why.at("error").at("details").at(0).at("reason") == "EXTENDED_AGENT_CARD_NOT_CONFIGURED");
        const json::value rpc_none = co_await rpc_with_token(client, server, "/a2a/plain", get_extended, "s3cret");
        CHECK(rpc_none.at("error").at("code") == a2a::code::extended_agent_card_not_configured);
        server.stop();
    }());
}

TEST_CASE("A2A: without an extended card the method is unsupported, and one needs a bearer token", "[a2a][server]")
{
    WeatherServer f(1);
    adk::test::run(f.ioc, [&]() -> asio::awaitable<void> {
        adk::net::HttpResponse res = co_await get(f.client, *f.server, "/a2a/weather/.well-known/agent-card.json", "");
        const auto card = json::value_to<a2a::AgentCard>(json::parse(co_await res.read_all()));
        CHECK(card.capabilities.extended_agent_card != true);
        adk::net::HttpResponse ext = co_await get(f.client, *f.server, "/a2a/weather/extendedAgentCard", "");
        CHECK(ext.status() == 400);
        const json::value why = co_await read_json(ext);
        CHECK(why.at("error").at("details").at(0).at("reason") == "UNSUPPORTED_OPERATION");
        const json::value get_extended = rpc_request("GetExtendedAgentCard", json::object{});
        adk::net::HttpResponse rpc_res = co_await post(f.client, *f.server, "/a2a/weather", get_extended);
        const json::value rpc_json = co_await read_json(rpc_res);
        CHECK(rpc_json.at("error").at("code") == a2a::code::unsupported_operation);
        f.server->stop();
    }());

    asio::io_context ioc;
    adk::server::ApiServer open(ioc.get_executor(), {{"travel", travel_agent()}},
                                options_with(std::make_shared<adk::InMemorySessionService>()));
    a2a::ServerOptions a2a_options;
    a2a_options.extended_card = [](const std::string&, const a2a::AgentCard& card) -> std::optional<a2a::AgentCard> {
        return card;
    };
    CHECK_THROWS_WITH(a2a::Server(open, a2a_options), Catch::Contains("bearer token"));
}

namespace {

// A JSON-RPC request to the weather app's endpoint, its answer read.
asio::awaitable<json::value> rpc_call(adk::net::HttpClient& client, const adk::server::ApiServer& server,
                                      const json::value& body)
{
    adk::net::HttpResponse res = co_await post(client, server, "/a2a/weather", body);
    co_return co_await read_json(res);
}

}  // namespace

TEST_CASE("A2A 0.3: push notification configs by 0.3's methods, and their webhooks posted 0.3's JSON",
          "[a2a][server]")
{
    asio::io_context ioc;
    Webhook hook(ioc, 0);
    auto model = std::make_shared<ScriptedModel>(std::vector<ScriptedModel::Turn>{
        adk::LlmResponse::function_call("get_weather", json::object{{"city", "Paris"}}),
        ScriptedModel::chunks({"It is ", "sunny."})});
    adk::server::ApiServer server(ioc.get_executor(), {{"weather", weather_agent(model)}},
                                  options_with(std::make_shared<adk::InMemorySessionService>()));
    a2a::ServerOptions a2a_options;
    a2a_options.push_allowed_urls = {hook.server.base_url() + "/hooks/"};
    a2a::Server a2a_server(server, a2a_options);
    a2a_server.mount();
    server.start();
    adk::net::HttpClient client(no_retries());
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        const json::value message = json::object{{"kind", "message"}, {"messageId", "m-1"}, {"role", "user"},
                                                 {"parts", json::array{json::object{{"kind", "text"}, {"text", "Weather?"}}}}};
        const json::value webhook = json::object{
            {"url", hook.server.base_url() + "/hooks/c"}, {"token", "t0k"},
            {"authentication", json::object{{"schemes", json::array{"Bearer"}}, {"credentials", "hook-secret"}}}};
        const json::value send = rpc_request("message/send", json::object{{"message", message},
                                                                  {"configuration", json::object{
                                                                      {"blocking", false},
                                                                      {"pushNotificationConfig", webhook}}}});
        adk::net::HttpResponse res = co_await post(client, server, "/a2a/weather", send);
        const json::value sent = co_await read_json(res);
        const std::string task_id(sent.at("result").at("id").as_string());
        for (int i = 0; i < 1000; ++i) {
            if (!hook.posts.empty() && hook.posts.back().body.find("\"completed\"") != std::string::npos)
                break;
            asio::steady_timer poll(ioc, std::chrono::milliseconds(2));
            co_await poll.async_wait(asio::use_awaitable);
        }
        REQUIRE(hook.posts.size() == 4);
        for (const auto& p : hook.posts) {
            CHECK(p.header("authorization") == "Bearer hook-secret");
            CHECK(p.header("x-a2a-notification-token") == "t0k");
            CHECK(p.header("a2a-version") == "0.3");
            CHECK(p.body.find("TASK_STATE_") == std::string::npos);  // 0.3's names, not 1.0's
        }
        const auto last = std::get<a2a::TaskStatusUpdateEvent>(
            adk::a2a::v03::stream_response_from_json(json::parse(hook.posts.back().body)));
        CHECK(last.task_id == task_id);
        CHECK(last.status.state == a2a::TaskState::completed);

        // The config set with the message is named after the task, as 0.3's SDKs name it.
        const json::value get_request = rpc_request("tasks/pushNotificationConfig/get", json::object{{"id", task_id}}, 2);
        const json::value got = co_await rpc_call(client, server, get_request);
        CHECK(got.at("result").at("taskId") == task_id.c_str());
        CHECK(got.at("result").at("pushNotificationConfig").at("id") == task_id.c_str());
        CHECK(got.at("result").at("pushNotificationConfig").at("authentication").at("schemes") == json::array{"Bearer"});
        const json::value second = rpc_request(
            "tasks/pushNotificationConfig/set",
            json::object{{"taskId", task_id},
                         {"pushNotificationConfig", json::object{{"id", "d"}, {"url", hook.server.base_url() + "/hooks/d"}}}},
            3);
        const json::value set = co_await rpc_call(client, server, second);
        CHECK(set.at("result").at("pushNotificationConfig").at("id") == "d");
        const json::value list_request = rpc_request("tasks/pushNotificationConfig/list", json::object{{"id", task_id}}, 4);
        const json::value listed = co_await rpc_call(client, server, list_request);
        CHECK(listed.at("result").as_array().size() == 2);
        const json::value delete_request =
            rpc_request("tasks/pushNotificationConfig/delete", json::object{{"id", task_id}, {"pushNotificationConfigId", "d"}}, 5);
        const json::value deleted = co_await rpc_call(client, server, delete_request);
        CHECK(deleted.at("result").is_null());
        const json::value gone_request =
            rpc_request("tasks/pushNotificationConfig/get", json::object{{"id", task_id}, {"pushNotificationConfigId", "d"}}, 6);
        const json::value gone = co_await rpc_call(client, server, gone_request);
        CHECK(gone.as_object().contains("error"));
        // A webhook the operator did not allow, and a 0.3 method not served.
        const json::value elsewhere = rpc_request(
            "tasks/pushNotificationConfig/set",
            json::object{{"taskId", task_id}, {"pushNotificationConfig", json::object{{"url", "http://127.0.0.1:1/x"}}}}, 7);
        const json::value refused = co_await rpc_call(client, server, elsewhere);
        CHECK_THAT(std::string(refused.at("error").at("message").as_string()), Catch::Contains("push_allowed_urls"));
        const json::value unknown_request = rpc_request("tasks/nothing", json::object{}, 8);
        const json::value unknown = co_await rpc_call(client, server, unknown_request);
        CHECK(unknown.at("error").at("code") == -32601);
        server.stop();
        hook.server.stop();
    }());
}

TEST_CASE("A2A: extensions: listed in the card, activated by the request's header, seen by the agent, required ones "
          "enforced", "[a2a][server]")
{
    asio::io_context ioc;
    std::vector<std::optional<json::value>> seen;  // what the tool read of "temp:a2a_extensions", per call
    auto tool = adk::FunctionTool::create(
        "get_weather", "Returns the weather.", json::parse(R"({"type":"object","properties":{}})"),
        [&seen](adk::ToolContext& ctx, json::object) -> asio::awaitable<json::value> {
            seen.push_back(ctx.state("temp:a2a_extensions"));
            co_return json::object{{"sky", "sunny"}};
        });
    std::vector<ScriptedModel::Turn> turns;
    for (int i = 0; i < 2; ++i) {
        turns.push_back(adk::LlmResponse::function_call("get_weather", json::object{}));
        turns.push_back(adk::LlmResponse::text("Sunny."));
    }
    auto agent = adk::LlmAgent::builder("weather_agent")
                     .model(std::make_shared<ScriptedModel>(std::move(turns)))
                     .tool(tool)
                     .build();
    adk::server::ApiServer server(ioc.get_executor(), {{"weather", agent}},
                                  options_with(std::make_shared<adk::InMemorySessionService>()));
    const std::string traced = "https://ext.example/traced/v1";
    const std::string signed_ = "https://ext.example/signed/v1";
    a2a::ServerOptions a2a_options;
    a2a_options.extensions = {json::object{{"uri", traced}, {"description", "Traces the task."}},
                              json::object{{"uri", signed_}, {"required", true}}};
    a2a::Server a2a_server(server, a2a_options);
    a2a_server.mount();
    server.start();
    adk::net::HttpClient client(no_retries());
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        adk::net::HttpResponse card_res = co_await get(client, server, "/a2a/weather/.well-known/agent-card.json", "");
        const auto card = json::value_to<a2a::AgentCard>(co_await read_json(card_res));
        REQUIRE(card.capabilities.extensions.size() == 2);
        CHECK(card.capabilities.extensions[0].at("uri") == traced.c_str());
        CHECK(card.capabilities.extensions[1].at("required") == true);

        const json::value body = json::object{{"message", user_message("Weather?")}};
        // The required extension left out: refused, on both bindings.
        adk::net::HttpResponse refused = co_await post(client, server, "/a2a/weather/message:send", body);
        CHECK(refused.status() == 400);
        const json::value why = co_await read_json(refused);
        CHECK(why.at("error").at("details").at(0).at("reason") == "EXTENSION_SUPPORT_REQUIRED");
        CHECK_THAT(std::string(why.at("error").at("message").as_string()), Catch::Contains(signed_));
        const json::value send_rpc = rpc_request("SendMessage", body);
        adk::net::HttpResponse rpc_refused = co_await post(client, server, "/a2a/weather", send_rpc);
        const json::value rpc_why = co_await read_json(rpc_refused);
        CHECK(rpc_why.at("error").at("code") == a2a::code::extension_support_required);
        CHECK(seen.empty());

        // Both named (one unknown too): the known ones are activated, echoed, and seen by the agent.
        adk::net::HttpRequest req("POST", server.base_url() + "/a2a/weather/message:send");
        req.set("content-type", "application/json");
        req.set("a2a-extensions", signed_ + ", https://unknown.example/x ,  " + traced);
        req.body = json::serialize(body);
        adk::net::HttpResponse sent = co_await client.send(std::move(req));
        CHECK(sent.status() == 200);
        CHECK(sent.header("a2a-extensions") == signed_ + ", " + traced);
        (void)co_await read_json(sent);
        REQUIRE(seen.size() == 1);
        REQUIRE(seen[0]);
        CHECK(*seen[0] == json::array{json::value(signed_), json::value(traced)});

        // 0.3's header name, over JSON-RPC.
        adk::net::HttpRequest legacy("POST", server.base_url() + "/a2a/weather");
        legacy.set("content-type", "application/json");
        legacy.set("x-a2a-extensions", signed_);
        legacy.body = json::serialize(send_rpc);
        adk::net::HttpResponse legacy_sent = co_await client.send(std::move(legacy));
        CHECK(legacy_sent.header("a2a-extensions") == signed_);
        const json::value legacy_json = co_await read_json(legacy_sent);
        CHECK(legacy_json.as_object().contains("result"));
        REQUIRE(seen.size() == 2);
        CHECK(*seen[1] == json::array{json::value(signed_)});
        server.stop();
    }());

    // An extension without a URI, or with one a header cannot list, is refused at once.
    adk::server::ApiServer other(ioc.get_executor(), {{"weather", agent}},
                                 options_with(std::make_shared<adk::InMemorySessionService>()));
    a2a::ServerOptions bad;
    bad.extensions = {json::object{{"uri", "https://a.example/x,https://b.example/y"}}};
    CHECK_THROWS_WITH(a2a::Server(other, bad), Catch::Contains("uri"));
    bad.extensions = {json::object{{"description", "no uri"}}};
    CHECK_THROWS_AS(a2a::Server(other, bad), adk::Error);
}

namespace {

// The call named `name` in a task's status message (a data part of ADK's function call), by its data.
std::optional<json::object> status_call(const a2a::Task& t, std::string_view name)
{
    if (!t.status.message)
        return std::nullopt;
    for (const a2a::Part& p : t.status.message->parts)
        if (const auto* data = std::get_if<a2a::Part::Data>(&p.content); data && data->value.is_object())
            if (const json::value* n = data->value.as_object().if_contains("name"); n && n->is_string() && n->get_string() == name)
                return data->value.as_object();
    return std::nullopt;
}

// A message that answers call `id` (named `name`) of task `t` with `response`.
json::value answer_of(const a2a::Task& t, const json::value& id, std::string_view name, json::object response)
{
    const json::value part = json::object{
        {"data", json::object{{"id", id}, {"name", name}, {"response", std::move(response)}}},
        {"metadata", json::object{{"adk_type", "function_response"}}}};
    return json::object{{"message", json::object{{"messageId", adk::new_uuid()}, {"role", "ROLE_USER"},
                                                  {"taskId", t.id}, {"contextId", t.context_id},
                                                  {"parts", json::array{part}}}}};
}

}  // namespace

TEST_CASE("A2A: a tool's credential request makes the task AUTH_REQUIRED and a workflow's RequestInput "
          "INPUT_REQUIRED, and each answer completes the task", "[a2a][server]")
{
    asio::io_context ioc;
    json::object auth_config{{"credentialKey", "bank_api"}, {"authScheme", {{"type", "http"}, {"scheme", "bearer"}}}};
    std::string token_seen;
    auto balance = adk::FunctionTool::create(
        "balance", "Reads the balance.", json::parse(R"({"type":"object","properties":{}})"),
        [&](adk::ToolContext& ctx, json::object) -> asio::awaitable<json::value> {
            std::optional<json::object> kept = co_await ctx.load_credential(auth_config);
            token_seen = std::string(kept->at("rawAuthCredential").at("http").at("credentials").at("token").as_string());
            co_return json::object{{"balance", 42}};
        });
    balance->set_auth_config(auth_config);
    auto keys = adk::LlmAgent::builder("keys_agent")
                    .model(std::make_shared<ScriptedModel>(std::vector<ScriptedModel::Turn>{
                        adk::LlmResponse::function_call("balance", {}), adk::LlmResponse::text("42.")}))
                    .tool(balance)
                    .build();
    auto form = adk::workflow::Workflow::Builder("form")
                    .chain({adk::workflow::START, adk::test::workflow_nodes::asking("ask", "Which city?", "city")})
                    .build();
    adk::server::ApiServer server(
        ioc.get_executor(),
        {{"keys", keys}, adk::server::App("form", form, adk::ResumabilityConfig{.is_resumable = true})},
        options_with(std::make_shared<adk::InMemorySessionService>()));
    a2a::Server a2a_server(server);
    a2a_server.mount();
    server.start();
    adk::net::HttpClient client(no_retries());
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        // The credential: AUTH_REQUIRED, the question in the status; the answer runs the tool with it.
        const json::value ask_balance = json::object{{"message", user_message("Balance?")}};
        adk::net::HttpResponse asked_res = co_await post(client, server, "/a2a/keys/message:send", ask_balance);
        const json::value asked_json = co_await read_json(asked_res);
        const auto asked = json::value_to<a2a::Task>(asked_json.at("task"));
        CHECK(asked.status.state == a2a::TaskState::auth_required);
        const std::optional<json::object> question = status_call(asked, "adk_request_credential");
        REQUIRE(question);
        CHECK(question->at("args").at("authConfig").at("credentialKey") == "bank_api");
        json::object credential = auth_config;
        credential["rawAuthCredential"] = {{"authType", "http"},
                                           {"http", {{"scheme", "bearer"}, {"credentials", {{"token", "s3cret"}}}}}};
        const json::value given = answer_of(asked, question->at("id"), "adk_request_credential", std::move(credential));
        adk::net::HttpResponse done_res = co_await post(client, server, "/a2a/keys/message:send", given);
        const json::value done_json = co_await read_json(done_res);
        const auto done = json::value_to<a2a::Task>(done_json.at("task"));
        CHECK(done.id == asked.id);
        CHECK(done.status.state == a2a::TaskState::completed);
        CHECK(token_seen == "s3cret");
        REQUIRE(!done.artifacts.empty());
        CHECK(*done.artifacts.back().parts.at(0).text() == "42.");
        CHECK(json::serialize(done_json).find("s3cret") == std::string::npos);  // never written back

        // The workflow's question: INPUT_REQUIRED; the answer resumes the workflow to its end.
        const json::value start_form = json::object{{"message", user_message("Book a trip.")}};
        adk::net::HttpResponse form_res = co_await post(client, server, "/a2a/form/message:send", start_form);
        const json::value form_json = co_await read_json(form_res);
        const auto waiting = json::value_to<a2a::Task>(form_json.at("task"));
        CHECK(waiting.status.state == a2a::TaskState::input_required);
        const std::optional<json::object> city = status_call(waiting, "adk_request_input");
        REQUIRE(city);
        CHECK(city->at("args").at("message") == "Which city?");
        const json::value told = answer_of(waiting, city->at("id"), "adk_request_input", json::object{{"result", "Lisbon"}});
        adk::net::HttpResponse filled_res = co_await post(client, server, "/a2a/form/message:send", told);
        const json::value filled_json = co_await read_json(filled_res);
        INFO(json::serialize(filled_json));
        const auto filled = json::value_to<a2a::Task>(filled_json.at("task"));
        CHECK(filled.id == waiting.id);
        CHECK(filled.status.state == a2a::TaskState::completed);
        CHECK(json::serialize(filled_json).find("Lisbon") != std::string::npos);
        server.stop();
    }());
}
