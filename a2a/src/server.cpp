#include <adk/a2a/server.hpp>

#include <adk/a2a/convert.hpp>
#include <adk/a2a/task_updates.hpp>
#include <adk/a2a/v03.hpp>
#include <adk/core/channel.hpp>
#include <adk/core/clock.hpp>
#include <adk/core/ids.hpp>
#include <adk/core/json_limits.hpp>
#include <adk/core/log.hpp>
#include <adk/net/http_client.hpp>
#include <adk/net/url.hpp>
#include <adk/runner/runner.hpp>
#include <adk/server/runs.hpp>
#include <adk/sessions/session_service.hpp>
#include <adk/tools/tool_confirmation.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <deque>
#include <functional>
#include <set>

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

bool has_function_response(const Content& c)
{
    return std::any_of(c.parts.begin(), c.parts.end(), [](const adk::Part& p) { return p.function_response.has_value(); });
}

// An error of A2A's own (TaskNotCancelableError, ...), by its JSON-RPC code.
class ProtocolError : public Error {
public:
    ProtocolError(int rpc_code_, std::string message) : Error(errc::invalid_argument, std::move(message)), rpc_code(rpc_code_) {}
    int rpc_code;
};

// How an error reads in each binding (the specification's 5.4): its JSON-RPC code, its HTTP status and
// google.rpc status name, and for A2A's own errors the reason of their google.rpc.ErrorInfo.
class ErrorShape {
public:
    int rpc;
    unsigned http;
    std::string_view status;
    std::string_view reason;  // empty: not one of A2A's own
};

