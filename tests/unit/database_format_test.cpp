// ADK's session database format (adk/sessions/database_format.hpp) and the URLs that pick a session service.
#include <adk/artifacts/file_artifact_service.hpp>
#include <adk/artifacts/in_memory_artifact_service.hpp>
#include <adk/core/error.hpp>
#include <adk/services/service_url.hpp>
#include <adk/sessions/database_format.hpp>
#include <adk/sessions/in_memory_session_service.hpp>
#include <adk/sqlite/sqlite_session_service.hpp>

#include "support/temp_dir.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value_from.hpp>

#include <sqlite3.h>

#include <catch2/catch.hpp>

namespace json = boost::json;

TEST_CASE("database format: events are stored in snake_case, the user's own keys as they are", "[sessions][database]")
{
    adk::Event e("agent", adk::Content::model("hi"));
    e.id = "e1";
    e.invocation_id = "e-1";
    e.timestamp = 1795553255.635484;
    e.content->parts.push_back(adk::Part::from_function_call("get_weather", json::object{{"cityName", "Paris"}}, "c1"));
    e.actions.state_delta["userCity"] = "Paris";
    e.actions.artifact_delta["reportFile.txt"] = 0;
    e.custom_metadata["traceId"] = "t";

    json::value stored = json::parse(adk::database::event_to_json(e));
    const auto& o = stored.as_object();
    CHECK(o.contains("invocation_id"));
    CHECK(!o.contains("invocationId"));
    CHECK(o.at("actions").as_object().contains("state_delta"));
    CHECK(o.at("actions").at("state_delta").as_object().contains("userCity"));  // the user's key, unchanged
    CHECK(o.at("actions").at("artifact_delta").as_object().contains("reportFile.txt"));
    CHECK(o.at("custom_metadata").as_object().contains("traceId"));
    const auto& call = o.at("content").at("parts").as_array().at(1).at("function_call").as_object();
    CHECK(call.at("args").as_object().contains("cityName"));

    adk::Event back = adk::database::event_from_json(adk::database::event_to_json(e));
    CHECK(json::value_from(back) == json::value_from(e));

    CHECK_THROWS_AS(adk::database::event_from_json("[1, 2]"), adk::Error);
    CHECK_THROWS_AS(adk::database::event_from_json("{\"content\": 5"), adk::Error);
}

TEST_CASE("database format: time columns sort as the time and read back to the microsecond", "[sessions][database]")
{
    CHECK(adk::database::format_time(0) == "1970-01-01 00:00:00.000000");
    CHECK(adk::database::format_time(1795553255.635484) == "2026-11-24 20:47:35.635484");
    CHECK(adk::database::parse_time("2026-11-24 20:47:35.635484") == 1795553255.635484);
    CHECK(adk::database::parse_time("2026-11-24T20:47:35") == 1795553255.0);
    CHECK(adk::database::format_time(2e9) > adk::database::format_time(1.9999999999e9));
    CHECK_THROWS_AS(adk::database::parse_time("yesterday"), adk::Error);
    CHECK_THROWS_AS(adk::database::check_key_lengths(adk::SessionKey("app", std::string(192, 'u'), "s")), adk::Error);
}

TEST_CASE("service URLs: memory and sqlite forms open, others are refused with the accepted forms", "[sessions][database]")
{
    CHECK(dynamic_cast<adk::InMemorySessionService*>(adk::services::open_session_service("memory://").get()));
    CHECK(dynamic_cast<adk::sqlite::SqliteSessionService*>(adk::services::open_session_service("sqlite://:memory:").get()));
    try {
        adk::services::open_session_service("mysql://admin:hunter2@db.example/agents?sslkey=secret");
        FAIL("an unknown scheme was accepted");
    } catch (const adk::Error& e) {
        CHECK(e.code() == make_error_code(adk::errc::invalid_argument));
        CHECK_THAT(e.message(), Catch::Contains("sqlite:///relative/path.db") && Catch::Contains("memory://"));
        CHECK_THAT(e.message(), !Catch::Contains("hunter2") && !Catch::Contains("secret"));
    }
    CHECK_THROWS_AS(adk::services::open_session_service("sqlite://host/file.db"), adk::Error);
    CHECK_THROWS_AS(adk::services::open_session_service("sqlite:///"), adk::Error);
    CHECK_THROWS_AS(adk::services::open_session_service("sqlite:///x.db?mode=ro"), adk::Error);
    // What the session store's latency metric calls each store.
    CHECK(adk::services::session_store_system("sqlite:///.adk/sessions.db") == "sqlite");
    CHECK(adk::services::session_store_system("sqlite://:memory:") == "sqlite");
    CHECK(adk::services::session_store_system("postgres://u@h/db") == "postgresql");
    CHECK(adk::services::session_store_system("postgresql://u@h:5432/db") == "postgresql");
    CHECK(adk::services::session_store_system("memory://") == "adk.in_memory");
}

