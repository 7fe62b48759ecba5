// adk::mcp over Streamable HTTP against a server on loopback that misbehaves on cue (support/mcp_http_server.hpp):
// JSON and SSE answers with the session's headers, a forgotten session renewed, streams resumed after the server's
// retry, one call's HTTP failure kept to that call, the old HTTP+SSE transport, the server's own stream, close()
// in the middle of a call, and a server that cannot be reached. The official conformance suite and
// server-everything judge the same transport in tests/interop.
#include <adk/adk.hpp>
#include <adk/mcp/connection.hpp>
#include <adk/mcp/http_transport.hpp>
#include <adk/mcp/mcp_toolset.hpp>

#include "support/agents.hpp"
#include "support/drive.hpp"
#include "support/mcp_http_server.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <functional>

namespace asio = boost::asio;
namespace json = boost::json;
namespace mcp = adk::mcp;
using adk::test::drive;
using adk::test::McpHttpServer;

namespace {

// A connection over a new HttpTransport to `url`; `transport` keeps a pointer to it.
std::shared_ptr<mcp::Connection> connect(asio::io_context& ioc, const std::string& url, mcp::HttpTransport*& transport,
                                         mcp::ConnectionOptions options = {})
{
    auto t = std::make_unique<mcp::HttpTransport>(ioc.get_executor(), mcp::HttpServerParams(url));
    transport = t.get();
    return mcp::Connection::create(ioc.get_executor(), std::move(t), std::move(options));
}

json::object call_params(const std::string& tool, json::object args = {})
{
    return json::object{{"name", tool}, {"arguments", std::move(args)}};
}

std::string text_of(const json::value& result)
{
    return std::string(result.at("content").at(0).at("text").as_string());
}

// Waits, driving the io_context, until `done` holds (at most 10 s).
asio::awaitable<void> until(std::function<bool()> done)
{
    asio::steady_timer timer(co_await asio::this_coro::executor);
    for (int i = 0; i < 2000 && !done(); ++i) {
        timer.expires_after(std::chrono::milliseconds(5));
        co_await timer.async_wait(asio::use_awaitable);
    }
}

}  // namespace

TEST_CASE("MCP over HTTP: JSON and SSE answers, every request after initialize carries the session and the "
          "protocol version, close() sends DELETE",
          "[mcp]")
{
    asio::io_context ioc;
    McpHttpServer server(ioc.get_executor());
    mcp::HttpTransport* transport = nullptr;
    auto c = connect(ioc, server.url(), transport);
    drive(ioc, c->start());
    CHECK(c->server().name == "mcp-http-test-server");
    CHECK(transport->session_id() == "s-1");

    json::value json_answer = drive(ioc, c->call("tools/call", call_params("echo", {{"text", "plain"}})));
    CHECK(text_of(json_answer) == "echo plain");
    server.sse_answers = true;
    json::value sse_answer = drive(ioc, c->call("tools/call", call_params("echo", {{"text", "streamed"}})));
    CHECK(text_of(sse_answer) == "echo streamed");

    drive(ioc, c->close());
    CHECK(server.count("DELETE") == 1);
    CHECK(server.count("POST", "notifications/initialized") == 1);
    for (const McpHttpServer::Seen& s : server.seen) {
        if (s.mcp_method == "initialize") {
            CHECK(s.session.empty());
            continue;
        }
        CHECK(s.session == "s-1");
        CHECK(s.protocol == "2025-11-25");
    }
    CHECK(transport->session_id().empty());
}

TEST_CASE("MCP over HTTP: a session the server forgot is renewed by one initialize, and the call is retried once",
          "[mcp]")
{
    asio::io_context ioc;
    McpHttpServer server(ioc.get_executor());
    mcp::HttpTransport* transport = nullptr;
    auto c = connect(ioc, server.url(), transport);
    drive(ioc, c->start());
    CHECK(text_of(drive(ioc, c->call("tools/call", call_params("echo", {{"text", "one"}})))) == "echo one");

    server.forget_sessions();
    CHECK(text_of(drive(ioc, c->call("tools/call", call_params("echo", {{"text", "two"}})))) == "echo two");
    CHECK(server.count("POST", "initialize") == 2);
    CHECK(server.count("POST", "notifications/initialized") == 2);
    CHECK(transport->session_id() == "s-2");
    CHECK(server.seen.back().mcp_method == "tools/call");
    CHECK(server.seen.back().session == "s-2");
    CHECK(c->alive());
    drive(ioc, c->close());
}