ErrorShape shape_of(const Error& e)
{
    if (const auto* own = dynamic_cast<const ProtocolError*>(&e)) {
        const int c = own->rpc_code;
        switch (c) {
        case code::task_not_found: return {c, 404, "NOT_FOUND", "TASK_NOT_FOUND"};
        case code::task_not_cancelable: return {c, 400, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE"};
        case code::push_notification_not_supported:
            return {c, 400, "FAILED_PRECONDITION", "PUSH_NOTIFICATION_NOT_SUPPORTED"};
        case code::unsupported_operation: return {c, 400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION"};
        case code::content_type_not_supported: return {c, 400, "INVALID_ARGUMENT", "CONTENT_TYPE_NOT_SUPPORTED"};
        case code::extended_agent_card_not_configured:
            return {c, 400, "FAILED_PRECONDITION", "EXTENDED_AGENT_CARD_NOT_CONFIGURED"};
        case code::extension_support_required: return {c, 400, "FAILED_PRECONDITION", "EXTENSION_SUPPORT_REQUIRED"};
        case code::version_not_supported: return {c, 400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED"};
        default: break;
        }
    }
    switch (server::http_status(e)) {
    case 400: return {invalid_params, 400, "INVALID_ARGUMENT", {}};
    case 404: return {code::task_not_found, 404, "NOT_FOUND", {}};
    case 409: return {invalid_params, 409, "ALREADY_EXISTS", {}};
    case 413: return {invalid_params, 413, "INVALID_ARGUMENT", {}};
    case 503: return {internal_error, 503, "UNAVAILABLE", {}};
    case 504: return {internal_error, 504, "DEADLINE_EXCEEDED", {}};
    default: return {internal_error, 500, "INTERNAL", {}};
    }
}

json::array error_details(const ErrorShape& shape)
{
    json::array details;
    if (!shape.reason.empty())
        details.push_back(json::object{{"@type", "type.googleapis.com/google.rpc.ErrorInfo"},
                                       {"reason", shape.reason},
                                       {"domain", "a2a-protocol.org"}});
    return details;
}

json::value rpc_error(const json::value& id, const Error& e)
{
    const ErrorShape shape = shape_of(e);
    json::object error{{"code", shape.rpc}, {"message", e.message()}};
    if (!shape.reason.empty())
        error["data"] = error_details(shape);
    return json::object{{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(error)}};
}

// The HTTP+JSON binding's error: its status, and google.rpc.Status as JSON under "error".
std::pair<unsigned, std::string> status_of(const Error& e)
{
    const ErrorShape shape = shape_of(e);
    json::object status{{"code", shape.http}, {"status", shape.status}, {"message", e.message()}};
    if (!shape.reason.empty())
        status["details"] = error_details(shape);
    return {shape.http, json::serialize(json::object{{"error", std::move(status)}})};
}

// The A2A-Version a request asks for (header, or query parameter): this server speaks 1.0; a request that names
// no version is read by its method (0.3's JSON-RPC methods have names of their own).
void check_version(const RouteRequest& r, bool legacy = false)
{
    std::string_view v = r.http.header("a2a-version");
    std::optional<std::string_view> q;
    if (v.empty() && (q = r.query("A2A-Version")))
        v = *q;
    if (v.empty())
        return;
    // Major.Minor decides ("1.0", "1.0.1").
    const std::string_view major_minor = v.substr(0, std::min(v.size(), v.find('.', v.find('.') + 1)));
    if (major_minor == (legacy ? legacy_protocol_version : protocol_version))
        return;
    std::string shown;
    for (char c : v.substr(0, 16))
        shown += (c >= 0x20 && c < 0x7f) ? c : '?';
    throw ProtocolError(code::version_not_supported,
                        "A2A-Version " + shown + " is not served here: this agent speaks A2A " +
                            std::string(protocol_version) + " (send A2A-Version: 1.0), and 0.3's JSON-RPC methods");
}

// The extensions of `declared` (URIs) a request names in its A2A-Extensions header (0.3's X-A2A-Extensions).
std::vector<std::string> requested_extensions(const RouteRequest& r, const std::vector<std::string>& declared)
{
    std::vector<std::string> out;
    if (declared.empty())
        return out;
    std::string_view header = r.http.header("a2a-extensions");
    if (header.empty())
        header = r.http.header("x-a2a-extensions");
    while (!header.empty()) {
        const std::size_t comma = std::min(header.find(','), header.size());
        std::string_view uri = header.substr(0, comma);
        header.remove_prefix(std::min(comma + 1, header.size()));
        while (!uri.empty() && (uri.front() == ' ' || uri.front() == '\t'))
            uri.remove_prefix(1);
        while (!uri.empty() && (uri.back() == ' ' || uri.back() == '\t'))
            uri.remove_suffix(1);
        if (std::find(declared.begin(), declared.end(), uri) != declared.end() &&
            std::find(out.begin(), out.end(), uri) == out.end())
            out.emplace_back(uri);
    }
    return out;
}

// A client's answers to credential requests (adk_request_credential) as a task's history keeps them: without the
// credential, which the runner keeps in its CredentialService (the session stores the answer redacted too).
void redact_credentials(Message& m)
{
    for (Part& p : m.parts)
        if (auto* data = std::get_if<Part::Data>(&p.content); data && data->value.is_object()) {
            json::object& o = data->value.as_object();
            if (const json::value* n = o.if_contains("name");
                n && n->is_string() && n->get_string() == request_credential_function && o.contains("response"))
                o["response"] = json::object{{"credential", "kept by the credential service"}};
        }
}

// The task's final status, from how its run ended.
void end(TaskUpdates& updates, const Run& run, std::vector<StreamResponse>& out)
{
    const std::string failure = run.failure();
    const bool cancelled = run.cancelled();
    updates.end(failure.empty() || cancelled ? std::nullopt : std::optional<std::string>(failure), cancelled, out);
}

// How an answer is written: over HTTP+JSON as it is; over JSON-RPC in a response of that id; in A2A 0.3's JSON for
// 0.3's methods.
class Reply {
public:
    std::optional<json::value> rpc_id;
    bool v03 = false;

    json::value wrap(json::value result) const { return rpc_id ? rpc_result(*rpc_id, std::move(result)) : result; }
    json::value update(const StreamResponse& r) const { return wrap(v03 ? v03::to_json(r) : to_json(r)); }
    json::value task(const Task& t) const { return wrap(v03 ? v03::to_json(t) : json::value_from(t)); }
};

// How a stream writes a task's updates: each a StreamResponse, as `reply` writes it. Silent, it only adds them up
// (SendMessage answers the task at its end).
class UpdateWriter final : public server::RunWriter {
public:
    UpdateWriter(TaskUpdates& updates, Reply reply, bool silent = false)
        : updates_(updates), reply_(std::move(reply)), silent_(silent)
    {
    }

    void frame(std::string& out, const Run&, const Run::Frame& f) override
    {
        pending_.clear();
        if (const Event* event = f.event(scratch_))  // a failure frame is the run's end: finished() reads it
            updates_.add(*event, pending_);
        render(out);
    }
    void missed(std::string&, const Run&, std::uint64_t, std::uint64_t) override {}  // the final task says all
    void finished(std::string& out, const Run& run) override
    {
        pending_.clear();
        end(updates_, run, pending_);
        if (settled_)
            settled_(updates_.task().status.state);
        render(out);
    }
    // Called with the task's final state before the client is told it: the server's record of the task must say
    // what its client reads, or an answer sent at once would find the task still working.
    void on_settled(std::function<void(TaskState)> settled) { settled_ = std::move(settled); }
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
                append_sse(out, reply_.update(r));
        pending_.clear();
    }

    TaskUpdates& updates_;
    Run::EventScratch scratch_;  // a streamed delta made whole
    Reply reply_;
    bool silent_;
    std::vector<StreamResponse> pending_;
    std::function<void(TaskState)> settled_;
};

}  // namespace

namespace {

// A member of JSON-RPC params that names a task or a config.
std::string string_param(const json::value& params, std::string_view name)
{
    const json::value* v = params.get_object().if_contains(name);
    if (!v || !v->is_string() || !valid_id(v->get_string()))
        throw Error(errc::invalid_argument, "params." + std::string(name) + " must be an id");
    return std::string(v->get_string());
}

// ListTaskPushNotificationConfigsResponse: every config on one page.
json::value configs_json(const std::vector<PushNotificationConfig>& configs)
{
    json::array list;
    for (const PushNotificationConfig& c : configs)
        list.push_back(json::value_from(c));
    return json::object{{"configs", std::move(list)}, {"nextPageToken", ""}};
}

}  // namespace

class Server::Impl : public std::enable_shared_from_this<Server::Impl> {
public:
    Impl(server::ApiServer& api_, ServerOptions options_) : api(api_), options(std::move(options_))
    {
        if (!options.push_allowed_urls.empty()) {
            net::HttpClientOptions http;
            http.connect_timeout = http.first_byte_timeout = http.body_timeout = options.push_timeout;
            http.retry.max_retries = 0;  // deliver() retries, with its own waits
            push_client = std::make_shared<net::HttpClient>(http);
        }
    }

    // What the server remembers of a task: where it lives, its invocations, how it stands.
    class TaskRef {
    public:
        std::string app;
        std::string context;
        // The task's invocations: the first, then one per answer when the app is not resumable (a resumable app
        // resumes the first).
        std::vector<std::string> invocations;
        std::string run_id;  // the latest run
        TaskState state = TaskState::submitted;
        double updated = 0;    // when its status last changed (seconds since the epoch): ListTasks' order
        int answers_before = 0;  // the artifacts of its runs before the latest
        // Its webhooks: a list shared by the copies reads take of the task (GetTask, a delivery), replaced whole
        // when one changes; and what they count against ServerOptions::max_push_config_bytes.
        std::shared_ptr<const std::vector<PushNotificationConfig>> pushes;
        std::size_t push_bytes = 0;
        std::set<std::string> legacy_pushes;  // the ids of those set over 0.3: posted 0.3's JSON

        bool owns(const std::string& invocation) const
        {
            return std::find(invocations.begin(), invocations.end(), invocation) != invocations.end();
        }
    };

    // A task started (or continued): its run, and its updates so far (the stream's first response).
    class Started {
    public:
        Started(std::string task_id, std::string context) : updates(std::move(task_id), std::move(context)) {}
        std::shared_ptr<Run> run;
        TaskUpdates updates;
        Task first;
    };

    // `legacy`: sent over 0.3 (its webhook is posted 0.3's JSON).
    // `extensions`: the A2A extensions the request activated (the run's state "temp:a2a_extensions").
    asio::awaitable<std::unique_ptr<Started>> start(const std::string& app, SendMessageRequest request, bool legacy,
                                                    std::vector<std::string> extensions);
    TaskRef find(const std::string& app, const std::string& task_id) const;
    std::shared_ptr<Run> run_of(const TaskRef& ref) const;
    // Follows a task's run for the server: a task runs to its end whether a client follows it or not (A2A's tasks
    // outlive their connections), and its state is known without reading its session.
    static asio::awaitable<void> watch(std::shared_ptr<Impl> self, std::string task_id, std::shared_ptr<Run> run,
                                       int answers_before);
    // A task's updates on their way to its webhooks, in order; an empty batch ends them.
    using PushQueue = ConcurrentChannel<void(boost::system::error_code, std::vector<StreamResponse>)>;
    // Posts what `queue` brings to the task's webhooks until its end: a coroutine of its own, so that a webhook
    // that is slow or never answers holds back no state the server notes of the task.
    static asio::awaitable<void> push_all(std::shared_ptr<Impl> self, std::string task_id,
                                          std::shared_ptr<PushQueue> queue);
    // The task's state, from its run `run_id` (nothing when the task has a later run since).
    void note(const std::string& task_id, TaskState state, const std::string& run_id);
    // The task's events in its session, as its updates saw them.
    static void replay(TaskUpdates& updates, const EventList& events, const TaskRef& ref);
    // The task as it stands: its messages and answers so far, its status.
    asio::awaitable<Task> task(const std::string& app, const std::string& task_id, std::optional<std::int32_t> history);
    // The same from its session, read by the caller.
    Task task_of(const std::string& task_id, const TaskRef& ref, const Session& session,
                 std::optional<std::int32_t> history) const;
    asio::awaitable<ListTasksResponse> list(const std::string& app, ListTasksRequest request);
    asio::awaitable<Task> cancel(const std::string& app, const std::string& task_id);

    // Push notifications: a webhook checked against ServerOptions::push_allowed_urls, a task's webhooks, and
    // the delivery of its updates to them.
    void check_webhook(const PushNotificationConfig& config) const;
    // `legacy`: set over 0.3 (an id left empty is the task's, as 0.3's SDKs make it).
    PushNotificationConfig set_push(const std::string& app, const std::string& task_id, PushNotificationConfig config,
                                    bool legacy = false);
    PushNotificationConfig get_push(const std::string& app, const std::string& task_id, const std::string& id) const;
    std::vector<PushNotificationConfig> list_push(const std::string& app, const std::string& task_id) const;
    void delete_push(const std::string& app, const std::string& task_id, const std::string& id);
    asio::awaitable<void> push(const std::string& task_id, const std::vector<StreamResponse>& updates);
    asio::awaitable<void> deliver(const PushNotificationConfig& config, const std::string& body, bool legacy);

    asio::awaitable<void> send(RouteRequest& r, const std::string& app, SendMessageRequest request,
                               const Reply& reply);
    asio::awaitable<void> stream(RouteRequest& r, const std::string& app, SendMessageRequest request,
                                 const Reply& reply);
    // An SSE stream: `first`, then the updates of the run's frames after `cursor`, then the task's end.
    asio::awaitable<void> stream_updates(RouteRequest& r, std::shared_ptr<Run> run, std::uint64_t cursor,
                                         TaskUpdates& updates, const StreamResponse& first,
                                         const Reply& reply);
    asio::awaitable<void> subscribe(RouteRequest& r, const std::string& app, const std::string& task_id,
                                    const Reply& reply);
    asio::awaitable<void> jsonrpc(RouteRequest& r);
    asio::awaitable<void> serve_card(RouteRequest& r);
    std::string endpoint(const RouteRequest& r, const std::string& app) const;
    AgentCard card(std::string_view app, const std::string& url) const;
    // 0.3's tasks/pushNotificationConfig/* (`name`: the 1.0 method's), their answer; MethodNotFound for another
    // 0.3 method (`asked`).
    json::value legacy_push(const std::string& app, std::string_view name, std::string_view asked, const json::value& p,
                            const json::value& id);
    // The extensions the request activates, named in the answer's A2A-Extensions header; throws
    // ExtensionSupportRequiredError when it leaves out a required one.
    std::vector<std::string> activate(RouteRequest& r) const;
    std::vector<std::string> extension_uris;  // of options.extensions
    // GetExtendedAgentCard: the operator's card for `app`, or the error the specification names.
    AgentCard extended_card(const RouteRequest& r, const std::string& app) const;

    server::ApiServer& api;
    ServerOptions options;
    std::shared_ptr<net::HttpClient> push_client;  // with push notifications on
    mutable std::mutex mutex;
    std::map<std::string, TaskRef> tasks;  // by task id
    std::deque<std::string> task_order;    // oldest first, for the bound
    std::size_t all_push_bytes = 0;        // what every task's webhooks hold (held_bytes)
};

namespace {

// The answers a task may take before the client must start a new one (each continuation adds an invocation).
constexpr std::size_t max_task_invocations = 100;

template <class T>
void keep_last(std::vector<T>& history, std::optional<std::int32_t> length)
{
    if (length && static_cast<std::size_t>(*length) < history.size())
        history.erase(history.begin(), history.end() - *length);
}

}  // namespace

asio::awaitable<std::unique_ptr<Server::Impl::Started>> Server::Impl::start(const std::string& app,
                                                                          SendMessageRequest request, bool legacy,
                                                                          std::vector<std::string> extensions)
{
    Message& m = request.message;
    if (m.role != Role::user)
        throw Error(errc::invalid_argument, "a message sent to an agent has the role ROLE_USER");
    if (m.parts.empty())
        throw Error(errc::invalid_argument, "Message.parts is empty: send the text (or data) for the agent");
    Runner& runner = api.runner(app);
    server::RunRegistry& runs = api.runs();
    if (runs.full())
        throw Error(errc::unavailable, "the server holds as many runs as it may (ApiServerOptions::max_runs): try later");
    Content content = to_content(m);
    redact_credentials(m);  // the content the runner reads keeps it
    SessionService& sessions = *api.options().session_service;
    std::optional<PushNotificationConfig> webhook;
    if (request.configuration && request.configuration->push_notification_config) {
        webhook = request.configuration->push_notification_config;
        check_webhook(*webhook);
    }

    // A message with a task's id answers that task (it waits for its client), in the task's context.
    std::optional<TaskRef> continued;
    EventList before;  // the task's events so far
    if (!m.task_id.empty()) {
        {
            std::lock_guard lock(mutex);
            auto it = tasks.find(m.task_id);
            if (it == tasks.end() || it->second.app != app)
                throw ProtocolError(code::task_not_found, "Task not found: " + m.task_id);
            TaskRef& ref = it->second;
            if (!m.context_id.empty() && m.context_id != ref.context)
                throw Error(errc::invalid_argument, "Message.contextId is not the context of task " + m.task_id +
                                                        ": leave it out, or send the task's");
            if (is_terminal(ref.state))
                throw ProtocolError(code::unsupported_operation,
                                    "Task " + m.task_id + " has ended (" + std::string(to_string(ref.state)) +
                                        "): it takes no more messages; send a new message without taskId (in the "
                                        "same contextId to go on with the conversation)");
            if (!is_interrupted(ref.state))
                throw ProtocolError(code::unsupported_operation,
                                    "Task " + m.task_id + " is still working: a message may answer it only when it "
                                                          "waits for its client (INPUT_REQUIRED, AUTH_REQUIRED)");
            if (!has_function_response(content))
                throw Error(errc::invalid_argument,
                            "Task " + m.task_id + " waits for answers to its calls (the data parts with "
                                                  "adk_is_long_running in its status message): send each as a data "
                                                  "part {\"id\", \"name\", \"response\"} with metadata "
                                                  "{\"adk_type\": \"function_response\"}");
            if (ref.invocations.size() >= max_task_invocations)
                throw ProtocolError(code::unsupported_operation, "Task " + m.task_id + " was answered " +
                                                                     std::to_string(max_task_invocations) +
                                                                     " times: start a new task in its context");
            continued = ref;
            ref.state = TaskState::working;  // claimed: a second answer at once is refused
            ref.run_id.clear();              // and what the run before still notes of its end is stale
        }
        m.context_id = continued->context;
    }
    try {
        const std::string context = m.context_id.empty() ? new_uuid() : m.context_id;
        check_context_id(context);
        const std::string user = user_of(context);
        if (continued) {
            GetSessionRequest get(app, user, context);
            std::optional<Session> session = co_await sessions.get_session(std::move(get));
            if (!session)
                throw ProtocolError(code::task_not_found, "Task " + m.task_id + " is gone with its session");
            for (std::size_t i = 0; i < session->events.size(); ++i)
                if (continued->owns(session->events[i].invocation_id))
                    before.push_back(session->events.shared(i));
        } else {
            GetSessionRequest get(app, user, context);
            get.num_recent_events = 0;
            std::optional<Session> existing = co_await sessions.get_session(std::move(get));
            if (!existing) {
                CreateSessionRequest create(app, user, context);
                (void)co_await sessions.create_session(std::move(create));
            }
        }
        RunRequest run_request(user, context, std::move(content));
        run_request.run_config.streaming_mode = StreamingMode::sse;
        if (!extensions.empty()) {
            json::array uris;
            for (std::string& uri : extensions)
                uris.emplace_back(std::move(uri));
            run_request.state_delta["temp:a2a_extensions"] = std::move(uris);
        }
        std::shared_ptr<server::Run> run = runs.prepare(RunOwner(app, user, context));
        run_request.receiver = run;
        auto starting = runner.start(std::move(run_request));
        Runner::Started started = co_await std::move(starting);
        const std::string task_id = continued ? m.task_id : started.invocation_id;
        m.context_id = context;
        m.task_id = task_id;
        auto out = std::make_unique<Started>(task_id, context);
        runs.start(run, std::move(started.events), started.invocation_id);
        out->run = std::move(run);
        if (continued) {
            replay(out->updates, before, *continued);
            out->first = out->updates.answered(m);
        } else {
            out->first = out->updates.submitted(m);
        }
        const int answers_before = out->updates.answers();
        {
            std::lock_guard lock(mutex);
            if (continued) {
                // Still remembered: the claim above kept it WORKING (the bound forgets the oldest tasks only).
                auto it = tasks.find(task_id);
                if (it != tasks.end()) {
                    if (!it->second.owns(started.invocation_id))
                        it->second.invocations.push_back(started.invocation_id);
                    it->second.run_id = out->run->id;
                    it->second.answers_before = answers_before;
                    it->second.updated = now_seconds();
                }
            } else {
                TaskRef ref;
                ref.app = app;
                ref.context = context;
                ref.invocations.push_back(task_id);
                ref.run_id = out->run->id;
                ref.updated = now_seconds();
                tasks[task_id] = std::move(ref);
                task_order.push_back(task_id);
                while (task_order.size() > options.max_tasks) {
                    if (auto old = tasks.find(task_order.front()); old != tasks.end())
                        all_push_bytes -= old->second.push_bytes;
                    tasks.erase(task_order.front());
                    task_order.pop_front();
                }
            }
        }
        if (webhook)
            (void)set_push(app, task_id, std::move(*webhook), legacy);
        const auto executor = co_await asio::this_coro::executor;
        asio::co_spawn(executor, watch(shared_from_this(), task_id, out->run, answers_before), asio::detached);
        co_return out;
    } catch (...) {
        if (continued) {  // the claim let go: the task still waits for its answer
            std::lock_guard lock(mutex);
            if (auto it = tasks.find(request.message.task_id); it != tasks.end()) {
                it->second.state = continued->state;
                it->second.run_id = continued->run_id;
            }
        }
        throw;
    }
}

asio::awaitable<void> Server::Impl::watch(std::shared_ptr<Impl> self, std::string task_id, std::shared_ptr<Run> run,
                                          int answers_before)
{
    const auto executor = co_await asio::this_coro::executor;
    Run::Follower follower(run, executor, /*whole_events_only=*/true);  // a streamed delta changes no state
    TaskUpdates updates(task_id, run->owner.session, answers_before);
    std::vector<StreamResponse> out;
    Run::Read read;
    Run::EventScratch scratch;
    std::uint64_t cursor = 0;
    TaskState state = TaskState::submitted;
    std::shared_ptr<PushQueue> pushes;
    if (self->push_client) {
        pushes = std::make_shared<PushQueue>(executor, 64);
        asio::co_spawn(executor, push_all(self, task_id, pushes), asio::detached);
    }
    while (true) {
        follower.read(cursor, std::size_t{1} << 20, read);
        for (const Run::Frame& f : read.frames) {
            const Event* event = f.event(scratch);
            if (!event)
                continue;
            out.clear();
            updates.add(*event, out);
            if (!out.empty()) {
                state = TaskState::working;
                self->note(task_id, state, run->id);
                if (pushes) {
                    const boost::system::error_code none;
                    co_await pushes->async_send(none, std::move(out), asio::use_awaitable);
                }
            }
        }
        if (read.finished)
            break;
        if (read.empty()) {
            co_await follower.wait();
            asio::cancellation_state cs = co_await asio::this_coro::cancellation_state;
            if (cs.cancelled() != asio::cancellation_type::none)
                co_return;
        }
    }
    out.clear();
    end(updates, *run, out);
    self->note(task_id, updates.task().status.state, run->id);
    if (pushes) {
        const boost::system::error_code none;
        if (!out.empty())
            co_await pushes->async_send(none, std::move(out), asio::use_awaitable);
        std::vector<StreamResponse> end_of_updates;  // empty: the last batch
        co_await pushes->async_send(none, std::move(end_of_updates), asio::use_awaitable);
    }
}

asio::awaitable<void> Server::Impl::push_all(std::shared_ptr<Impl> self, std::string task_id,
                                             std::shared_ptr<PushQueue> queue)
{
    while (true) {
        auto [ec, batch] = co_await queue->async_receive(asio::as_tuple(asio::use_awaitable));
        if (ec || batch.empty())
            co_return;
        co_await self->push(task_id, batch);
    }
}

void Server::Impl::note(const std::string& task_id, TaskState state, const std::string& run_id)
{
    std::lock_guard lock(mutex);
    if (auto it = tasks.find(task_id);
        it != tasks.end() && it->second.state != TaskState::canceled && it->second.run_id == run_id) {
        it->second.state = state;
        it->second.updated = now_seconds();
    }
}

void Server::Impl::replay(TaskUpdates& updates, const EventList& events, const TaskRef& ref)
{
    std::vector<StreamResponse> ignored;
    for (const Event& e : events) {
        if (!ref.owns(e.invocation_id))
            continue;
        if (e.author == "user") {
            if (!e.content)
                continue;
            const Message m = to_message(*e.content, Role::user, e.id.empty() ? updates.task().id + "-user" : e.id);
            if (updates.task().history.empty())
                (void)updates.submitted(m);
            else
                (void)updates.answered(m);
            continue;
        }
        ignored.clear();
        updates.add(e, ignored);
    }
}

namespace {

// What a webhook's token, and its authentication's scheme and credentials together, may hold.
constexpr std::size_t max_webhook_token_bytes = 4096;

// `url` (an http(s) URL parse_url took) with its path's dot segments resolved (net::resolve_dot_segments):
// "https://hooks/a2a/../admin" is posted to https://hooks/admin, which is what the allowed prefixes are checked
// against.
std::string webhook_url(const std::string& url)
{
    const std::size_t authority = url.find("://") + 3;
    const std::size_t target = url.find_first_of("/?", authority);
    if (target == std::string::npos)
        return url;
    return url.substr(0, target) + net::resolve_dot_segments(std::string_view(url).substr(target));
}

PushNotificationConfig with_url(PushNotificationConfig c, std::string url)
{
    c.url = std::move(url);
    return c;
}

}  // namespace

void Server::Impl::check_webhook(const PushNotificationConfig& c) const
{
    if (options.push_allowed_urls.empty())
        throw ProtocolError(code::push_notification_not_supported,
                            "push notifications are off on this server: its operator allows no webhook URL "
                            "(adk::a2a::ServerOptions::push_allowed_urls)");
    if (c.url.size() > 2048)
        throw Error(errc::invalid_argument, "the webhook URL is longer than 2048 bytes");
    (void)net::parse_url(c.url);  // an http(s) URL, or adk::Error
    if (c.url != webhook_url(c.url))
        return check_webhook(with_url(c, webhook_url(c.url)));  // compared, and posted to, resolved
    const bool allowed = std::any_of(options.push_allowed_urls.begin(), options.push_allowed_urls.end(),
                                     [&](const std::string& prefix) {
                                         if (prefix.empty() || c.url.compare(0, prefix.size(), prefix) != 0)
                                             return false;
                                         // A whole path segment: "https://hooks" allows neither "https://hooks.evil"
                                         // nor "https://hooks@evil".
                                         return prefix.back() == '/' || c.url.size() == prefix.size() ||
                                                c.url[prefix.size()] == '/' || c.url[prefix.size()] == '?';
                                     });
    if (!allowed)
        throw Error(errc::invalid_argument, "the webhook URL " + net::redact_url(c.url) +
                                                " is not under one this server allows (ServerOptions::"
                                                "push_allowed_urls): ask its operator, or follow the task instead");
    if (c.token.size() > max_webhook_token_bytes)
        throw Error(errc::invalid_argument, "PushNotificationConfig.token is longer than " +
                                                std::to_string(max_webhook_token_bytes) + " bytes");
    if (!c.token.empty())
        net::validate_header("x-a2a-notification-token", c.token);
    if (c.tenant.size() > 256)
        throw Error(errc::invalid_argument, "PushNotificationConfig.tenant is longer than 256 bytes");
    if (c.authentication) {
        if (c.authentication->scheme.empty())
            throw Error(errc::invalid_argument, "PushNotificationConfig.authentication.scheme is empty (\"Bearer\")");
        if (c.authentication->scheme.size() + c.authentication->credentials.size() > max_webhook_token_bytes)
            throw Error(errc::invalid_argument, "PushNotificationConfig.authentication is longer than " +
                                                    std::to_string(max_webhook_token_bytes) + " bytes");
        net::validate_header("authorization", c.authentication->scheme + " " + c.authentication->credentials);
    }
    if (!c.id.empty() && !valid_id(c.id))
        throw Error(errc::invalid_argument, "PushNotificationConfig.id must be an id (printable ASCII, at most 256 bytes)");
}

namespace {

// What a webhook held by the server counts: its strings and itself.
std::size_t held_bytes(const PushNotificationConfig& c)
{
    std::size_t n = sizeof(PushNotificationConfig) + c.tenant.size() + c.id.size() + c.task_id.size() + c.url.size() +
                    c.token.size();
    if (c.authentication)
        n += c.authentication->scheme.size() + c.authentication->credentials.size();
    return n;
}

std::size_t held_bytes(const std::vector<PushNotificationConfig>& configs)
{
    std::size_t n = 0;
    for (const PushNotificationConfig& c : configs)
        n += held_bytes(c);
    return n;
}

}  // namespace

PushNotificationConfig Server::Impl::set_push(const std::string& app, const std::string& task_id,
                                              PushNotificationConfig c, bool legacy)
{
    check_webhook(c);
    c.url = webhook_url(c.url);
    c.task_id = task_id;
    if (c.id.empty())
        c.id = legacy ? task_id : new_uuid();
    // Members the server does not know are not kept: it posts to the webhook and holds nothing else of it.
    c.extra = {};
    if (c.authentication)
        c.authentication->extra = {};
    std::lock_guard lock(mutex);
    auto it = tasks.find(task_id);
    if (it == tasks.end() || it->second.app != app)
        throw ProtocolError(code::task_not_found, "Task not found: " + task_id);
    TaskRef& task = it->second;
    auto pushes = task.pushes ? std::make_shared<std::vector<PushNotificationConfig>>(*task.pushes)
                              : std::make_shared<std::vector<PushNotificationConfig>>();
    auto same = std::find_if(pushes->begin(), pushes->end(), [&](const auto& p) { return p.id == c.id; });
    if (same != pushes->end()) {
        *same = c;
    } else {
        if (pushes->size() >= options.max_push_configs)
            throw Error(errc::invalid_argument, "task " + task_id + " has " + std::to_string(pushes->size()) +
                                                    " webhooks, as many as it may (ServerOptions::max_push_configs): "
                                                    "delete one first");
        pushes->push_back(c);
    }
    const std::size_t bytes = held_bytes(*pushes);
    if (all_push_bytes - task.push_bytes + bytes > options.max_push_config_bytes)
        throw Error(errc::too_large, "the server holds " + std::to_string(all_push_bytes) +
                                         " bytes of webhooks, as many as it may (ServerOptions::max_push_config_bytes): "
                                         "follow the task instead, or try again when tasks have ended");
    all_push_bytes = all_push_bytes - task.push_bytes + bytes;
    task.push_bytes = bytes;
    task.pushes = std::move(pushes);
    if (legacy)
        it->second.legacy_pushes.insert(c.id);
    else
        it->second.legacy_pushes.erase(c.id);
    return c;
}

PushNotificationConfig Server::Impl::get_push(const std::string& app, const std::string& task_id,
                                              const std::string& id) const
{
    for (const PushNotificationConfig& c : list_push(app, task_id))
        if (c.id == id)
            return c;
    throw Error(errc::not_found, "task " + task_id + " has no push notification config " + id);
}

std::vector<PushNotificationConfig> Server::Impl::list_push(const std::string& app, const std::string& task_id) const
{
    if (options.push_allowed_urls.empty())
        check_webhook({});  // PushNotificationNotSupportedError
    const TaskRef ref = find(app, task_id);
    return ref.pushes ? *ref.pushes : std::vector<PushNotificationConfig>();
}

void Server::Impl::delete_push(const std::string& app, const std::string& task_id, const std::string& id)
{
    (void)get_push(app, task_id, id);
    std::lock_guard lock(mutex);
    if (auto it = tasks.find(task_id); it != tasks.end() && it->second.pushes) {
        TaskRef& task = it->second;
        auto pushes = std::make_shared<std::vector<PushNotificationConfig>>(*task.pushes);
        std::erase_if(*pushes, [&](const auto& p) { return p.id == id; });
        const std::size_t bytes = held_bytes(*pushes);
        all_push_bytes = all_push_bytes - task.push_bytes + bytes;
        task.push_bytes = bytes;
        task.pushes = std::move(pushes);
        task.legacy_pushes.erase(id);
    }
}

asio::awaitable<void> Server::Impl::push(const std::string& task_id, const std::vector<StreamResponse>& updates)
{
    std::shared_ptr<const std::vector<PushNotificationConfig>> targets;
    std::set<std::string> legacy;
    {
        std::lock_guard lock(mutex);
        if (auto it = tasks.find(task_id); it != tasks.end()) {
            targets = it->second.pushes;
            legacy = it->second.legacy_pushes;
        }
    }
    if (!targets)
        co_return;
    for (const StreamResponse& update : updates) {
        const std::string body = json::serialize(to_json(update));
        const std::string legacy_body = legacy.empty() ? std::string() : json::serialize(v03::to_json(update));
        for (const PushNotificationConfig& target : *targets) {
            const bool v03 = legacy.contains(target.id);
            co_await deliver(target, v03 ? legacy_body : body, v03);
        }
    }
}

asio::awaitable<void> Server::Impl::deliver(const PushNotificationConfig& c, const std::string& body, bool legacy)
{
    std::chrono::milliseconds wait = options.push_retry_delay;
    for (int attempt = 1;; ++attempt) {
        std::string why;
        try {
            net::HttpRequest req("POST", c.url);
            req.set("content-type", legacy ? "application/json" : "application/a2a+json");
            req.set("a2a-version", std::string(legacy ? legacy_protocol_version : protocol_version));
            if (c.authentication)
                req.set("authorization", c.authentication->scheme + " " + c.authentication->credentials);
            if (!c.token.empty())
                req.set("x-a2a-notification-token", c.token);
            req.body = body;
            net::HttpResponse res = co_await push_client->send(std::move(req));
            (void)co_await res.read_all(std::size_t{64} << 10);
            if (res.ok())
                co_return;
            why = "HTTP " + std::to_string(res.status());
        } catch (const Error& e) {
            why = e.message();  // what() adds the code and where Boost raised it
        } catch (const std::exception& e) {
            why = e.what();
        }
        if (attempt >= options.push_attempts) {
            log(LogLevel::warning, "A2A: a push notification of task " + c.task_id.substr(0, 100) + " to " +
                                       net::redact_url(c.url) + " failed " + std::to_string(attempt) +
                                       " times, the last: " + why);
            co_return;
        }
        adk::Timer timer(co_await asio::this_coro::executor, wait);
        co_await timer.async_wait(asio::use_awaitable);
        wait *= 2;
    }
}

Server::Impl::TaskRef Server::Impl::find(const std::string& app, const std::string& task_id) const
{
    std::lock_guard lock(mutex);
    auto it = tasks.find(task_id);
    if (it == tasks.end() || it->second.app != app)
        throw ProtocolError(code::task_not_found, "Task not found: " + task_id);
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
    // The session holds the task's whole events (the client's messages among them); the run, while the server
    // holds it, says whether it is over and how it ended.
    GetSessionRequest get(app, user_of(ref.context), ref.context);
    std::optional<Session> session = co_await api.options().session_service->get_session(std::move(get));
    if (!session)
        throw ProtocolError(code::task_not_found, "Task not found: " + task_id + " (its session is gone)");
    co_return task_of(task_id, ref, *session, history);
}

Task Server::Impl::task_of(const std::string& task_id, const TaskRef& ref, const Session& session,
                           std::optional<std::int32_t> history) const
{
    TaskUpdates updates(task_id, ref.context);
    replay(updates, session.events, ref);
    std::vector<StreamResponse> ignored;
    std::shared_ptr<Run> run = run_of(ref);
    const bool over = !run || run->finished();
    if (over && ref.state == TaskState::canceled)  // cancelled while it waited for its client
        updates.end(std::nullopt, true, ignored);
    else if (!run)  // over long ago: the server no longer holds its run
        updates.end(std::nullopt, false, ignored);
    else if (run->finished())
        end(updates, *run, ignored);
    Task t = updates.task();
    if (over)
        t.status.timestamp = format_timestamp(ref.updated);
    keep_last(t.history, history);
    return t;
}

asio::awaitable<ListTasksResponse> Server::Impl::list(const std::string& app, ListTasksRequest request)
{
    // A page token is where the last page ended: "<microseconds of its status>:<its task id>".
    std::optional<std::pair<std::int64_t, std::string>> after;
    if (!request.page_token.empty()) {
        const std::string& token = request.page_token;
        const std::size_t colon = token.find(':');
        std::int64_t us = 0;
        const auto [end_, ec] = std::from_chars(token.data(), token.data() + std::min(colon, token.size()), us);
        if (colon == std::string::npos || ec != std::errc() || end_ != token.data() + colon ||
            !valid_id(std::string_view(token).substr(colon + 1)))
            throw Error(errc::invalid_argument, "ListTasksRequest.pageToken is not one this server gave: send the "
                                                "nextPageToken of the page before, or none for the first");
        after.emplace(us, token.substr(colon + 1));
    }
    std::optional<double> since;
    if (!request.status_timestamp_after.empty())
        since = parse_timestamp(request.status_timestamp_after);
    // The tasks that match, the most recently updated first (their ids break ties).
    std::vector<std::pair<std::int64_t, std::string>> matching;
    {
        std::lock_guard lock(mutex);
        for (const auto& [id, ref] : tasks) {
            if (ref.app != app || (!request.context_id.empty() && ref.context != request.context_id) ||
                (request.status != TaskState::unspecified && ref.state != request.status) ||
                (since && ref.updated < *since))
                continue;
            matching.emplace_back(static_cast<std::int64_t>(ref.updated * 1e6), id);
        }
    }
    std::sort(matching.begin(), matching.end(), std::greater<>());
    ListTasksResponse out;
    out.total_size = static_cast<std::int32_t>(matching.size());
    const std::size_t page = static_cast<std::size_t>(request.page_size.value_or(50));
    auto from = matching.begin();
    if (after)
        from = std::upper_bound(matching.begin(), matching.end(), *after, std::greater<>());
    // The tasks of one context share its session: each is read once for the page (a few held at a time).
    std::map<std::string, std::optional<Session>> sessions;
    constexpr std::size_t max_held_sessions = 8;
    for (auto it = from; it != matching.end() && out.tasks.size() < page; ++it) {
        std::optional<TaskRef> ref;
        try {
            ref = find(app, it->second);
        } catch (const ProtocolError&) {
            continue;  // forgotten since the list was taken
        }
        if (sessions.size() == max_held_sessions && !sessions.contains(ref->context))
            sessions.clear();
        auto [held, fresh] = sessions.try_emplace(ref->context);
        if (fresh) {
            GetSessionRequest get(app, user_of(ref->context), ref->context);
            held->second = co_await api.options().session_service->get_session(std::move(get));
        }
        if (!held->second)
            continue;  // its session deleted since
        Task t = task_of(it->second, *ref, *held->second, request.history_length);
        if (!request.include_artifacts.value_or(false))
            t.artifacts.clear();
        out.tasks.push_back(std::move(t));
        if (out.tasks.size() == page && std::next(it) != matching.end())
            out.next_page_token = std::to_string(it->first) + ":" + it->second;
    }
    out.page_size = static_cast<std::int32_t>(page);
    co_return out;
}

asio::awaitable<Task> Server::Impl::cancel(const std::string& app, const std::string& task_id)
{
    const TaskRef ref = find(app, task_id);
    std::shared_ptr<Run> run = run_of(ref);
    const std::string why = "task " + task_id + " was cancelled by an A2A client (CancelTask)";
    if (run && !run->finished()) {
        if (!run->cancel(why))
            throw ProtocolError(code::task_not_cancelable, "Task " + task_id + " has just ended: it cannot be cancelled");
    } else {
        // A task that waits for its client has no run: it ends here.
        std::lock_guard lock(mutex);
        auto it = tasks.find(task_id);
        if (it == tasks.end() || !is_interrupted(it->second.state))
            throw ProtocolError(code::task_not_cancelable, "Task " + task_id + " has ended (" +
                                                               std::string(to_string(ref.state)) +
                                                               "): it cannot be cancelled");
        it->second.state = TaskState::canceled;
        it->second.updated = now_seconds();
    }
    Task t = co_await task(app, task_id, std::nullopt);
    t.status.state = TaskState::canceled;  // a running invocation stops at its next step
    t.status.message.reset();
    t.status.timestamp = format_timestamp(now_seconds());
    co_return t;
}

asio::awaitable<void> Server::Impl::send(RouteRequest& r, const std::string& app, SendMessageRequest request,
                                         const Reply& reply)
{
    const bool immediately = request.configuration && request.configuration->return_immediately;
    const std::optional<std::int32_t> history =
        request.configuration ? request.configuration->history_length : std::nullopt;
    std::vector<std::string> extensions = requested_extensions(r, extension_uris);
    std::unique_ptr<Started> started = co_await start(app, std::move(request), reply.v03, std::move(extensions));
    Task answer = started->first;
    if (!immediately) {
        // Followed to its end, or until its client leaves (the task goes on without it).
        r.response.watch_client();
        UpdateWriter writer(started->updates, Reply{}, true);
        writer.on_settled([this, id = answer.id, run_id = started->run->id](TaskState state) { note(id, state, run_id); });
        if (!co_await server::write_run(r.response, started->run, 0, writer))
            co_return;
        answer = started->updates.task();
    }
    keep_last(answer.history, history);
    // 1.0 answers a SendMessageResponse ({"task": ...}), 0.3 the task itself.
    const json::value body =
        reply.v03 ? reply.task(answer) : reply.wrap(json::object{{"task", json::value_from(answer)}});
    const std::string text = json::serialize(body);
    co_await r.response.send(200, "application/json", text);
}

asio::awaitable<void> Server::Impl::stream_updates(RouteRequest& r, std::shared_ptr<Run> run, std::uint64_t cursor,
                                                   TaskUpdates& updates, const StreamResponse& first,
                                                   const Reply& reply)
{
    UpdateWriter writer(updates, reply);
    if (run)
        writer.on_settled([this, id = updates.task().id, run_id = run->id](TaskState state) { note(id, state, run_id); });
    const net::HeaderList headers{{"cache-control", "no-cache"}};
    co_await r.response.begin_stream(200, "text/event-stream", headers);
    std::string head;
    writer.write(head, first);
    co_await r.response.write(head);
    if (run)
        co_await server::write_run(r.response, std::move(run), cursor, writer);  // ends the stream with the run's end
    else
        co_await r.response.end_stream();
}

asio::awaitable<void> Server::Impl::stream(RouteRequest& r, const std::string& app, SendMessageRequest request,
                                           const Reply& reply)
{
    std::vector<std::string> extensions = requested_extensions(r, extension_uris);
    std::unique_ptr<Started> started = co_await start(app, std::move(request), reply.v03, std::move(extensions));
    const StreamResponse first(started->first);
    co_await stream_updates(r, started->run, 0, started->updates, first, reply);
}

asio::awaitable<void> Server::Impl::subscribe(RouteRequest& r, const std::string& app, const std::string& task_id,
                                              const Reply& reply)
{
    const TaskRef ref = find(app, task_id);
    std::shared_ptr<Run> run = run_of(ref);
    const bool over = !run || run->finished();
    if (over && !is_interrupted(ref.state))
        throw ProtocolError(code::unsupported_operation, "Task " + task_id + " has ended: GetTask gives its end");
    // The task as it stands, then what comes after it (nothing, for a task that waits for its client).
    Task now = co_await task(app, task_id, std::nullopt);
    TaskUpdates updates(task_id, ref.context, ref.answers_before);
    const StreamResponse first(std::move(now));
    if (over) {
        co_await stream_updates(r, nullptr, 0, updates, first, reply);
        co_return;
    }
    const std::uint64_t cursor = run->last_frame();
    {
        const auto executor = co_await asio::this_coro::executor;
        server::Run::Follower follower(run, executor);
        std::uint64_t at = 0;
        std::vector<StreamResponse> ignored;
        server::Run::EventScratch scratch;
        while (at < cursor) {
            server::Run::Read read = follower.read(at, std::size_t{1} << 20);
            for (const auto& f : read.frames)
                if (const Event* event = f.event(scratch); event && f.n <= cursor)
                    updates.add(*event, ignored);
            if (read.frames.empty())
                break;
        }
    }
    co_await stream_updates(r, run, cursor, updates, first, reply);
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
                // 0.3's methods ("message/send", ...) are 1.0's, answered in 0.3's JSON.
                static constexpr std::array<std::pair<std::string_view, std::string_view>, 10> legacy_methods{{
                    {"message/send", "SendMessage"},
                    {"message/stream", "SendStreamingMessage"},
                    {"tasks/get", "GetTask"},
                    {"tasks/cancel", "CancelTask"},
                    {"tasks/resubscribe", "SubscribeToTask"},
                    {"agent/getAuthenticatedExtendedCard", "GetExtendedAgentCard"},
                    {"tasks/pushNotificationConfig/set", "CreateTaskPushNotificationConfig"},
                    {"tasks/pushNotificationConfig/get", "GetTaskPushNotificationConfig"},
                    {"tasks/pushNotificationConfig/list", "ListTaskPushNotificationConfigs"},
                    {"tasks/pushNotificationConfig/delete", "DeleteTaskPushNotificationConfig"},
                }};
                std::string_view name = method->get_string();
                const bool legacy = name.find('/') != std::string_view::npos;
                if (legacy) {
                    auto known = std::find_if(legacy_methods.begin(), legacy_methods.end(),
                                              [&](const auto& m) { return m.first == name; });
                    name = known == legacy_methods.end() ? std::string_view() : known->second;
                }
                check_version(r, legacy);
                (void)activate(r);
                const Reply how{id, legacy};
                const json::value empty = json::object{};
                const json::value& p = params && !params->is_null() ? *params : empty;
                if (!p.is_object())
                    throw Error(errc::invalid_argument, "params must be an object");
                auto task_id = [&] {
                    const json::value* tid = p.get_object().if_contains("id");
                    if (!tid || !tid->is_string() || !valid_id(tid->get_string()))
                        throw Error(errc::invalid_argument, "params.id must be a task id");
                    return std::string(tid->get_string());
                };
                auto send_request = [&] {
                    return legacy ? v03::send_params_from_json(p) : json::value_to<SendMessageRequest>(p);
                };
                if (name == "SendMessage") {
                    co_await send(r, app, send_request(), how);
                    co_return;
                }
                if (name == "SendStreamingMessage") {
                    co_await stream(r, app, send_request(), how);
                    co_return;
                }
                if (name == "SubscribeToTask") {
                    const std::string tid = task_id();
                    co_await subscribe(r, app, tid, how);
                    co_return;
                }
                if (name == "GetTask") {
                    std::optional<std::int32_t> history;
                    if (const json::value* h = p.get_object().if_contains("historyLength"); h && h->is_int64())
                        history = static_cast<std::int32_t>(std::clamp<std::int64_t>(h->get_int64(), 0, 1000000));
                    const std::string tid = task_id();
                    Task t = co_await task(app, tid, history);
                    reply = how.task(t);
                } else if (name == "CancelTask") {
                    const std::string tid = task_id();
                    Task t = co_await cancel(app, tid);
                    reply = how.task(t);
                } else if (name == "GetExtendedAgentCard") {
                    reply = rpc_result(id, json::value_from(extended_card(r, app)));
                } else if (legacy) {
                    reply = legacy_push(app, name, method->get_string(), p, id);
                } else if (name == "ListTasks") {
                    ListTasksResponse l = co_await list(app, json::value_to<ListTasksRequest>(p));
                    reply = rpc_result(id, json::value_from(l));
                } else if (name == "CreateTaskPushNotificationConfig") {
                    auto config = json::value_to<PushNotificationConfig>(p);
                    const std::string tid = config.task_id;
                    if (!valid_id(tid))
                        throw Error(errc::invalid_argument, "params.taskId must be a task id");
                    reply = rpc_result(id, json::value_from(set_push(app, tid, std::move(config))));
                } else if (name == "GetTaskPushNotificationConfig" || name == "DeleteTaskPushNotificationConfig") {
                    const std::string tid = string_param(p, "taskId"), cid = string_param(p, "id");
                    if (name == "DeleteTaskPushNotificationConfig") {
                        delete_push(app, tid, cid);
                        reply = rpc_result(id, json::object{});
                    } else {
                        reply = rpc_result(id, json::value_from(get_push(app, tid, cid)));
                    }
                } else if (name == "ListTaskPushNotificationConfigs") {
                    const std::string tid = string_param(p, "taskId");
                    reply = rpc_result(id, configs_json(list_push(app, tid)));

                } else {
                    reply = rpc_error(id, method_not_found, "Method not found: " + std::string(name.substr(0, 100)));
                }
            }
        }
    } catch (const Error& e) {
        if (r.response.answered())
            throw;  // a stream under way: its connection is cut
        reply = rpc_error(id, e);
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
    o.push_notifications = !options.push_allowed_urls.empty();
    AgentCard c = agent_card(*api.app(app).root_agent, o);
    // For 0.3 clients: the JSON-RPC interface at 0.3 (last: 1.0 clients take the first that fits), and the members
    // a 0.3 card has in their place.
    if (options.extended_card)
        c.capabilities.extended_agent_card = true;
    for (const json::object& e : options.extensions)
        c.capabilities.extensions.push_back(e);
    c.supported_interfaces.emplace_back(url, "JSONRPC", std::string(legacy_protocol_version));
    c.extra["protocolVersion"] = "0.3.0";
    c.extra["url"] = url;
    c.extra["preferredTransport"] = "JSONRPC";
    return c;
}

