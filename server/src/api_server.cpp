#include <adk/server/api_server.hpp>

#include <adk/core/error.hpp>
#include <adk/core/ids.hpp>
#include <adk/sessions/state.hpp>

#include "request_target.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <algorithm>
#include <map>

namespace adk::server {

namespace json = boost::json;
using detail::RequestTarget;
using net::IncomingRequest;
using net::ResponseWriter;

namespace {

bool is_identifier(std::string_view name)
{
    if (name.empty() || (name[0] >= '0' && name[0] <= '9'))
        return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    });
}

unsigned status_of(const Error& e)
{
    if (e.code() == errc::invalid_argument)
        return 400;
    if (e.code() == errc::not_found)
        return 404;
    if (e.code() == errc::already_exists)
        return 409;
    return 500;
}

asio::awaitable<void> reply_json(ResponseWriter& res, unsigned status, const json::value& value)
{
    std::string body = json::serialize(value);
    co_await res.send(status, "application/json", body);
}

asio::awaitable<void> reply_error(ResponseWriter& res, unsigned status, std::string_view message)
{
    json::value body = json::object{{"error", message}};
    co_await reply_json(res, status, body);
}

// The body as JSON: null when empty. Throws adk::Error (invalid_argument) when it does not parse.
json::value body_json(const IncomingRequest& req)
{
    if (req.body.empty())
        return nullptr;
    boost::system::error_code ec;
    json::value v = json::parse(req.body, ec);
    if (ec)
        throw Error(errc::invalid_argument, "the request body is not JSON (" + ec.message() + "): send a JSON object");
    return v;
}

// A member of the body that must be of one kind when present; nullptr when absent or null.
const json::value* member(const json::value& body, std::string_view name, json::kind kind, std::string_view what)
{
    if (!body.is_object())
        return nullptr;
    const json::value* v = body.get_object().if_contains(name);
    if (!v || v->is_null())
        return nullptr;
    if (v->kind() != kind)
        throw Error(errc::invalid_argument, "\"" + std::string(name) + "\" must be " + std::string(what));
    return v;
}

Error session_not_found(const std::string& id)
{
    return Error(errc::not_found, "Session not found: " + id);
}

}  // namespace

App::App(std::string name_, std::shared_ptr<Agent> root_agent_) : name(std::move(name_)), root_agent(std::move(root_agent_))
{
}

ApiServerOptions::ApiServerOptions()
{
    http.port = 8000;
}

class ApiServer::Impl {
public:
    Impl(std::vector<App> app_list, ApiServerOptions opts) : options(std::move(opts))
    {
        if (!options.session_service)
            throw Error(errc::invalid_argument, "ApiServerOptions::session_service is null: give the server one "
                                                "(adk::services::open_session_service(\"sqlite:///sessions.db\"))");
        for (auto& app : app_list) {
            if (!is_identifier(app.name))
                throw Error(errc::invalid_argument, "the app name '" + app.name +
                                                        "' is not an identifier ([A-Za-z_][A-Za-z0-9_]*)");
            if (!app.root_agent)
                throw Error(errc::invalid_argument, "the app '" + app.name + "' has no root agent");
            std::string name = app.name;
            if (!apps.emplace(name, std::move(app)).second)
                throw Error(errc::invalid_argument, "two apps are named '" + name + "'");
        }
    }

    asio::awaitable<void> handle(IncomingRequest& req, ResponseWriter& res);

    const App& app(const std::string& name) const
    {
        auto it = apps.find(name);
        if (it == apps.end())
            throw Error(errc::not_found, "App not found: " + name + " (GET /list-apps lists the apps)");
        return it->second;
    }

    asio::awaitable<void> list_apps(ResponseWriter& res);
    asio::awaitable<void> create_session(const IncomingRequest& req, ResponseWriter& res, const std::string& app_name,
                                         const std::string& user, const std::string& path_id);
    asio::awaitable<void> list_sessions(ResponseWriter& res, const std::string& app_name, const std::string& user);
    asio::awaitable<void> get_session(ResponseWriter& res, const std::string& app_name, const std::string& user,
                                      const std::string& id);
    asio::awaitable<void> patch_session(const IncomingRequest& req, ResponseWriter& res, const std::string& app_name,
                                        const std::string& user, const std::string& id);
    asio::awaitable<void> delete_session(ResponseWriter& res, const std::string& app_name, const std::string& user,
                                         const std::string& id);

