// ApiServer (adk/server/api_server.hpp) over real loopback HTTP: ADK's routes for apps and sessions, the JSON
// they answer (checked against what an ADK server answered, ../shared/fixtures/adk/api_samples), and the
// errors bad requests get.
#include <adk/adk.hpp>
#include <adk/net/http_client.hpp>
#include <adk/server/api_server.hpp>
#include <adk/server/runs.hpp>

#include "support/api_client.hpp"
#include "support/run.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <set>

namespace asio = boost::asio;
namespace json = boost::json;
using adk::test::call;
using adk::test::no_retries;
using adk::test::options_with;
using adk::test::Reply;

namespace {

std::set<std::string> keys_of(const json::value& v)
{
    std::set<std::string> out;
    for (const auto& [k, value] : v.as_object())
        out.emplace(k);
    return out;
}

std::shared_ptr<adk::Agent> quiet_agent(std::string name)
{
    return adk::LlmAgent::builder(std::move(name))
        .model(std::make_shared<adk::testing::ScriptedModel>(std::vector<adk::testing::ScriptedModel::Turn>{}))
        .build();
}

// A toolset that only counts its closes.
class ClosingToolset final : public adk::Toolset {
public:
    ClosingToolset() : Toolset("files") {}
    std::atomic<int> shutdowns{0};

protected:
    asio::awaitable<std::vector<std::shared_ptr<adk::Tool>>> list_tools(const adk::ReadonlyContext&) override
    {
        co_return std::vector<std::shared_ptr<adk::Tool>>{};
    }
    asio::awaitable<void> shutdown() override
    {
        ++shutdowns;
        co_return;
    }
};

}  // namespace

TEST_CASE("ApiServer: stop() closes the apps' toolsets before the server's io_context runs out", "[server]")
{
    asio::io_context ioc;
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    auto toolset = std::make_shared<ClosingToolset>();
    auto agent = adk::LlmAgent::builder("files_agent")
                     .model(std::make_shared<adk::testing::ScriptedModel>(
                         std::vector<adk::testing::ScriptedModel::Turn>{adk::LlmResponse::text("done")}))
                     .toolset(toolset)
                     .build();
    adk::server::ApiServer server(ioc.get_executor(), {{"files", agent}}, options_with(sessions));
    server.start();
    adk::net::HttpClient client(no_retries());
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        Reply created = co_await call(client, server, "POST", "/apps/files/users/u/sessions/s1");
        CHECK(created.status == 200);
        Reply ran = co_await call(client, server, "POST", "/run",
                                  R"({"appName": "files", "userId": "u", "sessionId": "s1",
                                      "newMessage": {"role": "user", "parts": [{"text": "hi"}]}})");
        CHECK(ran.status == 200);
        CHECK(toolset->is_open());
        server.stop();
    }());
    CHECK(toolset->shutdowns == 1);
    CHECK_FALSE(toolset->is_open());
}

