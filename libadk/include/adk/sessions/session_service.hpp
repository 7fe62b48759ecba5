// SessionService: where sessions, their events and their state live.
//
// DESIGN: every operation is an awaitable so that services over a database can do real I/O. The
// public functions are non-virtual and forward to protected virtuals (Boost.MySQL's style): what every
// backend must do alike happens once, here, before a backend is called:
//   - state keys are validated (validate_state_key), temp: keys are dropped, a missing session id, event
//     id or event timestamp is filled in;
//   - the caller's copy of the session gets the event and its state changes (apply_event).
// A backend stores and reads; it splits and merges the state scopes with the helpers of state.hpp.
// Each operation takes a request object, so that a field can be added without breaking a caller or a
// backend. The requests have constructors for the common case:
//   co_await sessions->create_session({"app", "alice"});
//   co_await sessions->get_session({"app", "alice", id});
// Every backend must pass the conformance suite in tests/conformance/session_service_suite.hpp.
#pragma once

#include <adk/core/error.hpp>
#include <adk/core/event.hpp>
#include <adk/sessions/session.hpp>
#include <adk/sessions/state.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace adk {

namespace asio = boost::asio;

class CreateSessionRequest {
public:
    CreateSessionRequest(std::string app_name_, std::string user_id_, std::string session_id_ = {},
                         json::object state_ = {});

    std::string app_name;
    std::string user_id;
    std::string session_id;  // a fresh UUID when empty
    json::object state;      // app:, user: and session keys; temp: keys are dropped
};

class GetSessionRequest {
public:
    GetSessionRequest(SessionKey key_);  // NOLINT(google-explicit-constructor): {app, user, id} reads well
    GetSessionRequest(std::string app_name, std::string user_id, std::string session_id);

    SessionKey key;
    std::optional<std::size_t> num_recent_events;  // keep only the last N events
    std::optional<double> after_timestamp;         // keep only events at or after this time
};

class ListSessionsRequest {
public:
    ListSessionsRequest(std::string app_name_, std::string user_id_);

    std::string app_name;
    std::string user_id;
};

class DeleteSessionRequest {
public:
    DeleteSessionRequest(SessionKey key_);  // NOLINT(google-explicit-constructor)
    DeleteSessionRequest(std::string app_name, std::string user_id, std::string session_id);

    SessionKey key;
};

// What a backend stores: `event` has valid state keys and no temp: keys, and its timestamp is set.
class AppendEventRequest {
public:
    AppendEventRequest(SessionKey key_, Event& event_, std::shared_ptr<const Event>* shared_slot = nullptr)
        : key(std::move(key_)), event(event_), shared_(shared_slot)
    {
    }

    SessionKey key;
    Event& event;

    // The event as an immutable copy, made at the first call: what a backend that keeps events in memory
    // stores (after its last change to `event`), so that the caller's copy of the session (Session::events)
    // holds the same Event instead of a copy of its own.
    std::shared_ptr<const Event> share()
    {
        if (!shared_)
            return std::make_shared<Event>(event);
        if (!*shared_)
            *shared_ = std::make_shared<Event>(event);
        return *shared_;
    }

private:
    std::shared_ptr<const Event>* shared_;  // the caller's, where share() leaves the copy
};

// A session's turn: while it is held, no other invocation of that session runs, in this process or (for a
// service over a shared database) in any process that uses the database. Invocations of one session take
// turns so that each starts from the state the one before it left: an agent that reads a counter and writes
// it back plus one never loses an increment to another invocation. Releasing it (or destroying it) lets the
// next one in. Move-only; an empty turn holds nothing.
class SessionTurn {
public:
    // What a backend keeps while the turn is held; its destructor gives the turn back.
    class Holder {
    public:
        virtual ~Holder() = default;
    };

    SessionTurn() = default;
    explicit SessionTurn(std::unique_ptr<Holder> holder) : holder_(std::move(holder)) {}

    bool held() const noexcept { return holder_ != nullptr; }
    void release() noexcept { holder_.reset(); }

private:
    std::unique_ptr<Holder> holder_;
};

namespace detail {
class LocalTurns;
}

static_assert(!std::is_aggregate_v<CreateSessionRequest> && !std::is_aggregate_v<GetSessionRequest> &&
              !std::is_aggregate_v<ListSessionsRequest> && !std::is_aggregate_v<DeleteSessionRequest> &&
              !std::is_aggregate_v<AppendEventRequest>);

class SessionService {
public:
    SessionService();
    virtual ~SessionService();
    SessionService(const SessionService&) = delete;
    SessionService& operator=(const SessionService&) = delete;

    // Waits for the session's turn (see SessionTurn); the Runner holds it for each invocation. The session
    // need not exist. Throws adk::Error (cancelled) when the wait is cancelled.
    asio::awaitable<SessionTurn> take_turn(SessionKey key) { return do_take_turn(std::move(key)); }

    // How large state may grow (StateLimits' defaults unless set). Set it before the service is used.
    void set_state_limits(const StateLimits& limits) { state_limits_ = limits; }
    const StateLimits& state_limits() const noexcept { return state_limits_; }

