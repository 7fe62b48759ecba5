#include <adk/core/error.hpp>
#include <adk/core/ids.hpp>
#include <adk/sessions/in_memory_session_service.hpp>
#include <adk/sessions/state.hpp>

#include <algorithm>

namespace adk {

Session* InMemorySessionService::find(const SessionKey& key)
{
    if (auto app = sessions_.find(key.app_name); app != sessions_.end())
        if (auto user = app->second.find(key.user_id); user != app->second.end())
            if (auto it = user->second.find(key.session_id); it != user->second.end())
                return &it->second;
    return nullptr;
}

void InMemorySessionService::apply_delta(Session& stored, const json::object& delta)
{
    if (delta.empty())
        return;
    ScopedState scoped = split_state_delta(delta);
    // Every scope is checked before any changes: a refused delta changes nothing.
    json::object* app = scoped.app.empty() ? nullptr : &app_state_[stored.app_name];
    json::object* user = scoped.user.empty() ? nullptr : &user_state_[stored.app_name][stored.user_id];
    if (app)
        check_scope_bytes(state_limits(), "the app '" + stored.app_name + "'", state_bytes_after(*app, scoped.app));
    if (user)
        check_scope_bytes(state_limits(), "the user '" + stored.user_id + "'", state_bytes_after(*user, scoped.user));
    if (!scoped.session.empty())
        check_scope_bytes(state_limits(), stored.key().describe(), state_bytes_after(stored.state, scoped.session));
    if (app)
        assign_state(*app, scoped.app);
    if (user)
        assign_state(*user, scoped.user);
    assign_state(stored.state, scoped.session);
}

Session InMemorySessionService::merged(const Session& s) const
{
    static const json::object none;
    auto app = app_state_.find(s.app_name);
    const json::object* user = &none;
    if (auto users = user_state_.find(s.app_name); users != user_state_.end())
        if (auto it = users->second.find(s.user_id); it != users->second.end())
            user = &it->second;
    Session out(s.id, s.app_name, s.user_id);
    out.state = merge_state(app == app_state_.end() ? none : app->second, *user, s.state);
    out.events = s.events;
    out.last_update_time = s.last_update_time;
    return out;
}

asio::awaitable<Session> InMemorySessionService::do_create_session(CreateSessionRequest request)
{
    std::lock_guard lock(mutex_);
    auto& by_id = sessions_[request.app_name][request.user_id];
    if (by_id.count(request.session_id))
        throw session_exists(SessionKey(request.app_name, request.user_id, request.session_id));
    Session s(request.session_id, request.app_name, request.user_id);
    s.last_update_time = now_seconds();
    apply_delta(s, request.state);
    auto& stored = by_id.emplace(request.session_id, std::move(s)).first->second;
    co_return merged(stored);
}

asio::awaitable<std::optional<Session>> InMemorySessionService::do_get_session(GetSessionRequest request)
{
    std::lock_guard lock(mutex_);
    const Session* stored = find(request.key);
    if (!stored)
        co_return std::nullopt;
    Session s = merged(*stored);
    if (request.after_timestamp) {
        double after = *request.after_timestamp;
        s.events.erase_if([after](const Event& e) { return e.timestamp < after; });
    }
    if (request.num_recent_events && s.events.size() > *request.num_recent_events)
        s.events.erase(s.events.begin(),
                       s.events.end() - static_cast<std::ptrdiff_t>(*request.num_recent_events));
    co_return s;
}

asio::awaitable<std::vector<Session>> InMemorySessionService::do_list_sessions(ListSessionsRequest request)
{
    std::vector<Session> out;
    std::lock_guard lock(mutex_);
    if (auto app = sessions_.find(request.app_name); app != sessions_.end()) {
        if (auto user = app->second.find(request.user_id); user != app->second.end()) {
            for (const auto& [id, s] : user->second) {
                Session copy(s.id, s.app_name, s.user_id);
                copy.state = s.state;
                copy.last_update_time = s.last_update_time;
                out.push_back(merged(copy));
            }
        }
    }
    co_return out;
}

asio::awaitable<void> InMemorySessionService::do_delete_session(DeleteSessionRequest request)
{
    std::lock_guard lock(mutex_);
    if (auto app = sessions_.find(request.key.app_name); app != sessions_.end())
        if (auto user = app->second.find(request.key.user_id); user != app->second.end())
            user->second.erase(request.key.session_id);
    co_return;
}

asio::awaitable<void> InMemorySessionService::do_append_event(AppendEventRequest request)
{
    std::lock_guard lock(mutex_);
    Session* stored = find(request.key);
    if (!stored)
        throw session_missing(request.key);
    apply_delta(*stored, request.event.actions.state_delta);
    stored->events.push_back(request.share());  // the caller's session holds the same Event
    stored->last_update_time = request.event.timestamp;
    co_return;
}

}  // namespace adk
