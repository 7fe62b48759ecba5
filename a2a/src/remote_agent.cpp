#include <adk/a2a/remote_agent.hpp>

#include <adk/a2a/card_auth.hpp>
#include <adk/a2a/convert.hpp>
#include <adk/a2a/v03.hpp>
#include <adk/auth/credential_service.hpp>
#include <adk/core/clock.hpp>
#include <adk/core/ids.hpp>
#include <adk/core/json_limits.hpp>
#include <adk/core/log.hpp>
#include <adk/net/sse_reader.hpp>
#include <adk/net/url.hpp>
#include <adk/tools/tool_confirmation.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <cctype>
#include <map>
#include <set>

namespace adk::a2a {

namespace {

constexpr std::string_view jsonrpc_binding = "JSONRPC";
constexpr std::string_view http_json_binding = "HTTP+JSON";

// About what a part holds: its text, bytes, URL or data (as JSON), its metadata, and itself.
std::size_t part_bytes(const Part& p)
{
    std::size_t n = sizeof(Part) + p.filename.size() + p.media_type.size() +
                    (p.metadata.empty() ? 0 : json::serialize(p.metadata).size());
    if (const auto* text = std::get_if<std::string>(&p.content))
        n += text->size();
    else if (const auto* raw = std::get_if<Part::Raw>(&p.content))
        n += raw->bytes.size();
    else if (const auto* url = std::get_if<Part::Url>(&p.content))
        n += url->url.size();
    else if (const auto* data = std::get_if<Part::Data>(&p.content))
        n += json::serialize(data->value).size();
    return n;
}

// A card's name as a local agent's: an identifier.
std::string identifier_of(std::string_view name)
{
    std::string out;
    for (char c : name.substr(0, 100))
        out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
    if (out.empty() || std::isdigit(static_cast<unsigned char>(out.front())))
        out.insert(out.begin(), '_');
    return out == "user" ? "user_agent" : out;
}

bool speaks_current(std::string_view version)
{
    return version == protocol_version || version.substr(0, protocol_version.size() + 1) == "1.0.";
}

// What an error answer (google.rpc.Status over HTTP+JSON, a JSON-RPC error) says, bounded.
std::string error_text(std::string_view body)
{
    boost::system::error_code ec;
    const json::value v = parse_json(body, ec);
    if (!ec && v.is_object())
        if (const json::value* e = v.get_object().if_contains("error"); e && e->is_object())
            if (const json::value* m = e->get_object().if_contains("message"); m && m->is_string())
                return std::string(m->get_string().subview(0, std::min<std::size_t>(m->get_string().size(), 500)));
    return std::string(body.substr(0, 200));
}

std::string text_of(const std::vector<Part>& parts)
{
    std::string out;
    for (const Part& p : parts)
        if (const std::string* t = p.text())
            out += *t;
    return out;
}

}  // namespace

class RemoteA2aAgent::Impl {
public:
    explicit Impl(RemoteAgentOptions options_)
        : options(std::move(options_)), http(std::make_shared<net::HttpClient>(options.http))
    {
    }

    // The card, and the interface this agent talks to.
    class Endpoint {
    public:
        AgentCard card;
        std::string binding;
        std::string url;
        bool v03 = false;  // the remote speaks A2A 0.3 only: its JSON-RPC methods and JSON
        // The card's scheme a credential from the CredentialService is presented for (none with a bearer_token).
        std::optional<CardAuth> auth;
    };
    asio::awaitable<Endpoint> endpoint();
    net::HttpRequest request(const Endpoint& at, std::string_view path, std::string body, bool stream,
                             const PresentedCredential& credential) const;
    // CancelTask, for a run that stops while its remote task goes on.
    static asio::awaitable<void> cancel_remote(std::shared_ptr<Impl> self, Endpoint at, std::string task_id,
                                               PresentedCredential credential);

