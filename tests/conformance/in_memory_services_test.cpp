// The in-memory backends against the conformance suites that every backend must pass.
#include <adk/artifacts/file_artifact_service.hpp>
#include <adk/artifacts/in_memory_artifact_service.hpp>
#include <adk/core/error.hpp>
#include <adk/memory/in_memory_memory_service.hpp>
#include <adk/sessions/in_memory_session_service.hpp>

#include "conformance/artifact_service_suite.hpp"
#include "conformance/memory_service_suite.hpp"
#include "conformance/session_service_suite.hpp"
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace asio = boost::asio;

TEST_CASE("InMemorySessionService passes the session service conformance suite", "[sessions][threads]")
{
    adk::test::session_service_suite([] { return std::make_shared<adk::InMemorySessionService>(); });
}

TEST_CASE("EventList reads as a vector of events, and its copies share them", "[sessions]")
{
    adk::EventList a{adk::Event("user", adk::Content::user("one")), adk::Event("agent", adk::Content::model("two"))};
    a.push_back(adk::Event("agent", adk::Content::model("three")));
    REQUIRE(a.size() == 3);
    CHECK(a.front().text() == "one");
    CHECK(a[1].text() == "two");
    CHECK(a.at(2).text() == "three");
    CHECK_THROWS_AS(a.at(3), std::out_of_range);
    CHECK((a.end() - a.begin()) == 3);
    CHECK((a.begin() + 2)->text() == "three");
    CHECK(a.rbegin()->text() == "three");
    std::vector<std::string> texts;
    for (const adk::Event& e : a)
        texts.push_back(e.text());
    CHECK(texts == std::vector<std::string>{"one", "two", "three"});

    adk::EventList b = a;  // the same events, not copies
    CHECK(b == a);
    for (std::size_t i = 0; i < a.size(); ++i)
        CHECK(&b[i] == &a[i]);
    b.push_back(adk::Event("user", adk::Content::user("four")));
    CHECK(a.size() == 3);  // a list of its own
    CHECK(b != a);

    b.edit(0).author = "someone";  // b's own copy of that event
    CHECK(a[0].author == "user");
    CHECK(b[0].author == "someone");
    CHECK(&b[1] == &a[1]);

    CHECK(b.erase_if([](const adk::Event& e) { return e.author == "agent"; }) == 2);
    REQUIRE(b.size() == 2);
    CHECK(b.back().text() == "four");
    b.insert(b.begin() + 1, a.begin() + 1, a.end());
    REQUIRE(b.size() == 4);
    CHECK(b[1] == a[1]);
    CHECK(b.erase(b.begin())->text() == "two");
    CHECK(b.size() == 3);

    adk::EventList equal{adk::Event("user", adk::Content::user("one")), adk::Event("agent", adk::Content::model("two")),
                         adk::Event("agent", adk::Content::model("three"))};
    CHECK(equal == a);  // equal events, held apart
    CHECK_THROWS_AS(a.push_back(std::shared_ptr<const adk::Event>()), adk::Error);

    // A session writes its events and reads them back, in order.
    adk::Session session("s", "app", "u");
    session.events = a;
    const adk::Session back = boost::json::value_to<adk::Session>(boost::json::value_from(session));
    CHECK(back.events == a);
    CHECK(boost::json::value_from(back) == boost::json::value_from(session));
}

TEST_CASE("InMemorySessionService: the caller's session and the service's hold each event once", "[sessions]")
{
    asio::io_context ioc;
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        adk::InMemorySessionService svc;
        adk::Session mine = co_await svc.create_session({"app", "u", "s"});
        adk::Event said("user", adk::Content::user("hello"));
        co_await svc.append_event(mine, said);
        adk::Event answered("agent", adk::Content::model("hi"));
        answered.actions.state_delta["temp:seen"] = true;
        co_await svc.append_event(mine, answered);
        REQUIRE(mine.events.size() == 2);
        CHECK(mine.state.at("temp:seen") == true);  // the caller's copy sees its temp: keys
        CHECK(!mine.events[1].actions.state_delta.contains("temp:seen"));  // what was stored

        auto read = co_await svc.get_session({"app", "u", "s"});
        REQUIRE(read);
        CHECK(read->events == mine.events);
        CHECK(!read->state.contains("temp:seen"));
        for (std::size_t i = 0; i < mine.events.size(); ++i)
            CHECK(read->events.shared(i) == mine.events.shared(i));  // one Event, held by both

        // Changing the caller's copy of an event leaves the stored one as it was.
        mine.events.edit(0).author = "changed";
        auto again = co_await svc.get_session({"app", "u", "s"});
        REQUIRE(again);
        CHECK(again->events[0].author == "user");
        CHECK(again->events.shared(1) == mine.events.shared(1));
    }());
}