TEST_CASE("artifact service URLs: memory:// and file:// open, others are refused with the accepted forms",
          "[artifacts][database]")
{
    adk::test::TempDir dir("artifact-urls");
    CHECK(dynamic_cast<adk::InMemoryArtifactService*>(adk::services::open_artifact_service("memory://").get()));
    const std::string folder = (dir.path() / "files").string();
    auto files = adk::services::open_artifact_service("file:///" + folder);  // an absolute path: four slashes
    auto* file_service = dynamic_cast<adk::FileArtifactService*>(files.get());
    REQUIRE(file_service);
    CHECK(file_service->root() == std::filesystem::path(folder));
    CHECK(std::filesystem::is_directory(folder));
    try {
        adk::services::open_artifact_service("gs://bucket?key=secret");
        FAIL("an unknown scheme was accepted");
    } catch (const adk::Error& e) {
        CHECK_THAT(e.message(), Catch::Contains("file:///relative/folder") && !Catch::Contains("secret"));
    }
    CHECK_THROWS_AS(adk::services::open_artifact_service("file://host/folder"), adk::Error);
    CHECK_THROWS_AS(adk::services::open_artifact_service("file:///"), adk::Error);
    CHECK_THROWS_AS(adk::services::open_artifact_service("file:///a?b"), adk::Error);
}

TEST_CASE("SqliteSessionService refuses a database of another schema version, and ADK's schema before version 1",
          "[sessions][database][sqlite]")
{
    adk::test::TempDir dir("sqlite-versions");
    auto make = [&](const std::string& name, const char* sql) {
        std::string path = dir.file(name);
        sqlite3* db = nullptr;
        REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
        REQUIRE(sqlite3_exec(db, sql, nullptr, nullptr, nullptr) == SQLITE_OK);
        sqlite3_close(db);
        return path;
    };
    std::string newer = make("v2.db", "CREATE TABLE adk_internal_metadata (key VARCHAR(128) PRIMARY KEY, value VARCHAR(256));"
                                      "INSERT INTO adk_internal_metadata VALUES ('schema_version', '2');");
    try {
        adk::sqlite::SqliteSessionService refused(newer);
        FAIL("a version 2 database was opened");
    } catch (const adk::Error& e) {
        CHECK(e.code() == make_error_code(adk::errc::storage_failed));
        CHECK_THAT(e.message(), Catch::Contains("schema version 2") && Catch::Contains("reads version 1"));
    }
    std::string older = make("v0.db", "CREATE TABLE events (id TEXT, app_name TEXT, user_id TEXT, session_id TEXT, "
                                      "content TEXT, actions BLOB);");
    try {
        adk::sqlite::SqliteSessionService refused(older);
        FAIL("a database of the schema before version 1 was opened");
    } catch (const adk::Error& e) {
        CHECK_THAT(e.message(), Catch::Contains("before version 1"));
    }
    CHECK_THROWS_AS(adk::sqlite::SqliteSessionService(dir.file("no/such/folder/x.db")), adk::Error);
    adk::sqlite::SqliteSessionService fresh(dir.file("fresh.db"));  // created, and opened again
    adk::sqlite::SqliteSessionService again(dir.file("fresh.db"));
    CHECK(again.path() == dir.file("fresh.db"));
}
