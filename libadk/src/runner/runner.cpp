#include <adk/core/log.hpp>
#include <adk/core/error.hpp>
#include <adk/core/ids.hpp>
#include <adk/agents/llm_agent.hpp>
#include <adk/artifacts/artifact_service.hpp>
#include <adk/core/strands.hpp>
#include <adk/plugins/plugin.hpp>
#include <adk/runner/runner.hpp>
#include <adk/sessions/session_service.hpp>
#include <adk/sessions/state.hpp>

#include "../agents/invocation.hpp"
#include "../compaction/compactor.hpp"
#include "../plugins/plugin_manager.hpp"
#include "answers.hpp"
#include "../telemetry/span_errors.hpp"

#include <adk/auth/credential_service.hpp>

#include <boost/asio/this_coro.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <mutex>
#include <utility>

namespace adk {

namespace detail {

// The invocations running now, by id, so that cancel() can reach them from any thread.
class RunnerRegistry {
public:
    struct Entry {
        Canceller canceller;
        std::weak_ptr<Invocation> invocation;
        std::optional<std::string> cancelled;  // cancel() came before the canceller: its message
    };

    void add(const std::string& id, Entry entry)
    {
        std::lock_guard lock(mutex_);
        running_.insert_or_assign(id, std::move(entry));
    }
    void remove(const std::string& id)
    {
        std::lock_guard lock(mutex_);
        running_.erase(id);
    }
    // Set after the stream exists; skipped when the invocation already ended and was removed. A cancel()
    // that came in between is carried out now.
    void set_canceller(const std::string& id, Canceller canceller)
    {
        std::optional<std::string> cancelled;
        {
            std::lock_guard lock(mutex_);
            auto it = running_.find(id);
            if (it == running_.end())
                return;
            it->second.canceller = canceller;
            cancelled = it->second.cancelled;
        }
        if (cancelled)
            canceller.cancel(std::move(*cancelled));
    }
    // Marks the invocation cancelled and returns its canceller (which does nothing before set_canceller: the
    // message is kept for it then). False when no invocation with that id runs.
    bool cancel(std::string_view id, std::string message)
    {
        Canceller canceller;
        {
            std::lock_guard lock(mutex_);
            auto it = running_.find(id);
            if (it == running_.end())
                return false;
            if (auto inv = it->second.invocation.lock())
                inv->cancelled.store(true);
            it->second.cancelled = message;
            canceller = it->second.canceller;
        }
        canceller.cancel(std::move(message));
        return true;
    }

private:
    mutable std::mutex mutex_;
    std::map<std::string, Entry, std::less<>> running_;
};

}  // namespace detail

namespace {

// ADK's rule: an agent keeps the conversation only if it and every agent above it are LlmAgents that may
// transfer back to their parents.
bool transferable_across_tree(const Agent* agent)
{
    for (; agent; agent = agent->parent()) {
        auto* llm = dynamic_cast<const LlmAgent*>(agent);
        if (!llm || llm->config().disallow_transfer_to_parent)
            return false;
    }
    return true;
}

// Which agent the next user message goes to, as ADK's Runner decides: the agent whose function call a
// function response answers; else the agent that answered last, when the conversation may stay with it;
// else the root.
std::shared_ptr<Agent> agent_to_run(const Session& session, const std::shared_ptr<Agent>& root)
{
    const auto& events = session.events;
    if (!events.empty() && !events.back().function_responses().empty()) {
        std::string id = events.back().function_responses().front().id;
        for (auto it = events.rbegin() + 1; it != events.rend(); ++it)
            for (const auto& call : it->function_calls())
                if (call.id == id)
                    if (auto agent = root->find_agent(it->author))
                        return agent;
    }
    for (auto it = events.rbegin(); it != events.rend(); ++it) {
        if (it->author == "user" || it->actions.agent_state || it->actions.end_of_agent)
            continue;
        if (it->author == root->name())
            return root;
        auto agent = root->find_sub_agent(it->author);
        if (agent && transferable_across_tree(agent.get()))
            return agent;
    }
    return root;
}

// Before-run plugins: the first that answers does so in the agent's place (ADK writes it as the model's).
// A coroutine of its own, so that the invocation's producer frame (alive for the whole run) holds no Event.
asio::awaitable<bool> answered_by_plugin(InvocationContext& ctx, EventSink& out)
{
    const detail::PluginManager plugins(ctx.plugins());
    std::optional<Content> answer = co_await plugins.before_run(ctx);
    if (!answer)
        co_return false;
    Event early("model", std::move(*answer));
    co_await out.emit(std::move(early));
    co_return true;
}

// The artifact name for an uploaded blob: its display name when that is a plain file name (letters, digits,
// '.', '-', '_' and spaces, not starting with '.', at most 255 bytes); otherwise "artifact_<invocation
// id>_<part index>", as ADK Python names it.
std::string upload_name(const Blob& blob, const std::string& invocation_id, std::size_t index)
{
    if (blob.display_name && !blob.display_name->empty() && blob.display_name->size() <= 255 &&
        blob.display_name->front() != '.') {
        const std::string& name = *blob.display_name;
        bool plain = std::all_of(name.begin(), name.end(), [](char c) {
            return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                   c == '-' || c == '_' || c == ' ';
        });
        if (plain)
            return name;
    }
    return "artifact_" + invocation_id + "_" + std::to_string(index);
}

// RunConfig::save_input_blobs_as_artifacts: each inline blob of the user's message is saved as an artifact
// of the session, and replaced in the message by a line that names it. Returns the versions saved, for the
// user event's artifactDelta.
asio::awaitable<std::map<std::string, std::int64_t>> save_input_blobs(const InvocationContext& ctx, Content& message)
{
    if (!ctx.artifact_service())
        throw Error(errc::invalid_argument,
                    "RunConfig::save_input_blobs_as_artifacts is set but this Runner has no artifact service: set "
                    "RunnerOptions::artifact_service (e.g. std::make_shared<adk::InMemoryArtifactService>())");
    std::map<std::string, std::int64_t> saved;
    for (std::size_t i = 0; i < message.parts.size(); ++i) {
        Part& part = message.parts[i];
        if (!part.inline_data)
            continue;
        std::string name = upload_name(*part.inline_data, ctx.invocation_id(), i);
        ArtifactKey key(ctx.app_name(), ctx.user_id(), ctx.session_id(), name);
        Part blob = std::move(part);
        saved[name] = co_await ctx.artifact_service()->save_artifact(std::move(key), std::move(blob));
        part = Part::from_text("Uploaded file: " + name + ". It is saved into artifacts");
    }
    co_return saved;
}

// A session read once its turn is ours (SessionService::take_turn), so that it holds what the invocation before
// left; the turn is held until it is released or destroyed.
class SessionInTurn {
public:
    SessionInTurn(SessionTurn turn_, Session session_) : turn(std::move(turn_)), session(std::move(session_)) {}
    SessionTurn turn;
    Session session;
};

asio::awaitable<SessionInTurn> read_in_turn(SessionService& sessions, const SessionKey& key)
{
    SessionKey turn_key = key;
    SessionTurn turn = co_await sessions.take_turn(std::move(turn_key));
    GetSessionRequest read(key);
    std::optional<Session> session = co_await sessions.get_session(std::move(read));
    if (!session)
        throw Error(errc::not_found, key.describe() + " does not exist: create it first with create_session()");
    co_return SessionInTurn(std::move(turn), std::move(*session));
}

// Whether the invocation ended because it was stopped (Runner::cancel, Stream::cancel, its consumer left),
// not because something failed.
bool interrupted(std::exception_ptr failure, const InvocationContext& ctx)
{
    if (ctx.cancelled())
        return true;
    try {
        std::rethrow_exception(failure);
    } catch (const boost::system::system_error& e) {
        return e.code() == errc::cancelled || e.code() == errc::stream_closed ||
               e.code() == asio::error::operation_aborted;
    } catch (...) {
    }
    return false;
}

// An interrupted invocation ends with an event that says so, stored in the session (nobody reads the stream
// any more): the session shows where it stopped, and a resumable app can resume it. A failure to store it
// is logged: the interruption itself is what the caller hears of.
asio::awaitable<void> record_interruption(InvocationContext& ctx, const Agent& agent)
{
    Event event;
    event.id = new_uuid();
    event.invocation_id = ctx.invocation_id();
    event.author = agent.name();
    event.timestamp = now_seconds();
    event.interrupted = true;
    event.error_code = "INTERRUPTED";
    event.error_message = "invocation " + ctx.invocation_id() + " was interrupted before it finished" +
                          (ctx.is_resumable() ? "; resume it with its invocation id" : "");
    try {
        co_await ctx.invocation()->commit(event);
    } catch (const std::exception& e) {
        log(LogLevel::warning,
            "the interruption of invocation " + ctx.invocation_id() + " could not be stored: " + e.what(),
            ctx.span_context());
    }
}

// The model that summarizes when the compaction config names no summarizer: the root's, else the first
// LlmAgent's of the tree (depth first), as ADK takes the root agent's canonical model.
std::shared_ptr<Model> first_model(const Agent& agent)
{
    if (auto* llm = dynamic_cast<const LlmAgent*>(&agent); llm && llm->config().model)
        return llm->config().model;
    for (const auto& sub : agent.sub_agents())
        if (auto model = first_model(*sub))
            return model;
    return nullptr;
}

std::shared_ptr<detail::Compactor> make_compactor(const RunnerOptions& options)
{
    if (!options.compaction)
        return nullptr;
    EventsCompactionConfig config = *options.compaction;
    if (config.compaction_interval < 0 || config.overlap_size < 0 || config.event_retention_size < 0)
        throw Error(errc::invalid_argument, "RunnerOptions::compaction: compaction_interval, overlap_size and "
                                            "event_retention_size cannot be negative");
    if (config.token_threshold && *config.token_threshold <= 0)
        throw Error(errc::invalid_argument, "RunnerOptions::compaction: token_threshold must be above 0");
    if (config.compaction_interval == 0 && !config.token_threshold)
        throw Error(errc::invalid_argument, "RunnerOptions::compaction has no trigger: set compaction_interval (every "
                                            "N invocations), token_threshold (prompt tokens), or both");
    if (!config.summarizer) {
        auto model = first_model(*options.agent);
        if (!model)
            throw Error(errc::invalid_argument, "RunnerOptions::compaction has no summarizer and no LlmAgent of app '" +
                                                    options.app_name + "' has a model to summarize with: set "
                                                    "compaction->summarizer (e.g. an adk::LlmEventSummarizer)");
        config.summarizer = std::make_shared<LlmEventSummarizer>(std::move(model));
    }
    return std::make_shared<detail::Compactor>(std::move(config), options.session_service);
}

}  // namespace

Runner::Runner(RunnerOptions options)
    : options_(std::move(options)), registry_(std::make_shared<detail::RunnerRegistry>())
{
    if (options_.app_name.empty())
        throw Error(errc::invalid_argument, "RunnerOptions::app_name is empty: give the app a name");
    if (!options_.agent)
        throw Error(errc::invalid_argument, "RunnerOptions::agent is null: give the Runner a root agent");
    if (!options_.session_service)
        throw Error(errc::invalid_argument,
                    "RunnerOptions::session_service is null: use std::make_shared<adk::InMemorySessionService>()");
    if (!options_.credential_service)
        options_.credential_service = std::make_shared<InMemoryCredentialService>();
    std::set<std::string, std::less<>> plugin_names;
    for (const auto& plugin : options_.plugins) {
        if (!plugin)
            throw Error(errc::invalid_argument, "RunnerOptions::plugins holds a null plugin");
        if (!plugin_names.insert(plugin->name()).second)
            throw Error(errc::invalid_argument, "two plugins are named '" + plugin->name() + "': give each its own name");
    }
    compactor_ = make_compactor(options_);
}

Runner::~Runner() = default;

asio::awaitable<EventStream> Runner::run(std::string user_id, std::string session_id, Content new_message,
                                         RunConfig config)
{
    RunRequest request(std::move(user_id), std::move(session_id), std::move(new_message));
    request.run_config = std::move(config);
    return run(std::move(request));
}

namespace {

// Step 1 of a run: what the request resolves to, checked before anything is stored. The session is read once
// its turn is ours; what the message answers and the invocation it continues are found in it.
class ResolvedRun {
public:
    ResolvedRun(SessionTurn turn_, Session session_) : turn(std::move(turn_)), session(std::move(session_)) {}
    SessionTurn turn;
    Session session;
    detail::Answers answers;
    std::optional<detail::InvocationRecord> resumed;  // the invocation this run continues
    std::string resume_id;                            // its id, when resumed
};

asio::awaitable<ResolvedRun> resolve_run(const RunnerOptions& options, RunRequest& request)
{
    const bool resumable = options.resumability.is_resumable;
    if (request.invocation_id && !resumable)
        throw Error(errc::invalid_argument,
                    "RunRequest::invocation_id asks to resume invocation '" + request.invocation_id->substr(0, 100) +
                        "', but app '" + options.app_name + "' is not resumable: set RunnerOptions::resumability "
                        "(is_resumable = true), or leave invocation_id empty to start a new invocation");
    validate_state_keys(request.state_delta);
    SessionKey key(options.app_name, request.user_id, request.session_id);
    SessionInTurn in_turn = co_await read_in_turn(*options.session_service, key);
    ResolvedRun run(std::move(in_turn.turn), std::move(in_turn.session));
    if (request.new_message)
        run.answers = detail::check_answers(run.session, *request.new_message, options.app_name);
    std::optional<std::string> resume_id = request.invocation_id;
    if (resume_id && run.answers.invocation_id && *run.answers.invocation_id != *resume_id)
        throw Error(errc::invalid_argument, "the message answers calls of invocation " + *run.answers.invocation_id +
                                                ", not of invocation " + resume_id->substr(0, 100) +
                                                " that RunRequest::invocation_id names: leave invocation_id empty");
    if (!resume_id && resumable)
        resume_id = run.answers.invocation_id;
    if (!resume_id)
        co_return run;
    run.resumed = detail::find_invocation(run.session, *resume_id);
    if (!run.resumed)
        throw Error(errc::not_found, key.describe() + " has no invocation '" + resume_id->substr(0, 100) +
                                         "' to resume: give the invocationId of one of its events");
    if (run.resumed->imported)
        throw Error(errc::invalid_argument, "invocation " + resume_id->substr(0, 100) +
                                                " was imported with the session, not run here: it cannot be "
                                                "resumed; send a new message instead");
    if (run.resumed->finished && run.answers.answers_pending_long_running && !request.invocation_id) {
        run.resumed.reset();  // a long-running tool's answer after its invocation ended: a new invocation takes it
        co_return run;
    }
    if (run.resumed->finished)
        throw Error(errc::invalid_argument, "invocation " + *resume_id + " has finished: there is nothing to "
                                            "resume; send a new message instead");
    run.resume_id = std::move(*resume_id);
    co_return run;
}

// Step 2: the invocation made, and what the request brings stored: the credentials its answers carry, the user's
// message (after the plugins saw it, its blobs saved as artifacts) and its state delta, in one user event.
asio::awaitable<std::shared_ptr<InvocationContext>> store_run(const RunnerOptions& options, RunRequest& request,
                                                              ResolvedRun& run)
{
    for (auto& [credential_key, auth_config] : run.answers.credentials)
        co_await options.credential_service->save_credential(std::move(credential_key), std::move(auth_config));

    InvocationOptions inv;
    inv.app_name = options.app_name;
    inv.user_id = request.user_id;
    inv.session = std::move(run.session);
    inv.session_service = options.session_service;
    inv.artifact_service = options.artifact_service;
    inv.memory_service = options.memory_service;
    inv.credential_service = options.credential_service;
    inv.resumable = options.resumability.is_resumable;
    if (run.resumed) {
        inv.invocation_id = run.resume_id;
        inv.resumed = true;
    }
    inv.run_config = std::move(request.run_config);
    if (!inv.run_config.context_cache)
        inv.run_config.context_cache = options.context_cache;
    inv.root_agent = options.agent;
    auto caller_executor = co_await asio::this_coro::executor;
    inv.executor = options.single_threaded ? caller_executor : new_strand(caller_executor);
    inv.plugins = options.plugins;
    inv.tracer = options.tracer;
    inv.trace_parent = request.trace_parent;
    auto ctx = std::make_shared<InvocationContext>(std::move(inv), options.agent.get());
    auto invocation = ctx->invocation();
    invocation->session_turn = std::move(run.turn);
    std::map<std::string, std::int64_t> uploads;  // the artifacts saved from the user's message
    if (request.new_message && !request.new_message->parts.empty()) {
        Content& message = *request.new_message;
        if (message.role.empty())
            message.role = "user";
        const detail::PluginManager plugins(options.plugins);
        co_await plugins.on_user_message(*ctx, message);
        if (ctx->run_config().save_input_blobs_as_artifacts)
            uploads = co_await save_input_blobs(*ctx, message);
        invocation->options.user_content = message;
    }
    if (ctx->user_content() || !request.state_delta.empty()) {
        Event user_event;
        user_event.author = "user";
        user_event.content = ctx->user_content();
        user_event.id = new_uuid();
        user_event.invocation_id = ctx->invocation_id();
        user_event.timestamp = now_seconds();
        user_event.actions.state_delta = std::move(request.state_delta);
        user_event.actions.artifact_delta = std::move(uploads);
        co_await invocation->commit(user_event);
    }
    if (run.resumed && run.resumed->user_content)
        invocation->options.user_content = run.resumed->user_content;  // the message that started it
    co_return ctx;
}

// The agent the invocation runs: a resumed one continues where it started; a new one goes where ADK's Runner
// sends the message (agent_to_run).
std::shared_ptr<Agent> agent_for(const RunnerOptions& options, const InvocationContext& ctx,
                                 const std::optional<detail::InvocationRecord>& resumed)
{
    if (resumed && !resumed->started_by.empty())
        if (auto agent = options.agent->find_agent(resumed->started_by))
            return agent;
    return ctx.with_session([&](const Session& s) { return agent_to_run(s, options.agent); });
}

// Step 3's body: the invocation's producer. Plugins may answer first; an interruption is recorded in the session;
// the session's turn is released and the invocation unregistered when it ends, however it ends.
asio::awaitable<void> run_invocation(std::shared_ptr<InvocationContext> ctx, std::shared_ptr<Agent> agent,
                                     std::shared_ptr<detail::RunnerRegistry> registry,
                                     std::shared_ptr<detail::Compactor> compactor, Sink<Event> sink)
{
    struct Unregister {
        detail::RunnerRegistry& registry;
        const std::string& id;
        detail::Invocation& invocation;
        ~Unregister()
        {
            invocation.session_turn.release();  // the next invocation of the session may start
            registry.remove(id);
        }
    } unregister{*registry, ctx->invocation_id(), *ctx->invocation()};
    EventSink out(std::move(sink), ctx->invocation());
    // The invocation's span, the root of its agents' (or the child of the request's trace): it ends before the
    // stream does, however the invocation ends.
    telemetry::Span span = ctx->start_span("invocation");
    if (detail::has_own_context(span, ctx->span_context()))
        *ctx = ctx->with_span(span.context());
    std::exception_ptr failure;
    try {
        if (co_await answered_by_plugin(*ctx, out))
            co_return;
        co_await agent->run_inline(*ctx, out);
        const detail::PluginManager plugins(ctx->plugins());
        co_await plugins.after_run(*ctx);
        if (compactor)
            ctx->with_session([&](const Session& now) {
                compactor->after_invocation(ctx->executor(), now, ctx->invocation_id());
            });
    } catch (...) {
        failure = std::current_exception();
    }
    if (failure)
        detail::record_failure(span, failure);
    if (failure && interrupted(failure, *ctx)) {
        // After a cancellation every later co_await throws unless the state is reset (Asio 1.26).
        co_await asio::this_coro::reset_cancellation_state();
        co_await record_interruption(*ctx, *agent);
    }
    if (failure)
        std::rethrow_exception(failure);
}

}  // namespace

asio::awaitable<EventStream> Runner::run(RunRequest request)
{
    // (The awaitable named first: g++ 12 and class temporaries in a co_await expression.)
    asio::awaitable<Started> starting = start(std::move(request));
    Started started = co_await std::move(starting);
    co_return std::move(started.events);
}

asio::awaitable<Runner::Started> Runner::start(RunRequest request)
{
    ResolvedRun resolved = co_await resolve_run(options_, request);
    std::shared_ptr<InvocationContext> ctx = co_await store_run(options_, request, resolved);
    std::shared_ptr<Agent> agent = agent_for(options_, *ctx, resolved.resumed);
    auto producer = [ctx, agent, registry = registry_, compactor = compactor_](Sink<Event> sink) {
        return run_invocation(ctx, agent, registry, compactor, std::move(sink));
    };
    // Registered before the producer starts, so that its removal at the end always comes after. Once it started, the
    // context is the producer's (it enters the invocation's span): nothing here reads it any more.
    const std::string id = ctx->invocation_id();
    const asio::any_io_executor executor = ctx->executor();
    registry_->add(id, detail::RunnerRegistry::Entry{Canceller(), ctx->invocation(), std::nullopt});
    EventStream stream = spawn_stream<Event>(executor, std::move(producer), default_stream_capacity,
                                             std::move(request.receiver));
    registry_->set_canceller(id, stream.canceller());
    co_return Started(std::move(stream), id);
}

bool Runner::cancel(std::string_view invocation_id)
{
    return registry_->cancel(invocation_id,
                             "invocation " + std::string(invocation_id) + " was cancelled by Runner::cancel");
}

}  // namespace adk