    RemoteAgentOptions options;
    std::shared_ptr<net::HttpClient> http;
    std::mutex mutex;
    std::optional<Endpoint> resolved;
};

asio::awaitable<RemoteA2aAgent::Impl::Endpoint> RemoteA2aAgent::Impl::endpoint()
{
    {
        std::lock_guard lock(mutex);
        if (resolved)
            co_return *resolved;
    }
    Endpoint at;
    if (options.card) {
        at.card = *options.card;
    } else {
        std::string url = options.card_url;
        if (url.size() < 5 || url.substr(url.size() - 5) != ".json") {
            while (!url.empty() && url.back() == '/')
                url.pop_back();
            url += "/.well-known/agent-card.json";
        }
        net::HttpRequest get("GET", url);
        get.set("a2a-version", std::string(protocol_version));
        net::HttpResponse res = co_await http->send(std::move(get));
        const std::string body = co_await res.read_all(options.max_update_bytes);
        if (!res.ok())
            throw Error(errc::unavailable, "the agent card at " + net::redact_url(url) + " answered HTTP " +
                                               std::to_string(res.status()) + ": " + error_text(body));
        boost::system::error_code ec;
        const json::value v = parse_json(body, ec);
        if (ec)
            throw Error(errc::bad_response, "the agent card at " + net::redact_url(url) + " is not JSON: " + ec.message());
        at.card = json::value_to<AgentCard>(v);
    }
    // The first of the card's interfaces this agent speaks wins, in the card's order.
    for (const AgentInterface& i : at.card.supported_interfaces)
        if ((i.protocol_binding == jsonrpc_binding || i.protocol_binding == http_json_binding) &&
            speaks_current(i.protocol_version)) {
            at.binding = i.protocol_binding;
            at.url = i.url;
            while (!at.url.empty() && at.url.back() == '/')
                at.url.pop_back();
            break;
        }
    if (at.url.empty()) {
        // An agent still on 0.3: its JSON-RPC interface, listed, or its card's own URL (a 0.3 card's).
        for (const AgentInterface& i : at.card.supported_interfaces)
            if (i.protocol_binding == jsonrpc_binding && i.protocol_version.substr(0, 3) == legacy_protocol_version) {
                at.url = i.url;
                break;
            }
        const json::value* url = at.card.extra.if_contains("url");
        const json::value* version = at.card.extra.if_contains("protocolVersion");
        const json::value* transport = at.card.extra.if_contains("preferredTransport");
        if (at.url.empty() && url && url->is_string() && version && version->is_string() &&
            version->get_string().subview(0, 3) == legacy_protocol_version &&
            (!transport || (transport->is_string() && transport->get_string() == jsonrpc_binding)))
            at.url = std::string(url->get_string());
        while (!at.url.empty() && at.url.back() == '/')
            at.url.pop_back();
        at.binding = jsonrpc_binding;
        at.v03 = !at.url.empty();
    }
    if (at.url.empty())
        throw Error(errc::invalid_argument,
                    "the agent card of '" + at.card.name.substr(0, 100) + "' lists no interface RemoteA2aAgent speaks: "
                    "A2A 1.0 over JSON-RPC or HTTP+JSON, or A2A 0.3 over JSON-RPC (gRPC is not spoken)");
    (void)net::parse_url(at.url);  // throws for a URL that is not http(s)
    if (options.bearer_token.empty())
        at.auth = card_auth(at.card, at.url);
    std::lock_guard lock(mutex);
    resolved = at;
    co_return at;
}

net::HttpRequest RemoteA2aAgent::Impl::request(const Endpoint& at, std::string_view path, std::string body,
                                               bool stream, const PresentedCredential& credential) const
{
    std::string url = at.url + std::string(path);
    if (!credential.query.empty())
        url += (url.find('?') == std::string::npos ? "?" : "&") + credential.query;
    net::HttpRequest req("POST", url);
    req.set("content-type", "application/json");
    req.set("accept", stream ? "text/event-stream" : "application/json");
    req.set("a2a-version", std::string(at.v03 ? legacy_protocol_version : protocol_version));
    if (!options.bearer_token.empty())
        req.set("authorization", "Bearer " + options.bearer_token);
    for (const auto& [name, value] : credential.headers)
        req.set(name, value);
    req.body = std::move(body);
    return req;
}

asio::awaitable<void> RemoteA2aAgent::Impl::cancel_remote(std::shared_ptr<Impl> self, Endpoint at, std::string task_id,
                                                          PresentedCredential credential)
{
    try {
        net::HttpClientOptions quick = self->options.http;
        quick.connect_timeout = quick.first_byte_timeout = quick.body_timeout = self->options.cancel_timeout;
        quick.retry.max_retries = 0;
        net::HttpClient client(quick);
        const bool rpc = at.binding == jsonrpc_binding;
        std::string body = rpc ? json::serialize(json::object{{"jsonrpc", "2.0"},
                                                              {"id", 1},
                                                              {"method", at.v03 ? "tasks/cancel" : "CancelTask"},
                                                              {"params", json::object{{"id", task_id}}}})
                               : "{}";
        net::HttpRequest req =
            self->request(at, rpc ? "" : "/tasks/" + task_id + ":cancel", std::move(body), false, credential);
        net::HttpResponse res = co_await client.send(std::move(req));
        (void)co_await res.read_all(std::size_t{1} << 20);
    } catch (const std::exception& e) {
        log(LogLevel::warning, "RemoteA2aAgent: the remote task " + task_id.substr(0, 100) +
                                   " could not be cancelled: " + e.what());
    }
}

namespace {

// A remote task's updates as the local agent's events.
class Receiver {
public:
    Receiver(InvocationContext& ctx, EventSink& out) : ctx_(ctx), out_(out) {}

