#include <adk/agents/agent.hpp>
#include <adk/agents/invocation_context.hpp>
#include <adk/core/error.hpp>
#include <adk/core/ids.hpp>
#include <adk/core/stream.hpp>
#include <adk/sessions/session_service.hpp>

#include <utility>

#include "invocation.hpp"
#include "run_state.hpp"

namespace adk {

namespace detail {

Invocation::Invocation(InvocationOptions options_) : options(std::move(options_))
{
    if (!options.session_service)
        throw Error(errc::invalid_argument, "an invocation needs a session service: set "
                                            "InvocationOptions::session_service (e.g. InMemorySessionService)");
    if (!options.executor)
        throw Error(errc::invalid_argument, "an invocation needs an executor: set InvocationOptions::executor to "
                                            "a strand of your io_context");
    if (options.invocation_id.empty())
        options.invocation_id = new_invocation_id();
    if (options.tracer && options.tracer->recording())
        span_owner = std::make_shared<const telemetry::SpanOwner>(telemetry::SpanOwner{
            options.app_name, options.user_id, options.session.id, options.invocation_id});
    // A workflow reads its nodes' outcomes here in any app; only a resumable app's invocation continues earlier
    // events of its own.
    run_state = options.resumable
                    ? std::make_unique<RunState>(options.session.events, options.invocation_id, options.root_agent.get())
                    : std::make_unique<RunState>();
    if (options.run_config.max_invocation_tokens > 0 || options.run_config.max_session_tokens > 0)
        for (const Event& e : options.session.events) {
            if (!e.usage_metadata || e.partial)
                continue;
            if (e.invocation_id == options.invocation_id)
                invocation_tokens += total_tokens(*e.usage_metadata);
            else
                other_tokens += total_tokens(*e.usage_metadata);
        }
}

Invocation::~Invocation() = default;

asio::awaitable<void> Invocation::wait_commit_turn()
{
    try {
        co_await commit_order_.lock();
    } catch (const boost::system::system_error& e) {
        throw Error(e.code(), "waiting to store an event was cancelled");
    }
}

asio::awaitable<std::shared_ptr<const Event>> Invocation::commit(Event& event)
{
    if (event.content)
        check_inline_data(*event.content);
    // One commit at a time (parallel branches commit from their own strands); not a wait when the lock is free.
    if (!commit_order_.try_lock())
        co_await wait_commit_turn();
    AsyncLockGuard turn(commit_order_);
    co_await options.session_service->append_event(options.session, event, session_mutex);
    if (event.partial)
        co_return nullptr;
    std::size_t index = 0;
    std::shared_ptr<const Event> stored;
    {
        std::lock_guard lock(session_mutex);
        index = options.session.events.size() - 1;  // commits run one at a time: the last is this one
        stored = options.session.events.shared(index);
    }
    if (RunState::matters(event))
        run_state->record(event, index);
    co_return stored;
}

}  // namespace detail

InvocationContext::InvocationContext(InvocationOptions options, Agent* agent)
    : inv_(std::make_shared<detail::Invocation>(std::move(options))), agent_(agent)
{
    span_context_ = inv_->options.trace_parent;
}

InvocationContext::InvocationContext(std::shared_ptr<detail::Invocation> invocation, Agent* agent,
                                     std::string branch, asio::any_io_executor executor, std::string node_path)
    : inv_(std::move(invocation)),
      agent_(agent),
      branch_(std::move(branch)),
      executor_(std::move(executor)),
      node_path_(std::move(node_path)),
      span_context_(inv_ ? inv_->options.trace_parent : telemetry::SpanContext())
{
}

InvocationContext InvocationContext::for_agent(Agent& agent, int run) const
{
    InvocationContext ctx(inv_, &agent, branch_, executor_, node_path::child(node_path_, agent.name(), run));
    ctx.span_context_ = span_context_;
    ctx.in_workflow_ = in_workflow_;
    ctx.isolation_scope_ = isolation_scope_;
    return ctx;
}

InvocationContext InvocationContext::for_node(std::string_view name, int run) const
{
    InvocationContext ctx(inv_, agent_, branch_, executor_, node_path::child(node_path_, name, run));
    ctx.span_context_ = span_context_;
    ctx.in_workflow_ = in_workflow_;
    ctx.isolation_scope_ = isolation_scope_;
    return ctx;
}

struct InvocationContext::NodeRole {
    std::vector<std::string> output_for;
    json::value input;
};

InvocationContext InvocationContext::as_workflow_node(std::vector<std::string> output_for, json::value input) const
{
    InvocationContext ctx = *this;
    ctx.in_workflow_ = true;
    ctx.role_ = std::make_shared<const NodeRole>(NodeRole{std::move(output_for), std::move(input)});
    return ctx;
}

const std::vector<std::string>& InvocationContext::node_output_for() const noexcept
{
    static const std::vector<std::string> none;
    return role_ ? role_->output_for : none;
}

const json::value* InvocationContext::node_input() const noexcept
{
    return role_ ? &role_->input : nullptr;
}

InvocationContext InvocationContext::with_isolation_scope(std::string scope) const
{
    InvocationContext ctx = *this;
    ctx.isolation_scope_ = std::move(scope);
    return ctx;
}

InvocationContext InvocationContext::with_span(const telemetry::SpanContext& span) const
{
    InvocationContext ctx = *this;
    ctx.span_context_ = span;
    return ctx;
}

telemetry::Span InvocationContext::start_span(std::string name, telemetry::SpanKind kind) const
{
    const std::shared_ptr<const telemetry::Tracer>& tracer = inv_->options.tracer;
    if (!tracer || !tracer->recording())
        return telemetry::Span(span_context_);
    return tracer->start(std::move(name), span_context_, inv_->span_owner, kind);
}

InvocationContext InvocationContext::with_branch(std::string branch, asio::any_io_executor executor) const
{
    InvocationContext ctx = *this;
    ctx.branch_ = std::move(branch);
    if (executor)
        ctx.executor_ = std::move(executor);
    return ctx;
}

const std::string& InvocationContext::invocation_id() const noexcept { return inv_->options.invocation_id; }
const std::string& InvocationContext::app_name() const noexcept { return inv_->options.app_name; }
const std::string& InvocationContext::user_id() const noexcept { return inv_->options.user_id; }
const std::string& InvocationContext::origin() const noexcept { return inv_->options.origin; }
const std::shared_ptr<Agent>& InvocationContext::root_agent() const noexcept { return inv_->options.root_agent; }
const std::string& InvocationContext::session_id() const noexcept { return inv_->options.session.id; }
const RunConfig& InvocationContext::run_config() const noexcept { return inv_->options.run_config; }
const std::optional<Content>& InvocationContext::user_content() const noexcept { return inv_->options.user_content; }
const std::vector<std::shared_ptr<Plugin>>& InvocationContext::plugins() const noexcept { return inv_->options.plugins; }
bool InvocationContext::cancelled() const noexcept { return inv_->cancelled.load(); }
void InvocationContext::cancel() const noexcept { inv_->cancelled.store(true); }
bool InvocationContext::paused() const
{
    if (!inv_->any_paused.load())
        return false;
    std::lock_guard lock(inv_->paused_mutex);
    for (const Agent* p : inv_->paused_agents)
        for (const Agent* a = p; a; a = a->parent())
            if (a == agent_)
                return true;
    return false;
}

void InvocationContext::pause() const
{
    std::lock_guard lock(inv_->paused_mutex);
    inv_->paused_agents.push_back(&agent());
    inv_->any_paused.store(true);
}
bool InvocationContext::is_resumable() const noexcept { return inv_->options.resumable; }
bool InvocationContext::resumed() const noexcept { return inv_->options.resumed; }
bool InvocationContext::end_invocation() const noexcept { return inv_->end_invocation.load(); }
void InvocationContext::set_end_invocation(bool value) const noexcept { inv_->end_invocation.store(value); }
int InvocationContext::llm_calls() const noexcept { return inv_->llm_calls.load(); }

const std::shared_ptr<SessionService>& InvocationContext::session_service() const noexcept
{
    return inv_->options.session_service;
}

const std::shared_ptr<ArtifactService>& InvocationContext::artifact_service() const noexcept
{
    return inv_->options.artifact_service;
}

const std::shared_ptr<MemoryService>& InvocationContext::memory_service() const noexcept
{
    return inv_->options.memory_service;
}

const std::shared_ptr<CredentialService>& InvocationContext::credential_service() const noexcept
{
    return inv_->options.credential_service;
}

const asio::any_io_executor& InvocationContext::executor() const noexcept
{
    return executor_ ? executor_ : inv_->options.executor;
}

void InvocationContext::visit_session(const std::function<void(const Session&)>& f) const
{
    std::lock_guard lock(inv_->session_mutex);
    f(inv_->options.session);
}

Session InvocationContext::session() const
{
    return with_session([](const Session& s) { return s; });
}

Agent& InvocationContext::agent() const
{
    if (!agent_)
        throw Error(errc::invalid_argument, "this InvocationContext has no agent yet: get one with for_agent()");
    return *agent_;
}

std::optional<json::value> InvocationContext::state(std::string_view key) const
{
    return with_session([&](const Session& s) -> std::optional<json::value> {
        if (const json::value* v = s.state.if_contains(key))
            return *v;
        return std::nullopt;
    });
}

std::optional<json::object> InvocationContext::agent_state() const
{
    if (!is_resumable())
        return std::nullopt;
    std::optional<detail::NodeProgress> node = inv_->run_state->find(node_path_);
    return node ? std::move(node->agent_state) : std::nullopt;
}

bool InvocationContext::agent_ended() const
{
    if (!is_resumable())
        return false;
    std::optional<detail::NodeProgress> node = inv_->run_state->find(node_path_);
    return node && node->ended;
}

std::optional<NodeOutcome> InvocationContext::node_outcome() const
{
    std::optional<detail::NodeProgress> node = inv_->run_state->find(node_path_);
    if (!node || (!node->output && !node->route && !node->ended))
        return std::nullopt;
    return NodeOutcome{std::move(node->output), std::move(node->route), node->ended};
}

std::vector<std::string> InvocationContext::node_interrupts() const
{
    std::optional<detail::NodeProgress> node = inv_->run_state->find(node_path_);
    return node ? std::move(node->interrupts) : std::vector<std::string>();
}

Event InvocationContext::make_event(Content content) const
{
    Event e = make_event();
    e.content = std::move(content);
    return e;
}

Event InvocationContext::make_event() const
{
    Event e;
    e.id = new_uuid();
    e.invocation_id = inv_->options.invocation_id;
    e.author = agent().name();
    e.branch = branch_;
    e.timestamp = now_seconds();
    if ((in_workflow_ || is_resumable()) && !node_path_.empty()) {
        e.node_info.emplace();
        e.node_info->path = node_path_;
    }
    if (!isolation_scope_.empty())
        e.isolation_scope = isolation_scope_;
    return e;
}

void InvocationContext::check_and_inc_llm_call() const
{
    int calls = ++inv_->llm_calls;
    int limit = inv_->options.run_config.max_llm_calls;
    if (limit > 0 && calls > limit)
        throw Error(errc::llm_call_limit_exceeded,
                    "invocation " + invocation_id() + " reached RunConfig::max_llm_calls (" + std::to_string(limit) +
                        " model calls): raise the limit if the task needs more, or find why the agent loops");
}

void InvocationContext::check_and_inc_node_run() const
{
    const int runs = ++inv_->node_runs;
    const int limit = inv_->options.run_config.max_node_runs;
    if (limit > 0 && runs > limit)
        throw Error(errc::node_run_limit_exceeded,
                    "invocation " + invocation_id() + " reached RunConfig::max_node_runs (" + std::to_string(limit) +
                        " node runs): raise the limit if the workflow needs more, or find the cycle that does not end");
}

std::int64_t InvocationContext::invocation_tokens() const noexcept
{
    return inv_->invocation_tokens.load();
}

std::int64_t InvocationContext::session_tokens() const noexcept
{
    return inv_->other_tokens + inv_->invocation_tokens.load();
}

void InvocationContext::add_tokens(const UsageMetadata& usage) const
{
    inv_->invocation_tokens += total_tokens(usage);
}

std::optional<std::string> InvocationContext::exhausted_token_budget() const
{
    const RunConfig& config = inv_->options.run_config;
    const std::int64_t used = invocation_tokens();
    if (config.max_invocation_tokens > 0 && used >= config.max_invocation_tokens)
        return "the invocation's token budget ran out: its model calls used " + std::to_string(used) + " of the " +
               std::to_string(config.max_invocation_tokens) + " tokens RunConfig::max_invocation_tokens allows";
    const std::int64_t session = session_tokens();
    if (config.max_session_tokens > 0 && session >= config.max_session_tokens)
        return "the session's token budget ran out: its model calls used " + std::to_string(session) + " of the " +
               std::to_string(config.max_session_tokens) + " tokens RunConfig::max_session_tokens allows";
    return std::nullopt;
}

void InvocationContext::set_attribute(std::string key, std::any value) const
{
    std::lock_guard lock(inv_->attributes_mutex);
    inv_->attributes.insert_or_assign(std::move(key), std::move(value));
}

std::any InvocationContext::attribute(std::string_view key) const
{
    std::lock_guard lock(inv_->attributes_mutex);
    auto it = inv_->attributes.find(key);
    return it == inv_->attributes.end() ? std::any() : it->second;
}

}  // namespace adk