TEST_CASE("MCP over HTTP: a stream cut after its event id is resumed with Last-Event-ID, and one cut without an id "
          "fails that call alone",
          "[mcp]")
{
    asio::io_context ioc;
    McpHttpServer server(ioc.get_executor());
    mcp::HttpTransport* transport = nullptr;
    auto c = connect(ioc, server.url(), transport);
    drive(ioc, c->start());

    CHECK(text_of(drive(ioc, c->call("tools/call", call_params("cut")))) == "resumed");
    bool resumed = false;
    for (const McpHttpServer::Seen& s : server.seen)
        resumed = resumed || (s.http_method == "GET" && s.last_event_id.starts_with("cut-") && s.session == "s-1");
    CHECK(resumed);

    try {
        drive(ioc, c->call("tools/call", call_params("cut_without_id")));
        FAIL("a stream that ended without its answer and without an id to resume from must fail the call");
    } catch (const mcp::RpcFailure& e) {
        CHECK_THAT(e.rpc().message, Catch::Contains("no event id to resume it from"));
    }
    CHECK(text_of(drive(ioc, c->call("tools/call", call_params("echo", {{"text", "after"}})))) == "echo after");
    drive(ioc, c->close());
}

TEST_CASE("MCP over HTTP: an HTTP 500 for one call fails that call with the status and the body, and the next works",
          "[mcp]")
{
    asio::io_context ioc;
    McpHttpServer server(ioc.get_executor());
    mcp::HttpTransport* transport = nullptr;
    auto c = connect(ioc, server.url(), transport);
    drive(ioc, c->start());
    try {
        drive(ioc, c->call("tools/call", call_params("fail")));
        FAIL("an HTTP 500 must fail the call");
    } catch (const mcp::RpcFailure& e) {
        CHECK_THAT(e.rpc().message, Catch::Contains("HTTP 500") && Catch::Contains("the tool broke, by request") &&
                                        Catch::Contains(server.url()));
    }
    CHECK(c->alive());
    CHECK(text_of(drive(ioc, c->call("tools/call", call_params("echo", {{"text", "fine"}})))) == "echo fine");
    drive(ioc, c->close());
}

TEST_CASE("MCP over HTTP: a server of the old HTTP+SSE transport is spoken to through the endpoint it names",
          "[mcp]")
{
    asio::io_context ioc;
    McpHttpServer server(ioc.get_executor());
    server.legacy = true;
    mcp::HttpTransport* transport = nullptr;
    auto c = connect(ioc, server.url(), transport);
    drive(ioc, c->start());
    CHECK(transport->legacy());
    CHECK(c->server().name == "mcp-http-test-server");
    CHECK(text_of(drive(ioc, c->call("tools/call", call_params("echo")))) == "legacy echo");
    CHECK(server.count("POST", "tools/call") == 1);
    drive(ioc, c->close());
}

TEST_CASE("MCP over HTTP: the server's own stream (GET) brings notifications/tools/list_changed", "[mcp]")
{
    asio::io_context ioc;
    McpHttpServer server(ioc.get_executor());
    int changes = 0;
    mcp::ConnectionOptions options;
    options.on_tools_changed = [&changes] { ++changes; };
    mcp::HttpTransport* transport = nullptr;
    auto c = connect(ioc, server.url(), transport, options);
    drive(ioc, c->start());
    drive(ioc, until([&server] { return server.open_streams() == 1; }));
    REQUIRE(server.open_streams() == 1);
    CHECK(text_of(drive(ioc, c->call("tools/call", call_params("changed")))) == "changed");
    drive(ioc, until([&changes] { return changes == 1; }));
    CHECK(changes == 1);
    drive(ioc, c->close());
}

