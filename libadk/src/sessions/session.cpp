#include <adk/core/error.hpp>
#include <adk/core/json_fields.hpp>
#include <adk/sessions/session.hpp>

#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <utility>

namespace adk {

SessionKey::SessionKey(std::string app_name_, std::string user_id_, std::string session_id_)
    : app_name(std::move(app_name_)), user_id(std::move(user_id_)), session_id(std::move(session_id_))
{
}

std::string SessionKey::describe() const
{
    return "session '" + session_id + "' of user '" + user_id + "' in app '" + app_name + "'";
}

EventList::EventList(std::initializer_list<Event> events)
{
    slots_.reserve(events.size());
    for (const Event& e : events)
        push_back(e);
}

EventList::EventList(std::vector<Event> events)
{
    slots_.reserve(events.size());
    for (Event& e : events)
        push_back(std::move(e));
}

void EventList::push_back(std::shared_ptr<const Event> event)
{
    if (!event)
        throw Error(errc::invalid_argument, "EventList::push_back was given no event (a null pointer)");
    slots_.push_back(std::move(event));
}

Event& EventList::edit(size_type i)
{
    auto own = std::make_shared<Event>(*slots_.at(i));
    Event& event = *own;
    slots_[i] = std::move(own);
    return event;
}

bool operator==(const EventList& a, const EventList& b)
{
    if (a.size() != b.size())
        return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a.slots_[i] != b.slots_[i] && *a.slots_[i] != *b.slots_[i])
            return false;
    return true;
}

Session::Session(std::string id_, std::string app_name_, std::string user_id_)
    : id(std::move(id_)), app_name(std::move(app_name_)), user_id(std::move(user_id_))
{
}

void tag_invoke(const json::value_from_tag&, json::value& out, const Session& v)
{
    json::object o;
    o.emplace("id", v.id);
    o.emplace("appName", v.app_name);
    o.emplace("userId", v.user_id);
    o.emplace("state", v.state);
    json::array events;
    events.reserve(v.events.size());
    for (const Event& e : v.events)
        events.push_back(json::value_from(e));
    o.emplace("events", std::move(events));
    o.emplace("lastUpdateTime", v.last_update_time);
    out = std::move(o);
}

Session tag_invoke(const json::value_to_tag<Session>&, const json::value& v)
{
    json_fields::FieldReader r(v, "Session");
    Session s;
    s.id = r.string("id").value_or("");
    s.app_name = r.string("appName").value_or("");
    s.user_id = r.string("userId").value_or("");
    s.state = r.object("state").value_or(json::object{});
    if (const json::array* events = r.array("events")) {
        s.events.reserve(events->size());
        for (const json::value& e : *events)
            s.events.push_back(json::value_to<Event>(e));
    }
    if (auto t = r.timestamp("lastUpdateTime"))
        s.last_update_time = *t;
    return s;
}

}  // namespace adk