TEST_CASE("ApiServer: apps, version, health, and sessions created, listed, read, patched and deleted", "[server]")
{
    asio::io_context ioc;
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::server::ApiServer server(ioc.get_executor(),
                                  {{"weather", quiet_agent("weather_agent")}, {"alpha", quiet_agent("alpha")}},
                                  options_with(sessions));
    server.start();
    adk::net::HttpClient client(no_retries());
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        Reply apps = co_await call(client, server, "GET", "/list-apps?relative_path=./");
        CHECK(apps.status == 200);
        CHECK(apps.json() == json::parse(R"(["alpha", "weather"])"));
        Reply version = co_await call(client, server, "GET", "/version");
        CHECK(version.json().at("version").is_string());
        Reply health = co_await call(client, server, "GET", "/health");
        CHECK(health.json() == json::parse(R"({"status": "ok"})"));

        // Created as the web UI creates it: a display name in the state; and with a null body.
        Reply named = co_await call(client, server, "POST", "/apps/weather/users/user/sessions",
                                    R"({"state": {"__session_metadata__": {"displayName": "Trip"}}})");
        CHECK(named.status == 200);
        json::value created = named.json();
        json::value recorded = json::parse(adk::test::fixture("adk/api_samples/create_session_state.body"));
        CHECK(keys_of(created) == keys_of(recorded));  // the shape an ADK server answers
        CHECK(created.at("state").at("__session_metadata__").at("displayName") == "Trip");
        CHECK(created.at("appName") == "weather");
        CHECK(created.at("lastUpdateTime").as_double() < 1e11);  // seconds, as the UI reads it
        Reply unnamed = co_await call(client, server, "POST", "/apps/weather/users/user/sessions", "null");
        CHECK(unnamed.status == 200);
        Reply by_path = co_await call(client, server, "POST", "/apps/weather/users/user/sessions/s-fixed-1");
        CHECK(by_path.json().at("id") == "s-fixed-1");
        Reply again = co_await call(client, server, "POST", "/apps/weather/users/user/sessions/s-fixed-1");
        CHECK(again.status == 409);
        CHECK_THAT(again.body, Catch::Contains("s-fixed-1"));

        Reply listed = co_await call(client, server, "GET", "/apps/weather/users/user/sessions");
        REQUIRE(listed.json().is_array());  // a bare array: the UI's session picker needs it
        CHECK(listed.json().as_array().size() == 3);
        Reply other_user = co_await call(client, server, "GET", "/apps/weather/users/someone/sessions");
        CHECK(other_user.json() == json::array{});

        Reply patched = co_await call(client, server, "PATCH", "/apps/weather/users/user/sessions/s-fixed-1",
                                      R"({"stateDelta": {"__session_metadata__": {"displayName": "Renamed"}, "n": 2}})");
        CHECK(patched.status == 200);
        json::value p = patched.json();
        CHECK(p.at("state").at("n") == 2);
        REQUIRE(p.at("events").as_array().size() == 1);
        const json::value& event = p.at("events").at(0);
        CHECK(event.at("author") == "user");
        CHECK(event.at("invocationId").as_string().starts_with("p-"));
        CHECK(event.at("actions").at("stateDelta").at("n") == 2);

        Reply read = co_await call(client, server, "GET", "/apps/weather/users/user/sessions/s-fixed-1");
        CHECK(read.json() == p);
        Reply deleted = co_await call(client, server, "DELETE", "/apps/weather/users/user/sessions/s-fixed-1");
        CHECK(deleted.status == 204);
        CHECK(deleted.body.empty());
        Reply gone = co_await call(client, server, "GET", "/apps/weather/users/user/sessions/s-fixed-1");
        CHECK(gone.status == 404);
        CHECK(gone.json() == json::parse(R"({"error": "Session not found: s-fixed-1"})"));
        // The same form as the ADK server's answer for the session "nope".
        CHECK(json::parse(adk::test::fixture("adk/api_samples/get_session_404.body")) ==
              json::parse(R"({"error": "Session not found: nope"})"));
        Reply delete_again = co_await call(client, server, "DELETE", "/apps/weather/users/user/sessions/s-fixed-1");
        CHECK(delete_again.status == 404);
        server.stop();
    }());
}

TEST_CASE("ApiServer: a session imported with its events, as the UI's Import sends it", "[server]")
{
    asio::io_context ioc;
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::server::ApiServer server(ioc.get_executor(), {{"weather_agent", quiet_agent("weather_agent")}},
                                  options_with(sessions));
    server.start();
    adk::net::HttpClient client(no_retries());
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        json::value recorded = json::parse(adk::test::fixture("adk/api_samples/get_session.body"));
        json::object import{{"state", recorded.at("state")}, {"events", recorded.at("events")}};
        const std::string body = json::serialize(import);
        Reply imported = co_await call(client, server, "POST", "/apps/weather_agent/users/user/sessions", body);
        CHECK(imported.status == 200);
        json::value s = imported.json();
        CHECK(s.at("events").as_array().size() == recorded.at("events").as_array().size());
        for (std::size_t i = 0; i < s.at("events").as_array().size(); ++i)
            CHECK(s.at("events").at(i).at("id") == recorded.at("events").at(i).at("id"));
        CHECK(s.at("state").at("last_city") == "Paris");
        server.stop();
    }());
}

