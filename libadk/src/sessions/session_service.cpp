#include <adk/core/error.hpp>
#include <adk/core/ids.hpp>
#include <adk/core/json_limits.hpp>
#include <adk/sessions/session_service.hpp>
#include <adk/sessions/state.hpp>

#include "local_turns.hpp"

#include <cmath>

namespace adk {

CreateSessionRequest::CreateSessionRequest(std::string app_name_, std::string user_id_, std::string session_id_,
                                           json::object state_)
    : app_name(std::move(app_name_)), user_id(std::move(user_id_)), session_id(std::move(session_id_)),
      state(std::move(state_))
{
}

GetSessionRequest::GetSessionRequest(SessionKey key_) : key(std::move(key_)) {}

GetSessionRequest::GetSessionRequest(std::string app_name, std::string user_id, std::string session_id)
    : key(std::move(app_name), std::move(user_id), std::move(session_id))
{
}

ListSessionsRequest::ListSessionsRequest(std::string app_name_, std::string user_id_)
    : app_name(std::move(app_name_)), user_id(std::move(user_id_))
{
}

DeleteSessionRequest::DeleteSessionRequest(SessionKey key_) : key(std::move(key_)) {}

DeleteSessionRequest::DeleteSessionRequest(std::string app_name, std::string user_id, std::string session_id)
    : key(std::move(app_name), std::move(user_id), std::move(session_id))
{
}

SessionService::SessionService() : local_turns_(std::make_shared<detail::LocalTurns>()) {}

SessionService::~SessionService() = default;

asio::awaitable<SessionTurn> SessionService::do_take_turn(SessionKey key)
{
    return take_local_turn(std::move(key));
}

asio::awaitable<SessionTurn> SessionService::take_local_turn(SessionKey key)
{
    return local_turns_->take(std::move(key));
}

Error SessionService::session_exists(const SessionKey& key)
{
    return Error(errc::already_exists, key.describe() + " already exists: choose another id, or get_session to resume it");
}

Error SessionService::session_missing(const SessionKey& key)
{
    return Error(errc::not_found, key.describe() +
                                      " does not exist (was it deleted?): the event was not stored; create the "
                                      "session again before running");
}

asio::awaitable<Session> SessionService::create_session(CreateSessionRequest request)
{
    if (request.app_name.empty() || request.user_id.empty())
        throw Error(errc::invalid_argument, "create_session needs an app name and a user id; got app '" +
                                                request.app_name + "' and user '" + request.user_id + "'");
    check_state_delta(request.state, state_limits_);
    take_temp_state(request.state);
    if (request.session_id.empty())
        request.session_id = new_uuid();
    co_return co_await do_create_session(std::move(request));
}

void SessionService::apply_event(Session& session, const Event& event, const json::object& temp_state)
{
    apply_event(session, std::make_shared<Event>(event), temp_state);
}

void SessionService::apply_event(Session& session, std::shared_ptr<const Event> event, const json::object& temp_state)
{
    for (const auto& kv : event->actions.state_delta)
        session.state[kv.key()] = kv.value();
    for (const auto& kv : temp_state)
        session.state[kv.key()] = kv.value();
    session.last_update_time = event->timestamp;
    session.events.push_back(std::move(event));
}

asio::awaitable<void> SessionService::append_event(Session& session, Event& event, std::mutex& session_mutex)
{
    if (event.partial)
        co_return;
    check_state_delta(event.actions.state_delta, state_limits_);  // temp: keys too, before anything moves
    check_event_json(event);
    json::object temp = take_temp_state(event.actions.state_delta);
    if (event.timestamp <= 0)
        event.timestamp = now_seconds();
    // Kept to the microsecond, what a database's time column holds: such a number also reads back from
    // JSON as the same double, so that a stored event compares equal to the caller's.
    event.timestamp = std::nearbyint(event.timestamp * 1e6) / 1e6;
    if (event.id.empty())
        event.id = new_uuid();
    std::shared_ptr<const Event> shared;  // the backend's copy, when it keeps one in memory
    AppendEventRequest request(session.key(), event, &shared);
    try {
        co_await do_append_event(std::move(request));
    } catch (...) {
        for (auto& kv : temp)  // a refused event changes nothing: its temp: keys go back
            event.actions.state_delta[kv.key()] = std::move(kv.value());
        throw;
    }
    if (!shared)
        shared = std::make_shared<Event>(event);
    std::lock_guard lock(session_mutex);
    apply_event(session, std::move(shared), temp);
}

asio::awaitable<void> SessionService::append_event(Session& session, Event& event)
{
    std::mutex unshared;
    co_await append_event(session, event, unshared);
}

}  // namespace adk
