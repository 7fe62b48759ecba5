#include <adk/sqlite/sqlite_session_service.hpp>

#include <adk/core/error.hpp>
#include <adk/core/ids.hpp>
#include <adk/core/offload.hpp>
#include <adk/sessions/database_format.hpp>
#include <adk/sessions/state.hpp>

#include "file_turns.hpp"
#include "sqlite_db.hpp"
#include "worker.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>

namespace adk::sqlite {

namespace {

constexpr std::string_view create_session_tables = R"sql(
CREATE TABLE IF NOT EXISTS adk_internal_metadata (
  key VARCHAR(128) NOT NULL PRIMARY KEY,
  value VARCHAR(256) NOT NULL
);
CREATE TABLE IF NOT EXISTS app_states (
  app_name VARCHAR(191) NOT NULL PRIMARY KEY,
  state JSON NOT NULL,
  update_time DATETIME NOT NULL
);
CREATE TABLE IF NOT EXISTS user_states (
  app_name VARCHAR(191) NOT NULL,
  user_id VARCHAR(191) NOT NULL,
  state JSON NOT NULL,
  update_time DATETIME NOT NULL,
  PRIMARY KEY (app_name, user_id)
);
CREATE TABLE IF NOT EXISTS sessions (
  app_name VARCHAR(191) NOT NULL,
  user_id VARCHAR(191) NOT NULL,
  id VARCHAR(191) NOT NULL,
  state JSON NOT NULL,
  create_time DATETIME NOT NULL,
  update_time DATETIME NOT NULL,
  PRIMARY KEY (app_name, user_id, id)
);
CREATE TABLE IF NOT EXISTS events (
  id VARCHAR(191) NOT NULL,
  app_name VARCHAR(191) NOT NULL,
  user_id VARCHAR(191) NOT NULL,
  session_id VARCHAR(191) NOT NULL,
  invocation_id VARCHAR(256) NOT NULL,
  timestamp DATETIME NOT NULL,
  event_data JSON,
  PRIMARY KEY (id, app_name, user_id, session_id),
  FOREIGN KEY (app_name, user_id, session_id) REFERENCES sessions (app_name, user_id, id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS adk_events_by_session ON events (app_name, user_id, session_id, timestamp);
)sql";

}  // namespace

class SqliteSessionService::Impl {
public:
    explicit Impl(std::string path_) : path(std::move(path_)), db(path)
    {
        db.use_shared_settings();
        db.exec("PRAGMA foreign_keys = ON");
        if (path != ":memory:")
            turns = std::make_shared<FileTurns>(path + "-adk-turns");
        Database::Transaction tx(db);
        check_older_schema();
        db.exec(create_session_tables);
        auto read = db.prepare("SELECT value FROM adk_internal_metadata WHERE key = ?1");
        read.bind(1, database::schema_version_key);
        if (read.step()) {
            std::string version(read.text(0));
            if (version != database::schema_version)
                throw Error(errc::storage_failed,
                            "the database '" + path + "' holds ADK session schema version " + version +
                                "; this adk-cpp reads version " + std::string(database::schema_version) +
                                ": use another file, or migrate it with the ADK release that wrote it");
        } else {
            read.reset();
            auto write = db.prepare("INSERT INTO adk_internal_metadata (key, value) VALUES (?1, ?2)");
            write.bind(1, database::schema_version_key).bind(2, database::schema_version).run();
        }
        tx.commit();
    }

    // A database made by ADK Python before schema version 1 has an events table without event_data.
    void check_older_schema()
    {
        auto has_events = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'events'");
        if (!has_events.step())
            return;
        auto column = db.prepare("SELECT 1 FROM pragma_table_info('events') WHERE name = 'event_data'");
        if (!column.step())
            throw Error(errc::storage_failed,
                        "the database '" + path + "' holds ADK's sessions in the schema before version 1 "
                        "(events without event_data): migrate it with ADK Python's migration tool first");
    }

    json::object read_state(const std::string& sql, const SessionKey& key, bool with_user)
    {
        auto q = db.prepare(sql);
        q.bind(1, key.app_name);
        if (with_user)
            q.bind(2, key.user_id);
        if (!q.step())
            return {};
        return database::parse_state(q.text(0), with_user ? "user '" + key.user_id + "'" : "app '" + key.app_name + "'");
    }