    std::string task_id;
    std::string context_id;
    TaskState state = TaskState::unspecified;

    // Artifacts of the task the session holds already (a task continued): not emitted again.
    std::set<std::string> seen_artifacts;

    // `response`; `snapshot`: a stream's first, the task as it stood when the message came (a continued task's
    // status then is the question just answered).
    asio::awaitable<void> on(StreamResponse response, bool snapshot)
    {
        if (auto* t = std::get_if<Task>(&response)) {
            const TaskState s = t->status.state;
            note(t->id, t->context_id, snapshot && !is_terminal(s) ? TaskState::working : s);
            if (snapshot && !is_terminal(s))
                co_return;
            for (const Artifact& a : t->artifacts)
                if (!seen_artifacts.contains(a.artifact_id))
                    co_await artifact(a, false, true);
            if (s != TaskState::submitted && s != TaskState::working)
                co_await status(t->status);
        } else if (auto* m = std::get_if<Message>(&response)) {
            note(m->task_id, m->context_id, TaskState::completed);
            Event e = content_event(to_content(*m), {});
            co_await out_.emit(std::move(e));
        } else if (auto* s = std::get_if<TaskStatusUpdateEvent>(&response)) {
            note(s->task_id, s->context_id, s->status.state);
            co_await status(s->status);
        } else if (auto* a = std::get_if<TaskArtifactUpdateEvent>(&response)) {
            note(a->task_id, a->context_id, state);
            co_await artifact(a->artifact, a->append, a->last_chunk);
        }
    }

    // The stream ended: artifacts whose last chunk never came, and a stream that stopped before the task's end.
    asio::awaitable<void> finish()
    {
        for (auto& [id, parts] : open_) {
            Event e = content_event(content_of(parts), id);
            co_await out_.emit(std::move(e));
        }
        open_.clear();
        if (state == TaskState::submitted || state == TaskState::working || state == TaskState::unspecified) {
            Event e = failure_event("A2A_STREAM_ENDED", "the remote agent's stream ended before its task did (" +
                                                           std::string(to_string(state)) + ")");
            co_await out_.emit(std::move(e));
        }
    }

private:
    void note(const std::string& task, const std::string& context, TaskState s)
    {
        if (!task.empty())
            task_id = task;
        if (!context.empty())
            context_id = context;
        state = s;
    }

    static Content content_of(const std::vector<Part>& parts)
    {
        Content c;
        c.role = "model";
        for (const Part& p : parts)
            c.parts.push_back(from_a2a(p));
        return c;
    }

    // An event of the agent's that names the remote context, task and state.
    Event event() const
    {
        Event e = ctx_.make_event();
        e.custom_metadata["a2a:context_id"] = context_id;
        e.custom_metadata["a2a:task_id"] = task_id;
        e.custom_metadata["a2a:task_state"] = to_string(state);
        return e;
    }