namespace adk {

namespace {

bool session_scoped(std::string_view key)
{
    return !key.starts_with("app:") && !key.starts_with("user:") && !key.starts_with("temp:");
}

// The state delta that sets the session's own keys back to what the events before `index` made them.
json::object state_delta_for_rewind(const Session& session, std::size_t index)
{
    json::object then;
    for (std::size_t i = 0; i < index; ++i)
        for (const auto& kv : session.events[i].actions.state_delta) {
            if (!session_scoped(kv.key()))
                continue;
            if (kv.value().is_null())
                then.erase(kv.key());
            else
                then[kv.key()] = kv.value();
        }
    json::object delta;
    for (const auto& kv : then) {
        const json::value* now = session.state.if_contains(kv.key());
        if (!now || *now != kv.value())
            delta[kv.key()] = kv.value();
    }
    for (const auto& kv : session.state)
        if (session_scoped(kv.key()) && !then.contains(kv.key()))
            delta[kv.key()] = nullptr;
    return delta;
}

// Saves each session artifact that changed since `index` again as it was then (an empty blob for one that did
// not exist yet), and returns the new versions. The user's own artifacts (user:) are left as they are.
asio::awaitable<std::map<std::string, std::int64_t>> restore_artifacts(ArtifactService& artifacts, const Session& session,
                                                                       std::size_t index)
{
    std::map<std::string, std::int64_t> then, now;
    for (std::size_t i = 0; i < session.events.size(); ++i)
        for (const auto& [name, version] : session.events[i].actions.artifact_delta) {
            now[name] = version;
            if (i < index)
                then[name] = version;
        }
    std::map<std::string, std::int64_t> delta;
    for (const auto& [name, version] : now) {
        auto old = then.find(name);
        if (name.starts_with("user:") || (old != then.end() && old->second == version))
            continue;
        std::optional<Part> content;
        if (old != then.end()) {
            ArtifactKey load(session.app_name, session.user_id, session.id, name);
            content = co_await artifacts.load_artifact(std::move(load), old->second);
        }
        Part restored = content ? std::move(*content) : Part::from_bytes("", "application/octet-stream");
        ArtifactKey save(session.app_name, session.user_id, session.id, name);
        delta[name] = co_await artifacts.save_artifact(std::move(save), std::move(restored));
    }
    co_return delta;
}

}  // namespace

asio::awaitable<void> Runner::close()
{
    co_await wait_for_compactions();
    co_await close_toolsets(toolsets_in(*options_.agent));
    co_await close_models(models_in(*options_.agent));
}

asio::awaitable<void> Runner::wait_for_compactions()
{
    if (compactor_)
        co_await compactor_->idle();
}

asio::awaitable<void> Runner::rewind(std::string user_id, std::string session_id, std::string before_invocation_id)
{
    SessionKey key(options_.app_name, user_id, session_id);
    SessionInTurn in_turn = co_await read_in_turn(*options_.session_service, key);
    Session session = std::move(in_turn.session);
    std::size_t index = session.events.size();
    for (std::size_t i = 0; i < session.events.size() && index == session.events.size(); ++i)
        if (session.events[i].invocation_id == before_invocation_id)
            index = i;
    if (index == session.events.size())
        throw Error(errc::not_found, key.describe() + " has no invocation '" + before_invocation_id.substr(0, 100) +
                                         "' to rewind to: give the invocationId of one of its events");
    Event marker;
    marker.id = new_uuid();
    marker.invocation_id = new_invocation_id();
    marker.author = "user";
    marker.timestamp = now_seconds();
    marker.actions.rewind_before_invocation_id = before_invocation_id;
    marker.actions.state_delta = state_delta_for_rewind(session, index);
    if (options_.artifact_service)
        marker.actions.artifact_delta = co_await restore_artifacts(*options_.artifact_service, session, index);
    co_await options_.session_service->append_event(session, marker);
}

}  // namespace adk
