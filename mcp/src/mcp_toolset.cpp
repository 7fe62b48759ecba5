#include <adk/mcp/mcp_toolset.hpp>

#include <adk/auth/credential_service.hpp>
#include <adk/core/async_mutex.hpp>
#include <adk/core/json_limits.hpp>
#include <adk/core/log.hpp>
#include <adk/core/strands.hpp>
#include <adk/models/model.hpp>
#include <adk/net/url.hpp>
#include <adk/tools/json_schema.hpp>

#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_to.hpp>

#include <algorithm>
#include <deque>
#include <mutex>
#include <set>
#include <variant>

namespace adk::mcp {

namespace {

// Where a function response sits inside a stored event (event, content, parts, part, functionResponse,
// response): what a tool returns may nest this much less than a stored document.
constexpr std::size_t response_depth_in_event = 6;
constexpr int max_list_pages = 1000;
constexpr std::size_t max_user_connections = 256;  // OAuthOptions::per_user: users holding a connection at once

// What the toolset answers of the server's requests.
class Served {
public:
    RequestHandler elicitation;
    std::vector<Root> roots;
    std::shared_ptr<Model> sampling;
};

// The handler's answer to elicitation/create, with the requested schema's defaults in what an acceptance left out.
asio::awaitable<json::value> answer_elicitation(const RequestHandler& handler, const jsonrpc::Request& request)
{
    json::value result = co_await handler(request);
    json::object* r = result.if_object();
    const json::value* action = r ? r->if_contains("action") : nullptr;
    if (!action || !action->is_string() || action->get_string() != "accept")
        co_return result;
    const json::object* params = request.params ? request.params->if_object() : nullptr;
    const json::value* schema = params ? params->if_contains("requestedSchema") : nullptr;
    json::value& content = (*r)["content"];
    if (content.is_null())
        content = json::object();
    if (schema && content.is_object())
        apply_elicitation_defaults(*schema, content.get_object());
    co_return result;
}

[[noreturn]] void refuse_sampling(std::string why)
{
    throw RpcFailure("", jsonrpc::RpcError(jsonrpc::code::invalid_params, "sampling/createMessage: " + std::move(why)));
}

// sampling/createMessage answered by the model: its text messages, system prompt and limits as an LlmRequest.
asio::awaitable<json::value> answer_sampling(const std::shared_ptr<Model>& model, const jsonrpc::Request& request)
{
    const json::object* params = request.params ? request.params->if_object() : nullptr;
    const json::value* messages = params ? params->if_contains("messages") : nullptr;
    if (!messages || !messages->is_array() || messages->get_array().empty())
        refuse_sampling("messages must be a non-empty array");
    LlmRequest llm;
    for (const json::value& m : messages->get_array()) {
        const json::object* message = m.if_object();
        const json::value* role = message ? message->if_contains("role") : nullptr;
        const json::value* content = message ? message->if_contains("content") : nullptr;
        if (!role || !role->is_string() || !content)
            refuse_sampling("each message needs a role and content");
        std::vector<Part> parts;
        const json::array blocks = content->is_array() ? content->get_array() : json::array{*content};
        for (const json::value& block : blocks) {
            const json::object* b = block.if_object();
            const json::value* type = b ? b->if_contains("type") : nullptr;
            const json::value* text = b ? b->if_contains("text") : nullptr;
            if (!type || !type->is_string() || type->get_string() != "text" || !text || !text->is_string())
                refuse_sampling("this client samples text messages only");
            parts.push_back(Part::from_text(std::string(text->get_string())));
        }
        llm.contents.emplace_back(role->get_string() == "assistant" ? "model" : "user", std::move(parts));
    }
    if (const json::value* system = params->if_contains("systemPrompt"); system && system->is_string())
        llm.append_instruction(std::string(system->get_string()));
    if (const json::value* max = params->if_contains("maxTokens"); max && max->is_int64())
        llm.config.max_output_tokens = static_cast<int>(std::clamp<std::int64_t>(max->get_int64(), 1, 1 << 20));
    if (const json::value* t = params->if_contains("temperature"); t && t->is_number())
        llm.config.temperature = t->to_number<double>();
    if (const json::value* stop = params->if_contains("stopSequences"); stop && stop->is_array())
        for (const json::value& sequence : stop->get_array())
            if (sequence.is_string())
                llm.config.stop_sequences.emplace_back(sequence.get_string());
    auto stream = co_await model->generate(std::move(llm), false);
    std::string text;
    while (auto response = co_await stream.next()) {
        if (response->error_message)
            throw RpcFailure("", jsonrpc::RpcError(jsonrpc::code::internal_error,
                                                   "the model failed: " + *response->error_message));
        if (response->content)
            for (const Part& p : response->content->parts)
                if (p.text && !p.thought)
                    text += *p.text;
    }
    co_return json::object{{"role", "assistant"},
                           {"content", json::object{{"type", "text"}, {"text", text}}},
                           {"model", std::string(model->name())},
                           {"stopReason", "endTurn"}};
}

asio::awaitable<json::value> serve(std::shared_ptr<const Served> served, jsonrpc::Request request)
{
    if (request.method == "elicitation/create" && served->elicitation)
        co_return co_await answer_elicitation(served->elicitation, request);
    if (request.method == "sampling/createMessage" && served->sampling)
        co_return co_await answer_sampling(served->sampling, request);
    if (request.method == "roots/list" && !served->roots.empty()) {
        json::array roots;
        for (const Root& r : served->roots) {
            json::object root{{"uri", r.uri}};
            if (!r.name.empty())
                root["name"] = r.name;
            roots.push_back(std::move(root));
        }
        co_return json::object{{"roots", std::move(roots)}};
    }
    throw RpcFailure("", jsonrpc::RpcError(jsonrpc::code::method_not_found, "Method not found: " + request.method));
}

std::string default_name(const StdioServerParams& stdio)
{
    const auto slash = stdio.command.rfind('/');
    std::string base = slash == std::string::npos ? stdio.command : stdio.command.substr(slash + 1);
    return base.empty() ? "mcp" : base;
}

}  // namespace

McpToolsetOptions::McpToolsetOptions(StdioServerParams stdio_) : name(default_name(stdio_)), stdio(std::move(stdio_))
{
}

McpToolsetOptions::McpToolsetOptions(HttpServerParams http_) : http(std::move(http_))
{
    try {
        name = net::parse_url(http->url).host;
    } catch (const Error&) {
        name = "mcp";  // the URL is refused, with what is wrong, when the toolset opens
    }
}

// One connection to the server and its starts: the toolset's, or one user's (OAuthOptions::per_user).
class ConnectionSlot {
public:
    std::shared_ptr<Connection> current;  // under State::mutex
    AsyncMutex gate;                      // one start (or close) at a time
    std::string asking;                   // the authorization URL its user must visit; under State::mutex
    std::uint64_t last_used = 0;          // under State::mutex
};

// What the toolset and its tools share: the connections in use, started again when the server ended them.
class McpToolset::State {
public:
    explicit State(McpToolsetOptions o) : options(std::move(o)) {}

