#include <adk/core/ids.hpp>
#include <adk/sessions/session_service.hpp>
#include <adk/sessions/state.hpp>

namespace adk {

namespace {
bool is_temp(std::string_view key)
{
    return key.substr(0, temp_state_prefix.size()) == temp_state_prefix;
}
}  // namespace

json::object SessionService::take_temp_state(Event& event)
{
    json::object temp;
    json::object& delta = event.actions.state_delta;
    for (auto it = delta.begin(); it != delta.end();) {
        if (is_temp(it->key())) {
            temp.emplace(it->key(), std::move(it->value()));
            it = delta.erase(it);
        } else {
            ++it;
        }
    }
    return temp;
}

void SessionService::apply_event(Session& session, const Event& event, const json::object& temp_state)
{
    for (const auto& kv : event.actions.state_delta)
        session.state[kv.key()] = kv.value();
    for (const auto& kv : temp_state)
        session.state[kv.key()] = kv.value();
    session.events.push_back(event);
    session.last_update_time = event.timestamp;
}

asio::awaitable<void> SessionService::persist_event(const Session& session, Event& event)
{
    for (const auto& kv : event.actions.state_delta)
        validate_state_key(kv.key());
    if (event.timestamp <= 0)
        event.timestamp = now_seconds();
    return do_append_event(session, event);
}

asio::awaitable<void> SessionService::append_event(Session& session, Event& event)
{
    if (event.partial)
        co_return;
    for (const auto& kv : event.actions.state_delta)
        validate_state_key(kv.key());  // before anything moves: a refused event changes nothing
    json::object temp = take_temp_state(event);
    co_await persist_event(session, event);
    apply_event(session, event, temp);
}

}  // namespace adk