std::vector<std::string> Server::Impl::activate(RouteRequest& r) const
{
    std::vector<std::string> active = requested_extensions(r, extension_uris);
    for (const json::object& e : options.extensions)
        if (const json::value* required = e.if_contains("required"); required && *required == true) {
            const std::string uri(e.at("uri").get_string());
            if (std::find(active.begin(), active.end(), uri) == active.end())
                throw ProtocolError(code::extension_support_required,
                                    "This agent requires the A2A extension " + uri + ": send the header A2A-Extensions: " +
                                        uri + " (and follow that extension)");
        }
    if (!active.empty()) {
        std::string joined;
        for (const std::string& uri : active)
            joined += (joined.empty() ? "" : ", ") + uri;
        r.response.add_header("A2A-Extensions", std::move(joined));
    }
    return active;
}

json::value Server::Impl::legacy_push(const std::string& app, std::string_view name, std::string_view asked,
                                      const json::value& p, const json::value& id)
{
    const json::object& params = p.get_object();
    auto id_param = [&](std::string_view key, const char* what) {
        const json::value* v = params.if_contains(key);
        if (!v || !v->is_string() || !valid_id(v->get_string()))
            throw Error(errc::invalid_argument, "params." + std::string(key) + " must be " + what);
        return std::string(v->get_string());
    };
    if (name == "CreateTaskPushNotificationConfig") {
        const std::string task = id_param("taskId", "a task id");
        const json::value* webhook = params.if_contains("pushNotificationConfig");
        if (!webhook)
            throw Error(errc::invalid_argument, "params.pushNotificationConfig is required (its url, token, ...)");
        PushNotificationConfig config = v03::push_config_from_json(*webhook);
        return rpc_result(id, v03::to_json(set_push(app, task, std::move(config), true)));
    }
    if (name == "GetTaskPushNotificationConfig") {
        const std::string task = id_param("id", "a task id");
        // Without a config's id, the one 0.3's SDKs name after the task.
        const std::string config =
            params.contains("pushNotificationConfigId") ? id_param("pushNotificationConfigId", "a config id") : task;
        return rpc_result(id, v03::to_json(get_push(app, task, config)));
    }
    if (name == "ListTaskPushNotificationConfigs") {
        json::array configs;
        for (const PushNotificationConfig& c : list_push(app, id_param("id", "a task id")))
            configs.push_back(v03::to_json(c));
        return rpc_result(id, std::move(configs));
    }
    if (name == "DeleteTaskPushNotificationConfig") {
        const std::string task = id_param("id", "a task id");
        delete_push(app, task, id_param("pushNotificationConfigId", "a config id"));
        return rpc_result(id, nullptr);
    }
    return rpc_error(id, method_not_found,
                     "Method not found: " + std::string(asked.substr(0, 100)) +
                         " (A2A 0.3's methods served: message/send, message/stream, tasks/get, tasks/cancel, "
                         "tasks/resubscribe, tasks/pushNotificationConfig/set, get, list and delete, "
                         "agent/getAuthenticatedExtendedCard)");
}