    McpToolsetOptions options;
    std::mutex mutex;
    std::shared_ptr<ConnectionSlot> shared = std::make_shared<ConnectionSlot>();
    std::map<std::string, std::shared_ptr<ConnectionSlot>, std::less<>> users;  // per_user: by user id
    std::uint64_t uses = 0;
    McpToolset* owner = nullptr;  // while the toolset lives (for list changes)
    const std::shared_ptr<OAuthServerCache> oauth_cache = std::make_shared<OAuthServerCache>();  // per_user

    bool per_user() const
    {
        return options.http && options.http->oauth && options.http->oauth->per_user && !options.http->oauth->authorize;
    }

    // The slot of the invocation's user (per_user), else the toolset's. At most max_user_connections users keep
    // a connection: the one unused longest is closed for a new one.
    asio::awaitable<std::shared_ptr<ConnectionSlot>> slot_for(const InvocationContext* ctx)
    {
        if (!per_user())
            co_return shared;
        if (!ctx)
            throw Error(errc::invalid_argument, "the MCP toolset " + options.name + " connects per user "
                                                "(OAuthOptions::per_user): use it through an agent's invocation");
        std::shared_ptr<ConnectionSlot> evicted;
        std::shared_ptr<ConnectionSlot> slot;
        {
            std::lock_guard lock(mutex);
            auto& held = users[ctx->user_id()];
            if (!held)
                held = std::make_shared<ConnectionSlot>();
            held->last_used = ++uses;
            slot = held;
            if (users.size() > max_user_connections) {
                auto oldest = std::min_element(users.begin(), users.end(), [](const auto& a, const auto& b) {
                    return a.second->last_used < b.second->last_used;
                });
                evicted = oldest->second;
                users.erase(oldest);
            }
        }
        if (evicted)
            co_await close_slot(*evicted);
        co_return slot;
    }

