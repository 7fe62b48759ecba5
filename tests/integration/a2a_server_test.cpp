// adk::a2a::Server mounted on an ApiServer, over real loopback HTTP: the agent card of each app.
#include <adk/a2a/server.hpp>
#include <adk/adk.hpp>
#include <adk/net/http_client.hpp>
#include <adk/server/api_server.hpp>

#include "support/api_client.hpp"
#include "support/run.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value_to.hpp>

#include <catch2/catch.hpp>

namespace a2a = adk::a2a;
namespace asio = boost::asio;
namespace json = boost::json;
using adk::test::no_retries;
using adk::test::options_with;

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

asio::awaitable<adk::net::HttpResponse> get(adk::net::HttpClient& client, const adk::server::ApiServer& server,
                                            std::string_view path, std::string_view token)
{
    adk::net::HttpRequest req("GET", server.base_url() + std::string(path));
    if (!token.empty())
        req.set("authorization", "Bearer " + std::string(token));
    co_return co_await client.send(std::move(req));
}

}  // namespace

TEST_CASE("A2A: an app's agent card names its skills, its interfaces and the bearer scheme", "[a2a][server]")
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

        adk::net::HttpResponse refused = co_await get(client, server, "/a2a/travel/.well-known/agent-card.json", "");
        CHECK(refused.status() == 401);  // behind the server's token, as every route
        (void)co_await refused.read_all();

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