TEST_CASE("ApiServer: bad requests get 4xx with a message that says what was wrong", "[server]")
{
    asio::io_context ioc;
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::server::ApiServer server(ioc.get_executor(), {{"weather", quiet_agent("weather_agent")}},
                                  options_with(sessions));
    server.start();
    adk::net::HttpClient client(no_retries());
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        struct Case {
            const char* method;
            const char* path;
            const char* body;
            unsigned status;
            const char* says;
        };
        const Case cases[] = {
            {"GET", "/apps/nope/users/u/sessions", "", 404, "App not found: nope"},
            {"POST", "/apps/weather/users/u/sessions", "{not json", 400, "not JSON"},
            {"POST", "/apps/weather/users/u/sessions", "[1]", 400, "must be a JSON object"},
            {"POST", "/apps/weather/users/u/sessions", R"({"state": 3})", 400, "\"state\" must be an object"},
            {"POST", "/apps/weather/users/u/sessions", R"({"events": [{"id": 5}]})", 400, "events[0] is not an event"},
            {"POST", "/apps/weather/users/u/sessions", R"({"state": {"temp:x/y": 1}})", 400, "state key"},
            {"PATCH", "/apps/weather/users/u/sessions/missing", R"({"stateDelta": {"a": 1}})", 404, "Session not found"},
            {"PATCH", "/apps/weather/users/u/sessions/missing", R"({"delta": {}})", 400, "stateDelta"},
            {"GET", "/apps/weather/users/u%2Fx/sessions", "", 400, "slash"},
            {"GET", "/no/such/route?token=secret", "", 404, "no route for GET /no/such/route"},
            {"PUT", "/apps/weather/users/u/sessions", "", 405, "PUT is not a method of /apps/weather/users/u/sessions: it "
                                                               "takes POST, GET"},
            {"PUT", "/no/such/route", "", 404, "no route for PUT"},
        };
        for (const Case& c : cases) {
            Reply r = co_await call(client, server, c.method, c.path, c.body);
            INFO(c.method << " " << c.path << " " << c.body << " -> " << r.status << " " << r.body);
            CHECK(r.status == c.status);
            REQUIRE(r.json().at("error").is_string());
            CHECK_THAT(std::string(r.json().at("error").as_string()), Catch::Contains(c.says));
            CHECK_THAT(r.body, !Catch::Contains("secret"));  // a query string is never repeated
        }
        server.stop();
    }());

    CHECK_THROWS_WITH(adk::server::ApiServer(ioc.get_executor(), {{"bad name", quiet_agent("a")}},
                                             options_with(sessions)),
                      Catch::Contains("not an identifier"));
    CHECK_THROWS_WITH(adk::server::ApiServer(ioc.get_executor(), {{"a", quiet_agent("a")}, {"a", quiet_agent("b")}},
                                             options_with(sessions)),
                      Catch::Contains("two apps are named 'a'"));
    CHECK_THROWS_WITH(adk::server::ApiServer(ioc.get_executor(), {{"a", quiet_agent("a")}}, options_with(nullptr)),
                      Catch::Contains("session_service is null"));
}