AgentCard Server::Impl::extended_card(const RouteRequest& r, const std::string& app) const
{
    if (!options.extended_card)
        throw ProtocolError(code::unsupported_operation,
                            "This agent has no extended agent card (its card says extendedAgentCard false): "
                            "read its public card at .well-known/agent-card.json");
    std::optional<AgentCard> extended = options.extended_card(app, card(app, endpoint(r, app)));
    if (!extended)
        throw ProtocolError(code::extended_agent_card_not_configured,
                            "The agent '" + app + "' has no extended agent card configured: read its public card");
    return std::move(*extended);
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
    std::vector<std::string> uris;
    for (const json::object& e : options.extensions) {
        const json::value* uri = e.if_contains("uri");
        if (!uri || !uri->is_string() || uri->get_string().empty() || uri->get_string().size() > 2048 ||
            std::any_of(uri->get_string().begin(), uri->get_string().end(),
                        [](char c) { return c == ',' || static_cast<unsigned char>(c) <= 0x20 || c == 0x7f; }))
            throw Error(errc::invalid_argument, "a2a::ServerOptions::extensions: each extension needs a \"uri\" (at "
                                                "most 2048 bytes, no comma, space or control character)");
        uris.emplace_back(uri->get_string());
    }
    if (options.extended_card && api.options().bearer_token.empty())
        throw Error(errc::invalid_argument, "a2a::ServerOptions::extended_card is for authenticated clients: give the "
                                            "ApiServer a bearer token (ApiServerOptions::bearer_token)");
    impl_ = std::make_shared<Impl>(api, std::move(options));
    impl_->extension_uris = std::move(uris);
}

