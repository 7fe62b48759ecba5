// Session: one conversation of one user with one app, its events and its state.
#pragma once

#include <adk/core/event.hpp>
#include <adk/sessions/event_list.hpp>

#include <boost/json/object.hpp>

#include <string>
#include <type_traits>
#include <vector>

namespace adk {

// Which session: what a service needs to find one.
class SessionKey {
public:
    SessionKey() = default;
    SessionKey(std::string app_name_, std::string user_id_, std::string session_id_);

    std::string app_name;
    std::string user_id;
    std::string session_id;

    // "session 'ID' of user 'USER' in app 'APP'", for messages.
    std::string describe() const;

    friend bool operator==(const SessionKey&, const SessionKey&) = default;
};

static_assert(!std::is_aggregate_v<SessionKey>);

class Session {
public:
    Session() = default;
    Session(std::string id_, std::string app_name_, std::string user_id_);

    std::string id;
    std::string app_name;
    std::string user_id;
    json::object state;  // session keys, plus app: and user: keys merged in when read from a service
    EventList events;  // shared with the copies of the session (a service's, an invocation's)
    double last_update_time = 0;  // seconds since the epoch

    SessionKey key() const { return SessionKey(app_name, user_id, id); }

    friend bool operator==(const Session&, const Session&) = default;
};

static_assert(!std::is_aggregate_v<Session>);

// ADK's JSON: {"id","appName","userId","state","events","lastUpdateTime"}.
void tag_invoke(const json::value_from_tag&, json::value& out, const Session& v);
Session tag_invoke(const json::value_to_tag<Session>&, const json::value& v);

}  // namespace adk
