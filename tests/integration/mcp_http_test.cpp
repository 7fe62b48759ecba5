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
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <functional>
#include <thread>

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

std::string http_text_of(const json::value& result)
{
    return std::string(result.at("content").at(0).at("text").as_string());
}

// A server on loopback and a started connection to it.
class McpHttpSession {
public:
    explicit McpHttpSession(std::function<void(McpHttpServer&)> configure = {}, mcp::ConnectionOptions options = {})
        : server(ioc.get_executor())
    {
        if (configure)
            configure(server);
        c = connect(ioc, server.url(), transport, std::move(options));
        drive(ioc, c->start());
    }
    json::value call(const std::string& tool, json::object args = {})
    {
        return drive(ioc, c->call("tools/call", call_params(tool, std::move(args))));
    }
    void close() { drive(ioc, c->close()); }

    asio::io_context ioc;
    McpHttpServer server;
    mcp::HttpTransport* transport = nullptr;
    std::shared_ptr<mcp::Connection> c;
};

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
    McpHttpSession s;
    CHECK(s.c->server().name == "mcp-http-test-server");
    CHECK(s.transport->session_id() == "s-1");
    CHECK(http_text_of(s.call("echo", {{"text", "plain"}})) == "echo plain");
    s.server.sse_answers = true;
    CHECK(http_text_of(s.call("echo", {{"text", "streamed"}})) == "echo streamed");

    s.close();
    CHECK(s.server.count("DELETE") == 1);
    CHECK(s.server.count("POST", "notifications/initialized") == 1);
    for (const McpHttpServer::Seen& seen : s.server.seen) {
        if (seen.mcp_method == "initialize") {
            CHECK(seen.session.empty());
            continue;
        }
        CHECK(seen.session == "s-1");
        CHECK(seen.protocol == "2025-11-25");
    }
    CHECK(s.transport->session_id().empty());
}

TEST_CASE("MCP over HTTP: a session the server forgot is renewed by one initialize, and the call is retried once",
          "[mcp]")
{
    McpHttpSession s;
    CHECK(http_text_of(s.call("echo", {{"text", "one"}})) == "echo one");
    s.server.forget_sessions();
    CHECK(http_text_of(s.call("echo", {{"text", "two"}})) == "echo two");
    CHECK(s.server.count("POST", "initialize") == 2);
    CHECK(s.server.count("POST", "notifications/initialized") == 2);
    CHECK(s.transport->session_id() == "s-2");
    CHECK(s.server.seen.back().mcp_method == "tools/call");
    CHECK(s.server.seen.back().session == "s-2");
    CHECK(s.c->alive());
    s.close();
}

TEST_CASE("MCP over HTTP: a stream cut after its event id is resumed with Last-Event-ID, and one cut without an id "
          "fails that call alone",
          "[mcp]")
{
    McpHttpSession s;
    CHECK(http_text_of(s.call("cut")) == "resumed");
    bool resumed = false;
    for (const McpHttpServer::Seen& seen : s.server.seen)
        resumed = resumed || (seen.http_method == "GET" && seen.last_event_id.starts_with("cut-") && seen.session == "s-1");
    CHECK(resumed);

    try {
        s.call("cut_without_id");
        FAIL("a stream that ended without its answer and without an id to resume from must fail the call");
    } catch (const mcp::RpcFailure& e) {
        CHECK_THAT(e.rpc().message, Catch::Contains("no event id to resume it from"));
    }
    CHECK(http_text_of(s.call("echo", {{"text", "after"}})) == "echo after");
    s.close();
}

TEST_CASE("MCP over HTTP: an HTTP 500 for one call fails that call with the status and the body, and the next works",
          "[mcp]")
{
    McpHttpSession s;
    try {
        s.call("fail");
        FAIL("an HTTP 500 must fail the call");
    } catch (const mcp::RpcFailure& e) {
        CHECK_THAT(e.rpc().message, Catch::Contains("HTTP 500") && Catch::Contains("the tool broke, by request") &&
                                        Catch::Contains(s.server.url()));
    }
    CHECK(s.c->alive());
    CHECK(http_text_of(s.call("echo", {{"text", "fine"}})) == "echo fine");
    s.close();
}

TEST_CASE("MCP over HTTP: a server of the old HTTP+SSE transport is spoken to through the endpoint it names",
          "[mcp]")
{
    McpHttpSession s([](McpHttpServer& server) { server.legacy = true; });
    CHECK(s.transport->legacy());
    CHECK(s.c->server().name == "mcp-http-test-server");
    CHECK(http_text_of(s.call("echo")) == "legacy echo");
    CHECK(s.server.count("POST", "tools/call") == 1);
    s.close();
}

