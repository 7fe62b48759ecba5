// PostgresSessionService against the conformance suite, each service on a fresh database of a PostgreSQL
// server the test starts (tests/support/postgres_server.sh).
#include <adk/postgres/postgres_session_service.hpp>

#include "conformance/session_service_suite.hpp"
#include "support/postgres_server.hpp"

#include <catch2/catch.hpp>

TEST_CASE("PostgresSessionService passes the session service conformance suite", "[sessions][postgres][threads]")
{
    auto* server = adk::test::PostgresServer::get();
    if (!server)
        return adk::test::skip(adk::test::PostgresServer::skip_reason());
    adk::test::session_service_suite(
        [&] { return std::make_shared<adk::postgres::PostgresSessionService>(server->new_database()); });
}
