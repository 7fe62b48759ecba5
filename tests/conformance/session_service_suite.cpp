#include "conformance/session_service_suite.hpp"

#include <adk/core/error.hpp>
#include <adk/core/json_limits.hpp>
#include <adk/sessions/state.hpp>

#include "support/manual_time.hpp"
#include "support/run.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/value_from.hpp>

#include <catch2/catch.hpp>

#include <future>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace adk::test {

namespace {

namespace json = boost::json;

Event text_event(std::string text, double timestamp = 0)
{
    Event e("agent", Content::model(std::move(text)));
    e.invocation_id = "e-1";
    e.timestamp = timestamp;
    return e;
}

std::vector<std::string> texts(const Session& s)
{
    std::vector<std::string> out;
    for (const auto& e : s.events)
        out.push_back(e.text());
    return out;
}

void creating(SessionService& svc)
{
    asio::io_context ioc;
    run(ioc, [&]() -> asio::awaitable<void> {
        Session fixed = co_await svc.create_session({"app", "u", "fixed"});
        CHECK(fixed.id == "fixed");
        CHECK(fixed.app_name == "app");
        CHECK(fixed.user_id == "u");
        CHECK(fixed.events.empty());
        CHECK(fixed.last_update_time > 1.6e9);
        Session fresh = co_await svc.create_session({"app", "u"});
        CHECK(fresh.id.size() == 36);  // a fresh UUID
        Session other = co_await svc.create_session({"app", "u"});
        CHECK(other.id != fresh.id);

        auto duplicate = co_await error_of(svc.create_session({"app", "u", "fixed"}));
        REQUIRE(duplicate);
        CHECK(duplicate->code() == errc::already_exists);
        CHECK_THAT(duplicate->message(), Catch::Contains("fixed") && Catch::Contains("already exists"));
        auto no_app = co_await error_of(svc.create_session({"", "u"}));
        REQUIRE(no_app);
        CHECK(no_app->code() == errc::invalid_argument);
        auto no_user = co_await error_of(svc.create_session({"app", ""}));
        REQUIRE(no_user);
        CHECK(no_user->code() == errc::invalid_argument);

        json::object bad_state{{"fine", 1}, {"a/b", 1}};
        auto bad_key = co_await error_of(svc.create_session({"app", "u", "bad", bad_state}));
        REQUIRE(bad_key);
        CHECK(bad_key->code() == errc::invalid_argument);
        CHECK_THAT(bad_key->message(), Catch::Contains("a/b"));
        auto half_created = co_await svc.get_session({"app", "u", "bad"});
        CHECK(!half_created);  // nothing half-created

        auto missing = co_await svc.get_session({"app", "u", "nobody"});
        CHECK(!missing);
        auto other_user = co_await svc.get_session({"app", "someone else", "fixed"});
        CHECK(!other_user);
        auto other_app = co_await svc.get_session({"another app", "u", "fixed"});
        CHECK(!other_app);
    }());
}

void state_scopes(SessionService& svc)
{
    asio::io_context ioc;
    run(ioc, [&]() -> asio::awaitable<void> {
        json::object initial{{"app:theme", "dark"}, {"user:city", "Paris"}, {"plain", 1}, {"temp:gone", true}};
        Session a = co_await svc.create_session({"app", "alice", "s1", initial});
        CHECK(a.state.at("app:theme") == "dark");
        CHECK(a.state.at("user:city") == "Paris");
        CHECK(a.state.at("plain") == 1);
        CHECK(!a.state.contains("temp:gone"));

        Session a2 = co_await svc.create_session({"app", "alice"});
        CHECK(a2.state.at("user:city") == "Paris");
        CHECK(!a2.state.contains("plain"));
        Session b = co_await svc.create_session({"app", "bob"});
        CHECK(b.state.at("app:theme") == "dark");
        CHECK(!b.state.contains("user:city"));
        Session other = co_await svc.create_session({"other_app", "alice"});
        CHECK(other.state.empty());

        Event e = text_event("x");
        e.actions.state_delta = {{"app:theme", "light"}, {"user:lang", "fr"}, {"temp:step", 3}, {"plain", 2}};
        co_await svc.append_event(a, e);
        CHECK(!e.actions.state_delta.contains("temp:step"));  // never persisted
        CHECK(a.state.at("temp:step") == 3);                   // but the caller's copy sees it
        CHECK(a.state.at("plain") == 2);

        auto a_again = co_await svc.get_session({"app", "alice", "s1"});
        REQUIRE(a_again);
        CHECK(!a_again->state.contains("temp:step"));
        CHECK(a_again->events.at(0).actions.state_delta.size() == 3);
        CHECK(a_again->state.at("plain") == 2);
        auto alice2 = co_await svc.get_session({"app", "alice", a2.id});
        CHECK(alice2->state.at("user:lang") == "fr");
        CHECK(!alice2->state.contains("plain"));
        auto bob = co_await svc.get_session({"app", "bob", b.id});
        CHECK(bob->state.at("app:theme") == "light");
        CHECK(!bob->state.contains("user:lang"));
        auto other_again = co_await svc.get_session({"other_app", "alice", other.id});
        CHECK(other_again->state.empty());

        // A value set to null is stored as null: ADK has no delete through a delta.
        Event nulling = text_event("y");
        nulling.actions.state_delta = {{"plain", nullptr}};
        co_await svc.append_event(a, nulling);
        auto nulled = co_await svc.get_session({"app", "alice", "s1"});
        CHECK(nulled->state.at("plain").is_null());
    }());
}

void appending(SessionService& svc)
{
    asio::io_context ioc;
    run(ioc, [&]() -> asio::awaitable<void> {
        Session s = co_await svc.create_session({"app", "u", "s"});
        double created = s.last_update_time;

        Event partial = text_event("partial");
        partial.partial = true;
        co_await svc.append_event(s, partial);
        CHECK(s.events.empty());

        Event untimed = text_event("0");
        co_await svc.append_event(s, untimed);
        CHECK(untimed.timestamp > 1.6e9);  // a missing timestamp is set
        for (int i = 1; i <= 5; ++i) {
            Event e = text_event(std::to_string(i), 2e9 + i);
            co_await svc.append_event(s, e);
        }
        CHECK(texts(s) == std::vector<std::string>{"0", "1", "2", "3", "4", "5"});

        auto stored = co_await svc.get_session({"app", "u", "s"});
        REQUIRE(stored);
        REQUIRE(texts(*stored) == texts(s));  // the order they were appended in
        CHECK(stored->last_update_time >= created);
        for (std::size_t i = 0; i < s.events.size(); ++i)  // each event as it was stored, field for field
            CHECK(json::value_from(stored->events[i]) == json::value_from(s.events[i]));

        GetSessionRequest recent("app", "u", "s");
        recent.num_recent_events = 2;
        auto last_two = co_await svc.get_session(std::move(recent));
        CHECK(texts(*last_two) == std::vector<std::string>{"4", "5"});
        GetSessionRequest after("app", "u", "s");
        after.after_timestamp = 2e9 + 3;
        auto since = co_await svc.get_session(std::move(after));
        CHECK(texts(*since) == std::vector<std::string>{"3", "4", "5"});
        GetSessionRequest none("app", "u", "s");
        none.num_recent_events = 0;
        auto no_events = co_await svc.get_session(std::move(none));
        CHECK(no_events->events.empty());

        // A refused event changes nothing: not the store, not the caller's copy, not the event.
        Event bad = text_event("bad");
        bad.actions.state_delta = {{"temp:t", 1}, {"ok", 1}, {"../etc", 1}};
        json::object delta_before = bad.actions.state_delta;
        auto refused = co_await error_of(svc.append_event(s, bad));
        REQUIRE(refused);
        CHECK(refused->code() == errc::invalid_argument);
        CHECK(bad.actions.state_delta == delta_before);
        CHECK(s.events.size() == 6);
        CHECK(!s.state.contains("ok"));
        auto after_refusal = co_await svc.get_session({"app", "u", "s"});
        CHECK(after_refusal->events.size() == 6);
        CHECK(!after_refusal->state.contains("ok"));

        // Events of one timestamp are read in the order they were stored.
        CreateSessionRequest tied_request("app", "u", "tied");
        Session tied = co_await svc.create_session(std::move(tied_request));
        std::vector<std::string> appended;
        for (int i = 0; i < 20; ++i) {
            Event e = text_event("tie " + std::to_string(i), 2e9);
            co_await svc.append_event(tied, e);
            appended.push_back(e.text());
        }
        GetSessionRequest all_tied("app", "u", "tied");
        auto tied_back = co_await svc.get_session(std::move(all_tied));
        CHECK(texts(*tied_back) == appended);
        GetSessionRequest last_tied("app", "u", "tied");
        last_tied.num_recent_events = 3;
        auto last_three = co_await svc.get_session(std::move(last_tied));
        CHECK(texts(*last_three) == std::vector<std::string>(appended.end() - 3, appended.end()));
    }());
}

void listing_and_deleting(SessionService& svc)
{
    asio::io_context ioc;
    run(ioc, [&]() -> asio::awaitable<void> {
        json::object state{{"k", 1}, {"user:u", 2}, {"app:a", 3}};
        Session first = co_await svc.create_session({"app", "u", "first", state});
        Event e = text_event("hello");
        co_await svc.append_event(first, e);
        co_await svc.create_session({"app", "u", "second"});
        co_await svc.create_session({"app", "someone else", "third"});
        co_await svc.create_session({"other app", "u", "fourth"});

        auto listed = co_await svc.list_sessions({"app", "u"});
        REQUIRE(listed.size() == 2);
        std::vector<std::string> ids{listed[0].id, listed[1].id};
        std::sort(ids.begin(), ids.end());
        CHECK(ids == std::vector<std::string>{"first", "second"});
        for (const auto& s : listed) {
            CHECK(s.events.empty());  // listed without their events
            CHECK(s.app_name == "app");
            CHECK(s.user_id == "u");
            CHECK(s.state.at("user:u") == 2);
            CHECK(s.state.at("app:a") == 3);
            CHECK(s.state.contains("k") == (s.id == "first"));
        }
        auto nobody = co_await svc.list_sessions({"app", "nobody"});
        CHECK(nobody.empty());

        co_await svc.delete_session({"app", "u", "first"});
        auto gone = co_await svc.get_session({"app", "u", "first"});
        CHECK(!gone);
        co_await svc.delete_session({"app", "u", "first"});  // twice is fine
        co_await svc.delete_session({"app", "u", "never existed"});
        auto left = co_await svc.list_sessions({"app", "u"});
        REQUIRE(left.size() == 1);
        CHECK(left[0].id == "second");
        auto untouched = co_await svc.get_session({"app", "someone else", "third"});
        CHECK(untouched);

        Event late = text_event("late");
        auto refused = co_await error_of(svc.append_event(first, late));
        REQUIRE(refused);
        CHECK(refused->code() == errc::not_found);
        CHECK_THAT(refused->message(), Catch::Contains("create the session again"));
        CHECK(first.events.size() == 1);  // the caller's copy did not take it either

        // A session deleted and made again starts empty; the user's and the app's state stay.
        Session again = co_await svc.create_session({"app", "u", "first"});
        CHECK(again.events.empty());
        CHECK(!again.state.contains("k"));
        CHECK(again.state.at("user:u") == 2);
    }());
}

void copies_are_independent(SessionService& svc)
{
    asio::io_context ioc;
    run(ioc, [&]() -> asio::awaitable<void> {
        Session s = co_await svc.create_session({"app", "u", "s"});
        Event e = text_event("kept");
        co_await svc.append_event(s, e);
        auto got = co_await svc.get_session({"app", "u", "s"});
        got->events.clear();
        got->state["changed"] = true;
        s.state["changed"] = true;
        auto again = co_await svc.get_session({"app", "u", "s"});
        CHECK(again->events.size() == 1);
        CHECK(!again->state.contains("changed"));
    }());
}

// Eight writers on four threads append to one session at once; each writer's events keep their order, and
// nothing is lost.
void concurrent_appends(const SessionServiceFactory& make)
{
    std::shared_ptr<SessionService> svc = make();
    asio::thread_pool pool(4);
    auto created = asio::co_spawn(pool, svc->create_session({"app", "u", "shared"}), asio::use_future).get();
    constexpr int writers = 8;
    constexpr int per_writer = 200;
    std::vector<std::future<void>> done;
    for (int w = 0; w < writers; ++w) {
        auto writer = [svc, w, created]() -> asio::awaitable<void> {
            Session mine = created;
            for (int i = 0; i < per_writer; ++i) {
                Event e = text_event(std::to_string(i));
                e.invocation_id = "w" + std::to_string(w);
                e.actions.state_delta["w" + std::to_string(w)] = i;
                e.actions.state_delta["app:last"] = i;
                co_await svc->append_event(mine, e);
                if (i % 50 == 0)
                    (void)co_await svc->get_session({"app", "u", "shared"});
            }
        };
        done.push_back(asio::co_spawn(pool, writer, asio::use_future));
    }
    for (auto& f : done)
        f.get();
    auto after = asio::co_spawn(pool, svc->get_session({"app", "u", "shared"}), asio::use_future).get();
    REQUIRE(after);
    CHECK(after->events.size() == writers * per_writer);
    for (int w = 0; w < writers; ++w) {
        CHECK(after->state.at("w" + std::to_string(w)) == per_writer - 1);
        int expected = 0;
        for (const auto& e : after->events)
            if (e.invocation_id == "w" + std::to_string(w))
                CHECK(e.text() == std::to_string(expected++));
        CHECK(expected == per_writer);
    }
    pool.join();  // a service's worker may still be letting go of the pool, which it posted to
}

std::int64_t count_of(const Session& s, std::string_view key)
{
    const json::value* v = s.state.if_contains(key);
    return v ? v->as_int64() : 0;
}

// Invocations that take the session's turn read what the one before them stored: eight workers on four
// threads each add one to two counters 50 times, and no increment is lost.
void turns_serialize_read_modify_write(const SessionServiceFactory& make)
{
    std::shared_ptr<SessionService> svc = make();
    asio::thread_pool pool(4);
    asio::co_spawn(pool, svc->create_session({"app", "u", "counted"}), asio::use_future).get();
    constexpr int workers = 8;
    constexpr int per_worker = 50;
    std::vector<std::future<void>> done;
    for (int w = 0; w < workers; ++w) {
        auto worker = [svc]() -> asio::awaitable<void> {
            const SessionKey counted("app", "u", "counted");
            for (int i = 0; i < per_worker; ++i) {
                asio::awaitable<SessionTurn> taking = svc->take_turn(counted);
                SessionTurn turn = co_await std::move(taking);
                asio::awaitable<std::optional<Session>> reading = svc->get_session(counted);
                std::optional<Session> s = co_await std::move(reading);
                Event e = text_event("one more");
                e.actions.state_delta["counter"] = count_of(*s, "counter") + 1;
                e.actions.state_delta["user:counter"] = count_of(*s, "user:counter") + 1;
                co_await svc->append_event(*s, e);
            }
        };
        done.push_back(asio::co_spawn(pool, worker, asio::use_future));
    }
    for (auto& f : done)
        f.get();
    auto after = asio::co_spawn(pool, svc->get_session({"app", "u", "counted"}), asio::use_future).get();
    REQUIRE(after);
    CHECK(after->events.size() == workers * per_worker);
    CHECK(after->state.at("counter") == workers * per_worker);
    CHECK(after->state.at("user:counter") == workers * per_worker);
    pool.join();  // a service's worker may still be letting go of the pool, which it posted to
}

// A turn blocks its own session only; a cancelled wait takes nothing and leaves the turn usable.
void turns_are_per_session(SessionService& svc)
{
    asio::io_context ioc;
    run(ioc, [&]() -> asio::awaitable<void> {
        const SessionKey key_a("app", "u", "a");
        const SessionKey key_b("app", "u", "b");
        const SessionKey other_user_a("app", "v", "a");
        asio::awaitable<SessionTurn> taking_a = svc.take_turn(key_a);
        SessionTurn a = co_await std::move(taking_a);
        CHECK(a.held());
        asio::awaitable<SessionTurn> taking_b = svc.take_turn(key_b);
        SessionTurn b = co_await std::move(taking_b);  // not blocked by a
        CHECK(b.held());
        asio::awaitable<SessionTurn> taking_other = svc.take_turn(other_user_a);
        SessionTurn other_user = co_await std::move(taking_other);
        CHECK(other_user.held());

        auto ex = co_await asio::this_coro::executor;
        asio::cancellation_signal cancel;
        std::optional<Error> refused;
        std::optional<adk::testing::ManualClock> clock(std::in_place);  // a wait of a minute that takes no minute
        asio::awaitable<SessionTurn> wait_a = svc.take_turn(key_a);
        asio::co_spawn(ex, error_of(std::move(wait_a)),
                       asio::bind_cancellation_slot(cancel.slot(), [&](std::exception_ptr, std::optional<Error> e) {
                           refused = std::move(e);
                       }));
        co_await clock->elapse(std::chrono::minutes(1));
        CHECK(!refused);  // still waiting
        cancel.emit(asio::cancellation_type::terminal);
        const bool ended = co_await adk::test::eventually([&] { return refused.has_value(); });
        clock.reset();
        REQUIRE(ended);
        REQUIRE(refused);
        CHECK(refused->code() == make_error_code(errc::cancelled));

        a.release();
        asio::awaitable<SessionTurn> taking_again = svc.take_turn(key_a);
        SessionTurn again = co_await std::move(taking_again);
        CHECK(again.held());
    }());
}

// A value `depth` containers deep (arrays and objects in turn), a number at the bottom.
json::value nested(std::size_t depth)
{
    json::value v = 7;
    for (std::size_t i = 0; i < depth; ++i) {
        if (i % 2 == 0)
            v = json::array{std::move(v)};
        else
            v = json::object{{"k", std::move(v)}};
    }
    return v;
}

// Whatever a service accepts it reads back, on get and on list, and writes again; what it could not read
// back is refused before anything is stored.
void stored_json_reads_back(SessionService& svc)
{
    asio::io_context ioc;
    run(ioc, [&]() -> asio::awaitable<void> {
        const json::value deepest = nested(max_state_value_depth);
        json::object state{{"k", deepest}, {"app:k", deepest}, {"user:k", deepest}};
        CreateSessionRequest create("app", "u", "deep", state);
        Session s = co_await svc.create_session(std::move(create));
        Event e = text_event("deep");
        e.actions.state_delta = {{"k2", deepest}, {"app:k2", deepest}, {"user:k2", deepest}};
        e.content->parts.push_back(Part::from_function_response("f", {{"r", nested(max_json_depth - 6)}}, "c1"));
        co_await svc.append_event(s, e);
        auto back = co_await svc.get_session({"app", "u", "deep"});
        REQUIRE(back);
        for (const char* key : {"k", "app:k", "user:k", "k2", "app:k2", "user:k2"})
            CHECK(back->state.at(key) == deepest);
        REQUIRE(back->events.size() == 1);
        CHECK(back->events[0].actions.state_delta == e.actions.state_delta);
        CHECK(back->events[0].content == e.content);
        auto listed = co_await svc.list_sessions({"app", "u"});
        REQUIRE(listed.size() == 1);
        CHECK(listed[0].state.at("app:k2") == deepest);
        // and what was read is written again
        Event again = back->events[0];
        again.id.clear();
        co_await svc.append_event(s, again);
        // A compaction (ADK's actions.compaction) reads back whole; its summary stands two levels deeper than an
        // event's content.
        Event compacted;
        compacted.author = "user";
        EventCompaction summary;
        summary.start_timestamp = 1.5;
        summary.end_timestamp = again.timestamp;
        summary.compacted_content = Content("model", {Part::from_text("the user is Ada"),
                                                      Part::from_function_response("f", {{"r", nested(max_json_depth - 8)}}, "c1")});
        summary.extra = {{"laterField", true}};
        compacted.actions.compaction = summary;
        co_await svc.append_event(s, compacted);
        auto with_summary = co_await svc.get_session({"app", "u", "deep"});
        REQUIRE(with_summary);
        REQUIRE(with_summary->events.size() == 3);
        REQUIRE(with_summary->events[2].actions.compaction);
        CHECK(*with_summary->events[2].actions.compaction == summary);

        // One level deeper, a number JSON cannot hold (1e400 reads as infinity), in state or in content: refused,
        // nothing stored.
        std::vector<Event> bad;
        bad.emplace_back(text_event("too deep"));
        bad.back().actions.state_delta = {{"app:k3", nested(max_state_value_depth + 1)}};
        bad.emplace_back(text_event("infinite"));
        bad.back().actions.state_delta = {{"user:k3", json::array{1, std::numeric_limits<double>::infinity()}}};
        bad.emplace_back(text_event("deep response"));
        bad.back().content->parts.push_back(
            Part::from_function_response("f", {{"r", nested(max_json_depth - 5)}}, "c2"));
        bad.emplace_back(text_event("deep summary"));
        bad.back().actions.compaction = summary;
        bad.back().actions.compaction->compacted_content->parts.push_back(
            Part::from_function_response("f", {{"r", nested(max_json_depth - 7)}}, "c3"));
        bad.emplace_back(text_event("infinite metadata"));
        bad.back().custom_metadata = {{"x", -std::numeric_limits<double>::infinity()}};
        for (Event& event : bad) {
            auto refused = co_await error_of(svc.append_event(s, event));
            REQUIRE(refused);
            CHECK(refused->code() == errc::invalid_argument);
        }
        CreateSessionRequest bad_create("app", "u", "bad", {{"k", nested(max_state_value_depth + 1)}});
        auto refused_create = co_await error_of(svc.create_session(std::move(bad_create)));
        REQUIRE(refused_create);
        CHECK(refused_create->code() == errc::invalid_argument);
        GetSessionRequest bad_read("app", "u", "bad");
        auto bad_stored = co_await svc.get_session(std::move(bad_read));
        CHECK_FALSE(bad_stored);
        auto after = co_await svc.get_session({"app", "u", "deep"});
        REQUIRE(after);
        CHECK(after->events.size() == 3);
        CHECK(after->state.count("app:k3") == 0);
        CHECK(after->state.count("user:k3") == 0);
    }());
}

// ADK 2.x's workflow fields (nodeInfo, output, actions.route, isolationScope) read back whole and write again;
// an output nested too deep or holding a number JSON cannot hold is refused, nothing stored.
void workflow_fields_read_back(SessionService& svc)
{
    asio::io_context ioc;
    run(ioc, [&]() -> asio::awaitable<void> {
        CreateSessionRequest create("app", "u", "graph");
        Session s = co_await svc.create_session(std::move(create));
        Event node = text_event("a refund");
        node.node_info.emplace();
        node.node_info->path = "triage@1/classify@2";
        node.node_info->output_for = {"triage@1/classify@2", "triage@1"};
        node.node_info->message_as_output = true;
        node.node_info->extra = {{"laterField", 1}};
        node.output = json::object{{"category", "refund"}, {"snake_key", nested(4)}, {"camelKey", 1.5}};
        node.actions.route = json::array{"refund", 2, true};
        node.isolation_scope = "ticket-7";
        co_await svc.append_event(s, node);
        Event plain_route = text_event("routed");
        plain_route.actions.route = "refund";
        plain_route.output = "just text";
        co_await svc.append_event(s, plain_route);
        GetSessionRequest read("app", "u", "graph");
        auto back = co_await svc.get_session(std::move(read));
        REQUIRE(back);
        REQUIRE(back->events.size() == 2);
        CHECK(back->events[0].node_info == node.node_info);
        CHECK(back->events[0].output == node.output);
        CHECK(back->events[0].actions.route == node.actions.route);
        CHECK(back->events[0].isolation_scope == node.isolation_scope);
        CHECK(back->events[1].actions.route == json::value("refund"));
        CHECK(back->events[1].output == json::value("just text"));
        Event again = back->events[0];
        again.id.clear();
        co_await svc.append_event(s, again);

        std::vector<Event> bad;
        bad.emplace_back(text_event("deep output"));
        bad.back().output = nested(max_json_depth);
        bad.emplace_back(text_event("infinite output"));
        bad.back().output = json::array{std::numeric_limits<double>::infinity()};
        for (Event& event : bad) {
            auto refused = co_await error_of(svc.append_event(s, event));
            REQUIRE(refused);
            CHECK(refused->code() == errc::invalid_argument);
        }
        GetSessionRequest reread("app", "u", "graph");
        auto after = co_await svc.get_session(std::move(reread));
        REQUIRE(after);
        CHECK(after->events.size() == 3);
    }());
}

// State is bounded per value, per delta and per scope (errc::too_large); a refused event or session changes
// nothing.
void state_limits(SessionService& svc)
{
    StateLimits limits;
    limits.max_value_bytes = 1000;
    limits.max_delta_bytes = 2500;
    limits.max_scope_bytes = 6000;
    svc.set_state_limits(limits);
    asio::io_context ioc;
    run(ioc, [&]() -> asio::awaitable<void> {
        const json::value small = json::string(std::string(700, 'x'));
        Session s = co_await svc.create_session({"app", "u", "s"});
        auto too_large = [&](json::object delta) -> asio::awaitable<std::optional<Error>> {
            Event e = text_event("big");
            e.actions.state_delta = std::move(delta);
            co_return co_await error_of(svc.append_event(s, e));
        };
        json::object one_big{{"k", std::string(1200, 'x')}};
        auto value = co_await too_large(std::move(one_big));
        REQUIRE(value);
        CHECK(value->code() == errc::too_large);
        CHECK_THAT(value->message(), Catch::Contains("max_value_bytes"));
        json::object four{{"a", small}, {"b", small}, {"c", small}, {"d", small}};
        auto delta = co_await too_large(std::move(four));
        REQUIRE(delta);
        CHECK(delta->code() == errc::too_large);
        CHECK_THAT(delta->message(), Catch::Contains("max_delta_bytes"));
        // Each scope grows to its limit, and the delta that would pass it is refused whole.
        for (const char* prefix : {"app:", "user:", ""}) {
            for (int i = 0;; ++i) {
                const std::string key = std::string(prefix) + "k" + std::to_string(i);
                const std::string other = std::string(prefix == std::string("app:") ? "user:" : "app:") + "n" +
                                          std::to_string(i);
                Event e = text_event(key);
                e.actions.state_delta = {{key, small}, {other, 1}};
                auto refused = co_await error_of(svc.append_event(s, e));
                if (!refused)
                    continue;
                CHECK(refused->code() == errc::too_large);
                CHECK_THAT(refused->message(), Catch::Contains("max_scope_bytes"));
                CHECK(i >= 6);  // 6000 bytes hold at least six values of 700
                auto stored = co_await svc.get_session({"app", "u", "s"});
                REQUIRE(stored);
                CHECK(stored->state.count(key) == 0);
                CHECK(stored->state.count(other) == 0);  // the other scope's key of the refused delta neither
                CHECK(stored->events.back().text() != key);
                break;
            }
        }
        // A scope at its limit still takes a delta that makes it no larger.
        Event replace = text_event("replace");
        replace.actions.state_delta = {{"app:k0", "short"}};
        co_await svc.append_event(s, replace);
        CreateSessionRequest big("app", "u2", "big", {{"app:zz", std::string(900, 'y')}, {"app:zy", std::string(900, 'y')}});
        auto refused_create = co_await error_of(svc.create_session(std::move(big)));
        REQUIRE(refused_create);
        CHECK(refused_create->code() == errc::too_large);
        GetSessionRequest big_read("app", "u2", "big");
        auto big_stored = co_await svc.get_session(std::move(big_read));
        CHECK_FALSE(big_stored);
    }());
}

}  // namespace