namespace {

// An HTTP+JSON route: the version checked first, errors answered as google.rpc.Status.
server::Routes::Handler rest(std::shared_ptr<Server::Impl> impl,
                             std::function<asio::awaitable<void>(RouteRequest&)> handler)
{
    return [impl = std::move(impl), handler = std::move(handler)](RouteRequest& r) -> asio::awaitable<void> {
        std::optional<std::pair<unsigned, std::string>> failed;
        try {
            check_version(r);
            (void)impl->activate(r);
            co_await handler(r);
        } catch (const Error& e) {
            if (r.response.answered())
                throw;  // a stream under way: its connection is cut
            failed = status_of(e);
        }
        if (failed)
            co_await r.response.send(failed->first, "application/json", failed->second);
    };
}

json::value body_of(const RouteRequest& r, const char* what)
{
    boost::system::error_code ec;
    json::value v = parse_json(r.http.body, ec);
    if (ec)
        throw Error(errc::invalid_argument, std::string(what) + ": the body is not JSON (" + ec.message() + ")");
    return v;
}

std::optional<std::int64_t> query_number(const RouteRequest& r, std::string_view name)
{
    std::optional<std::string_view> text = r.query(name);
    if (!text)
        return std::nullopt;
    std::int64_t n = 0;
    const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), n);
    if (ec != std::errc() || end != text->data() + text->size())
        throw Error(errc::invalid_argument, std::string(name) + " must be a number");
    return n;
}