TEST_CASE("InMemoryArtifactService passes the artifact service conformance suite", "[artifacts][threads]")
{
    adk::test::artifact_service_suite([] { return std::make_shared<adk::InMemoryArtifactService>(); });
}

TEST_CASE("InMemoryMemoryService passes the memory service conformance suite", "[memory][threads]")
{
    adk::test::memory_service_suite([] { return std::make_shared<adk::InMemoryMemoryService>(); });
}

TEST_CASE("InMemoryMemoryService: words are runs of ASCII letters, digits are not words", "[memory]")
{
    asio::io_context ioc;
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        adk::InMemoryMemoryService memory;
        adk::Session s("s1", "app", "u");
        adk::Event booked("planner", adk::Content::model("Booked: 3 nights in room42"));
        s.events.push_back(booked);
        co_await memory.add_session_to_memory(s);
        adk::SearchMemoryRequest digits("app", "u", "3 42");
        auto none = co_await memory.search_memory(std::move(digits));
        CHECK(none.memories.empty());
        adk::SearchMemoryRequest room("app", "u", "ROOM");
        auto found = co_await memory.search_memory(std::move(room));
        CHECK(found.memories.size() == 1);  // "room42" holds the word "room"
    }());
}

TEST_CASE("FileArtifactService passes the artifact service conformance suite", "[artifacts][threads]")
{
    adk::test::TempDir dir("file-artifacts");
    int n = 0;
    adk::test::artifact_service_suite(
        [&] { return std::make_shared<adk::FileArtifactService>(dir.path() / ("root" + std::to_string(n++))); });
}

TEST_CASE("FileArtifactService keeps versions across instances and writes nothing outside its root", "[artifacts]")
{
    adk::test::TempDir dir("file-artifacts-restart");
    asio::io_context ioc;
    {
        adk::FileArtifactService first(dir.path() / "root");
        adk::test::run(ioc, [&]() -> asio::awaitable<void> {
            const adk::ArtifactKey notes("app", "u", "s", "notes.txt");
            adk::Part one = adk::Part::from_text("one");
            adk::Part two = adk::Part::from_text("two");
            adk::Part avatar = adk::Part::from_bytes(std::string("\x89PNG", 4), "image/png");
            co_await first.save_artifact(notes, std::move(one));
            co_await first.save_artifact(notes, std::move(two));
            adk::ArtifactKey avatar_key("app", "u", "s", "user:avatar.png");
            co_await first.save_artifact(std::move(avatar_key), std::move(avatar));
            for (const char* bad : {"../../outside.txt", "/tmp/outside.txt", "a/../../../outside.txt"}) {
                asio::awaitable<std::int64_t> save = first.save_artifact({"app", "u", "s", bad}, adk::Part::from_text("x"));
                std::optional<adk::Error> refused = co_await adk::test::error_of(std::move(save));
                CHECK(refused);
            }
        }());
    }
    adk::FileArtifactService second(dir.path() / "root");
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        const adk::ArtifactKey notes("app", "u", "s", "notes.txt");
        auto latest = co_await second.load_artifact(notes);
        REQUIRE(latest);
        CHECK(latest->text == std::optional<std::string>("two"));
        auto first_version = co_await second.load_artifact(notes, 0);
        REQUIRE(first_version);
        CHECK(first_version->text == std::optional<std::string>("one"));
        const adk::SessionKey other_session("app", "u", "other-session");
        auto keys = co_await second.list_artifact_keys(other_session);
        CHECK(keys == std::vector<std::string>{"user:avatar.png"});
    }());
    std::vector<std::string> beside_root;
    for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
        beside_root.push_back(entry.path().filename().string());
    CHECK(beside_root == std::vector<std::string>{"root"});
    std::size_t temp_files = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir.path()))
        temp_files += entry.path().filename().string().starts_with(".tmp-");
    CHECK(temp_files == 0);
}