    // The session as stored; throws not_found.
    asio::awaitable<Session> read_session(const std::string& app_name, const std::string& user, const std::string& id)
    {
        GetSessionRequest read(SessionKey(app_name, user, id));
        std::optional<Session> s = co_await options.session_service->get_session(std::move(read));
        if (!s)
            throw session_not_found(id);
        co_return std::move(*s);
    }

    ApiServerOptions options;
    std::map<std::string, App, std::less<>> apps;
};

asio::awaitable<void> ApiServer::Impl::handle(IncomingRequest& req, ResponseWriter& res)
{
    std::string refused;
    RequestTarget target = RequestTarget::parse(req.target, refused);
    if (!refused.empty()) {
        co_await reply_error(res, 400, refused);
        co_return;
    }
    const std::string& method = req.method;
    const std::string no_id;
    std::vector<std::string> p;
    std::optional<Error> failure;
    try {
        if (method == "GET" && target.matches({"list-apps"}, p)) {
            co_await list_apps(res);
        } else if (method == "GET" && target.matches({"version"}, p)) {
            json::value version = json::object{{"version", options.version}, {"language", "c++"}};
            co_await reply_json(res, 200, version);
        } else if (method == "GET" && target.matches({"health"}, p)) {
            json::value ok = json::object{{"status", "ok"}};
            co_await reply_json(res, 200, ok);
        } else if (target.matches({"apps", "{}", "users", "{}", "sessions"}, p) && (method == "POST" || method == "GET")) {
            if (method == "POST")
                co_await create_session(req, res, p[0], p[1], no_id);
            else
                co_await list_sessions(res, p[0], p[1]);
        } else if (target.matches({"apps", "{}", "users", "{}", "sessions", "{}"}, p) &&
                   (method == "POST" || method == "GET" || method == "PATCH" || method == "DELETE")) {
            if (method == "POST")
                co_await create_session(req, res, p[0], p[1], p[2]);
            else if (method == "GET")
                co_await get_session(res, p[0], p[1], p[2]);
            else if (method == "PATCH")
                co_await patch_session(req, res, p[0], p[1], p[2]);
            else
                co_await delete_session(res, p[0], p[1], p[2]);
        } else {
            failure.emplace(errc::not_found, "no route for " + method + " " + req.target.substr(0, req.target.find('?')) +
                                                 " in this server (see ADK's HTTP API)");
        }
    } catch (const Error& e) {
        if (res.answered())
            throw;  // the answer was under way: the connection is cut
        failure = e;
    }
    if (failure) {
        const unsigned status = status_of(*failure);
        const std::string message = failure->message();
        co_await reply_error(res, status, message);
    }
}

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
    if (const json::value* id = member(body, "sessionId", json::kind::string, "a string"); id && session_id.empty())
        session_id = std::string(id->get_string());
    std::vector<Event> imported;
    if (const json::value* events = member(body, "events", json::kind::array, "an array of events")) {
        for (std::size_t i = 0; i < events->get_array().size(); ++i) {
            try {
                imported.push_back(json::value_to<Event>(events->get_array()[i]));
            } catch (const std::exception& e) {
                throw Error(errc::invalid_argument, "events[" + std::to_string(i) + "] is not an event: " + e.what());
            }
        }
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

ApiServer::ApiServer(asio::any_io_executor executor, std::vector<App> apps, ApiServerOptions options)
{
    auto impl = std::make_shared<Impl>(std::move(apps), std::move(options));
    net::HttpServerOptions http = impl->options.http;
    // The handler shares the Impl: a connection that outlives this object still finds it.
    auto handler = [impl](IncomingRequest& req, ResponseWriter& res) { return impl->handle(req, res); };
    http_ = std::make_unique<net::HttpServer>(std::move(executor), std::move(http), std::move(handler));
    impl_ = std::move(impl);
}

ApiServer::~ApiServer() = default;

void ApiServer::start()
{
    http_->start();
}

void ApiServer::stop()
{
    http_->stop();
}

unsigned short ApiServer::port() const noexcept
{
    return http_->port();
}

std::string ApiServer::base_url() const
{
    return http_->base_url();
}

}  // namespace adk::server
