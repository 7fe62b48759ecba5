// SqliteSessionService: sessions, events and state in one SQLite file (libsqlite3), the default wherever a
// path is configured. The file is ADK's session database, schema version 1 (adk/sessions/database_format.hpp):
// ADK Python and ADK TypeScript read what it writes, and it reads theirs.
//
//   auto sessions = std::make_shared<adk::sqlite::SqliteSessionService>("agents.db");
//
// DESIGN
// - Threads: the service owns one worker thread and one connection; every call runs there (adk::offload)
//   and resumes the caller on its own executor, so the io_context's threads never wait for the disk. Calls
//   from several invocations queue on the worker; a commit in WAL mode takes tens of microseconds.
// - Durability: WAL journal, synchronous=NORMAL. A process that dies (even by SIGKILL) loses nothing it
//   committed and leaves nothing half-written: each append is one transaction (the event row and every
//   state row it changes). A power cut may lose the last commits, never the file's consistency.
// - No lost writes: each append reads and merges the stored state inside its write transaction (BEGIN
//   IMMEDIATE), so concurrent appends from threads or processes never overwrite each other's keys, and
//   nothing is refused as stale. Invocations of one session take turns (SessionService::take_turn) across
//   processes too: an advisory lock (Linux open-file-description lock) on one byte of the file
//   "<path>-adk-turns", chosen by the session's key, held while the invocation runs, and released by the
//   kernel if the process dies.
// - Order: a session's events are read ordered by their timestamp, then by the row's rowid (the order
//   they were stored in), so the order is total and stable.
// - Opening: the constructor opens or creates the file and its tables (it blocks the calling thread for
//   that), and refuses a database of another schema version with an error that says which.
#pragma once

#include <adk/sessions/session_service.hpp>

#include <memory>
#include <string>

namespace adk::sqlite {

class SqliteSessionService final : public SessionService {
public:
    // `path` is a file (created when missing) or ":memory:" (one private database, no turns across
    // processes). Throws adk::Error (storage_failed) when the file cannot be opened or holds another schema.
    explicit SqliteSessionService(std::string path);
    ~SqliteSessionService() override;

    const std::string& path() const noexcept;

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

}  // namespace adk::sqlite