    std::shared_ptr<Connection> alive_connection(ConnectionSlot& slot)
    {
        std::lock_guard lock(mutex);
        return slot.current && slot.current->alive() ? slot.current : nullptr;
    }

    // What `work` gives for the invocation's user; or, when it failed because the user must authorize first
    // (per_user), the auth config to ask them for. Other failures are thrown.
    template <class T>
    asio::awaitable<std::variant<T, json::object>> as_user(const InvocationContext& ctx, asio::awaitable<T> work)
    {
        std::exception_ptr failure;
        try {
            T value = co_await std::move(work);
            co_return std::variant<T, json::object>(std::in_place_index<0>, std::move(value));
        } catch (const Error&) {
            failure = std::current_exception();
        }
        std::optional<json::object> asked = co_await asked_of(ctx);
        if (!asked)
            std::rethrow_exception(failure);
        co_return std::variant<T, json::object>(std::in_place_index<1>, std::move(*asked));
    }

    // The authorization the invocation's user must give through their client, taken from their slot: an auth
    // config to ask for (adk_request_credential), or nothing.
    asio::awaitable<std::optional<json::object>> asked_of(const InvocationContext& ctx)
    {
        if (!per_user())
            co_return std::nullopt;
        const std::shared_ptr<ConnectionSlot> slot = co_await slot_for(&ctx);
        std::lock_guard lock(mutex);
        if (slot->asking.empty())
            co_return std::nullopt;
        co_return authorization_request(options.http->url, std::exchange(slot->asking, std::string()));
    }

    asio::awaitable<std::shared_ptr<Connection>> connection(const std::shared_ptr<State>& self,
                                                            const InvocationContext* ctx = nullptr)
    {
        const std::shared_ptr<ConnectionSlot> held = co_await slot_for(ctx);
        ConnectionSlot& slot = *held;
        if (auto c = alive_connection(slot))
            co_return c;
        const asio::any_io_executor executor = co_await asio::this_coro::executor;
        co_await slot.gate.lock();
        AsyncLockGuard unlock(slot.gate);
        if (auto c = alive_connection(slot))
            co_return c;
        std::shared_ptr<Connection> dead;
        {
            std::lock_guard lock(mutex);
            dead = std::exchange(slot.current, nullptr);
        }
        if (dead)
            co_await dead->close();  // reaps the process that ended
        const asio::any_io_executor strand = new_strand(executor);
        std::unique_ptr<Transport> transport;
        if (options.http && per_user())
            transport = std::make_unique<HttpTransport>(strand, user_params(self, held, *ctx));
        else if (options.http)
            transport = std::make_unique<HttpTransport>(strand, *options.http);
        else if (options.stdio)
            transport = std::make_unique<StdioTransport>(strand, *options.stdio);
        else
            throw Error(errc::invalid_argument, "the MCP toolset " + options.name + " names no server (stdio or http)");
        auto c = Connection::create(strand, std::move(transport), connection_options(self));
        std::exception_ptr failure;
        try {
            co_await c->start();
        } catch (...) {
            failure = std::current_exception();
        }
        if (failure) {
            co_await c->close();
            std::rethrow_exception(failure);
        }
        std::lock_guard lock(mutex);
        slot.current = c;
        co_return c;
    }

