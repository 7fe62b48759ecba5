// PostgresSessionService against the conformance suite, and what is its own: opening a database (versions,
// an unreachable server), the order of tied events when rows move. Each service gets a fresh database of a
// PostgreSQL server the test starts (tests/support/postgres_server.sh).
#include <adk/postgres/postgres_session_service.hpp>
#include <adk/services/service_url.hpp>

#include "conformance/session_service_suite.hpp"
#include "support/postgres_server.hpp"
#include "support/run.hpp"

#include <catch2/catch.hpp>

namespace {

using adk::test::PostgresServer;

std::vector<std::string> texts(const adk::Session& s)
{
    std::vector<std::string> out;
    for (const auto& e : s.events)
        out.push_back(e.text());
    return out;
}

}  // namespace

TEST_CASE("PostgresSessionService passes the session service conformance suite", "[sessions][postgres][threads]")
{
    auto* server = PostgresServer::get();
    if (!server)
        return adk::test::skip(PostgresServer::skip_reason());
    adk::test::session_service_suite(
        [&] { return std::make_shared<adk::postgres::PostgresSessionService>(server->new_database()); });
}

TEST_CASE("PostgresSessionService refuses another schema version, ADK's schema before version 1, and says why it "
          "cannot connect without the password",
          "[sessions][postgres]")
{
    auto* server = PostgresServer::get();
    if (!server)
        return adk::test::skip(PostgresServer::skip_reason());
    std::string newer = server->new_database();
    PostgresServer::execute(newer, "CREATE TABLE adk_internal_metadata (key varchar(255) PRIMARY KEY, value "
                                   "varchar(255) NOT NULL); INSERT INTO adk_internal_metadata VALUES "
                                   "('schema_version', '2')");
    try {
        adk::postgres::PostgresSessionService refused(newer);
        FAIL("a version 2 database was opened");
    } catch (const adk::Error& e) {
        CHECK(e.code() == make_error_code(adk::errc::storage_failed));
        CHECK_THAT(e.message(), Catch::Contains("schema version 2") && Catch::Contains("reads version 1"));
    }
    std::string older = server->new_database();
    PostgresServer::execute(older, "CREATE TABLE events (id text, app_name text, user_id text, session_id text, "
                                   "content text, actions bytea)");
    try {
        adk::postgres::PostgresSessionService refused(older);
        FAIL("a database of the schema before version 1 was opened");
    } catch (const adk::Error& e) {
        CHECK_THAT(e.message(), Catch::Contains("before version 1"));
    }
    try {
        adk::postgres::PostgresSessionService unreachable("postgresql://adk:hunter2@%2Fno%2Fsuch%2Fdir/agents");
        FAIL("a server that does not exist was reached");
    } catch (const adk::Error& e) {
        CHECK(e.code() == make_error_code(adk::errc::storage_failed));
        CHECK_THAT(e.message(), Catch::Contains("cannot connect to PostgreSQL") && Catch::Contains("/no/such/dir"));
        CHECK_THAT(e.message(), !Catch::Contains("hunter2"));
    }
    // Opened by URL, as the CLI and the server do; a database made once is opened again as it is.
    std::string fresh = server->new_database();
    auto by_url = adk::services::open_session_service(fresh);
    CHECK(dynamic_cast<adk::postgres::PostgresSessionService*>(by_url.get()));
    adk::postgres::PostgresSessionService again(fresh);
}

TEST_CASE("PostgresSessionService reads tied events in the order they were stored, even after their rows moved",
          "[sessions][postgres]")
{
    auto* server = PostgresServer::get();
    if (!server)
        return adk::test::skip(PostgresServer::skip_reason());
    std::string url = server->new_database();
    adk::postgres::PostgresSessionService svc(url);
    boost::asio::io_context ioc;
    adk::test::run(ioc, [&]() -> boost::asio::awaitable<void> {
        adk::CreateSessionRequest request("app", "u", "s");
        adk::Session s = co_await svc.create_session(std::move(request));
        for (int i = 0; i < 5; ++i) {
            adk::Event e("agent", adk::Content::model("tie " + std::to_string(i)));
            e.timestamp = 2e9;
            co_await svc.append_event(s, e);
        }
    }());
    // An update writes a row anew at the end of the table: read in the table's order, "tie 0" would come last.
    PostgresServer::execute(url, "UPDATE events SET event_data = event_data WHERE event_data->'content'->'parts'->0->>"
                                 "'text' = 'tie 0'");
    adk::Session back = adk::test::run(ioc, [&]() -> boost::asio::awaitable<adk::Session> {
        adk::GetSessionRequest request("app", "u", "s");
        auto s = co_await svc.get_session(std::move(request));
        co_return std::move(*s);
    }());
    CHECK(texts(back) == std::vector<std::string>{"tie 0", "tie 1", "tie 2", "tie 3", "tie 4"});
}
