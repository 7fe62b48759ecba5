// The SQLite backends against the conformance suites, each on a fresh database file, and what only SQLite's
// memory does (stems, digits, ranking).
#include <adk/sqlite/sqlite_memory_service.hpp>
#include <adk/sqlite/sqlite_session_service.hpp>

#include "conformance/memory_service_suite.hpp"
#include "conformance/session_service_suite.hpp"
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

namespace asio = boost::asio;

TEST_CASE("SqliteSessionService passes the session service conformance suite", "[sessions][sqlite][threads]")
{
    adk::test::TempDir dir("sqlite-sessions");
    int n = 0;
    adk::test::session_service_suite([&] {
        return std::make_shared<adk::sqlite::SqliteSessionService>(dir.file("sessions" + std::to_string(n++) + ".db"));
    });
}

TEST_CASE("SqliteSessionService on ':memory:' passes the session service conformance suite", "[sessions][sqlite]")
{
    adk::test::session_service_suite([] { return std::make_shared<adk::sqlite::SqliteSessionService>(":memory:"); });
}

TEST_CASE("SqliteMemoryService passes the memory service conformance suite", "[memory][sqlite][threads]")
{
    adk::test::TempDir dir("sqlite-memory");
    int n = 0;
    adk::test::memory_service_suite([&] {
        return std::make_shared<adk::sqlite::SqliteMemoryService>(dir.file("memory" + std::to_string(n++) + ".db"));
    });
}

TEST_CASE("SqliteMemoryService on ':memory:' passes the memory service conformance suite", "[memory][sqlite]")
{
    adk::test::memory_service_suite([] { return std::make_shared<adk::sqlite::SqliteMemoryService>(":memory:"); });
}

namespace {

adk::Session remembered(std::string id, std::vector<std::string> texts, double first_time)
{
    adk::Session s(std::move(id), "app", "u");
    for (auto& text : texts) {
        adk::Event e("user", adk::Content::user(std::move(text)));
        e.timestamp = first_time++;
        s.events.push_back(std::move(e));
    }
    return s;
}

asio::awaitable<std::vector<std::string>> found(adk::MemoryService& memory, std::string query)
{
    adk::SearchMemoryRequest request("app", "u", std::move(query));
    adk::SearchMemoryResponse response = co_await memory.search_memory(std::move(request));
    std::vector<std::string> out;
    for (const auto& m : response.memories)
        out.push_back(m.content.parts.at(0).text.value_or(""));
    co_return out;
}

}  // namespace

TEST_CASE("SqliteMemoryService keeps memories across restarts in the file of the sessions, and matches by stem",
          "[memory][sqlite]")
{
    adk::test::TempDir dir("sqlite-memory-file");
    const std::string path = dir.file("agents.db");
    asio::io_context ioc;
    {
        auto sessions = std::make_shared<adk::sqlite::SqliteSessionService>(path);
        adk::sqlite::SqliteMemoryService memory(path);
        adk::test::run(ioc, [&]() -> asio::awaitable<void> {
            adk::CreateSessionRequest create("app", "u");
            create.session_id = "trip";
            adk::Session trip = co_await sessions->create_session(std::move(create));
            adk::Event said("user", adk::Content::user("Which flights go to Zürich on the 14th?"));
            co_await sessions->append_event(trip, said);
            adk::GetSessionRequest read(trip.key());
            std::optional<adk::Session> stored = co_await sessions->get_session(std::move(read));
            REQUIRE(stored);
            co_await memory.add_session_to_memory(*stored);
        }());
    }
    adk::sqlite::SqliteMemoryService reopened(path);
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        const std::vector<std::string> trip{"Which flights go to Zürich on the 14th?"};
        auto by_stem = co_await found(reopened, "flight");
        CHECK(by_stem == trip);  // "flights" and "flight" share a stem
        auto without_diacritics = co_await found(reopened, "zurich");
        CHECK(without_diacritics == trip);
        auto by_digits = co_await found(reopened, "14th");
        CHECK(by_digits == trip);  // letters and digits make words here
        auto other = co_await found(reopened, "trains");
        CHECK(other.empty());
    }());
    // The sessions in the same file are still read by their own service.
    adk::sqlite::SqliteSessionService sessions(path);
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        adk::GetSessionRequest read(adk::SessionKey("app", "u", "trip"));
        std::optional<adk::Session> trip = co_await sessions.get_session(std::move(read));
        REQUIRE(trip);
        CHECK(trip->events.size() == 1);
    }());
}

TEST_CASE("SqliteMemoryService returns the best matches when there are more than max_results, oldest first",
          "[memory][sqlite]")
{
    adk::sqlite::SqliteMemoryOptions options;
    options.max_results = 2;
    adk::sqlite::SqliteMemoryService memory(":memory:", options);
    asio::io_context ioc;
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        adk::Session notes = remembered("notes", {"heron seen today", "heron and heron and heron again",
                                                  "a heron, an otter", "otter heron heron"}, 100);
        co_await memory.add_session_to_memory(notes);
        auto best = co_await found(memory, "heron");
        CHECK(best == std::vector<std::string>{"heron and heron and heron again", "otter heron heron"});
        auto none = co_await found(memory, "kingfisher");
        CHECK(none.empty());
    }());
    CHECK_THROWS_WITH(adk::sqlite::SqliteMemoryService("/nonexistent-dir/x/memory.db"),
                      Catch::Contains("cannot open the SQLite database"));
}

TEST_CASE("fts5_match_query quotes each word and joins them with OR", "[memory][sqlite]")
{
    CHECK(adk::sqlite::fts5_match_query("Lisbon in May?") == R"("Lisbon" OR "in" OR "May")");
    CHECK(adk::sqlite::fts5_match_query("\"a\" NEAR(b*) -c") == R"("a" OR "NEAR" OR "b" OR "c")");
    CHECK(adk::sqlite::fts5_match_query("Zürich 14th") == "\"Zürich\" OR \"14th\"");
    CHECK(adk::sqlite::fts5_match_query(" ?! ").empty());
    CHECK(adk::sqlite::fts5_match_query("one two three", 2) == R"("one" OR "two")");
}