TEST_CASE("ApiServer: a component's routes mounted under a prefix, behind the server's checks", "[server]")
{
    asio::io_context ioc;
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::server::ApiServerOptions options = options_with(sessions);
    options.bearer_token = "s3cret";
    adk::server::ApiServer server(ioc.get_executor(), {{"weather", quiet_agent("weather_agent")}}, options);

    adk::server::Routes extension;
    extension.add("POST", "/tasks/{}:cancel", [](adk::server::RouteRequest& r) -> asio::awaitable<void> {
        const json::value answer = json::object{
            {"app", r.params[0]}, {"task", r.params[1]}, {"reason", r.query("reason").value_or("none")}};
        const std::string body = json::serialize(answer);
        co_await r.response.send(200, "application/json", body);
    });
    extension.add("GET", "/tasks/{}", [](adk::server::RouteRequest& r) -> asio::awaitable<void> {
        throw adk::Error(adk::errc::not_found, "Task not found: " + r.params[1]);
        co_return;
    });
    // A component reaches the apps, their runners, the runs and the options (adk::a2a does).
    extension.add("GET", "/about", [&server](adk::server::RouteRequest& r) -> asio::awaitable<void> {
        const adk::server::App& app = server.app(r.params[0]);  // not_found: 404
        json::array names;
        for (const auto& name : server.app_names())
            names.emplace_back(name);
        const json::value answer = json::object{{"apps", names},
                                                {"agent", app.root_agent->name()},
                                                {"runner", server.runner(r.params[0]).options().app_name},
                                                {"runs", server.runs().size()},
                                                {"version", server.options().version}};
        const std::string body = json::serialize(answer);
        co_await r.response.send(200, "application/json", body);
    });
    server.mount("/ext/{}", extension);
    CHECK_THROWS_WITH(server.runner("nope"), Catch::Contains("App not found: nope"));
    server.start();
    CHECK_THROWS_WITH(server.mount("/late", extension), Catch::Contains("before the server serves"));

    adk::net::HttpClient client(no_retries());
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        // (Names, not temporaries, across each co_await: g++ 12.)
        const auto send = [&](std::string_view method, std::string_view path,
                              bool token) -> asio::awaitable<adk::net::HttpResponse> {
            adk::net::HttpRequest req{std::string(method), server.base_url() + std::string(path)};
            if (token)
                req.set("authorization", "Bearer s3cret");
            co_return co_await client.send(std::move(req));
        };
        adk::net::HttpResponse refused = co_await send("POST", "/ext/weather/tasks/t%201:cancel?reason=late", false);
        CHECK(refused.status() == 401);  // the bearer token guards mounted routes too
        (void)co_await refused.read_all();

        adk::net::HttpResponse cancelled = co_await send("POST", "/ext/weather/tasks/t%201:cancel?reason=late", true);
        CHECK(cancelled.status() == 200);
        const std::string answer = co_await cancelled.read_all();
        CHECK(json::parse(answer) == json::parse(R"({"app": "weather", "task": "t 1", "reason": "late"})"));

        adk::net::HttpResponse missing = co_await send("GET", "/ext/weather/tasks/t2", true);
        CHECK(missing.status() == 404);
        const std::string error = co_await missing.read_all();
        CHECK(json::parse(error) == json::parse(R"({"error": "Task not found: t2"})"));

        adk::net::HttpResponse about = co_await send("GET", "/ext/weather/about", true);
        const std::string about_body = co_await about.read_all();
        CHECK(json::parse(about_body) == json::parse(R"({"apps": ["weather"], "agent": "weather_agent",
            "runner": "weather", "runs": 0, "version": "adk-cpp 0.1"})"));
        adk::net::HttpResponse unknown = co_await send("GET", "/ext/nope/about", true);
        CHECK(unknown.status() == 404);
        (void)co_await unknown.read_all();

        adk::net::HttpResponse wrong = co_await send("DELETE", "/ext/weather/tasks/t2", true);
        CHECK(wrong.status() == 405);
        CHECK(wrong.header("allow") == "GET");
        (void)co_await wrong.read_all();

        // ADK's own routes are still there.
        adk::net::HttpResponse apps = co_await send("GET", "/list-apps", true);
        const std::string names = co_await apps.read_all();
        CHECK(json::parse(names) == json::parse(R"(["weather"])"));
        server.stop();
    }());
}