    Event content_event(Content content, std::string_view artifact_id) const
    {
        Event e = event();
        if (!artifact_id.empty())
            e.custom_metadata["a2a:artifact_id"] = artifact_id;
        e.content = std::move(content);
        return e;
    }

    Event failure_event(std::string code, std::string message) const
    {
        Event e = event();
        e.error_code = std::move(code);
        e.error_message = std::move(message);
        return e;
    }

    // An artifact's chunk (append: after what came; last: the artifact is whole), or a whole artifact.
    asio::awaitable<void> artifact(const Artifact& a, bool append, bool last)
    {
        std::vector<Part>& parts = open_[a.artifact_id];
        if (!append)
            parts.clear();
        // What the artifacts under way gather is bounded as a model's streamed answer is: a remote that sends
        // chunks and never the last one holds no more than this.
        for (const Part& p : a.parts)
            open_bytes_ += part_bytes(p);
        if (open_bytes_ > ctx_.run_config().max_answer_bytes)
            throw Error(errc::bad_response, "the remote agent sent artifact chunks of more than " +
                                                std::to_string(ctx_.run_config().max_answer_bytes) +
                                                " bytes without their last chunk (RunConfig::max_answer_bytes)");
        for (const Part& p : a.parts) {
            if (p.text() && !parts.empty() && parts.back().text() && p.metadata == parts.back().metadata)
                std::get<std::string>(parts.back().content) += *p.text();
            else
                parts.push_back(p);
        }
        if (!last || append) {  // a chunk: its text streams as a model's deltas do
            const std::string delta = text_of(a.parts);
            if (!delta.empty()) {
                Event e = ctx_.make_event(Content("model", {adk::Part::from_text(delta)}));
                e.partial = true;
                co_await out_.emit(std::move(e));
            }
            if (!last)
                co_return;
        }
        const std::vector<Part> whole = std::move(parts);
        open_.erase(a.artifact_id);
        open_bytes_ = 0;
        for (const auto& [id, held] : open_)
            for (const Part& p : held)
                open_bytes_ += part_bytes(p);
        Event e = content_event(content_of(whole), a.artifact_id);
        co_await out_.emit(std::move(e));
    }

    // A status: an error event for a task that ended without its answer, the remote's message otherwise.
    Event status_event(const TaskStatus& s) const
    {
        const std::string text = s.message ? s.message->text() : std::string();
        switch (s.state) {
        case TaskState::failed:
            return failure_event("A2A_TASK_FAILED", text.empty() ? "the remote agent's task failed" : text);
        case TaskState::rejected:
            return failure_event("A2A_TASK_REJECTED", text.empty() ? "the remote agent rejected the task" : text);
        case TaskState::canceled:
            return failure_event("A2A_TASK_CANCELED", text.empty() ? "the remote agent's task was cancelled" : text);
        default:
            break;
        }
        if (!s.message || s.message->parts.empty())  // the next run answers it: the session must say so
            return content_event(Content("model", {adk::Part::from_text("(" + std::string(to_string(s.state)) + ")")}), {});
        Event e = content_event(to_content(*s.message), {});
        if (is_interrupted(s.state)) {
            // The remote's calls wait for the person: long-running calls here too, so the local runner pauses.
            std::vector<std::string> marked, all;
            for (std::size_t i = 0; i < s.message->parts.size() && i < e.content->parts.size(); ++i)
                if (const auto& call = e.content->parts[i].function_call) {
                    all.push_back(call->id);
                    if (const json::value* lr = s.message->parts[i].metadata.if_contains("adk_is_long_running");
                        lr && *lr == true)
                        marked.push_back(call->id);
                }
            e.long_running_tool_ids = marked.empty() ? all : marked;
        }
        return e;
    }

    asio::awaitable<void> status(const TaskStatus& s)
    {
        const bool said = s.message && !s.message->parts.empty();
        if (!said && !is_interrupted(s.state) && s.state != TaskState::failed && s.state != TaskState::rejected &&
            s.state != TaskState::canceled)
            co_return;  // WORKING or COMPLETED without a word
        Event e = status_event(s);
        co_await out_.emit(std::move(e));
    }

