// The session routes: /list-apps, and create, list, get, PATCH and delete under /apps/{app}/users/{user}/sessions.
#include "api_impl.hpp"

#include <adk/core/ids.hpp>
#include <adk/core/json_limits.hpp>
#include <adk/sessions/state.hpp>

#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <set>

namespace adk::server {

using detail::body_json;
using detail::member;
using detail::reply_json;

asio::awaitable<void> ApiServer::Impl::list_apps(ResponseWriter& res)
{
    json::array names;
    for (const auto& [name, app] : apps)  // a std::map: sorted
        names.emplace_back(name);
    json::value v = std::move(names);
    co_await reply_json(res, 200, v);
}

asio::awaitable<void> ApiServer::Impl::create_session(const IncomingRequest& req, ResponseWriter& res,
                                                      const std::string& app_name, const std::string& user,
                                                      const std::string& path_id)
{
    app(app_name);
    std::string session_id = path_id;
    json::value body = body_json(req);
    if (!body.is_null() && !body.is_object())
        throw Error(errc::invalid_argument, "the body must be a JSON object ({\"state\": {...}}) or empty");
    json::object state;
    if (const json::value* s = member(body, "state", json::kind::object, "an object"))
        state = s->get_object();
    validate_state_keys(state);
    if (const json::value* id = member(body, "sessionId", json::kind::string, "a string"); id && session_id.empty()) {
        session_id = std::string(id->get_string());
        detail::check_id("sessionId", session_id);
    }
    std::vector<Event> imported;
    if (const json::value* events = member(body, "events", json::kind::array, "an array of events")) {
        for (std::size_t i = 0; i < events->get_array().size(); ++i) {
            try {
                imported.push_back(json::value_to<Event>(events->get_array()[i]));
            } catch (const Error& e) {
                throw Error(e.code() == errc::too_large ? errc::too_large : errc::invalid_argument,
                            "events[" + std::to_string(i) + "] is not an event: " + e.message());
            } catch (const std::exception& e) {
                throw Error(errc::invalid_argument, "events[" + std::to_string(i) + "] is not an event: " + e.what());
            }
        }
    }
    // Every imported event is checked as append_event will check it, before the session is made: a refused
    // import leaves nothing behind. Each is marked imported (is_imported), so that none stands for a call an
    // agent made here.
    std::set<std::string> answered;
    for (const Event& event : imported)
        for (const FunctionResponse& r : event.function_responses())
            answered.insert(r.id);
    for (std::size_t i = 0; i < imported.size(); ++i) {
        Event& event = imported[i];
        event.custom_metadata[imported_event_key] = true;
        try {
            check_state_delta(event.actions.state_delta, options.session_service->state_limits());
            check_event_json(event);
        } catch (const Error& e) {
            throw Error(e.code(), "events[" + std::to_string(i) + "]: " + e.message());
        }
        if (event.author == "user" || options.allow_imported_calls)
            continue;
        for (const FunctionCall& call : event.function_calls())
            if (!answered.count(call.id))
                throw Error(errc::invalid_argument,
                            "events[" + std::to_string(i) + "] is an agent's call of '" + call.name.substr(0, 100) +
                                "' that the import does not answer: a client cannot make calls for the agent (start "
                                "the server with ApiServerOptions::allow_imported_calls to keep them as history)");
    }
    CreateSessionRequest create(app_name, user, session_id, std::move(state));
    Session session = co_await options.session_service->create_session(std::move(create));
    for (Event& event : imported)  // each append adds the event and its state delta to `session` too
        co_await options.session_service->append_event(session, event);
    json::value v = json::value_from(session);
    co_await reply_json(res, 200, v);
}

asio::awaitable<void> ApiServer::Impl::list_sessions(ResponseWriter& res, const std::string& app_name,
                                                     const std::string& user)
{
    app(app_name);
    ListSessionsRequest list(app_name, user);
    std::vector<Session> sessions = co_await options.session_service->list_sessions(std::move(list));
    json::array out;
    for (const Session& s : sessions)
        out.push_back(json::value_from(s));
    json::value v = std::move(out);
    co_await reply_json(res, 200, v);
}

asio::awaitable<void> ApiServer::Impl::get_session(ResponseWriter& res, const std::string& app_name,
                                                   const std::string& user, const std::string& id)
{
    app(app_name);
    Session session = co_await read_session(app_name, user, id);
    json::value v = json::value_from(session);
    co_await reply_json(res, 200, v);
}

// As ADK Python: the state delta arrives in an event of the user's, so that it is in the session's history.
asio::awaitable<void> ApiServer::Impl::patch_session(const IncomingRequest& req, ResponseWriter& res,
                                                     const std::string& app_name, const std::string& user,
                                                     const std::string& id)
{
    app(app_name);
    json::value body = body_json(req);
    const json::value* delta = member(body, "stateDelta", json::kind::object, "an object");
    if (!delta)
        throw Error(errc::invalid_argument, "the body must be {\"stateDelta\": {...}}");
    validate_state_keys(delta->get_object());
    Session session = co_await read_session(app_name, user, id);
    Event event;
    event.id = new_uuid();
    event.author = "user";
    event.invocation_id = "p-" + new_uuid();
    event.timestamp = now_seconds();
    event.actions.state_delta = delta->get_object();
    co_await options.session_service->append_event(session, event);  // `session` now holds it too
    json::value v = json::value_from(session);
    co_await reply_json(res, 200, v);
}

asio::awaitable<void> ApiServer::Impl::delete_session(ResponseWriter& res, const std::string& app_name,
                                                      const std::string& user, const std::string& id)
{
    app(app_name);
    co_await read_session(app_name, user, id);  // 404 for a session that is not there
    DeleteSessionRequest remove(app_name, user, id);
    co_await options.session_service->delete_session(std::move(remove));
    co_await res.send(204, "application/json", "");
}

}  // namespace adk::server