    asio::awaitable<void> close()
    {
        std::vector<std::shared_ptr<ConnectionSlot>> slots;
        {
            std::lock_guard lock(mutex);
            for (auto& [user, slot] : users)
                slots.push_back(slot);
            users.clear();
        }
        co_await close_slot(*shared);
        for (const auto& slot : slots)
            co_await close_slot(*slot);
    }

private:
    asio::awaitable<void> close_slot(ConnectionSlot& slot)
    {
        co_await slot.gate.lock();
        AsyncLockGuard unlock(slot.gate);
        std::shared_ptr<Connection> c;
        {
            std::lock_guard lock(mutex);
            c = std::exchange(slot.current, nullptr);
        }
        if (c)
            co_await c->close();
    }

    // The server as one user reaches it: their tokens in the Runner's CredentialService, and the person's step
    // through their client. The handler gives back the client's answer when it is in (kept by the Runner under
    // the asked auth config's key); until then it notes what to ask and fails the start.
    HttpServerParams user_params(const std::shared_ptr<State>& self, const std::shared_ptr<ConnectionSlot>& slot,
                                 const InvocationContext& ctx)
    {
        std::shared_ptr<CredentialService> credentials = ctx.credential_service();
        if (!credentials)
            throw Error(errc::invalid_argument, "the MCP toolset " + options.name + " keeps each user's OAuth tokens "
                                                "in the Runner's credential service: set RunnerOptions::credential_service "
                                                "(e.g. std::make_shared<adk::InMemoryCredentialService>())");
        HttpServerParams params = *options.http;
        params.oauth->tokens = credential_token_store(credentials, ctx.app_name(), ctx.user_id());
        if (!params.oauth->cache)  // the server's metadata and registered client, shared by all its users
            params.oauth->cache = oauth_cache;
        std::weak_ptr<State> weak = self;
        params.oauth->authorize = [weak, slot = std::weak_ptr<ConnectionSlot>(slot), credentials, app = ctx.app_name(), user = ctx.user_id(),
                                   server = options.http->url](std::string url) -> asio::awaitable<std::string> {
            CredentialKey key(app, user, authorization_answer_key(server));
            std::optional<json::object> answered = co_await credentials->load_credential(std::move(key));
            std::optional<std::string> back = answered ? authorization_answer(*answered) : std::nullopt;
            if (back && query_parameters(*back)["state"] == query_parameters(url)["state"])
                co_return *back;
            auto s = weak.lock();
            auto held = slot.lock();
            if (s && held) {
                std::lock_guard lock(s->mutex);
                held->asking = url;
            }
            throw Error(errc::unavailable, "the MCP server at " + net::redact_url(server) + " waits for user " + user +
                                               " to authorize this app through their client");
        };
        return params;
    }