// ListTasks' query parameters, read as its JSON body would be.
ListTasksRequest list_request(const RouteRequest& r)
{
    json::object o;
    for (const char* name : {"tenant", "contextId", "status", "pageToken", "statusTimestampAfter"})
        if (std::optional<std::string_view> v = r.query(name))
            o[name] = *v;
    for (const char* name : {"pageSize", "historyLength"})
        if (std::optional<std::int64_t> n = query_number(r, name))
            o[name] = *n;
    if (std::optional<std::string_view> v = r.query("includeArtifacts")) {
        if (*v != "true" && *v != "false")
            throw Error(errc::invalid_argument, "includeArtifacts must be true or false");
        o["includeArtifacts"] = *v == "true";
    }
    return json::value_to<ListTasksRequest>(json::value(std::move(o)));
}

}  // namespace

server::Routes Server::routes()
{
    // Each handler holds the server's state: a route outlives no ApiServer, and the state lives while they do.
    auto impl = impl_;
    server::Routes routes;
    // The card is public (the specification: clients read it to learn how to authenticate).
    routes.add_open("GET", "/{}/.well-known/agent-card.json", [impl](RouteRequest& r) { return impl->serve_card(r); });
    routes.add("POST", "/{}", [impl](RouteRequest& r) { return impl->jsonrpc(r); });
    routes.add("POST", "/{}/message:send", rest(impl, [impl](RouteRequest& r) -> asio::awaitable<void> {
        SendMessageRequest request = json::value_to<SendMessageRequest>(body_of(r, "SendMessage"));
        const std::string app = r.params.at(0);
        const Reply plain;  // HTTP+JSON, 1.0
        co_await impl->send(r, app, std::move(request), plain);
    }));
    routes.add("POST", "/{}/message:stream", rest(impl, [impl](RouteRequest& r) -> asio::awaitable<void> {
        SendMessageRequest request = json::value_to<SendMessageRequest>(body_of(r, "SendStreamingMessage"));
        const std::string app = r.params.at(0);
        const Reply plain;  // HTTP+JSON, 1.0
        co_await impl->stream(r, app, std::move(request), plain);
    }));
    routes.add("GET", "/{}/extendedAgentCard", rest(impl, [impl](RouteRequest& r) -> asio::awaitable<void> {
        const std::string app = r.params.at(0);
        (void)impl->api.app(app);
        const std::string text = json::serialize(json::value_from(impl->extended_card(r, app)));
        co_await r.response.send(200, "application/json", text);
    }));
    routes.add("GET", "/{}/tasks", rest(impl, [impl](RouteRequest& r) -> asio::awaitable<void> {
        const std::string app = r.params.at(0);
        (void)impl->api.app(app);
        ListTasksResponse l = co_await impl->list(app, list_request(r));
        const std::string text = json::serialize(json::value_from(l));
        co_await r.response.send(200, "application/json", text);
    }));
    routes.add("POST", "/{}/tasks/{}:cancel", rest(impl, [impl](RouteRequest& r) -> asio::awaitable<void> {
        const std::string app = r.params.at(0), id = r.params.at(1);
        Task t = co_await impl->cancel(app, id);
        const std::string text = json::serialize(json::value_from(t));
        co_await r.response.send(200, "application/json", text);
    }));
    routes.add("GET POST", "/{}/tasks/{}:subscribe", rest(impl, [impl](RouteRequest& r) -> asio::awaitable<void> {
        const std::string app = r.params.at(0), id = r.params.at(1);
        const Reply plain;  // HTTP+JSON, 1.0
        co_await impl->subscribe(r, app, id, plain);
    }));
    routes.add("POST", "/{}/tasks/{}/pushNotificationConfigs", rest(impl, [impl](RouteRequest& r) -> asio::awaitable<void> {
        auto config = json::value_to<PushNotificationConfig>(body_of(r, "CreateTaskPushNotificationConfig"));
        const std::string app = r.params.at(0), id = r.params.at(1);
        const std::string text = json::serialize(json::value_from(impl->set_push(app, id, std::move(config))));
        co_await r.response.send(200, "application/json", text);
    }));
    routes.add("GET", "/{}/tasks/{}/pushNotificationConfigs", rest(impl, [impl](RouteRequest& r) -> asio::awaitable<void> {
        const std::string app = r.params.at(0), id = r.params.at(1);
        const std::string text = json::serialize(configs_json(impl->list_push(app, id)));
        co_await r.response.send(200, "application/json", text);
    }));
    routes.add("GET DELETE", "/{}/tasks/{}/pushNotificationConfigs/{}",
               rest(impl, [impl](RouteRequest& r) -> asio::awaitable<void> {
                   const std::string app = r.params.at(0), id = r.params.at(1), config = r.params.at(2);
                   std::string text = "{}";
                   if (r.http.method == "DELETE")
                       impl->delete_push(app, id, config);
                   else
                       text = json::serialize(json::value_from(impl->get_push(app, id, config)));
                   co_await r.response.send(200, "application/json", text);
               }));
    // After the verbs: "{}" matches "id:cancel" too (the first route that fits answers).
    routes.add("GET", "/{}/tasks/{}", rest(impl, [impl](RouteRequest& r) -> asio::awaitable<void> {
        std::optional<std::int32_t> history;
        if (std::optional<std::int64_t> n = query_number(r, "historyLength")) {
            if (*n < 0 || *n > 1000000)
                throw Error(errc::invalid_argument, "historyLength must be from 0 to 1000000");
            history = static_cast<std::int32_t>(*n);
        }
        const std::string app = r.params.at(0), id = r.params.at(1);
        Task t = co_await impl->task(app, id, history);
        const std::string text = json::serialize(json::value_from(t));
        co_await r.response.send(200, "application/json", text);
    }));
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
