// SessionService: where sessions, their events and their state live.
//
// DESIGN: every operation is an awaitable so that SQLite and PostgreSQL services can do real I/O. The
// public functions are non-virtual and forward to protected virtuals (Boost.MySQL's style for default
// arguments): callers get the defaults whatever the static type of the service.
#pragma once

#include <adk/core/event.hpp>
#include <adk/sessions/session.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>

#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace adk {

namespace asio = boost::asio;

// Limits what get_session returns.
class GetSessionConfig {
public:
    GetSessionConfig() = default;
    std::optional<std::size_t> num_recent_events;  // keep only the last N events
    std::optional<double> after_timestamp;         // keep only events at or after this time
};
static_assert(!std::is_aggregate_v<GetSessionConfig>);

class SessionService {
public:
    virtual ~SessionService() = default;

    // Creates a session; a fresh UUID when `session_id` is empty. `state` may hold app:, user: and
    // session keys (temp: keys are dropped). Throws adk::Error (already_exists) when the id is taken.
    asio::awaitable<Session> create_session(std::string app_name, std::string user_id, std::string session_id = {},
                                            json::object state = {})
    {
        return do_create_session(std::move(app_name), std::move(user_id), std::move(session_id),
                                 std::move(state));
    }

    // The session with its events and its state (app: and user: keys merged in), or nullopt.
    asio::awaitable<std::optional<Session>> get_session(std::string app_name, std::string user_id,
                                                        std::string session_id, GetSessionConfig config = {})
    {
        return do_get_session(std::move(app_name), std::move(user_id), std::move(session_id), std::move(config));
    }

    // The user's sessions in this app, without their events.
    asio::awaitable<std::vector<Session>> list_sessions(std::string app_name, std::string user_id)
    {
        return do_list_sessions(std::move(app_name), std::move(user_id));
    }

    // Deleting a session that does not exist is not an error.
    asio::awaitable<void> delete_session(std::string app_name, std::string user_id, std::string session_id)
    {
        return do_delete_session(std::move(app_name), std::move(user_id), std::move(session_id));
    }

    // Stores a non-partial event and applies its stateDelta, both to the stored session and to
    // `session` (the caller's copy, which also sees temp: keys). Partial events are left alone.
    // On return `event` is what was stored: temp: keys are gone from its stateDelta, and a missing
    // timestamp is set. Throws adk::Error for an invalid state key or a session that no longer exists;
    // nothing is stored then.
    //
    // DESIGN: ADK returns the event; here the caller's event is updated in place, because every event an
    // agent emits passes through this call and each move of an Event costs (it holds several JSON objects).
    asio::awaitable<void> append_event(Session& session, Event& event);

    // The two halves of append_event, for a caller that guards its copy of the session itself (an
    // invocation whose parallel branches commit from several threads):
    //   json::object temp = take_temp_state(event);   // temp: keys are never stored
    //   co_await persist_event(session, event);        // reads only the session's id, app and user
    //   apply_event(session, event, temp);             // synchronous: under the caller's lock
    asio::awaitable<void> persist_event(const Session& session, Event& event);
    static json::object take_temp_state(Event& event);
    static void apply_event(Session& session, const Event& event, const json::object& temp_state);

protected:
    virtual asio::awaitable<Session> do_create_session(std::string app_name, std::string user_id,
                                                       std::string session_id, json::object state) = 0;
    virtual asio::awaitable<std::optional<Session>> do_get_session(std::string app_name, std::string user_id,
                                                                   std::string session_id,
                                                                   GetSessionConfig config) = 0;
    virtual asio::awaitable<std::vector<Session>> do_list_sessions(std::string app_name, std::string user_id) = 0;
    virtual asio::awaitable<void> do_delete_session(std::string app_name, std::string user_id,
                                                    std::string session_id) = 0;
    // Stores the event (no temp: keys, timestamp set, keys validated) in the session named by
    // session.id, app_name and user_id, and applies its stateDelta to what is stored.
    virtual asio::awaitable<void> do_append_event(const Session& session, Event& event) = 0;
};

}  // namespace adk
