// State keys and the scope helpers every session service uses. What a service does with them is in the
// conformance suite (tests/conformance/session_service_suite.cpp).
#include <adk/adk.hpp>

#include "support/run.hpp"

#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_future.hpp>

#include <catch2/catch.hpp>

namespace asio = boost::asio;
namespace json = boost::json;
using adk::test::run;

namespace {
std::string refusal(std::string_view key)
{
    try {
        adk::validate_state_key(key);
    } catch (const adk::Error& e) {
        CHECK(e.code() == adk::errc::invalid_argument);
        return e.what();
    }
    return "accepted";
}
}  // namespace

TEST_CASE("validate_state_key refuses what cannot be a key, with a reason", "[state]")
{
    CHECK(refusal("") != "accepted");
    CHECK_THAT(refusal(""), Catch::Contains("empty"));
    CHECK_THAT(refusal(std::string(257, 'k')), Catch::Contains("257 bytes"));
    CHECK(refusal(std::string(256, 'k')) == "accepted");
    CHECK_THAT(refusal("a/b"), Catch::Contains("path separator"));
    CHECK_THAT(refusal("a\\b"), Catch::Contains("path separator"));
    CHECK_THAT(refusal("x..y"), Catch::Contains("'..'"));
    CHECK_THAT(refusal(std::string("a\0b", 3)), Catch::Contains("NUL"));
    CHECK_THAT(refusal("a\nb"), Catch::Contains("control character"));
    CHECK_THAT(refusal("a\x7f"), Catch::Contains("control character"));
    for (const char* scope_only : {"app:", "user:", "temp:"})
        CHECK_THAT(refusal(scope_only), Catch::Contains("names the scope") && Catch::Contains("but no key"));
    for (const char* ok : {"count", "app:theme", "user:city", "temp:scratch", "__session_metadata__", "a.b", "k-1"})
        CHECK(refusal(ok) == "accepted");
}

TEST_CASE("split_state_delta, merge_state and take_temp_state: the scopes as a backend stores them", "[state]")
{
    json::object delta{{"app:theme", "dark"}, {"user:city", "Paris"}, {"plain", 1}, {"temp:step", 2}, {"user:x", nullptr}};
    adk::ScopedState scoped = adk::split_state_delta(delta);
    CHECK(scoped.app == json::object{{"theme", "dark"}});
    CHECK(scoped.user == json::object{{"city", "Paris"}, {"x", nullptr}});
    CHECK(scoped.session == json::object{{"plain", 1}});  // temp: is never stored

    json::object merged = adk::merge_state(scoped.app, scoped.user, scoped.session);
    CHECK(merged == json::object{{"plain", 1}, {"app:theme", "dark"}, {"user:city", "Paris"}, {"user:x", nullptr}});
    CHECK(adk::merge_state({}, {}, {}).empty());

    json::object temp = adk::take_temp_state(delta);
    CHECK(temp == json::object{{"temp:step", 2}});
    CHECK(delta.size() == 4);
    CHECK(!delta.contains("temp:step"));
    CHECK(adk::take_temp_state(delta).empty());

    json::object bad{{"ok", 1}, {"bad/key", 2}};
    CHECK_THROWS_AS(adk::validate_state_keys(bad), adk::Error);
}
