// The SQLite backends against the conformance suites, each on a fresh database file.
#include <adk/sqlite/sqlite_session_service.hpp>

#include "conformance/session_service_suite.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

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