TEST_CASE("MCP over HTTP: close() in the middle of a streamed call ends it at once, and the call fails", "[mcp]")
{
    asio::io_context ioc;
    McpHttpServer server(ioc.get_executor());
    mcp::HttpTransport* transport = nullptr;
    auto c = connect(ioc, server.url(), transport);
    drive(ioc, c->start());
    int progress = 0;
    std::exception_ptr failure;
    bool finished = false;
    mcp::CallOptions options;
    options.on_progress = [&progress](const mcp::event::Progress&) { ++progress; };
    asio::co_spawn(ioc, c->call("tools/call", call_params("slow"), options),
                   [&](std::exception_ptr e, json::value) {
                       failure = e;
                       finished = true;
                   });
    drive(ioc, until([&progress] { return progress >= 2; }));
    REQUIRE(progress >= 2);
    drive(ioc, c->close());
    drive(ioc, until([&finished] { return finished; }));
    REQUIRE(finished);
    REQUIRE(failure);
    try {
        std::rethrow_exception(failure);
    } catch (const adk::Error& e) {
        CHECK(e.code() == adk::errc::unavailable);
        CHECK_THAT(e.message(), Catch::Contains("was closed"));
    }
    CHECK(server.count("DELETE") == 1);
}

TEST_CASE("MCP over HTTP: a server that cannot be reached fails start() with an error that names it, without "
          "the URL's credentials or query",
          "[mcp]")
{
    asio::io_context ioc;
    std::string url;
    {
        McpHttpServer gone(ioc.get_executor());
        url = gone.url();
        gone.stop();
    }
    const std::string secret_url = "http://user:hunter2@" + url.substr(std::string("http://").size()) + "?key=sesame";
    mcp::HttpTransport* transport = nullptr;
    auto c = connect(ioc, secret_url, transport);
    try {
        drive(ioc, c->start());
        FAIL("start() must fail");
    } catch (const adk::Error& e) {
        CHECK_THAT(e.message(), Catch::Contains("127.0.0.1") && Catch::Contains("cannot connect"));
        CHECK_THAT(e.message(), !Catch::Contains("hunter2") && !Catch::Contains("sesame"));
    }
    drive(ioc, c->close());
}

TEST_CASE("McpToolset over HTTP: an agent calls the server's tool through the Runner, and Runner::close ends the "
          "session",
          "[mcp]")
{
    asio::io_context ioc;
    McpHttpServer server(ioc.get_executor());
    mcp::McpToolsetOptions options{mcp::HttpServerParams(server.url())};
    options.filter = adk::ToolFilter({"echo"});
    auto toolset = mcp::McpToolset::create(options);
    CHECK(toolset->name() == "127.0.0.1");
    auto model = std::make_shared<adk::testing::ScriptedModel>(std::vector<adk::testing::ScriptedModel::Turn>{
        adk::LlmResponse::function_call("echo", json::object{{"text", "over http"}}), adk::LlmResponse::text("done")});
    auto agent = adk::LlmAgent::builder("assistant").model(model).toolset(toolset).build();
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::Runner runner({.app_name = "app", .agent = agent, .session_service = sessions});
    auto body = [&]() -> asio::awaitable<std::vector<adk::Event>> {
        co_await sessions->create_session({"app", "user1", "s"});
        co_return co_await adk::test::run_once(runner, "s", "echo it");
    };
    const std::vector<adk::Event> events = drive(ioc, body());
    std::string answer;
    for (const adk::Event& e : events)
        if (e.content)
            for (const adk::Part& p : e.content->parts)
                if (p.function_response)
                    answer = json::serialize(p.function_response->response);
    CHECK_THAT(answer, Catch::Contains("echo over http"));
    REQUIRE(model->requests().size() == 2);
    CHECK(model->requests().front().tools.size() == 1);  // the filter kept echo alone
    drive(ioc, runner.close());
    CHECK(server.count("DELETE") == 1);
}

