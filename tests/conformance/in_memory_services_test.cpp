// The in-memory backends against the conformance suites that every backend must pass.
#include <adk/artifacts/in_memory_artifact_service.hpp>
#include <adk/sessions/in_memory_session_service.hpp>

#include "conformance/artifact_service_suite.hpp"
#include "conformance/session_service_suite.hpp"

#include <catch2/catch.hpp>

TEST_CASE("InMemorySessionService passes the session service conformance suite", "[sessions][threads]")
{
    adk::test::session_service_suite([] { return std::make_shared<adk::InMemorySessionService>(); });
}

TEST_CASE("InMemoryArtifactService passes the artifact service conformance suite", "[artifacts]")
{
    adk::test::artifact_service_suite([] { return std::make_shared<adk::InMemoryArtifactService>(); });
}
