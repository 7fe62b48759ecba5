// ApiServer's web UI routes over loopback HTTP: the static files of a UI folder under /dev-ui/, the
// redirects to it, the runtime config made by the server, MIME types, and paths that try to leave the folder.
#include <adk/adk.hpp>
#include <adk/net/http_client.hpp>
#include <adk/server/api_server.hpp>

#include "support/api_client.hpp"
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <fstream>

namespace asio = boost::asio;
namespace json = boost::json;
namespace fs = std::filesystem;
using adk::test::no_retries;
using adk::test::options_with;

namespace {

class Answer {
public:
    unsigned status = 0;
    std::string content_type;
    std::string location;
    std::string cache_control;
    std::string body;
};

asio::awaitable<Answer> fetch(adk::net::HttpClient& client, const adk::server::ApiServer& server,
                              std::string_view method, std::string_view path)
{
    adk::net::HttpRequest req(std::string(method), server.base_url() + std::string(path));
    adk::net::HttpResponse res = co_await client.send(std::move(req));
    Answer a;
    a.status = res.status();
    a.content_type = std::string(res.header("content-type"));
    a.location = std::string(res.header("location"));
    a.cache_control = std::string(res.header("cache-control"));
    a.body = co_await res.read_all();
    co_return a;
}

void write(const fs::path& file, const std::string& text)
{
    fs::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary) << text;
}

std::shared_ptr<adk::Agent> quiet_agent()
{
    return adk::LlmAgent::builder("quiet")
        .model(std::make_shared<adk::testing::ScriptedModel>(std::vector<adk::testing::ScriptedModel::Turn>{}))
        .build();
}

}  // namespace

TEST_CASE("ApiServer: the web UI's files at /dev-ui/, the redirects to it and its runtime config", "[server]")
{
    adk::test::TempDir dir("web-ui");
    const fs::path ui = dir.path() / "browser";
    write(ui / "index.html", "<!doctype html><base href=\"./\"><script type=\"module\" src=\"main-X1.js\"></script>");
    write(ui / "main-X1.js", "console.log('ui')");
    write(ui / "styles-Y.css", "body{}");
    write(ui / "assets" / "ADK-512-color.svg", "<svg/>");
    write(ui / "assets" / "config" / "runtime-config.json", R"({"backendUrl": "http://elsewhere:1"})");
    write(dir.path() / "secret.txt", "not for the web");
    fs::create_symlink(dir.path() / "secret.txt", ui / "leak.txt");

    asio::io_context ioc;
    auto options = options_with(std::make_shared<adk::InMemorySessionService>());
    options.web_ui_dir = ui.string();
    adk::server::ApiServer server(ioc.get_executor(), {{"app", quiet_agent()}}, options);
    server.start();
    adk::net::HttpClient client(no_retries());
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        Answer root = co_await fetch(client, server, "GET", "/");
        CHECK(root.status == 302);
        CHECK(root.location == "/dev-ui/");
        Answer bare = co_await fetch(client, server, "GET", "/dev-ui?app=x");
        CHECK(bare.status == 301);
        CHECK(bare.location == "/dev-ui/");

        Answer index = co_await fetch(client, server, "GET", "/dev-ui/?app=app&userId=user&session=s1");
        CHECK(index.status == 200);
        CHECK(index.content_type == "text/html; charset=utf-8");
        CHECK(index.cache_control == "no-cache");
        CHECK_THAT(index.body, Catch::StartsWith("<!doctype html>"));

        Answer js = co_await fetch(client, server, "GET", "/dev-ui/main-X1.js");
        CHECK(js.status == 200);
        CHECK(js.content_type == "text/javascript; charset=utf-8");  // ES modules load only with a JS type
        CHECK(js.body == "console.log('ui')");
        CHECK((co_await fetch(client, server, "GET", "/dev-ui/styles-Y.css")).content_type == "text/css; charset=utf-8");
        Answer svg = co_await fetch(client, server, "GET", "/dev-ui/assets/ADK-512-color.svg");
        CHECK(svg.content_type == "image/svg+xml");
        CHECK(svg.body == "<svg/>");

        // The server says where the API is (here: same origin), whatever the folder's copy says.
        Answer config = co_await fetch(client, server, "GET", "/dev-ui/assets/config/runtime-config.json");
        CHECK(config.status == 200);
        CHECK(config.content_type == "application/json");
        CHECK(json::parse(config.body) == json::parse(R"({"backendUrl": ""})"));

        // Nothing outside the folder: not by a link, not by dots, encoded or not.
        Answer missing = co_await fetch(client, server, "GET", "/dev-ui/prism-dark.css");
        CHECK(missing.status == 404);
        CHECK(json::parse(missing.body).at("error") == "Not found in the web UI: /dev-ui/prism-dark.css");
        CHECK((co_await fetch(client, server, "GET", "/dev-ui/leak.txt")).status == 404);
        CHECK((co_await fetch(client, server, "GET", "/dev-ui/assets")).status == 404);  // a folder
        CHECK((co_await fetch(client, server, "GET", "/dev-ui/%2e%2e/secret.txt")).status == 400);
        CHECK((co_await fetch(client, server, "GET", "/dev-ui/..%2fsecret.txt")).status == 400);
        CHECK((co_await fetch(client, server, "POST", "/dev-ui/index.html")).status == 405);

        // The API is still at the root.
        Answer apps = co_await fetch(client, server, "GET", "/list-apps");
        CHECK(apps.status == 200);
        CHECK(json::parse(apps.body) == json::parse(R"(["app"])"));
        server.stop();
    }());
}

TEST_CASE("ApiServer: without a web UI folder / and /dev-ui/ are not found, and a folder without index.html is refused",
          "[server]")
{
    asio::io_context ioc;
    adk::server::ApiServer server(ioc.get_executor(), {{"app", quiet_agent()}},
                                  options_with(std::make_shared<adk::InMemorySessionService>()));
    server.start();
    adk::net::HttpClient client(no_retries());
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        CHECK((co_await fetch(client, server, "GET", "/")).status == 404);
        CHECK((co_await fetch(client, server, "GET", "/dev-ui/")).status == 404);
        server.stop();
    }());
    adk::test::TempDir empty("web-ui");
    auto options = options_with(std::make_shared<adk::InMemorySessionService>());
    options.web_ui_dir = empty.path().string();
    CHECK_THROWS_WITH(adk::server::ApiServer(ioc.get_executor(), {{"app", quiet_agent()}}, options),
                      Catch::Contains("has no index.html") && Catch::Contains("tools/fetch_web_ui.sh"));
}