void session_service_suite(const SessionServiceFactory& make)
{
    SECTION("what a service accepts reads back and writes again; JSON that could not is refused, nothing stored")
    {
        stored_json_reads_back(*make());
    }
    SECTION("ADK 2.x's workflow fields read back whole, and an output JSON cannot hold is refused")
    {
        workflow_fields_read_back(*make());
    }
    SECTION("state is bounded per value, per delta and per scope, and a refusal changes nothing")
    {
        state_limits(*make());
    }
    SECTION("create: a given id or a fresh one, duplicates and bad input refused, nothing half-created")
    {
        creating(*make());
    }
    SECTION("state scopes: app: is shared by the app, user: by the user, temp: is never stored")
    {
        state_scopes(*make());
    }
    SECTION("append: order kept (ties too), partial events skipped, recent and after filters, a refusal changes "
            "nothing")
    {
        appending(*make());
    }
    SECTION("list without events, delete idempotent, append to a deleted session refused")
    {
        listing_and_deleting(*make());
    }
    SECTION("what get_session returns is a copy")
    {
        copies_are_independent(*make());
    }
    SECTION("concurrent appends from 4 threads lose nothing and keep each writer's order")
    {
        concurrent_appends(make);
    }
    SECTION("turns: invocations that take the session's turn lose no read-modify-write, from 4 threads")
    {
        turns_serialize_read_modify_write(make);
    }
    SECTION("turns: one session's turn blocks no other session, and a cancelled wait takes nothing")
    {
        turns_are_per_session(*make());
    }
}

}  // namespace adk::test