TEST_CASE("MCP over HTTP: the server's own stream (GET) brings notifications/tools/list_changed", "[mcp]")
{
    int changes = 0;
    mcp::ConnectionOptions options;
    options.on_tools_changed = [&changes] { ++changes; };
    McpHttpSession s({}, options);
    drive(s.ioc, until([&s] { return s.server.open_streams() == 1; }));
    REQUIRE(s.server.open_streams() == 1);
    CHECK(http_text_of(s.call("changed")) == "changed");
    drive(s.ioc, until([&changes] { return changes == 1; }));
    CHECK(changes == 1);
    s.close();
}

TEST_CASE("MCP over HTTP: close() in the middle of a streamed call ends it at once, and the call fails", "[mcp]")
{
    McpHttpSession s;
    int progress = 0;
    std::exception_ptr failure;
    bool finished = false;
    mcp::CallOptions options;
    options.on_progress = [&progress](const mcp::event::Progress&) { ++progress; };
    asio::co_spawn(s.ioc, s.c->call("tools/call", call_params("slow"), options),
                   [&](std::exception_ptr e, json::value) {
                       failure = e;
                       finished = true;
                   });
    drive(s.ioc, until([&progress] { return progress >= 2; }));
    REQUIRE(progress >= 2);
    s.close();
    drive(s.ioc, until([&finished] { return finished; }));
    REQUIRE(finished);
    REQUIRE(failure);
    try {
        std::rethrow_exception(failure);
    } catch (const adk::Error& e) {
        CHECK(e.code() == adk::errc::unavailable);
        CHECK_THAT(e.message(), Catch::Contains("was closed"));
    }
    CHECK(s.server.count("DELETE") == 1);
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
        adk::CreateSessionRequest create{"app", "user1", "s"};
        co_await sessions->create_session(std::move(create));
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

TEST_CASE("McpToolset over HTTP: a server whose tool list passes max_tool_list_bytes fails the listing with an "
          "error that says so, not model requests of megabytes",
          "[mcp]")
{
    asio::io_context ioc;
    McpHttpServer server(ioc.get_executor());
    server.padded_pages = 30;  // the audit's 30 pages, of 64 KiB descriptions here (4 MiB there)
    server.padding = 64 << 10;
    auto model = std::make_shared<adk::testing::ScriptedModel>(
        std::vector<adk::testing::ScriptedModel::Turn>{adk::LlmResponse::text("done")});
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    const auto run_with = [&](std::size_t bound) {
        mcp::McpToolsetOptions options{mcp::HttpServerParams(server.url())};
        options.max_tool_list_bytes = bound;
        auto toolset = mcp::McpToolset::create(options);
        auto agent = adk::LlmAgent::builder("assistant").model(model).toolset(toolset).build();
        adk::Runner runner({.app_name = "app", .agent = agent, .session_service = sessions});
        auto body = [&]() -> asio::awaitable<std::optional<adk::Error>> {
            adk::CreateSessionRequest create{"app", "user1", "s" + std::to_string(bound)};
            co_await sessions->create_session(std::move(create));
            std::optional<adk::Error> failed;
            try {
                std::string session_id = "s" + std::to_string(bound);
                (void)co_await adk::test::run_once(runner, std::move(session_id), "hello");
            } catch (const adk::Error& e) {
                failed = e;
            }
            co_await runner.close();
            co_return failed;
        };
        return drive(ioc, body());
    };
    const std::optional<adk::Error> refused = run_with(std::size_t{1} << 20);  // the default
    REQUIRE(refused);
    CHECK_THAT(refused->message(), Catch::Contains("listed tools of more than 1048576 bytes") &&
                                       Catch::Contains("McpToolsetOptions::max_tool_list_bytes"));
    CHECK(model->requests().empty());  // the model was never sent them
    // A bound that takes them lists every page.
    CHECK(!run_with(std::size_t{4} << 20));
    REQUIRE(model->requests().size() == 1);
    CHECK(model->requests().front().tools.size() == 30 + 6);
}

namespace {

// The person's step done by the program: the authorization URL is fetched, its redirect is where the browser
// would have gone.
asio::awaitable<std::string> follow_redirect(std::string url)
{
    adk::net::HttpClient http;
    adk::net::HttpRequest req("GET", url);
    adk::net::HttpResponse res = co_await http.send(std::move(req));
    std::string location(res.header("location"));
    (void)co_await res.read_all();
    co_return location;
}

// A connection (not started) over a new HttpTransport with these params.
std::shared_ptr<mcp::Connection> over(asio::io_context& ioc, mcp::HttpServerParams params)
{
    auto transport = std::make_unique<mcp::HttpTransport>(ioc.get_executor(), std::move(params));
    return mcp::Connection::create(ioc.get_executor(), std::move(transport), {});
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
    auto first = over(ioc, with_oauth(server.url(), tokens, asked));
    drive(ioc, first->start());
    CHECK(http_text_of(drive(ioc, first->call("tools/call", call_params("echo", {{"text", "authorized"}})))) ==
          "echo authorized");
    CHECK(asked == 1);
    CHECK(server.grants["authorization_code"] == 1);
    drive(ioc, first->close());

    auto second = over(ioc, with_oauth(server.url(), tokens, asked));
    drive(ioc, second->start());
    CHECK(http_text_of(drive(ioc, second->call("tools/call", call_params("echo", {{"text", "again"}})))) == "echo again");
    CHECK(asked == 1);
    CHECK(server.grants["authorization_code"] == 1);
    drive(ioc, second->close());
}

TEST_CASE("MCP over HTTP with OAuth: clients sharing an OAuthServerCache read the metadata once within its time and "
          "register one client, and past its time the metadata is read again",
          "[mcp][oauth]")
{
    asio::io_context ioc;
    McpHttpServer server(ioc.get_executor());
    server.oauth = true;
    for (const auto ttl : {std::chrono::seconds(3600), std::chrono::seconds(0)}) {
        const std::size_t metadata_before = server.routed("metadata");
        const std::size_t registered_before = server.routed("register");
        auto cache = std::make_shared<mcp::OAuthServerCache>(ttl);
        int asked = 0;
        for (int person = 0; person < 3; ++person) {  // each with tokens of their own, as users are
            mcp::HttpServerParams params = with_oauth(server.url(), mcp::in_memory_token_store(), asked);
            params.oauth->cache = cache;
            auto c = over(ioc, std::move(params));
            drive(ioc, c->start());
            drive(ioc, c->close());
        }
        CHECK(asked == 3);
        CHECK(server.routed("register") - registered_before == 1);
        CHECK(server.routed("metadata") - metadata_before == (ttl.count() == 0 ? 3u : 1u));
    }
}

TEST_CASE("MCP over HTTP with OAuth: resource metadata a 401 names at another origin is not fetched, and the server's "
          "own well-known URLs are",
          "[mcp][oauth]")
{
    asio::io_context ioc;
    int elsewhere_hits = 0;
    adk::net::HttpServer elsewhere(ioc.get_executor(), adk::net::HttpServerOptions(),
                                   [&](adk::net::IncomingRequest&, adk::net::ResponseWriter& res) -> asio::awaitable<void> {
                                       ++elsewhere_hits;
                                       co_await res.send(404, "application/json", "{}");
                                   });
    elsewhere.start();
    McpHttpServer server(ioc.get_executor());
    server.oauth = true;
    server.metadata_named_at = elsewhere.base_url();  // another port: another origin
    auto credentials = std::make_shared<adk::InMemoryCredentialService>();
    int asked = 0;
    auto c = over(ioc, with_oauth(server.url(), mcp::credential_token_store(credentials, "app"), asked));
    drive(ioc, c->start());
    CHECK(http_text_of(drive(ioc, c->call("tools/call", call_params("echo", {{"text", "ok"}})))) == "echo ok");
    CHECK(asked == 1);
    CHECK(elsewhere_hits == 0);
    drive(ioc, c->close());
    elsewhere.stop();
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
    auto c = over(ioc, with_oauth(server.url(), mcp::in_memory_token_store(), asked));
    drive(ioc, c->start());
    for (int i = 0; i < 3; ++i)
        CHECK(http_text_of(drive(ioc, c->call("tools/call", call_params("echo", {{"text", "x"}})))) == "echo x");
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
    auto c = over(ioc, params);
    try {
        drive(ioc, c->start());
        FAIL("start() must fail");
    } catch (const adk::Error& e) {
        CHECK_THAT(e.message(), Catch::Contains("asks for OAuth authorization") &&
                                    Catch::Contains("OAuthOptions::authorize"));
    }
    drive(ioc, c->close());
}

TEST_CASE("MCP over HTTP: 50 callers on 4 threads share one session", "[mcp][threads]")
{
    // The server on a thread of its own; the connection on a strand of an io_context run by four.
    asio::io_context server_ioc;
    auto server = std::make_unique<McpHttpServer>(server_ioc.get_executor());
    server->sse_answers = true;
    auto server_work = asio::make_work_guard(server_ioc);
    std::thread server_thread([&server_ioc] { server_ioc.run(); });

    asio::io_context ioc;
    auto strand = asio::make_strand(ioc);
    auto c = mcp::Connection::create(
        strand, std::make_unique<mcp::HttpTransport>(strand, mcp::HttpServerParams(server->url())), {});
    drive(ioc, c->start());
    std::atomic<int> right{0};
    std::atomic<int> callers_done{0};
    for (int i = 0; i < 50; ++i)
        asio::co_spawn(
            ioc,
            [&, i]() -> asio::awaitable<void> {
                for (int k = 0; k < 4; ++k) {
                    const std::string text = std::to_string(i) + "-" + std::to_string(k);
                    json::object params = call_params("echo", json::object{{"text", text}});
                    json::value r = co_await c->call("tools/call", std::move(params));
                    if (http_text_of(r) == "echo " + text)
                        ++right;
                }
                if (++callers_done == 50)
                    ioc.stop();  // the GET stream would keep the threads running
            },
            asio::detached);
    ioc.restart();
    adk::test::run_on_threads(ioc, 4);
    CHECK(right == 200);
    drive(ioc, c->close());

    server_work.reset();
    asio::post(server_ioc, [&server] { server->stop(); });
    server_thread.join();
    CHECK(server->count("POST", "initialize") == 1);
    CHECK(server->count("POST", "tools/call") == 200);
    CHECK(server->count("DELETE") == 1);
}

namespace {

// A user of an app whose MCP toolset authorizes per user: their messages, and their browser.
class AppUser {
public:
    AppUser(asio::io_context& ioc_, adk::Runner& runner_, std::string user_) : ioc(ioc_), runner(runner_), user(std::move(user_))
    {
    }

    std::vector<adk::Event> send(const std::string& session, adk::Content message)
    {
        auto body = [&]() -> asio::awaitable<std::vector<adk::Event>> {
            auto stream = co_await runner.run(user, session, std::move(message));
            co_return co_await adk::test::drain(stream);
        };
        return drive(ioc, body());
    }
    std::vector<adk::Event> say(const std::string& session, std::string text)
    {
        return send(session, adk::Content::user(std::move(text)));
    }
    // What ADK's web UI does with an adk_request_credential call: the person is sent to its authUri with the UI's
    // own page as redirect_uri, and the URL they come back to is the answer (authResponseUri, redirectUri).
    std::vector<adk::Event> authorize(const std::string& session, const adk::FunctionCall& question,
                                      const std::string& ui_page)
    {
        json::object config = question.args.at("authConfig").as_object();
        json::object& oauth2 = config["exchangedAuthCredential"].as_object()["oauth2"].as_object();
        std::string url(oauth2.at("authUri").as_string());
        const std::string old_redirect = "redirect_uri=" + adk::net::encode_path_segment(
                                                               mcp::query_parameters(url)["redirect_uri"]);
        url.replace(url.find(old_redirect), old_redirect.size(), "redirect_uri=" + adk::net::encode_path_segment(ui_page));
        oauth2["authResponseUri"] = drive(ioc, follow_redirect(url));
        oauth2["redirectUri"] = ui_page;
        adk::Content answer("user", {adk::Part::from_function_response(question.name, config, question.id)});
        return send(session, std::move(answer));
    }

    asio::io_context& ioc;
    adk::Runner& runner;
    std::string user;
};

// An app whose agent calls the OAuth MCP server's `echo` once per text, then answers "done"; each user authorizes
// for themselves through their client (OAuthOptions::per_user).
class PerUserApp {
public:
    explicit PerUserApp(const std::vector<std::string>& texts)
        : model(std::make_shared<adk::testing::ScriptedModel>(turns_for(texts))),
          runner({.app_name = "app", .agent = agent(), .session_service = sessions, .credential_service = credentials})
    {
        server.oauth = true;
    }

    asio::io_context ioc;
    McpHttpServer server{ioc.get_executor()};
    std::shared_ptr<adk::testing::ScriptedModel> model;
    std::shared_ptr<adk::InMemorySessionService> sessions = std::make_shared<adk::InMemorySessionService>();
    std::shared_ptr<adk::InMemoryCredentialService> credentials = std::make_shared<adk::InMemoryCredentialService>();
    adk::Runner runner;

private:
    static std::vector<adk::testing::ScriptedModel::Turn> turns_for(const std::vector<std::string>& texts)
    {
        std::vector<adk::testing::ScriptedModel::Turn> turns;
        for (const std::string& text : texts) {
            turns.emplace_back(adk::LlmResponse::function_call("echo", json::object{{"text", text}}));
            turns.emplace_back(adk::LlmResponse::text("done"));
        }
        return turns;
    }
    std::shared_ptr<adk::LlmAgent> agent()
    {
        mcp::HttpServerParams params(server.url());
        params.oauth = mcp::OAuthOptions();
        params.oauth->per_user = true;
        mcp::McpToolsetOptions options(params);
        options.filter = adk::ToolFilter({"echo"});
        return adk::LlmAgent::builder("assistant").model(model).toolset(mcp::McpToolset::create(options)).build();
    }
};

const adk::FunctionCall* credential_question(const std::vector<adk::Event>& events)
{
    for (const adk::Event& e : events)
        if (e.content)
            for (const adk::Part& p : e.content->parts)
                if (p.function_call && p.function_call->name == adk::request_credential_function)
                    return &*p.function_call;
    return nullptr;
}

std::string echoed(const std::vector<adk::Event>& events)
{
    for (const adk::Event& e : events)
        if (e.content)
            for (const adk::Part& p : e.content->parts)
                if (p.function_response && p.function_response->name == "echo")
                    return json::serialize(p.function_response->response);
    return "";
}

}  // namespace

TEST_CASE("McpToolset with OAuth per user: users a client makes up share one metadata read and one registered "
          "client, and a client the authorization server forgot is registered again",
          "[mcp][oauth]")
{
    PerUserApp app({"call 0", "call 1", "call 2"});
    asio::io_context& ioc = app.ioc;
    McpHttpServer& server = app.server;
    auto& sessions = app.sessions;
    adk::Runner& runner = app.runner;
    const std::string ui_page = "http://127.0.0.1:9/dev-ui/";

    // Thirty users, each asked: one read of each metadata document, one registration, all of them.
    std::vector<std::string> client_ids;
    std::optional<adk::FunctionCall> first_question;
    for (int i = 0; i < 30; ++i) {
        const std::string user = "made-up-" + std::to_string(i);
        adk::CreateSessionRequest create{"app", user, "s"};
        drive(ioc, sessions->create_session(std::move(create)));
        AppUser person(ioc, runner, user);
        const std::vector<adk::Event> asked = person.say("s", "echo it");
        const adk::FunctionCall* question = credential_question(asked);
        REQUIRE(question);
        if (!first_question)
            first_question = *question;
        const json::object& config = question->args.at("authConfig").as_object();
        client_ids.push_back(mcp::query_parameters(std::string(
            config.at("exchangedAuthCredential").at("oauth2").at("authUri").as_string()))["client_id"]);
    }
    CHECK(server.routed("register") == 1);
    CHECK(server.routed("prm") == 1);
    CHECK(server.routed("metadata") == 1);
    CHECK(std::count(client_ids.begin(), client_ids.end(), "client-1") == 30);

    // The authorization server forgets its clients: the first user's answer fails the run as it says
    // (invalid_client), and their next try registers a new client, which works.
    server.forget_clients();
    AppUser first(ioc, runner, "made-up-0");
    CHECK_THROWS_WITH(first.authorize("s", *first_question, ui_page), Catch::Contains("(invalid_client)"));
    CHECK(server.grants["authorization_code"] == 0);
    const std::vector<adk::Event> asked_again = first.say("s", "echo it");
    const adk::FunctionCall* again = credential_question(asked_again);
    REQUIRE(again);
    const std::string again_uri(
        again->args.at("authConfig").at("exchangedAuthCredential").at("oauth2").at("authUri").as_string());
    CHECK(mcp::query_parameters(again_uri)["client_id"] == "client-2");
    CHECK(server.routed("register") == 2);
    CHECK(server.routed("metadata") == 1);  // still within the hour
    CHECK_THAT(echoed(first.authorize("s", *again, ui_page)), Catch::Contains("echo call"));
    CHECK(server.grants["authorization_code"] == 1);
    drive(ioc, runner.close());
}

TEST_CASE("McpToolset with OAuth per user: each user is asked through their client (adk_request_credential, as the "
          "web UI answers it), authorizes once, and calls with a token of their own",
          "[mcp][oauth]")
{
    PerUserApp app({"ann", "bob", "ann again", "ann at last"});
    asio::io_context& ioc = app.ioc;
    McpHttpServer& server = app.server;
    auto& model = app.model;
    auto& sessions = app.sessions;
    auto& credentials = app.credentials;
    adk::Runner& runner = app.runner;
    for (const char* user : {"ann", "bob"})
        for (const char* session : {"s1", "s2"}) {
            adk::CreateSessionRequest create{"app", user, session};
            drive(ioc, sessions->create_session(std::move(create)));
        }
    const std::string ui_page = "http://127.0.0.1:9/dev-ui/";
    AppUser ann(ioc, runner, "ann");
    AppUser bob(ioc, runner, "bob");

    const std::vector<adk::Event> asked = ann.say("s1", "echo it");
    const adk::FunctionCall* question = credential_question(asked);
    REQUIRE(question);
    CHECK(model->requests().empty());  // no model call before the tools are there
    const json::object& config = question->args.at("authConfig").as_object();
    const std::string auth_uri(config.at("exchangedAuthCredential").at("oauth2").at("authUri").as_string());
    CHECK(auth_uri.starts_with(server.url().substr(0, server.url().size() - 4) + "/authorize?"));
    CHECK_THAT(auth_uri, Catch::Contains("code_challenge_method=S256") && Catch::Contains("state="));
    CHECK(config.at("credentialKey") == mcp::authorization_answer_key(server.url()).c_str());

    const std::vector<adk::Event> answered = ann.authorize("s1", *question, ui_page);
    CHECK_THAT(echoed(answered), Catch::Contains("echo ann"));
    CHECK(server.grants["authorization_code"] == 1);
    const std::string ann_token = server.seen.back().bearer;
    CHECK(ann_token.starts_with("Bearer at-"));
    // The tokens are ann's, kept in the app's credential service; the session holds none.
    adk::CredentialKey ann_key("app", "ann", "mcp-oauth " + server.url());
    std::optional<json::object> kept = drive(ioc, credentials->load_credential(std::move(ann_key)));
    REQUIRE(kept);
    CHECK(kept->at("mcpOAuthTokens").at("access_token") == ann_token.substr(7).c_str());
    CHECK_FALSE(kept->at("mcpOAuthTokens").as_object().contains("pending"));  // the finished flow is dropped
    const std::optional<adk::Session> stored = drive(ioc, sessions->get_session({"app", "ann", "s1"}));
    for (const adk::Event& e : stored.value().events)
        CHECK(json::serialize(json::value_from(e)).find(ann_token.substr(7)) == std::string::npos);

    // Bob is asked on his own, and gets a token of his own.
    const std::vector<adk::Event> bob_asked = bob.say("s1", "echo it");
    const adk::FunctionCall* bob_question = credential_question(bob_asked);
    REQUIRE(bob_question);
    CHECK_THAT(echoed(bob.authorize("s1", *bob_question, ui_page)), Catch::Contains("echo bob"));
    CHECK(server.seen.back().bearer != ann_token);
    CHECK(server.grants["authorization_code"] == 2);

    // Ann's next session asks no one.
    const std::vector<adk::Event> again = ann.say("s2", "echo it");
    CHECK_FALSE(credential_question(again));
    CHECK_THAT(echoed(again), Catch::Contains("echo ann again"));
    CHECK(server.seen.back().bearer == ann_token);
    CHECK(server.grants["authorization_code"] == 2);

    // Ann's authorization is withdrawn between her listing and her call: the call asks her again (about itself),
    // and runs once she has answered.
    server.revoke_after_listing = true;
    const std::vector<adk::Event> lapsed = ann.say("s2", "echo it");
    const adk::FunctionCall* asked_again = credential_question(lapsed);
    REQUIRE(asked_again);
    CHECK(echoed(lapsed).empty());
    CHECK(asked_again->args.at("functionCallId") == lapsed.front().content->parts.at(0).function_call->id.c_str());
    const std::vector<adk::Event> resumed = ann.authorize("s2", *asked_again, ui_page);
    CHECK_THAT(echoed(resumed), Catch::Contains("echo ann at last"));
    CHECK(server.grants["authorization_code"] == 3);
    CHECK(server.seen.back().bearer != ann_token);

    drive(ioc, runner.close());
    CHECK(server.count("DELETE") == 2);  // each user's session ended
}