    ConnectionOptions connection_options(const std::shared_ptr<State>& self) const
    {
        ConnectionOptions c;
        c.request_timeout = options.timeout;
        c.initialize_timeout = options.initialize_timeout;
        auto served = std::make_shared<Served>();
        served->elicitation = options.on_elicitation;
        served->roots = options.roots;
        served->sampling = options.sampling_model;
        c.session.capabilities.elicitation = bool(served->elicitation);
        c.session.capabilities.roots = !served->roots.empty();
        c.session.capabilities.sampling = bool(served->sampling);
        c.handle_request = [served = std::shared_ptr<const Served>(served)](const jsonrpc::Request& request) {
            return serve(served, request);
        };
        std::weak_ptr<State> weak = self;
        c.on_tools_changed = [weak] {
            if (auto s = weak.lock()) {
                std::lock_guard lock(s->mutex);
                if (s->owner)
                    s->owner->tools_changed();
            }
        };
        return c;
    }
};

namespace {

// One tool of the server's: tools/call through the toolset's connection.
class McpTool final : public Tool {
public:
    McpTool(std::shared_ptr<McpToolset::State> state, std::string name, std::string description,
            json::value input_schema, json::value output_schema)
        : Tool(std::move(name), std::move(description)), state_(std::move(state)),
          input_schema_(std::move(input_schema)), output_schema_(std::move(output_schema))
    {
    }

    std::optional<FunctionDeclaration> declaration() const override
    {
        return FunctionDeclaration(name(), description(), input_schema_);
    }

    asio::awaitable<json::value> run(ToolContext& ctx, json::object args) override
    {
        asio::awaitable<json::value> work = call(ctx, std::move(args));
        std::variant<json::value, json::object> done = co_await state_->as_user(ctx.invocation_context(), std::move(work));
        if (done.index() == 1) {
            // A user whose authorization is gone (per_user) is asked again; the call runs once it is given.
            ctx.request_credential(std::move(std::get<1>(done)));
            co_return nullptr;
        }
        ToolResponse mapped = tool_response(name(), std::get<0>(done), output_schema_);
        for (Part& part : mapped.media)
            ctx.add_response_part(std::move(part));
        co_return std::move(mapped.response);
    }

private:
    asio::awaitable<json::value> call(ToolContext& ctx, json::object args)
    {
        std::shared_ptr<Connection> c = co_await state_->connection(state_, &ctx.invocation_context());
        CallOptions options;
        options.timeout = state_->options.timeout;
        options.on_progress = [state = state_, tool = name(), id = ctx.function_call_id()](const event::Progress& p) {
            if (log_enabled(LogLevel::info))
                log(LogLevel::info, "MCP tool " + tool + ": " + std::to_string(p.progress) +
                                        (p.total ? " of " + std::to_string(*p.total) : "") +
                                        (p.message.empty() ? "" : " (" + p.message + ")"));
            if (state->options.on_progress)
                state->options.on_progress(ToolProgress{tool, id, p.progress, p.total, p.message});
        };
        json::object params{{"name", name()}, {"arguments", std::move(args)}};
        // The trace goes on in the server (the MCP revision 2026-07-28's _meta keys, on every transport): the
        // tool's execute_tool span is the parent of what the server does.
        const telemetry::SpanContext& span = ctx.invocation_context().span_context();
        if (span.valid()) {
            json::object meta{{"traceparent", span.traceparent()}};
            if (!span.trace_state.empty())
                meta["tracestate"] = span.trace_state;
            params["_meta"] = std::move(meta);
        }
        co_return co_await c->call("tools/call", std::move(params), std::move(options));
    }

