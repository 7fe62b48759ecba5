// The server's route table (adk/server/routes.hpp): patterns, verbs, mounts, the order routes are tried in, and
// the HTTP status of each adk::errc.
#include <adk/server/routes.hpp>

#include <catch2/catch.hpp>

#include <cerrno>

using adk::server::RouteRequest;
using adk::server::Routes;

namespace {

using Segments = std::vector<std::string>;

// A handler that answers nothing: the tests tell the routes apart by which handler find() returns.
Routes::Handler named(std::string name, std::vector<std::string>& calls)
{
    return [name = std::move(name), &calls](RouteRequest&) -> boost::asio::awaitable<void> {
        calls.push_back(name);
        co_return;
    };
}

}  // namespace

TEST_CASE("routes: literals, any segment, verbs after a parameter, methods, and the first fit wins", "[server]")
{
    std::vector<std::string> calls;
    Routes r;
    r.add("GET", "/tasks/{}:subscribe", named("subscribe", calls));
    r.add("GET", "/tasks/{}", named("get", calls));
    r.add("POST", "/tasks/{}:cancel", named("cancel", calls));
    r.add("POST", "/message:send", named("send", calls));
    r.add("GET POST", "/both", named("both", calls));
    r.add("GET", "/", named("root", calls));

    std::vector<std::string> params;
    const Routes::Handler* subscribe = r.find("GET", {"tasks", "t1:subscribe"}, params);
    REQUIRE(subscribe != nullptr);
    CHECK(params == Segments{"t1"});
    const Routes::Handler* get = r.find("GET", {"tasks", "t1"}, params);
    REQUIRE(get != nullptr);
    CHECK(get != subscribe);
    CHECK(params == Segments{"t1"});
    // "{}" takes any segment, so a verb the table does not know is an id to GET /tasks/{}.
    CHECK(r.find("GET", {"tasks", "t1:unknown"}, params) == get);
    CHECK(params == Segments{"t1:unknown"});
    // A verb needs something before it.
    CHECK(r.find("POST", {"tasks", ":cancel"}, params) == nullptr);
    CHECK(r.find("POST", {"tasks", "a:b:cancel"}, params) != nullptr);
    CHECK(params == Segments{"a:b"});
    CHECK(r.find("POST", {"message:send"}, params) != nullptr);
    CHECK(params.empty());
    CHECK(r.find("GET", {"message:send"}, params) == nullptr);
    CHECK(r.find("GET", {"both"}, params) == r.find("POST", {"both"}, params));
    CHECK(r.find("DELETE", {"both"}, params) == nullptr);
    CHECK(r.find("GET", {}, params) != nullptr);
    CHECK(r.find("GET", {"tasks"}, params) == nullptr);
    CHECK(r.find("GET", {"tasks", "t1", "more"}, params) == nullptr);

    CHECK(r.methods_of({"tasks", "t1:cancel"}) == "GET, POST");  // GET /tasks/{} fits it too
    CHECK(r.methods_of({"both"}) == "GET, POST");
    CHECK(r.methods_of({"nothing"}).empty());
    CHECK(r.size() == 6);
    CHECK(calls.empty());  // finding runs nothing
}

TEST_CASE("routes: a table mounted under a prefix with parameters of its own", "[server]")
{
    std::vector<std::string> calls;
    Routes a2a;
    a2a.add("GET", "/.well-known/agent-card.json", named("card", calls));
    a2a.add("POST", "/tasks/{}:cancel", named("cancel", calls));
    a2a.add("POST", "/", named("rpc", calls));

    Routes server;
    server.add("GET", "/health", named("health", calls));
    server.mount("/a2a/{}", a2a);
    server.mount("/", a2a);  // no prefix
    CHECK(server.size() == 7);

    std::vector<std::string> params;
    CHECK(server.find("GET", {"a2a", "weather", ".well-known", "agent-card.json"}, params) != nullptr);
    CHECK(params == Segments{"weather"});
    CHECK(server.find("POST", {"a2a", "weather", "tasks", "t9:cancel"}, params) != nullptr);
    CHECK(params == Segments{"weather", "t9"});
    CHECK(server.find("POST", {"a2a", "weather"}, params) != nullptr);
    CHECK(params == Segments{"weather"});
    CHECK(server.find("POST", {"tasks", "t9:cancel"}, params) != nullptr);
    CHECK(params == Segments{"t9"});
    CHECK(server.find("POST", {"a2a"}, params) == nullptr);
    // The mounted table is copied: adding to it later changes nothing mounted.
    a2a.add("GET", "/late", named("late", calls));
    CHECK(server.find("GET", {"a2a", "weather", "late"}, params) == nullptr);
}

TEST_CASE("routes: patterns that cannot be routes are refused when added", "[server]")
{
    std::vector<std::string> calls;
    Routes r;
    CHECK_THROWS_WITH(r.add("GET", "tasks", named("x", calls)), Catch::Contains("starts with '/'"));
    CHECK_THROWS_WITH(r.add("GET", "/tasks//x", named("x", calls)), Catch::Contains("empty segment"));
    CHECK_THROWS_WITH(r.add("GET", "/tasks/", named("x", calls)), Catch::Contains("empty segment"));
    CHECK_THROWS_WITH(r.add("", "/tasks", named("x", calls)), Catch::Contains("needs a method"));
    CHECK_THROWS_WITH(r.mount("a2a", r), Catch::Contains("starts with '/'"));
    CHECK(r.size() == 0);
}

TEST_CASE("routes: each adk::errc has its HTTP status in one place", "[server]")
{
    using adk::errc;
    const std::pair<errc, unsigned> statuses[] = {
        {errc::invalid_argument, 400}, {errc::not_found, 404},    {errc::already_exists, 409},
        {errc::too_large, 413},        {errc::unavailable, 503},  {errc::timed_out, 504},
        {errc::storage_failed, 500},   {errc::agent_failed, 500}, {errc::cancelled, 500},
        {errc::bad_response, 500},
    };
    for (const auto& [code, status] : statuses) {
        INFO(adk::make_error_code(code).message());
        CHECK(adk::server::http_status(adk::Error(code, "x")) == status);
    }
    // Another category's code of the same number is not adk's: ENOENT is 2, as errc::not_found is.
    const auto enoent = boost::system::error_code(ENOENT, boost::system::system_category());
    CHECK(adk::server::http_status(adk::Error(enoent, "no such file")) == 500);
}
