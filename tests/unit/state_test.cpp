// State keys and scopes, and InMemorySessionService.
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

TEST_CASE("state scopes: app: is shared by the app, user: by the user, temp: is never stored", "[state]")
{
    asio::io_context ioc;
    run(ioc, [&]() -> asio::awaitable<void> {
        adk::InMemorySessionService svc;
        json::object initial{{"app:theme", "dark"}, {"user:city", "Paris"}, {"plain", 1}, {"temp:gone", true}};
        adk::Session a = co_await svc.create_session("app", "alice", "s1", initial);
        CHECK(a.state.at("app:theme") == "dark");
        CHECK(a.state.at("user:city") == "Paris");
        CHECK(a.state.at("plain") == 1);
        CHECK(!a.state.contains("temp:gone"));

        adk::Session a2 = co_await svc.create_session("app", "alice");
        CHECK(a2.id.size() == 36);  // a fresh UUID
        CHECK(a2.state.at("user:city") == "Paris");
        CHECK(!a2.state.contains("plain"));
        adk::Session b = co_await svc.create_session("app", "bob");
        CHECK(b.state.at("app:theme") == "dark");
        CHECK(!b.state.contains("user:city"));
        adk::Session other = co_await svc.create_session("other_app", "alice");
        CHECK(other.state.empty());

        adk::Event e("agent", adk::Content::model("x"));
        e.actions.state_delta = {{"app:theme", "light"}, {"user:lang", "fr"}, {"temp:step", 3}, {"plain", 2}};
        co_await svc.append_event(a, e);
        CHECK(!e.actions.state_delta.contains("temp:step"));  // never persisted
        CHECK(a.state.at("temp:step") == 3);                        // but the caller's copy sees it
        CHECK(a.state.at("plain") == 2);

        auto a_again = co_await svc.get_session("app", "alice", "s1");
        REQUIRE(a_again);
        CHECK(!a_again->state.contains("temp:step"));
        CHECK(a_again->events.at(0).actions.state_delta.size() == 3);
        CHECK(a_again->state.at("plain") == 2);
        auto got1 = co_await svc.get_session("app", "alice", a2.id);
        CHECK(got1->state.at("user:lang") == "fr");
        auto got2 = co_await svc.get_session("app", "bob", b.id);
        CHECK(got2->state.at("app:theme") == "light");
        auto got3 = co_await svc.get_session("app", "bob", b.id);
        CHECK(!got3->state.contains("user:lang"));
    }());
}

TEST_CASE("InMemorySessionService: create, get, list, delete, partial events, errors", "[state]")
{
    asio::io_context ioc;
    run(ioc, [&]() -> asio::awaitable<void> {
        adk::InMemorySessionService svc;
        adk::Session s = co_await svc.create_session("app", "u", "fixed");
        CHECK(s.id == "fixed");
        CHECK(s.last_update_time > 1.6e9);
        try {
            co_await svc.create_session("app", "u", "fixed");
            FAIL("a duplicate id was accepted");
        } catch (const adk::Error& e) {
            CHECK(e.code() == adk::errc::already_exists);
        }
        json::object bad_state{{"a/b", 1}};
        try {
            co_await svc.create_session("app", "u", "bad", std::move(bad_state));
            FAIL("a bad key was accepted");
        } catch (const adk::Error& e) {
            CHECK(e.code() == adk::errc::invalid_argument);
        }
        auto got4 = co_await svc.get_session("app", "u", "bad");
        CHECK(!got4);  // nothing half-created

        adk::Event partial("agent", adk::Content::model("par"));
        partial.partial = true;
        co_await svc.append_event(s, partial);
        CHECK(s.events.empty());
        for (int i = 0; i < 5; ++i) {
            adk::Event e("agent", adk::Content::model(std::to_string(i)));
            e.timestamp = 1000 + i;
            co_await svc.append_event(s, e);
        }
        CHECK(s.events.size() == 5);

        adk::GetSessionConfig recent;
        recent.num_recent_events = 2;
        auto last_two = co_await svc.get_session("app", "u", "fixed", recent);
        REQUIRE(last_two->events.size() == 2);
        CHECK(last_two->events[0].text() == "3");
        adk::GetSessionConfig after;
        after.after_timestamp = 1003;
        auto got5 = co_await svc.get_session("app", "u", "fixed", after);
        CHECK(got5->events.size() == 2);

        adk::Event bad("agent", adk::Content::model("x"));
        bad.actions.state_delta["../etc"] = 1;
        bool refused = false;
        try {
            co_await svc.append_event(s, bad);
        } catch (const adk::Error&) {
            refused = true;
        }
        CHECK(refused);
        auto got6 = co_await svc.get_session("app", "u", "fixed");
        CHECK(got6->events.size() == 5);  // nothing stored

        co_await svc.create_session("app", "u", "second");
        auto list = co_await svc.list_sessions("app", "u");
        REQUIRE(list.size() == 2);
        for (const auto& listed : list)
            CHECK(listed.events.empty());
        auto got7 = co_await svc.list_sessions("app", "nobody");
        CHECK(got7.empty());

        co_await svc.delete_session("app", "u", "fixed");
        auto got8 = co_await svc.get_session("app", "u", "fixed");
        CHECK(!got8);
        co_await svc.delete_session("app", "u", "fixed");  // twice is fine
        adk::Event late("agent", adk::Content::model("late"));
        try {
            co_await svc.append_event(s, late);
            FAIL("appending to a deleted session succeeded");
        } catch (const adk::Error& e) {
            CHECK(e.code() == adk::errc::not_found);
            CHECK_THAT(std::string(e.what()), Catch::Contains("create the session again"));
        }
    }());
}

TEST_CASE("InMemorySessionService is safe for concurrent appends from 4 threads", "[threads]")
{
    auto svc = std::make_shared<adk::InMemorySessionService>();
    asio::thread_pool pool(4);
    auto created = asio::co_spawn(pool, svc->create_session("app", "u", "shared"), asio::use_future).get();
    constexpr int writers = 8;
    constexpr int per_writer = 200;
    std::vector<std::future<void>> done;
    for (int w = 0; w < writers; ++w) {
        auto writer = [svc, w, created]() -> asio::awaitable<void> {
            adk::Session mine = created;
            for (int i = 0; i < per_writer; ++i) {
                adk::Event e("agent", adk::Content::model(std::to_string(i)));
                e.invocation_id = "w" + std::to_string(w);
                e.actions.state_delta["w" + std::to_string(w)] = i;
                e.actions.state_delta["app:total"] = i;
                co_await svc->append_event(mine, e);
                if (i % 50 == 0)
                    (void)co_await svc->get_session("app", "u", "shared");
            }
        };
        done.push_back(asio::co_spawn(pool, writer, asio::use_future));
    }
    for (auto& f : done)
        f.get();
    auto after = asio::co_spawn(pool, svc->get_session("app", "u", "shared"), asio::use_future).get();
    REQUIRE(after);
    CHECK(after->events.size() == writers * per_writer);
    for (int w = 0; w < writers; ++w) {
        CHECK(after->state.at("w" + std::to_string(w)) == per_writer - 1);
        int expected = 0;  // each writer's events are stored in its order
        for (const auto& e : after->events)
            if (e.invocation_id == "w" + std::to_string(w))
                CHECK(e.text() == std::to_string(expected++));
    }
}