    json::object app_state(const SessionKey& key)
    {
        return read_state("SELECT state FROM app_states WHERE app_name = ?1", key, false);
    }

    json::object user_state(const SessionKey& key)
    {
        return read_state("SELECT state FROM user_states WHERE app_name = ?1 AND user_id = ?2", key, true);
    }

    // Adds `delta` (unprefixed keys) to the app's or the user's stored state. Inside a write transaction.
    void merge_scope(const SessionKey& key, json::object& delta, bool user, const std::string& now,
                     const StateLimits& limits)
    {
        if (delta.empty())
            return;
        json::object state = user ? user_state(key) : app_state(key);
        store_scope(key, state, delta, user, now, limits);
    }

    // The same, given the scope's stored `state` as read in this transaction; `state` is updated too.
    // Past the scope's limit it throws, and the transaction writes nothing.
    void store_scope(const SessionKey& key, json::object& state, json::object& delta, bool user, const std::string& now,
                     const StateLimits& limits)
    {
        if (delta.empty())
            return;
        assign_state(state, delta);
        std::string text = json::serialize(state);
        check_scope_bytes(limits, user ? "the user '" + key.user_id + "'" : "the app '" + key.app_name + "'",
                          text.size());
        if (user) {
            db.prepare("INSERT INTO user_states (app_name, user_id, state, update_time) VALUES (?1, ?2, ?3, ?4) "
                       "ON CONFLICT (app_name, user_id) DO UPDATE SET state = excluded.state, "
                       "update_time = excluded.update_time")
                .bind(1, key.app_name)
                .bind(2, key.user_id)
                .bind(3, text)
                .bind(4, now)
                .run();
        } else {
            db.prepare("INSERT INTO app_states (app_name, state, update_time) VALUES (?1, ?2, ?3) "
                       "ON CONFLICT (app_name) DO UPDATE SET state = excluded.state, "
                       "update_time = excluded.update_time")
                .bind(1, key.app_name)
                .bind(2, text)
                .bind(3, now)
                .run();
        }
    }

    Session create(const CreateSessionRequest& request, const StateLimits& limits)
    {
        SessionKey key(request.app_name, request.user_id, request.session_id);
        database::check_key_lengths(key);
        double now = database::parse_time(database::format_time(now_seconds()));  // to the microsecond
        std::string now_text = database::format_time(now);
        Database::Transaction tx(db);
        auto exists = db.prepare("SELECT 1 FROM sessions WHERE app_name = ?1 AND user_id = ?2 AND id = ?3");
        if (exists.bind(1, key.app_name).bind(2, key.user_id).bind(3, key.session_id).step())
            throw session_exists(key);
        exists.reset();
        ScopedState scoped = split_state_delta(request.state);
        json::object app = app_state(key);
        json::object user = user_state(key);
        store_scope(key, app, scoped.app, false, now_text, limits);
        store_scope(key, user, scoped.user, true, now_text, limits);
        std::string session_state = json::serialize(scoped.session);
        check_scope_bytes(limits, key.describe(), session_state.size());
        db.prepare("INSERT INTO sessions (app_name, user_id, id, state, create_time, update_time) "
                   "VALUES (?1, ?2, ?3, ?4, ?5, ?5)")
            .bind(1, key.app_name)
            .bind(2, key.user_id)
            .bind(3, key.session_id)
            .bind(4, session_state)
            .bind(5, now_text)
            .run();
        Session s(key.session_id, key.app_name, key.user_id);
        s.state = merge_state(app, user, scoped.session);
        s.last_update_time = now;
        tx.commit();
        return s;
    }

