#include <adk/a2a/server.hpp>

#include <adk/a2a/convert.hpp>
#include <adk/a2a/task_updates.hpp>
#include <adk/core/ids.hpp>
#include <adk/core/json_limits.hpp>
#include <adk/runner/runner.hpp>
#include <adk/server/runs.hpp>
#include <adk/sessions/session_service.hpp>

#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <deque>

namespace adk::a2a {

using server::Run;
using server::RouteRequest;
using server::RunOwner;

namespace {

// JSON-RPC's own codes beside A2A's (types.hpp: code::).
constexpr int parse_error = -32700;
constexpr int invalid_request = -32600;
constexpr int method_not_found = -32601;
constexpr int invalid_params = -32602;
constexpr int internal_error = -32603;

// A context id names an ADK session: a path segment of ADK's routes too.
void check_context_id(const std::string& id)
{
    if (id.size() > 128)
        throw Error(errc::invalid_argument, "Message.contextId is longer than 128 characters");
    for (char c : id)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
              c == '.' || c == ':'))
            throw Error(errc::invalid_argument,
                        "Message.contextId may hold letters, digits and - _ . : only (it names an ADK session)");
}

std::string user_of(const std::string& context)
{
    return "A2A_USER_" + context;
}

void append_sse(std::string& out, const json::value& data)
{
    out.append("data: ").append(json::serialize(data)).append("\n\n");
}