    InvocationContext& ctx_;
    EventSink& out_;
    std::map<std::string, std::vector<Part>> open_;  // artifacts under way, by id
    std::size_t open_bytes_ = 0;                      // what open_ holds, about (part_bytes)
};

// One SSE event's data as a StreamResponse: a JSON-RPC response's result (or its error, thrown), or the
// HTTP+JSON binding's StreamResponse itself.
StreamResponse update_of(std::string_view data, bool rpc, bool v03, const std::string& who)
{
    boost::system::error_code ec;
    const json::value v = parse_json(data, ec);
    if (ec || !v.is_object())
        throw Error(errc::bad_response, "the remote agent '" + who + "' sent an update that is not a JSON object");
    if (!rpc)
        return stream_response_from_json(v);
    if (v.get_object().contains("error"))
        throw Error(errc::unavailable, "the remote agent '" + who + "' answered with an error: " + error_text(data));
    const json::value* result = v.get_object().if_contains("result");
    if (!result)
        throw Error(errc::bad_response, "the remote agent '" + who + "' sent a JSON-RPC response without a result");
    return v03 ? v03::stream_response_from_json(*result) : stream_response_from_json(*result);
}

// What the card's scheme asks the person for, and the credential that answers it.
std::string wanted(const json::object& scheme)
{
    const json::value& type = scheme.at("type");
    if (type == "apiKey")
        return "an API key (sent in the " + std::string(scheme.at("in").get_string()) + " '" +
               std::string(scheme.at("name").get_string()) + "'): answer with the authConfig, its rawAuthCredential "
               "{\"authType\": \"apiKey\", \"apiKey\": \"<key>\"}";
    if (type == "http" && scheme.at("scheme") == "basic")
        return "a user name and password (HTTP Basic): answer with the authConfig, its rawAuthCredential "
               "{\"authType\": \"http\", \"http\": {\"scheme\": \"basic\", \"credentials\": "
               "{\"username\": \"<name>\", \"password\": \"<password>\"}}}";
    if (type == "http")
        return "a bearer token: answer with the authConfig, its rawAuthCredential {\"authType\": \"http\", "
               "\"http\": {\"scheme\": \"bearer\", \"credentials\": {\"token\": \"<token>\"}}}";
    return "an OAuth 2.0 access token: answer with the authConfig, its exchangedAuthCredential {\"authType\": "
           "\"oauth2\", \"oauth2\": {\"accessToken\": \"<token>\"}}";
}

// The person asked for the credential the remote agent takes (adk_request_credential, a long-running call: the
// invocation pauses). The runner keeps the answer in its CredentialService, under the auth config's key, and the
// agent's next run presents it.
Event credential_question(const InvocationContext& ctx, const CardAuth& auth, const std::string& agent,
                          const std::string& why)
{
    const json::object& scheme = auth.auth_config.at("authScheme").get_object();
    FunctionCall call("adk-" + new_uuid(), std::string(request_credential_function),
                      json::object{{"authConfig", auth.auth_config},
                                   {"message", "The remote agent '" + agent + "' " + why + ". It takes " +
                                                   wanted(scheme) + " (security scheme '" +
                                                   auth.scheme_name.substr(0, 100) + "' of its card)."}});
    adk::Part part;
    part.function_call = call;
    Event e = ctx.make_event(Content("model", {std::move(part)}));
    e.long_running_tool_ids.push_back(call.id);
    return e;
}

// A part of the user's the remote agent is not sent: an answer to a question about credentials (kept by the
// runner, and the remote agent never asked it).
bool kept_locally(const adk::Part& p)
{
    return p.thought || (p.function_response && p.function_response->name == request_credential_function);
}

}  // namespace

RemoteA2aAgent::RemoteA2aAgent(std::string name, std::string description, std::shared_ptr<Impl> impl)
    : Agent(std::move(name), std::move(description)), impl_(std::move(impl))
{
}

std::shared_ptr<RemoteA2aAgent> RemoteA2aAgent::create(RemoteAgentOptions options)
{
    if (!options.card && options.card_url.empty())
        throw Error(errc::invalid_argument, "RemoteA2aAgent needs the remote agent's card or its URL (card_url)");
    if (!options.card_url.empty())
        (void)net::parse_url(options.card_url);  // an http(s) URL, or adk::Error now rather than at the first run
    std::string name = options.name;
    std::string description = options.description;
    if (options.card) {
        if (name.empty())
            name = identifier_of(options.card->name);
        if (description.empty())
            description = options.card->description;
    }
    if (name.empty())
        throw Error(errc::invalid_argument, "RemoteA2aAgent needs a name when its card is read from card_url");
    auto impl = std::make_shared<Impl>(std::move(options));
    return std::make_shared<RemoteA2aAgent>(std::move(name), std::move(description), std::move(impl));
}

asio::awaitable<AgentCard> RemoteA2aAgent::card()
{
    Impl::Endpoint at = co_await impl_->endpoint();
    co_return at.card;
}

asio::awaitable<void> RemoteA2aAgent::run_impl(InvocationContext& ctx, EventSink& out)
{
    const Impl::Endpoint at = co_await impl_->endpoint();

    // The credential the card's scheme takes, kept for this user; the person is asked for it when there is none
    // and the card requires one.
    PresentedCredential credential;
    bool kept = false;
    std::string unusable;
    if (at.auth) {
        std::optional<json::object> answered;
        if (const std::shared_ptr<CredentialService>& service = ctx.credential_service()) {
            CredentialKey key(ctx.app_name(), ctx.user_id(), credential_key_of(at.auth->auth_config));
            answered = co_await service->load_credential(std::move(key));
        }
        if (answered) {
            try {
                credential = present_credential(at.auth->auth_config.at("authScheme").get_object(), *answered);
                kept = true;
            } catch (const Error& e) {
                unusable = "cannot use the credential kept for it (" + e.message() + ")";
            }
        }
        if (!kept && (at.auth->required || !unusable.empty())) {
            Event question = credential_question(ctx, *at.auth, name(), unusable.empty() ? "requires a credential"
                                                                                          : unusable);
            co_await out.emit(std::move(question));
            co_return;
        }
    }

    // The turn: what the session holds since this agent's last event that named its remote context.
    const Session session = ctx.session();
    Message m;
    m.message_id = new_uuid();
    m.role = Role::user;
    std::size_t from = 0;
    for (std::size_t i = session.events.size(); i-- > 0;) {
        const Event& e = session.events[i];
        const json::value* context = e.custom_metadata.if_contains("a2a:context_id");
        if (e.author != name() || !context || !context->is_string())
            continue;
        m.context_id = std::string(context->get_string());
        const json::value* task = e.custom_metadata.if_contains("a2a:task_id");
        const json::value* state = e.custom_metadata.if_contains("a2a:task_state");
        if (task && task->is_string() && state && state->is_string())
            if (std::optional<TaskState> s = parse_task_state(state->get_string()); s && is_interrupted(*s))
                m.task_id = std::string(task->get_string());
        from = i + 1;
        break;
    }
    for (std::size_t i = from; i < session.events.size(); ++i) {
        const Event& e = session.events[i];
        if (!e.content || e.partial || e.author == name())
            continue;
        if (e.author == "user") {
            for (const adk::Part& p : e.content->parts)
                if (!kept_locally(p))
                    m.parts.push_back(to_a2a(p));
        } else if (const std::string text = e.text(); !text.empty()) {
            m.parts.push_back(Part::text_part("For context: [" + e.author + "] said: " + text));
        }
    }
    if (m.parts.empty())
        if (const std::optional<Content>& asked = ctx.user_content())
            for (const adk::Part& p : asked->parts)
                if (!kept_locally(p))
                    m.parts.push_back(to_a2a(p));
    if (m.parts.empty())
        throw Error(errc::invalid_argument, "RemoteA2aAgent '" + name() + "' has nothing to send: the session holds "
                                            "no message for it since its last answer");

    SendMessageRequest request;
    request.message = std::move(m);
    const bool rpc = at.binding == jsonrpc_binding;
    const bool stream = impl_->options.streaming && at.card.capabilities.streaming.value_or(false);
    json::value params = at.v03 ? json::value(json::object{{"message", v03::to_json(request.message)},
                                                           {"configuration", json::object{{"blocking", true}}}})
                                : json::value_from(request);
    const char* method = at.v03 ? (stream ? "message/stream" : "message/send")
                                : (stream ? "SendStreamingMessage" : "SendMessage");
    std::string body = rpc ? json::serialize(json::object{{"jsonrpc", "2.0"},
                                                          {"id", new_uuid()},
                                                          {"method", method},
                                                          {"params", std::move(params)}})
                           : json::serialize(params);
    net::HttpRequest req = impl_->request(at, rpc ? "" : (stream ? "/message:stream" : "/message:send"),
                                          std::move(body), stream, credential);

    Receiver receiver(ctx, out);
    if (!request.message.task_id.empty())
        for (const Event& e : session.events) {
            const json::value* task = e.custom_metadata.if_contains("a2a:task_id");
            const json::value* artifact = e.custom_metadata.if_contains("a2a:artifact_id");
            if (e.author == name() && task && *task == request.message.task_id.c_str() && artifact &&
                artifact->is_string())
                receiver.seen_artifacts.emplace(artifact->get_string());
        }
    try {
        net::HttpResponse res = co_await impl_->http->send(std::move(req));
        if (!res.ok()) {
            const std::string text = co_await res.read_all(std::size_t{1} << 20);
            if ((res.status() == 401 || res.status() == 403) && at.auth) {
                // Refused for want of a credential, or the one kept: the person is asked (again).
                const std::string status = std::to_string(res.status());
                Event question = credential_question(
                    ctx, *at.auth, name(),
                    kept ? "refused the credential kept for it (HTTP " + status + ": " + error_text(text) + ")"
                         : "asks for a credential (HTTP " + status + ")");
                co_await out.emit(std::move(question));
                co_return;
            }
            throw Error(errc::unavailable, "the remote agent '" + name() + "' refused the message (HTTP " +
                                               std::to_string(res.status()) + "): " + error_text(text));
        }
        if (!stream || res.header("content-type").substr(0, 17) != "text/event-stream") {
            const std::string text = co_await res.read_all(impl_->options.max_update_bytes);
            StreamResponse answer = update_of(text, rpc, at.v03, name());
            co_await receiver.on(std::move(answer), false);
        } else {
            net::SseReader reader(std::move(res), impl_->options.max_update_bytes);
            std::vector<net::SseEvent> events;
            bool first = true;
            auto last_update = adk::Clock::now();
            for (;;) {
                const bool more = co_await reader.read(events);
                for (net::SseEvent& e : events) {
                    if (e.data.find_first_not_of(" \t\r\n") == std::string::npos)
                        continue;
                    StreamResponse update = update_of(e.data, rpc, at.v03, name());
                    co_await receiver.on(std::move(update), first);
                    first = false;
                    last_update = adk::Clock::now();
                }
                events.clear();
                if (!more)
                    break;
                // Keep-alives alone do not hold the invocation.
                const auto quiet = adk::Clock::now() - last_update;
                if (quiet >= impl_->options.update_timeout)
                    throw Error(errc::timed_out,
                                "the remote agent '" + name() + "' sent only keep-alives for " +
                                    std::to_string(std::chrono::duration_cast<std::chrono::seconds>(quiet).count()) +
                                    " s, no update (RemoteAgentOptions::update_timeout): its task is cancelled");
            }
        }
        co_await receiver.finish();
    } catch (...) {
        // Stopped (cancelled, or broken) while the remote task goes on: cancel it too.
        if (!receiver.task_id.empty() && !is_terminal(receiver.state) && !is_interrupted(receiver.state))
            asio::co_spawn(ctx.executor(), Impl::cancel_remote(impl_, at, receiver.task_id, credential),
                           asio::detached);
        throw;
    }
}

}  // namespace adk::a2a