    std::optional<Session> get(const GetSessionRequest& request)
    {
        const SessionKey& key = request.key;
        Database::Transaction tx(db, Database::Transaction::read);
        auto row = db.prepare("SELECT state, update_time FROM sessions WHERE app_name = ?1 AND user_id = ?2 AND id = ?3");
        if (!row.bind(1, key.app_name).bind(2, key.user_id).bind(3, key.session_id).step())
            return std::nullopt;
        Session s(key.session_id, key.app_name, key.user_id);
        json::object session_state = database::parse_state(row.text(0), key.describe());
        s.last_update_time = database::parse_time(row.text(1));
        row.reset();
        s.state = merge_state(app_state(key), user_state(key), session_state);

        // Newest first when only the last N are wanted, then put back in order.
        bool newest_first = request.num_recent_events.has_value();
        std::string sql = "SELECT event_data FROM events WHERE app_name = ?1 AND user_id = ?2 AND session_id = ?3";
        if (request.after_timestamp)
            sql += " AND timestamp >= ?4";
        sql += newest_first ? " ORDER BY timestamp DESC, rowid DESC LIMIT ?5" : " ORDER BY timestamp, rowid";
        auto events = db.prepare(sql);
        events.bind(1, key.app_name).bind(2, key.user_id).bind(3, key.session_id);
        if (request.after_timestamp)
            events.bind(4, database::format_time(*request.after_timestamp));
        if (newest_first)
            events.bind(5, static_cast<std::int64_t>(std::min<std::size_t>(*request.num_recent_events, INT64_MAX)));
        std::vector<Event> read;
        while (events.step())
            read.push_back(database::event_from_json(events.text(0)));
        if (newest_first)
            std::reverse(read.begin(), read.end());
        s.events = EventList(std::move(read));
        return s;
    }

    std::vector<Session> list(const ListSessionsRequest& request)
    {
        SessionKey key(request.app_name, request.user_id, {});
        Database::Transaction tx(db, Database::Transaction::read);
        json::object app = app_state(key);
        json::object user = user_state(key);
        auto rows = db.prepare("SELECT id, state, update_time FROM sessions WHERE app_name = ?1 AND user_id = ?2 "
                               "ORDER BY id");
        rows.bind(1, request.app_name).bind(2, request.user_id);
        std::vector<Session> out;
        while (rows.step()) {
            Session s(std::string(rows.text(0)), request.app_name, request.user_id);
            s.state = merge_state(app, user, database::parse_state(rows.text(1), s.key().describe()));
            s.last_update_time = database::parse_time(rows.text(2));
            out.push_back(std::move(s));
        }
        return out;
    }

    void remove(const SessionKey& key)
    {
        Database::Transaction tx(db);
        db.prepare("DELETE FROM events WHERE app_name = ?1 AND user_id = ?2 AND session_id = ?3")
            .bind(1, key.app_name)
            .bind(2, key.user_id)
            .bind(3, key.session_id)
            .run();
        db.prepare("DELETE FROM sessions WHERE app_name = ?1 AND user_id = ?2 AND id = ?3")
            .bind(1, key.app_name)
            .bind(2, key.user_id)
            .bind(3, key.session_id)
            .run();
        tx.commit();
    }

    // One transaction: the session's state and update time, the app's and user's state, the event row.
    void append(const SessionKey& key, const Event& event, const StateLimits& limits)
    {
        std::string when = database::format_time(event.timestamp);
        std::string data = database::event_to_json(event);
        Database::Transaction tx(db);
        auto row = db.prepare("SELECT state FROM sessions WHERE app_name = ?1 AND user_id = ?2 AND id = ?3");
        if (!row.bind(1, key.app_name).bind(2, key.user_id).bind(3, key.session_id).step())
            throw session_missing(key);
        ScopedState scoped = split_state_delta(event.actions.state_delta);
        std::optional<std::string> session_state;
        if (!scoped.session.empty()) {
            json::object state = database::parse_state(row.text(0), key.describe());
            assign_state(state, scoped.session);
            session_state = json::serialize(state);
            check_scope_bytes(limits, key.describe(), session_state->size());
        }
        row.reset();
        if (session_state) {
            db.prepare("UPDATE sessions SET state = ?4, update_time = ?5 WHERE app_name = ?1 AND user_id = ?2 AND id = ?3")
                .bind(1, key.app_name)
                .bind(2, key.user_id)
                .bind(3, key.session_id)
                .bind(4, *session_state)
                .bind(5, when)
                .run();
        } else {
            db.prepare("UPDATE sessions SET update_time = ?4 WHERE app_name = ?1 AND user_id = ?2 AND id = ?3")
                .bind(1, key.app_name)
                .bind(2, key.user_id)
                .bind(3, key.session_id)
                .bind(4, when)
                .run();
        }
        merge_scope(key, scoped.app, false, when, limits);
        merge_scope(key, scoped.user, true, when, limits);
        db.prepare("INSERT INTO events (id, app_name, user_id, session_id, invocation_id, timestamp, event_data) "
                   "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (id, app_name, user_id, session_id) DO UPDATE "
                   "SET invocation_id = excluded.invocation_id, timestamp = excluded.timestamp, "
                   "event_data = excluded.event_data")
            .bind(1, event.id)
            .bind(2, key.app_name)
            .bind(3, key.user_id)
            .bind(4, key.session_id)
            .bind(5, event.invocation_id)
            .bind(6, when)
            .bind(7, data)
            .run();
        tx.commit();
    }

