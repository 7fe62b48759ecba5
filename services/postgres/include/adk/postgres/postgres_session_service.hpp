// PostgresSessionService: sessions, events and state in a PostgreSQL database (libpq), for deployments where
// several processes or machines serve one app. The tables are ADK's session database, schema version 1
// (adk/sessions/database_format.hpp), with the column types @google/adk creates on PostgreSQL (jsonb,
// timestamptz): ADK Python's and ADK TypeScript's DatabaseSessionService read what it writes, and it reads
// theirs.
//
//   auto sessions = std::make_shared<adk::postgres::PostgresSessionService>("postgresql://app@db.internal/agents");
//
// DESIGN
// - Threads: the service owns one thread with an io_context of its own. Every call runs there as a coroutine
//   over a small pool of connections (libpq's non-blocking API, each connection's socket awaited by Asio),
//   and resumes the caller on its own executor: no thread per query, and the caller's threads never wait
//   for the server. A statement under way runs to its end even when the caller is cancelled.
// - One statement per call: an append is a single statement (data-modifying WITH clauses) that updates
//   the session row, merges the app's and the user's state, and inserts the event, so it commits whole or
//   not at all, and a client killed at any point leaves nothing half-written.
// - No lost writes: state deltas are merged by the server (jsonb `||`) under the row locks the statement
//   takes, so concurrent appends from threads, processes or machines never overwrite each other's keys, and
//   nothing is refused as stale. A deadlock the server breaks is retried. Invocations of one session take
//   turns (SessionService::take_turn) across processes too: after this process's own turn, a session-level
//   advisory lock (pg_try_advisory_lock on a 64-bit hash of the session's key, tried again every 1 to 16 ms)
//   held on a connection kept for turns, released when the turn ends, and by the server when the process
//   dies. If that connection breaks, the turns this process held are no longer exclusive; the next turn
//   opens a new one.
// - Order: a session's events are read ordered by their timestamp, then by a column this service adds to
//   ADK's events table, adk_sequence (an identity column: the order rows were stored in), so the order is
//   total and stable. Rows that ADK's own services insert get it from the identity too.
// - Opening: the constructor connects, creates the tables when missing (under an advisory lock, so that
//   processes starting together do not race) and refuses a database of another schema version with an error
//   that says which. It blocks the calling thread for that.
#pragma once

#include <adk/sessions/session_service.hpp>

#include <cstddef>
#include <memory>
#include <string>

namespace adk::postgres {

struct PostgresOptions {
    std::size_t max_connections = 4;  // for queries; turns use one more
};

class PostgresSessionService final : public SessionService {
public:
    // `conninfo` is what libpq accepts: a URI ("postgresql://user@host:5432/db?sslmode=require") or
    // "key=value" pairs. Throws adk::Error (storage_failed) when the server cannot be reached or the
    // database holds another schema; the message never repeats a password.
    explicit PostgresSessionService(std::string conninfo, PostgresOptions options = {});
    ~PostgresSessionService() override;

protected:
    asio::awaitable<SessionTurn> do_take_turn(SessionKey key) override;
    asio::awaitable<Session> do_create_session(CreateSessionRequest request) override;
    asio::awaitable<std::optional<Session>> do_get_session(GetSessionRequest request) override;
    asio::awaitable<std::vector<Session>> do_list_sessions(ListSessionsRequest request) override;
    asio::awaitable<void> do_delete_session(DeleteSessionRequest request) override;
    asio::awaitable<void> do_append_event(AppendEventRequest request) override;

private:
    class Impl;
    std::shared_ptr<Impl> impl_;
};

}  // namespace adk::postgres