namespace {

// The person's step done by the program: the authorization URL is fetched, its redirect is where the browser
// would have gone.
asio::awaitable<std::string> follow_redirect(std::string url)
{
    adk::net::HttpClient http;
    adk::net::HttpResponse res = co_await http.send(adk::net::HttpRequest("GET", url));
    std::string location(res.header("location"));
    (void)co_await res.read_all();
    co_return location;
}

mcp::HttpServerParams with_oauth(const std::string& url, std::shared_ptr<mcp::TokenStore> tokens, int& asked)
{
    mcp::HttpServerParams params(url);
    mcp::OAuthOptions oauth;
    oauth.tokens = std::move(tokens);
    oauth.authorize = [&asked](std::string authorization_url) {
        ++asked;
        return follow_redirect(std::move(authorization_url));
    };
    params.oauth = oauth;
    return params;
}

}  // namespace

TEST_CASE("MCP over HTTP with OAuth: the first 401 authorizes once, the tokens are kept in the app's "
          "CredentialService, and a second connection on them asks no one",
          "[mcp][oauth]")
{
    asio::io_context ioc;
    McpHttpServer server(ioc.get_executor());
    server.oauth = true;
    auto credentials = std::make_shared<adk::InMemoryCredentialService>();
    auto tokens = mcp::credential_token_store(credentials, "app");
    int asked = 0;
    auto first = mcp::Connection::create(
        ioc.get_executor(), std::make_unique<mcp::HttpTransport>(ioc.get_executor(), with_oauth(server.url(), tokens, asked)),
        {});
    drive(ioc, first->start());
    CHECK(text_of(drive(ioc, first->call("tools/call", call_params("echo", {{"text", "authorized"}})))) ==
          "echo authorized");
    CHECK(asked == 1);
    CHECK(server.grants["authorization_code"] == 1);
    drive(ioc, first->close());

    auto second = mcp::Connection::create(
        ioc.get_executor(), std::make_unique<mcp::HttpTransport>(ioc.get_executor(), with_oauth(server.url(), tokens, asked)),
        {});
    drive(ioc, second->start());
    CHECK(text_of(drive(ioc, second->call("tools/call", call_params("echo", {{"text", "again"}})))) == "echo again");
    CHECK(asked == 1);
    CHECK(server.grants["authorization_code"] == 1);
    drive(ioc, second->close());
}

TEST_CASE("MCP over HTTP with OAuth: an expiring token is refreshed with its refresh token, and no one is asked "
          "again",
          "[mcp][oauth]")
{
    asio::io_context ioc;
    McpHttpServer server(ioc.get_executor());
    server.oauth = true;
    server.token_lifetime = 1;  // within the client's margin: every request refreshes first
    int asked = 0;
    auto c = mcp::Connection::create(
        ioc.get_executor(),
        std::make_unique<mcp::HttpTransport>(ioc.get_executor(), with_oauth(server.url(), mcp::in_memory_token_store(), asked)),
        {});
    drive(ioc, c->start());
    for (int i = 0; i < 3; ++i)
        CHECK(text_of(drive(ioc, c->call("tools/call", call_params("echo", {{"text", "x"}})))) == "echo x");
    CHECK(asked == 1);
    CHECK(server.grants["authorization_code"] == 1);
    CHECK(server.grants["refresh_token"] >= 3);
    drive(ioc, c->close());
}

TEST_CASE("MCP over HTTP with OAuth: without a handler for the person's step, a 401 fails start() with what to give",
          "[mcp][oauth]")
{
    asio::io_context ioc;
    McpHttpServer server(ioc.get_executor());
    server.oauth = true;
    mcp::HttpServerParams params(server.url());
    params.oauth = mcp::OAuthOptions();
    auto c = mcp::Connection::create(ioc.get_executor(),
                                     std::make_unique<mcp::HttpTransport>(ioc.get_executor(), params), {});
    try {
        drive(ioc, c->start());
        FAIL("start() must fail");
    } catch (const adk::Error& e) {
        CHECK_THAT(e.message(), Catch::Contains("asks for OAuth authorization") &&
                                    Catch::Contains("OAuthOptions::authorize"));
    }
    drive(ioc, c->close());
}