    std::shared_ptr<McpToolset::State> state_;
    json::value input_schema_;
    json::value output_schema_;
};

// Moves the bytes of an image or audio item, or of an embedded resource's blob, into `media` as an inline data
// part, and leaves a note in their place. Bytes that cannot be read leave an error there instead.
void take_media(json::object& item, std::vector<Part>& media)
{
    const json::value* type = item.if_contains("type");
    if (!type || !type->is_string())
        return;
    const bool resource = type->get_string() == "resource";
    if (!resource && type->get_string() != "image" && type->get_string() != "audio")
        return;
    json::value* holder = resource ? item.if_contains("resource") : nullptr;
    json::object* fields = resource ? (holder ? holder->if_object() : nullptr) : &item;
    const char* bytes_key = resource ? "blob" : "data";
    json::value* bytes = fields ? fields->if_contains(bytes_key) : nullptr;
    if (!bytes)
        return;  // a text resource, or nothing to move
    const json::value* mime_value = fields->if_contains("mimeType");
    const std::string mime = mime_value && mime_value->is_string() ? std::string(mime_value->get_string()) : "";
    try {
        if (!bytes->is_string() || mime.empty())
            throw Error(errc::bad_response, std::string("it needs a base64 string `") + bytes_key +
                                                "` and a `mimeType`");
        const json::value blob{{"inlineData", {{"mimeType", mime}, {"data", *bytes}}}};
        media.push_back(json::value_to<Part>(blob));
        fields->erase(bytes_key);
        (*fields)["note"] = "the " + mime + " content follows this response";
    } catch (const Error& e) {
        fields->erase(bytes_key);
        (*fields)["error"] = "the server sent content that could not be read: " + e.message();
    }
}

}  // namespace

void apply_elicitation_defaults(const json::value& requested_schema, json::object& content)
{
    const json::object* schema = requested_schema.if_object();
    const json::value* properties = schema ? schema->if_contains("properties") : nullptr;
    if (!properties || !properties->is_object())
        return;
    for (const auto& [field, property] : properties->get_object()) {
        const json::object* p = property.if_object();
        const json::value* fallback = p ? p->if_contains("default") : nullptr;
        if (fallback && !fallback->is_null() && !content.contains(field))
            content[field] = *fallback;
    }
}

ToolResponse tool_response(const std::string& tool, const json::value& result, const json::value& output_schema)
{
    const json::object* r = result.if_object();
    if (!r)
        throw Error(errc::bad_response, "the MCP tool " + tool + " answered with " + json::serialize(result).substr(0, 200) +
                                            ", not a result object");
    const json::value* is_error = r->if_contains("isError");
    if (is_error && is_error->is_bool() && is_error->get_bool()) {
        std::string text;
        if (const json::value* content = r->if_contains("content"); content && content->is_array())
            for (const json::value& item : content->get_array())
                if (const json::object* o = item.if_object(); o && o->contains("text") && o->at("text").is_string())
                    text += (text.empty() ? "" : "\n") + std::string(o->at("text").get_string());
        throw Error(errc::agent_failed, text.empty() ? "the MCP tool " + tool + " reported an error" : text);
    }
    if (const json::value* structured = r->if_contains("structuredContent"); structured && output_schema.is_object())
        if (auto mismatch = schema_mismatch(output_schema, *structured))
            throw Error(errc::bad_response, "the MCP tool " + tool + " returned structuredContent that does not fit its "
                                            "outputSchema: " + *mismatch);
    try {
        check_json(result, "the result of the MCP tool " + tool, max_json_depth - response_depth_in_event);
    } catch (const Error& e) {
        throw Error(errc::bad_response, e.message());
    }
    json::object out = *r;
    out.erase("_meta");
    std::vector<Part> media;
    if (json::value* content = out.if_contains("content"); content && content->is_array())
        for (json::value& item : content->get_array())
            if (json::object* o = item.if_object())
                take_media(*o, media);
    return ToolResponse(std::move(out), std::move(media));
}

std::shared_ptr<McpToolset> McpToolset::create(McpToolsetOptions options)
{
    return std::make_shared<McpToolset>(std::move(options));
}

McpToolset::McpToolset(McpToolsetOptions options)
    : Toolset(options.name, options.filter,
              options.http && options.http->oauth && options.http->oauth->per_user && !options.http->oauth->authorize
                  ? ToolListing::per_invocation  // each user lists on their own connection
                  : ToolListing::cached),
      options_(options), state_(std::make_shared<State>(std::move(options)))
{
    state_->owner = this;
}

McpToolset::~McpToolset()
{
    std::lock_guard lock(state_->mutex);
    state_->owner = nullptr;
    // A toolset destroyed unclosed: the connection's own destructor ends the server (adk/mcp/connection.hpp).
}

asio::awaitable<std::shared_ptr<Connection>> McpToolset::connection()
{
    co_return co_await state_->connection(state_);
}

asio::awaitable<void> McpToolset::open()
{
    if (!state_->per_user())
        co_await state_->connection(state_);  // per user: each user's connection opens with their first listing
}

asio::awaitable<std::vector<std::shared_ptr<Tool>>> McpToolset::list_tools(const ReadonlyContext& ctx)
{
    asio::awaitable<std::vector<std::shared_ptr<Tool>>> work = list_all(ctx);
    std::variant<std::vector<std::shared_ptr<Tool>>, json::object> done =
        co_await state_->as_user(ctx.invocation_context(), std::move(work));
    if (done.index() == 1)
        throw CredentialRequired(std::move(std::get<1>(done)), "the MCP toolset " + name() + " needs user " +
                                                                   ctx.invocation_context().user_id() + " to authorize it");
    co_return std::move(std::get<0>(done));
}

asio::awaitable<std::vector<std::shared_ptr<Tool>>> McpToolset::list_all(const ReadonlyContext& ctx)
{
    std::shared_ptr<Connection> c = co_await state_->connection(state_, &ctx.invocation_context());
    std::vector<std::shared_ptr<Tool>> tools;
    std::set<std::string> cursors;
    std::optional<std::string> cursor;
    std::size_t listed_bytes = 0;
    for (int page = 0;; ++page) {
        if (page == max_list_pages)
            throw Error(errc::bad_response, "the " + c->name() + " gave more than " + std::to_string(max_list_pages) +
                                                " pages of tools");
        json::object params;
        if (cursor)
            params["cursor"] = *cursor;
        json::value listed = co_await c->call("tools/list", std::move(params));
        const json::value* list = listed.is_object() ? listed.get_object().if_contains("tools") : nullptr;
        if (!list || !list->is_array())
            throw Error(errc::bad_response, "the " + c->name() + " answered tools/list without a tools array");
        for (const json::value& t : list->get_array()) {
            const json::object* o = t.if_object();
            const json::value* name = o ? o->if_contains("name") : nullptr;
            if (!name || !name->is_string() || name->get_string().empty()) {
                log(LogLevel::warning, "the " + c->name() + " listed a tool without a name; it is left out");
                continue;
            }
            const json::value* description = o->if_contains("description");
            const json::value* input = o->if_contains("inputSchema");
            const json::value* output = o->if_contains("outputSchema");
            listed_bytes += name->get_string().size() +
                            (description && description->is_string() ? description->get_string().size() : 0) +
                            (input && input->is_object() ? json::serialize(*input).size() : 0) +
                            (output && output->is_object() ? json::serialize(*output).size() : 0);
            if (listed_bytes > options_.max_tool_list_bytes)
                throw Error(errc::too_large, "the " + c->name() + " listed tools of more than " +
                                                 std::to_string(options_.max_tool_list_bytes) +
                                                 " bytes (names, descriptions, schemas), which the model would be "
                                                 "sent on every call: raise McpToolsetOptions::max_tool_list_bytes "
                                                 "if it is meant");
            tools.push_back(std::make_shared<McpTool>(
                state_, std::string(name->get_string()),
                description && description->is_string() ? std::string(description->get_string()) : "",
                input && input->is_object() ? *input : json::value(), output && output->is_object() ? *output : json::value()));
        }
        const json::value* next = listed.get_object().if_contains("nextCursor");
        if (!next || !next->is_string())
            break;
        cursor = std::string(next->get_string());
        if (!cursors.insert(*cursor).second)
            throw Error(errc::bad_response, "the " + c->name() + " gave the tools/list cursor " + *cursor + " twice");
    }
    co_return tools;
}

asio::awaitable<void> McpToolset::shutdown()
{
    co_await state_->close();
}

}  // namespace adk::mcp