    // Creates a session. Throws adk::Error: invalid_argument for an empty app name or user id, an invalid
    // state key or value (check_state_delta), too_large for state over state_limits(), already_exists when
    // the id is taken.
    asio::awaitable<Session> create_session(CreateSessionRequest request);

    // The session with its events and its state (app: and user: keys merged in), or nullopt.
    asio::awaitable<std::optional<Session>> get_session(GetSessionRequest request)
    {
        return do_get_session(std::move(request));
    }

    // The user's sessions in this app, without their events.
    asio::awaitable<std::vector<Session>> list_sessions(ListSessionsRequest request)
    {
        return do_list_sessions(std::move(request));
    }

    // Deleting a session that does not exist is not an error.
    asio::awaitable<void> delete_session(DeleteSessionRequest request)
    {
        return do_delete_session(std::move(request));
    }

    // Stores a non-partial event and applies its stateDelta, both to the stored session and to
    // `session` (the caller's copy, which also sees temp: keys). Partial events are left alone.
    // On return `event` is what was stored: temp: keys are gone from its stateDelta, a missing id or
    // timestamp is set, and the timestamp is rounded to the microsecond (an event whose id the session
    // holds replaces it in a database backend, as in ADK's DatabaseSessionService). Throws adk::Error:
    // invalid_argument for an invalid state key (temp: keys too) or JSON that could not be read back
    // (check_event_json, check_state_delta), too_large for state over state_limits(), not_found for a session
    // that no longer exists; nothing is stored and nothing changes then.
    //
    // DESIGN: ADK returns the event; here the caller's event is updated in place, because every event an
    // agent emits passes through this call and each move of an Event costs (it holds several JSON objects).
    asio::awaitable<void> append_event(Session& session, Event& event);

    // The same, for a caller whose copy of the session is shared by several threads (an invocation whose
    // parallel branches commit at once): `session` is changed under `session_mutex`, and only after the
    // backend stored the event. The session's ids are read without the lock: they never change.
    asio::awaitable<void> append_event(Session& session, Event& event, std::mutex& session_mutex);

    // The caller's side of append_event: the event's stateDelta and `temp_state` (the temp: keys taken
    // from it) applied to `session`, and the event appended.
    static void apply_event(Session& session, const Event& event, const json::object& temp_state);
    // The same with the event shared (what a backend's AppendEventRequest::share() made): not copied.
    static void apply_event(Session& session, std::shared_ptr<const Event> event, const json::object& temp_state);

protected:
    // The turn among this process's invocations of the service. A backend shared by several processes takes
    // it first, then its own lock across processes.
    virtual asio::awaitable<SessionTurn> do_take_turn(SessionKey key);
    asio::awaitable<SessionTurn> take_local_turn(SessionKey key);

    // The errors every backend gives, in the same words: an id that is taken (already_exists), an event
    // for a session that does not exist (not_found).
    static Error session_exists(const SessionKey& key);
    static Error session_missing(const SessionKey& key);

    // Called with a session id and valid state keys.
    virtual asio::awaitable<Session> do_create_session(CreateSessionRequest request) = 0;
    virtual asio::awaitable<std::optional<Session>> do_get_session(GetSessionRequest request) = 0;
    virtual asio::awaitable<std::vector<Session>> do_list_sessions(ListSessionsRequest request) = 0;
    virtual asio::awaitable<void> do_delete_session(DeleteSessionRequest request) = 0;
    // Stores the event in the session the key names, and applies its stateDelta to what is stored
    // (split_state_delta). Throws adk::Error (not_found) when there is no such session.
    virtual asio::awaitable<void> do_append_event(AppendEventRequest request) = 0;

    // For a service that wraps another (one that times or counts each operation): the wrapped service's
    // operations, called past the checks this service's public functions made (a wrapper takes the wrapped
    // service's state_limits()).
    static asio::awaitable<SessionTurn> take_turn_of(SessionService& inner, SessionKey key)
    {
        return inner.do_take_turn(std::move(key));
    }
    static asio::awaitable<Session> create_session_of(SessionService& inner, CreateSessionRequest request)
    {
        return inner.do_create_session(std::move(request));
    }
    static asio::awaitable<std::optional<Session>> get_session_of(SessionService& inner, GetSessionRequest request)
    {
        return inner.do_get_session(std::move(request));
    }
    static asio::awaitable<std::vector<Session>> list_sessions_of(SessionService& inner, ListSessionsRequest request)
    {
        return inner.do_list_sessions(std::move(request));
    }
    static asio::awaitable<void> delete_session_of(SessionService& inner, DeleteSessionRequest request)
    {
        return inner.do_delete_session(std::move(request));
    }
    static asio::awaitable<void> append_event_of(SessionService& inner, AppendEventRequest request)
    {
        return inner.do_append_event(std::move(request));
    }

private:
    std::shared_ptr<detail::LocalTurns> local_turns_;
    StateLimits state_limits_;
};

}  // namespace adk