    std::string path;
    Database db;
    std::shared_ptr<FileTurns> turns;  // null for ":memory:"
    Worker worker;  // last: joined first, while the connection is still open
};

namespace {

class FileTurnHeld final : public SessionTurn::Holder {
public:
    FileTurnHeld(std::shared_ptr<FileTurns> turns, std::int64_t slot, SessionTurn local)
        : turns_(std::move(turns)), slot_(slot), local_(std::move(local))
    {
    }
    ~FileTurnHeld() override { turns_->unlock(slot_); }  // then local_ goes: the next one in this process

private:
    std::shared_ptr<FileTurns> turns_;
    std::int64_t slot_;
    SessionTurn local_;
};

}  // namespace

SqliteSessionService::SqliteSessionService(std::string path) : impl_(std::make_shared<Impl>(std::move(path))) {}

SqliteSessionService::~SqliteSessionService() = default;

const std::string& SqliteSessionService::path() const noexcept
{
    return impl_->path;
}

asio::awaitable<SessionTurn> SqliteSessionService::do_take_turn(SessionKey key)
{
    SessionKey local_key = key;
    SessionTurn local = co_await take_local_turn(std::move(local_key));
    if (!impl_->turns)
        co_return local;
    std::int64_t slot = FileTurns::slot_of(key);
    try {
        co_await impl_->turns->lock(slot);
    } catch (const boost::system::system_error&) {
        throw Error(errc::cancelled, "waiting for the turn of " + key.describe() +
                                         " (another process was running it) was cancelled");
    }
    SessionTurn turn(std::make_unique<FileTurnHeld>(impl_->turns, slot, std::move(local)));
    co_return turn;
}

asio::awaitable<Session> SqliteSessionService::do_create_session(CreateSessionRequest request)
{
    auto work = [impl = impl_.get(), request = std::move(request), limits = state_limits()] {
        return impl->create(request, limits);
    };
    auto running = impl_->worker.run(std::move(work));  // made before the co_await, not inside it
    co_return co_await std::move(running);
}

asio::awaitable<std::optional<Session>> SqliteSessionService::do_get_session(GetSessionRequest request)
{
    auto work = [impl = impl_.get(), request = std::move(request)] { return impl->get(request); };
    auto running = impl_->worker.run(std::move(work));  // made before the co_await, not inside it
    co_return co_await std::move(running);
}

asio::awaitable<std::vector<Session>> SqliteSessionService::do_list_sessions(ListSessionsRequest request)
{
    auto work = [impl = impl_.get(), request = std::move(request)] { return impl->list(request); };
    auto running = impl_->worker.run(std::move(work));  // made before the co_await, not inside it
    co_return co_await std::move(running);
}

asio::awaitable<void> SqliteSessionService::do_delete_session(DeleteSessionRequest request)
{
    auto work = [impl = impl_.get(), key = std::move(request.key)] { impl->remove(key); };
    auto running = impl_->worker.run(std::move(work));  // made before the co_await, not inside it
    co_await std::move(running);
}

asio::awaitable<void> SqliteSessionService::do_append_event(AppendEventRequest request)
{
    // The worker sees the service through a plain pointer: a shared one could be the last, and the worker
    // would then destroy (and join) itself. The event stays the caller's, who awaits the worker's end.
    auto work = [impl = impl_.get(), key = std::move(request.key), &event = request.event, limits = state_limits()] {
        impl->append(key, event, limits);
    };
    auto running = impl_->worker.run(std::move(work));  // made before the co_await, not inside it
    co_await std::move(running);
}

}  // namespace adk::sqlite
