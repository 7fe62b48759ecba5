// Picks a session service by URL, as ADK's `--session_service_uri` does:
//
//   memory://                      InMemorySessionService (lost at exit)
//   sqlite:///relative/path.db     SqliteSessionService on a file, relative to the working directory
//   sqlite:////absolute/path.db    (four slashes: the path starts with '/', as in SQLAlchemy and ADK Python)
//   sqlite://:memory:              SQLite in memory, private to this service
//   postgresql://user@host/db      PostgresSessionService (also postgres://); the rest of the URL is libpq's:
//                                  a port, ?sslmode=require, a unix socket as %2Fvar%2Frun%2Fpostgresql ...
//
// And an artifact service, as ADK's `--artifact_service_uri` does:
//
//   memory://                      InMemoryArtifactService
//   file:///relative/folder        FileArtifactService in that folder (file:////absolute/folder)
//
// A URL of another form is refused with adk::Error (invalid_argument) that lists the accepted ones; the
// message never repeats a password or a query string.
#pragma once

#include <adk/artifacts/artifact_service.hpp>
#include <adk/sessions/session_service.hpp>

#include <memory>
#include <string_view>

namespace adk::services {

std::shared_ptr<SessionService> open_session_service(std::string_view url);
// What OpenTelemetry's db.system.name calls the store a URL that open_session_service accepted opens: "sqlite",
// "postgresql" or "adk.in_memory" (for the session store's latency metric, telemetry::MeteredSessionService).
std::string_view session_store_system(std::string_view url) noexcept;
std::shared_ptr<ArtifactService> open_artifact_service(std::string_view url);

}  // namespace adk::services