json::value rpc_result(const json::value& id, json::value result)
{
    return json::object{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

json::value rpc_error(const json::value& id, int code, std::string_view message)
{
    return json::object{{"jsonrpc", "2.0"}, {"id", id}, {"error", json::object{{"code", code}, {"message", message}}}};
}

// An error of A2A's own (TaskNotCancelableError, ...): 400 over HTTP+JSON, its code over JSON-RPC.
class ProtocolError : public Error {
public:
    ProtocolError(int rpc_code_, std::string message) : Error(errc::invalid_argument, std::move(message)), rpc_code(rpc_code_) {}
    int rpc_code;
};

int rpc_code(const Error& e)
{
    if (const auto* own = dynamic_cast<const ProtocolError*>(&e))
        return own->rpc_code;
    if (e.code() == make_error_code(errc::not_found))
        return code::task_not_found;
    if (e.code() == make_error_code(errc::invalid_argument))
        return invalid_params;
    return internal_error;
}

// The task's final status, from how its run ended.
void end(TaskUpdates& updates, const Run& run, std::vector<StreamResponse>& out)
{
    const std::string failure = run.failure();
    const bool cancelled = run.cancelled();
    updates.end(failure.empty() || cancelled ? std::nullopt : std::optional<std::string>(failure), cancelled, out);
}

// How a stream writes a task's updates: each a StreamResponse, wrapped in a JSON-RPC response when `rpc_id` is set.
// Silent, it only adds them up (SendMessage answers the task at its end).
class UpdateWriter final : public server::RunWriter {
public:
    UpdateWriter(TaskUpdates& updates, std::optional<json::value> rpc_id, bool silent = false)
        : updates_(updates), rpc_id_(std::move(rpc_id)), silent_(silent)
    {
    }

    void frame(std::string& out, const Run&, const Run::Frame& f) override
    {
        pending_.clear();
        if (f.event)  // a failure frame is the run's end: finished() reads it from the run
            updates_.add(*f.event, pending_);
        render(out);
    }
    void missed(std::string&, const Run&, std::uint64_t, std::uint64_t) override {}  // the final task says all
    void finished(std::string& out, const Run& run) override
    {
        pending_.clear();
        end(updates_, run, pending_);
        render(out);
    }
    void write(std::string& out, const StreamResponse& response)
    {
        pending_.assign(1, response);
        render(out);
    }

private:
    void render(std::string& out)
    {
        if (!silent_)
            for (const StreamResponse& r : pending_)
                append_sse(out, rpc_id_ ? rpc_result(*rpc_id_, to_json(r)) : to_json(r));
        pending_.clear();
    }

    TaskUpdates& updates_;
    std::optional<json::value> rpc_id_;
    bool silent_;
    std::vector<StreamResponse> pending_;
};

}  // namespace

class Server::Impl : public std::enable_shared_from_this<Server::Impl> {
public:
    Impl(server::ApiServer& api_, ServerOptions options_) : api(api_), options(std::move(options_)) {}

    class TaskRef {
    public:
        std::string app;
        std::string context;
        std::string run_id;
    };

    // A task started: its run, and the client's message as the task's history begins with it.
    class Started {
    public:
        std::shared_ptr<Run> run;
        Message message;
    };

    asio::awaitable<Started> start(const std::string& app, SendMessageRequest request);
    TaskRef find(const std::string& app, const std::string& task_id) const;
    std::shared_ptr<Run> run_of(const TaskRef& ref) const;
    // The task as it stands: its messages and answers so far, its status.
    asio::awaitable<Task> task(const std::string& app, const std::string& task_id, std::optional<std::int32_t> history);
    asio::awaitable<Task> cancel(const std::string& app, const std::string& task_id);

    asio::awaitable<void> send(RouteRequest& r, const std::string& app, SendMessageRequest request,
                               std::optional<json::value> rpc_id);
    asio::awaitable<void> stream(RouteRequest& r, const std::string& app, SendMessageRequest request,
                                 std::optional<json::value> rpc_id);
    // An SSE stream: `first`, then the updates of the run's frames after `cursor`, then the task's end.
    asio::awaitable<void> stream_updates(RouteRequest& r, std::shared_ptr<Run> run, std::uint64_t cursor,
                                         TaskUpdates& updates, const StreamResponse& first,
                                         std::optional<json::value> rpc_id);
    asio::awaitable<void> subscribe(RouteRequest& r, const std::string& app, const std::string& task_id,
                                    std::optional<json::value> rpc_id);
    asio::awaitable<void> jsonrpc(RouteRequest& r);
    asio::awaitable<void> serve_card(RouteRequest& r);
    std::string endpoint(const RouteRequest& r, const std::string& app) const;
    AgentCard card(std::string_view app, const std::string& url) const;

    server::ApiServer& api;
    ServerOptions options;
    mutable std::mutex mutex;
    std::map<std::string, TaskRef> tasks;  // by task id
    std::deque<std::string> task_order;    // oldest first, for the bound
};

asio::awaitable<Server::Impl::Started> Server::Impl::start(const std::string& app, SendMessageRequest request)
{
    Message& m = request.message;
    if (m.role != Role::user)
        throw Error(errc::invalid_argument, "a message sent to an agent has the role ROLE_USER");
    if (!m.task_id.empty())
        throw Error(errc::invalid_argument, "Message.taskId: continuing a task (answering INPUT_REQUIRED) is not "
                                            "served yet; send the answer without a taskId, in the same contextId");
    if (m.parts.empty())
        throw Error(errc::invalid_argument, "Message.parts is empty: send the text (or data) for the agent");
    const std::string context = m.context_id.empty() ? new_uuid() : m.context_id;
    check_context_id(context);
    Runner& runner = api.runner(app);
    server::RunRegistry& runs = api.runs();
    if (runs.full())
        throw Error(errc::unavailable, "the server holds as many runs as it may (ApiServerOptions::max_runs): try later");
    const std::string user = user_of(context);
    SessionService& sessions = *api.options().session_service;
    GetSessionRequest get(app, user, context);
    get.num_recent_events = 0;
    std::optional<Session> existing = co_await sessions.get_session(std::move(get));
    if (!existing) {
        CreateSessionRequest create(app, user, context);
        (void)co_await sessions.create_session(std::move(create));
    }
    RunRequest run_request(user, context, to_content(m));
    run_request.run_config.streaming_mode = StreamingMode::sse;
    auto starting = runner.start(std::move(run_request));
    Runner::Started started = co_await std::move(starting);
    RunOwner owner(app, user, context);
    Started out;
    out.run = runs.start(std::move(owner), std::move(started.events), started.invocation_id);
    m.context_id = context;
    m.task_id = started.invocation_id;
    out.message = m;
    {
        std::lock_guard lock(mutex);
        tasks[started.invocation_id] = TaskRef{app, context, out.run->id};
        task_order.push_back(started.invocation_id);
        while (task_order.size() > options.max_tasks) {
            tasks.erase(task_order.front());
            task_order.pop_front();
        }
    }
    co_return out;
}

Server::Impl::TaskRef Server::Impl::find(const std::string& app, const std::string& task_id) const
{
    std::lock_guard lock(mutex);
    auto it = tasks.find(task_id);
    if (it == tasks.end() || it->second.app != app)
        throw Error(errc::not_found, "Task not found: " + task_id);
    return it->second;
}

std::shared_ptr<Run> Server::Impl::run_of(const TaskRef& ref) const
{
    return api.runs().find(ref.run_id, RunOwner(ref.app, user_of(ref.context), ref.context));
}

asio::awaitable<Task> Server::Impl::task(const std::string& app, const std::string& task_id,
                                         std::optional<std::int32_t> history)
{
    const TaskRef ref = find(app, task_id);
    // The session holds the task's whole events (the client's message first); the run, while the server holds it,
    // says whether it is over and how it ended.
    GetSessionRequest get(app, user_of(ref.context), ref.context);
    std::optional<Session> session = co_await api.options().session_service->get_session(std::move(get));
    if (!session)
        throw Error(errc::not_found, "Task not found: " + task_id + " (its session is gone)");
    TaskUpdates updates(task_id, ref.context);
    std::vector<StreamResponse> ignored;
    for (const Event& e : session->events) {
        if (e.invocation_id != task_id)
            continue;
        if (e.author == "user" && e.content && updates.task().history.empty()) {
            Message m = to_message(*e.content, Role::user, e.id.empty() ? task_id + "-user" : e.id);
            (void)updates.submitted(m);
            continue;
        }
        updates.add(e, ignored);
    }
    std::shared_ptr<Run> run = run_of(ref);
    if (!run)  // over long ago: the server no longer holds its run
        updates.end(std::nullopt, false, ignored);
    else if (run->finished())
        end(updates, *run, ignored);
    Task t = updates.task();
    if (history && static_cast<std::size_t>(*history) < t.history.size())
        t.history.erase(t.history.begin(), t.history.end() - *history);
    co_return t;
}

asio::awaitable<Task> Server::Impl::cancel(const std::string& app, const std::string& task_id)
{
    const TaskRef ref = find(app, task_id);
    std::shared_ptr<Run> run = run_of(ref);
    if (!run || !run->cancel("task " + task_id + " was cancelled by an A2A client (CancelTask)"))
        throw ProtocolError(code::task_not_cancelable, "Task " + task_id + " is not running: it cannot be cancelled");
    Task t = co_await task(app, task_id, std::nullopt);
    t.status.state = TaskState::canceled;  // the invocation stops at its next step
    t.status.message.reset();
    t.status.timestamp = format_timestamp(std::chrono::duration<double>(
        std::chrono::system_clock::now().time_since_epoch()).count());
    co_return t;
}

asio::awaitable<void> Server::Impl::send(RouteRequest& r, const std::string& app, SendMessageRequest request,
                                         std::optional<json::value> rpc_id)
{
    const bool immediately = request.configuration && request.configuration->return_immediately;
    const std::optional<std::int32_t> history =
        request.configuration ? request.configuration->history_length : std::nullopt;
    Started started = co_await start(app, std::move(request));
    const std::string task_id = started.message.task_id;
    TaskUpdates updates(task_id, started.message.context_id);
    Task answer = updates.submitted(started.message);
    if (!immediately) {
        // Followed to its end (or its client's leaving: the task goes on for the grace period).
        r.response.watch_client();
        UpdateWriter writer(updates, std::nullopt, true);
        if (!co_await server::write_run(r.response, started.run, 0, writer))
            co_return;
        answer = updates.task();
    }
    if (history && static_cast<std::size_t>(*history) < answer.history.size())
        answer.history.erase(answer.history.begin(), answer.history.end() - *history);
    json::value result = json::object{{"task", json::value_from(answer)}};
    const json::value body = rpc_id ? rpc_result(*rpc_id, std::move(result)) : std::move(result);
    const std::string text = json::serialize(body);
    co_await r.response.send(200, "application/json", text);
}

asio::awaitable<void> Server::Impl::stream_updates(RouteRequest& r, std::shared_ptr<Run> run, std::uint64_t cursor,
                                                   TaskUpdates& updates, const StreamResponse& first,
                                                   std::optional<json::value> rpc_id)
{
    UpdateWriter writer(updates, std::move(rpc_id));
    const net::HeaderList headers{{"cache-control", "no-cache"}};
    co_await r.response.begin_stream(200, "text/event-stream", headers);
    std::string head;
    writer.write(head, first);
    co_await r.response.write(head);
    if (co_await server::write_run(r.response, std::move(run), cursor, writer))
        co_await r.response.end_stream();
}

asio::awaitable<void> Server::Impl::stream(RouteRequest& r, const std::string& app, SendMessageRequest request,
                                           std::optional<json::value> rpc_id)
{
    Started started = co_await start(app, std::move(request));
    TaskUpdates updates(started.message.task_id, started.message.context_id);
    StreamResponse first = updates.submitted(started.message);
    co_await stream_updates(r, started.run, 0, updates, first, rpc_id);
}

asio::awaitable<void> Server::Impl::subscribe(RouteRequest& r, const std::string& app, const std::string& task_id,
                                              std::optional<json::value> rpc_id)
{
    const TaskRef ref = find(app, task_id);
    std::shared_ptr<Run> run = run_of(ref);
    if (!run || run->finished())
        throw ProtocolError(code::unsupported_operation, "Task " + task_id + " is over: GetTask gives its end");
    // The task as it stands, then what comes after it.
    Task now = co_await task(app, task_id, std::nullopt);
    const std::uint64_t cursor = run->last_frame();
    TaskUpdates updates(task_id, ref.context);
    {
        const auto executor = co_await asio::this_coro::executor;
        server::Run::Follower follower(run, executor);
        std::uint64_t at = 0;
        std::vector<StreamResponse> ignored;
        while (at < cursor) {
            server::Run::Read read = follower.read(at, std::size_t{1} << 20);
            for (const auto& f : read.frames)
                if (f.event && f.n <= cursor)
                    updates.add(*f.event, ignored);
            if (read.frames.empty())
                break;
        }
    }
    StreamResponse first(std::move(now));
    co_await stream_updates(r, run, cursor, updates, first, rpc_id);
}

asio::awaitable<void> Server::Impl::jsonrpc(RouteRequest& r)
{
    const std::string app = r.params.at(0);
    (void)api.app(app);  // 404 for an app the server does not serve
    json::value id = nullptr;
    std::optional<json::value> reply;
    try {
        boost::system::error_code ec;
        const json::value body = parse_json(r.http.body, ec);
        if (ec) {
            reply = rpc_error(nullptr, parse_error, "Parse error: " + ec.message());
        } else if (!body.is_object() || !body.get_object().contains("method")) {
            reply = rpc_error(nullptr, invalid_request, "Invalid Request: a JSON-RPC 2.0 request object is expected");
        } else {
            const json::object& o = body.get_object();
            if (const json::value* v = o.if_contains("id"); v && (v->is_string() || v->is_number()))
                id = *v;
            const json::value* method = o.if_contains("method");
            const json::value* params = o.if_contains("params");
            const json::value* version = o.if_contains("jsonrpc");
            if (!method->is_string() || !version || *version != "2.0") {
                reply = rpc_error(id, invalid_request, "Invalid Request: \"jsonrpc\": \"2.0\" and a method name");
            } else {
                const std::string_view name = method->get_string();
                const json::value empty = json::object{};
                const json::value& p = params && !params->is_null() ? *params : empty;
                auto task_id = [&] {
                    const json::value* tid = p.is_object() ? p.get_object().if_contains("id") : nullptr;
                    if (!tid || !tid->is_string() || !valid_id(tid->get_string()))
                        throw Error(errc::invalid_argument, "params.id must be a task id");
                    return std::string(tid->get_string());
                };
                if (name == "SendMessage") {
                    co_await send(r, app, json::value_to<SendMessageRequest>(p), id);
                    co_return;
                }
                if (name == "SendStreamingMessage") {
                    co_await stream(r, app, json::value_to<SendMessageRequest>(p), id);
                    co_return;
                }
                if (name == "SubscribeToTask") {
                    const std::string tid = task_id();
                    co_await subscribe(r, app, tid, id);
                    co_return;
                }
                if (name == "GetTask") {
                    std::optional<std::int32_t> history;
                    if (const json::value* h = p.get_object().if_contains("historyLength"); h && h->is_int64())
                        history = static_cast<std::int32_t>(std::clamp<std::int64_t>(h->get_int64(), 0, 1000000));
                    const std::string tid = task_id();
                    Task t = co_await task(app, tid, history);
                    reply = rpc_result(id, json::value_from(t));
                } else if (name == "CancelTask") {
                    const std::string tid = task_id();
                    Task t = co_await cancel(app, tid);
                    reply = rpc_result(id, json::value_from(t));
                } else {
                    reply = rpc_error(id, method_not_found, "Method not found: " + std::string(name));
                }
            }
        }
    } catch (const Error& e) {
        if (r.response.answered())
            throw;  // a stream under way: its connection is cut
        reply = rpc_error(id, rpc_code(e), e.message());
    }
    const std::string text = json::serialize(*reply);
    co_await r.response.send(200, "application/json", text);
}

AgentCard Server::Impl::card(std::string_view app, const std::string& url) const
{
    CardOptions o;
    o.url = url;
    o.version = options.agent_version;
    o.bearer = !api.options().bearer_token.empty();
    return agent_card(*api.app(app).root_agent, o);
}

std::string Server::Impl::endpoint(const RouteRequest& r, const std::string& app) const
{
    if (!options.public_url.empty())
        return options.public_url + "/" + app;
    // The Host was checked by the ApiServer before the route ran (a name it serves).
    const bool tls = !api.options().http.cert_file.empty();
    const std::string mount = options.path == "/" ? "" : options.path;
    return std::string(tls ? "https://" : "http://") + std::string(r.http.header("host")) + mount + "/" + app;
}

asio::awaitable<void> Server::Impl::serve_card(RouteRequest& r)
{
    const std::string& app = r.params.at(0);
    const json::value card_json = json::value_from(card(app, endpoint(r, app)));
    const std::string body = json::serialize(card_json);
    co_await r.response.send(200, "application/json", body);
}

Server::Server(server::ApiServer& api, ServerOptions options)
{
    if (options.path.empty() || options.path.front() != '/')
        throw Error(errc::invalid_argument, "a2a::ServerOptions::path must start with '/' (\"/a2a\")");
    while (options.path.size() > 1 && options.path.back() == '/')
        options.path.pop_back();
    while (!options.public_url.empty() && options.public_url.back() == '/')
        options.public_url.pop_back();
    impl_ = std::make_shared<Impl>(api, std::move(options));
}

server::Routes Server::routes()
{
    // Each handler holds the server's state: a route outlives no ApiServer, and the state lives while they do.
    auto impl = impl_;
    auto body_of = [](const RouteRequest& r, const char* what) {
        boost::system::error_code ec;
        json::value v = parse_json(r.http.body, ec);
        if (ec)
            throw Error(errc::invalid_argument, std::string(what) + ": the body is not JSON (" + ec.message() + ")");
        return v;
    };
    server::Routes routes;
    routes.add("GET", "/{}/.well-known/agent-card.json", [impl](RouteRequest& r) { return impl->serve_card(r); });
    routes.add("POST", "/{}", [impl](RouteRequest& r) { return impl->jsonrpc(r); });
    routes.add("POST", "/{}/message:send", [impl, body_of](RouteRequest& r) -> asio::awaitable<void> {
        SendMessageRequest request = json::value_to<SendMessageRequest>(body_of(r, "SendMessage"));
        const std::string app = r.params.at(0);
        co_await impl->send(r, app, std::move(request), std::nullopt);
    });
    routes.add("POST", "/{}/message:stream", [impl, body_of](RouteRequest& r) -> asio::awaitable<void> {
        SendMessageRequest request = json::value_to<SendMessageRequest>(body_of(r, "SendStreamingMessage"));
        const std::string app = r.params.at(0);
        co_await impl->stream(r, app, std::move(request), std::nullopt);
    });
    routes.add("POST", "/{}/tasks/{}:cancel", [impl](RouteRequest& r) -> asio::awaitable<void> {
        const std::string app = r.params.at(0), id = r.params.at(1);
        Task t = co_await impl->cancel(app, id);
        const std::string text = json::serialize(json::value_from(t));
        co_await r.response.send(200, "application/json", text);
    });
    routes.add("GET POST", "/{}/tasks/{}:subscribe", [impl](RouteRequest& r) -> asio::awaitable<void> {
        const std::string app = r.params.at(0), id = r.params.at(1);
        co_await impl->subscribe(r, app, id, std::nullopt);
    });
    // After the verbs: "{}" matches "id:cancel" too (the first route that fits answers).
    routes.add("GET", "/{}/tasks/{}", [impl](RouteRequest& r) -> asio::awaitable<void> {
        std::optional<std::int32_t> history;
        if (auto h = r.query("historyLength")) {
            int n = 0;
            const auto [end, ec] = std::from_chars(h->data(), h->data() + h->size(), n);
            if (ec != std::errc() || end != h->data() + h->size() || n < 0)
                throw Error(errc::invalid_argument, "historyLength must be a number from 0");
            history = n;
        }
        const std::string app = r.params.at(0), id = r.params.at(1);
        Task t = co_await impl->task(app, id, history);
        const std::string text = json::serialize(json::value_from(t));
        co_await r.response.send(200, "application/json", text);
    });
    return routes;
}

void Server::mount()
{
    impl_->api.mount(impl_->options.path, routes());
}

AgentCard Server::card(std::string_view app, const std::string& url) const
{
    return impl_->card(app, url);
}

}  // namespace adk::a2a