TEST_CASE("ApiServer: the bearer token, cross-origin requests and preflights, and no server off loopback without a "
          "token",
          "[server]")
{
    asio::io_context ioc;
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::server::ApiServerOptions options = options_with(sessions);
    options.bearer_token = "s3cret";
    options.allow_origins = {"http://localhost:4200"};
    adk::server::ApiServer server(ioc.get_executor(), {{"weather", quiet_agent("weather_agent")}}, options);
    server.start();
    adk::net::HttpClient client(no_retries());
    // A request with the given headers; status and body, and the header `wanted` of the answer. (Views and
    // references: g++ 12 miscompiles class temporaries built in a co_await expression.)
    auto send = [&](std::string_view method, std::string_view path, const adk::net::HeaderList& headers,
                    std::string_view wanted) -> asio::awaitable<std::pair<Reply, std::string>> {
        adk::net::HttpRequest req(std::string(method), server.base_url() + std::string(path));
        for (auto& [name, value] : headers)
            req.set(name, value);
        adk::net::HttpResponse res = co_await client.send(std::move(req));
        Reply r;
        r.status = res.status();
        std::string header(res.header(wanted));
        r.body = co_await res.read_all();
        co_return std::make_pair(r, header);
    };
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        const adk::net::HeaderList none;
        auto [bare, challenge] = co_await send("GET", "/list-apps", none, "www-authenticate");
        CHECK(bare.status == 401);
        CHECK(challenge == "Bearer");
        CHECK_THAT(bare.body, Catch::Contains("Authorization: Bearer"));
        const adk::net::HeaderList wrong{{"authorization", "Bearer s3creT"}};
        auto [refused, ignored] = co_await send("GET", "/list-apps", wrong, "");
        CHECK(refused.status == 401);
        const adk::net::HeaderList right{{"authorization", "Bearer s3cret"}};
        auto [apps, no_cors] = co_await send("GET", "/list-apps", right, "access-control-allow-origin");
        CHECK(apps.status == 200);
        CHECK(no_cors.empty());

        // The server's own origin needs nothing; a listed one gets CORS headers; another one is refused.
        const std::string host = server.base_url().substr(7);
        const adk::net::HeaderList own{{"authorization", "Bearer s3cret"}, {"origin", "http://" + host}};
        auto [same, same_cors] = co_await send("GET", "/list-apps", own, "access-control-allow-origin");
        CHECK(same.status == 200);
        const adk::net::HeaderList listed{{"authorization", "Bearer s3cret"}, {"origin", "http://localhost:4200"}};
        auto [cross, allowed] = co_await send("GET", "/list-apps", listed, "access-control-allow-origin");
        CHECK(cross.status == 200);
        CHECK(allowed == "http://localhost:4200");
        const adk::net::HeaderList evil{{"authorization", "Bearer s3cret"}, {"origin", "http://evil.example"}};
        auto [other, other_cors] = co_await send("POST", "/apps/weather/users/u/sessions", evil, "access-control-allow-origin");
        CHECK(other.status == 403);
        CHECK(other_cors.empty());
        CHECK_THAT(other.body, Catch::Contains("--allow_origins"));
        // A preflight carries no token: it is answered before the token is asked for.
        const adk::net::HeaderList preflight{{"origin", "http://localhost:4200"},
                                             {"access-control-request-method", "POST"},
                                             {"access-control-request-headers", "content-type"}};
        auto [pre, methods] = co_await send("OPTIONS", "/run_sse", preflight, "access-control-allow-methods");
        CHECK(pre.status == 204);
        CHECK_THAT(methods, Catch::Contains("POST"));
        server.stop();
    }());

    adk::server::ApiServerOptions open = options_with(sessions);
    open.http.host = "0.0.0.0";
    CHECK_THROWS_WITH(adk::server::ApiServer(ioc.get_executor(), {{"weather", quiet_agent("weather_agent")}}, open),
                      Catch::Contains("off loopback"));
    open.allow_unauthenticated = true;
    CHECK_NOTHROW(adk::server::ApiServer(ioc.get_executor(), {{"weather", quiet_agent("weather_agent")}}, open));
}
