#include <adk/core/error.hpp>
#include <adk/core/ids.hpp>
#include <adk/sessions/in_memory_session_service.hpp>
#include <adk/sessions/state.hpp>

#include <algorithm>

namespace adk {

namespace {

bool starts_with(std::string_view s, std::string_view prefix)
{
    return s.substr(0, prefix.size()) == prefix;
}

void validate_keys(const json::object& state)
{
    for (const auto& kv : state)
        validate_state_key(kv.key());
}

std::string describe(const std::string& app, const std::string& user, const std::string& id)
{
    return "session '" + id + "' of user '" + user + "' in app '" + app + "'";
}

}  // namespace

void InMemorySessionService::apply_delta(Session& stored, const json::object& delta)
{
    for (const auto& kv : delta) {
        std::string_view key = kv.key();
        if (starts_with(key, app_state_prefix))
            app_state_[stored.app_name][key.substr(app_state_prefix.size())] = kv.value();
        else if (starts_with(key, user_state_prefix))
            user_state_[stored.app_name][stored.user_id][key.substr(user_state_prefix.size())] = kv.value();
        else if (!starts_with(key, temp_state_prefix))
            stored.state[key] = kv.value();
    }
}

Session InMemorySessionService::merged(const Session& s) const
{
    Session out = s;
    if (auto app = app_state_.find(s.app_name); app != app_state_.end())
        for (const auto& kv : app->second)
            out.state[std::string(app_state_prefix) + std::string(kv.key())] = kv.value();
    if (auto app = user_state_.find(s.app_name); app != user_state_.end())
        if (auto user = app->second.find(s.user_id); user != app->second.end())
            for (const auto& kv : user->second)
                out.state[std::string(user_state_prefix) + std::string(kv.key())] = kv.value();
    return out;
}

asio::awaitable<Session> InMemorySessionService::do_create_session(std::string app_name, std::string user_id,
                                                                   std::string session_id, json::object state)
{
    if (app_name.empty() || user_id.empty())
        throw Error(errc::invalid_argument, "create_session needs an app name and a user id; got app '" +
                                                app_name + "' and user '" + user_id + "'");
    validate_keys(state);
    if (session_id.empty())
        session_id = new_uuid();
    std::lock_guard lock(mutex_);
    auto& by_id = sessions_[app_name][user_id];
    if (by_id.count(session_id))
        throw Error(errc::already_exists, describe(app_name, user_id, session_id) +
                                              " already exists: choose another id, or get_session to resume it");
    Session s(session_id, app_name, user_id);
    s.last_update_time = now_seconds();
    apply_delta(s, state);
    auto& stored = by_id.emplace(session_id, std::move(s)).first->second;
    co_return merged(stored);
}

asio::awaitable<std::optional<Session>> InMemorySessionService::do_get_session(std::string app_name,
                                                                               std::string user_id,
                                                                               std::string session_id,
                                                                               GetSessionConfig config)
{
    std::lock_guard lock(mutex_);
    auto app = sessions_.find(app_name);
    if (app == sessions_.end())
        co_return std::nullopt;
    auto user = app->second.find(user_id);
    if (user == app->second.end())
        co_return std::nullopt;
    auto it = user->second.find(session_id);
    if (it == user->second.end())
        co_return std::nullopt;
    Session s = merged(it->second);
    if (config.after_timestamp) {
        double after = *config.after_timestamp;
        std::erase_if(s.events, [after](const Event& e) { return e.timestamp < after; });
    }
    if (config.num_recent_events && s.events.size() > *config.num_recent_events)
        s.events.erase(s.events.begin(),
                       s.events.end() - static_cast<std::ptrdiff_t>(*config.num_recent_events));
    co_return s;
}

asio::awaitable<std::vector<Session>> InMemorySessionService::do_list_sessions(std::string app_name,
                                                                               std::string user_id)
{
    std::vector<Session> out;
    std::lock_guard lock(mutex_);
    if (auto app = sessions_.find(app_name); app != sessions_.end()) {
        if (auto user = app->second.find(user_id); user != app->second.end()) {
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

asio::awaitable<void> InMemorySessionService::do_delete_session(std::string app_name, std::string user_id,
                                                                std::string session_id)
{
    std::lock_guard lock(mutex_);
    if (auto app = sessions_.find(app_name); app != sessions_.end())
        if (auto user = app->second.find(user_id); user != app->second.end())
            user->second.erase(session_id);
    co_return;
}

asio::awaitable<void> InMemorySessionService::do_append_event(const Session& session, Event& event)
{
    std::lock_guard lock(mutex_);
    Session* stored = nullptr;
    if (auto app = sessions_.find(session.app_name); app != sessions_.end())
        if (auto user = app->second.find(session.user_id); user != app->second.end())
            if (auto it = user->second.find(session.id); it != user->second.end())
                stored = &it->second;
    if (!stored)
        throw Error(errc::not_found, describe(session.app_name, session.user_id, session.id) +
                                         " does not exist (was it deleted?): the event was not stored; create "
                                         "the session again before running");
    apply_delta(*stored, event.actions.state_delta);
    stored->events.push_back(event);
    stored->last_update_time = event.timestamp;
    co_return;
}

}  // namespace adk
