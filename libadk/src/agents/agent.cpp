#include <adk/agents/agent.hpp>

#include "../plugins/plugin_manager.hpp"
#include "../telemetry/span_errors.hpp"
#include <adk/core/error.hpp>
#include <adk/core/identifier.hpp>
#include <adk/plugins/plugin.hpp>
#include <adk/tools/toolset.hpp>

#include <algorithm>
#include <set>
#include <utility>

namespace adk {

namespace {

void collect_names(const Agent& agent, std::multiset<std::string_view>& names)
{
    names.insert(agent.name());
    for (const auto& sub : agent.sub_agents())
        collect_names(*sub, names);
}

}  // namespace

void Agent::validate_name(std::string_view name)
{
    if (!is_identifier(name))
        throw Error(errc::invalid_argument,
                    "agent name '" + std::string(name) +
                        "' is not an identifier: use letters, digits and underscores, not starting with a digit");
    if (name == "user")
        throw Error(errc::invalid_argument,
                    "agent name 'user' is reserved for the end user's events: choose another name");
}

Agent::Agent(std::string name, std::string description, std::vector<std::shared_ptr<Agent>> sub_agents)
    : name_(std::move(name)), description_(std::move(description)), sub_agents_(std::move(sub_agents))
{
    validate_name(name_);
    std::multiset<std::string_view> names{name_};
    for (const auto& sub : sub_agents_) {
        if (!sub)
            throw Error(errc::invalid_argument, "agent '" + name_ + "' was given a null sub-agent");
        if (sub->parent_)
            throw Error(errc::invalid_argument, "agent '" + sub->name() + "' already has parent '" +
                                                    sub->parent_->name() + "' and cannot be added to '" + name_ +
                                                    "': an agent has one parent; create a second instance");
        collect_names(*sub, names);
    }
    for (auto it = names.begin(); it != names.end(); it = names.upper_bound(*it))
        if (names.count(*it) > 1)
            throw Error(errc::invalid_argument, "agent name '" + std::string(*it) + "' appears " +
                                                    std::to_string(names.count(*it)) + " times in the tree of '" +
                                                    name_ + "': names must be unique in an agent tree");
    for (const auto& sub : sub_agents_)
        sub->parent_ = this;
}

std::vector<std::shared_ptr<Toolset>> Agent::toolsets() const
{
    return {};
}

std::vector<std::shared_ptr<Toolset>> toolsets_in(const Agent& root)
{
    std::vector<std::shared_ptr<Toolset>> out;
    auto visit = [&](const Agent& agent, auto& self) -> void {
        for (auto& toolset : agent.toolsets())
            if (toolset && std::find(out.begin(), out.end(), toolset) == out.end())
                out.push_back(std::move(toolset));
        for (const auto& sub : agent.sub_agents())
            self(*sub, self);
    };
    visit(root, visit);
    return out;
}

Agent::~Agent()
{
    for (const auto& sub : sub_agents_)
        if (sub->parent_ == this)
            sub->parent_ = nullptr;
}

Agent& Agent::root_agent() noexcept
{
    Agent* a = this;
    while (a->parent_)
        a = a->parent_;
    return *a;
}

std::shared_ptr<Agent> Agent::find_agent(std::string_view name) const
{
    if (name_ == name)
        return std::const_pointer_cast<Agent>(weak_from_this().lock());
    return find_sub_agent(name);
}

std::shared_ptr<Agent> Agent::find_sub_agent(std::string_view name) const
{
    for (const auto& sub : sub_agents_) {
        if (sub->name() == name)
            return sub;
        if (auto found = sub->find_sub_agent(name))
            return found;
    }
    return nullptr;
}

void Agent::add_before_agent_callback(AgentCallback callback)
{
    before_agent_callbacks_.push_back(std::move(callback));
}

void Agent::add_after_agent_callback(AgentCallback callback)
{
    after_agent_callbacks_.push_back(std::move(callback));
}

EventStream Agent::run(std::shared_ptr<InvocationContext> ctx, std::size_t capacity)
{
    auto self = shared_from_this();
    auto producer = [self, ctx](Sink<Event> sink) -> asio::awaitable<void> {
        EventSink out(std::move(sink), ctx->invocation());
        co_await self->run_inline(*ctx, out);
    };
    return spawn_stream<Event>(ctx->executor(), std::move(producer), capacity);
}

// ADK's semantics: the first callback that returns content answers in the agent's place, with an event
// carrying that content and the callback's state changes; a callback that only changed state yields an
// event with just those actions. Returns true when an answer was emitted.
asio::awaitable<bool> Agent::run_callbacks(bool before, InvocationContext& ctx, EventSink& out)
{
    const std::vector<AgentCallback>& callbacks = before ? before_agent_callbacks_ : after_agent_callbacks_;
    const detail::PluginManager plugins(ctx.plugins());
    if (callbacks.empty() && plugins.empty())
        co_return false;
    CallbackContext cb(ctx);
    std::optional<Content> answer;
    if (before)
        co_await plugins.before_agent(*this, cb, callbacks, answer);
    else
        co_await plugins.after_agent(*this, cb, callbacks, answer);
    if (!answer && !cb.has_state_delta())
        co_return false;
    Event event = answer ? ctx.make_event(std::move(*answer)) : ctx.make_event();
    event.actions = std::move(cb.actions());
    co_await out.emit(std::move(event));
    co_return answer.has_value();
}

asio::awaitable<void> Agent::run_inline(const InvocationContext& parent, EventSink& out, int run)
{
    return run_in(parent.for_agent(*this, run), out);
}

namespace {

// In a frame of its own: an Event local to run_in would take its room in run_in's frame, which lives as long as the
// agent runs (a streamed answer's whole length).
asio::awaitable<void> emit_end_of_agent(const InvocationContext& ctx, EventSink& out)
{
    Event end = ctx.make_event();
    end.actions.end_of_agent = true;
    co_await out.emit(std::move(end));
}

}  // namespace

asio::awaitable<void> Agent::run_in(InvocationContext ctx, EventSink& out)
{
    if (&ctx.agent() != this)
        throw Error(errc::invalid_argument, "Agent::run_in: agent '" + name_ + "' was given the context of agent '" +
                                                ctx.agent().name() + "': make it with parent.for_agent(agent, run)");
    if (ctx.cancelled())
        throw Error(errc::cancelled, "invocation " + ctx.invocation_id() + " was cancelled before agent '" + name_ +
                                         "' started");
    // A resumed invocation does not run again an agent that finished in it.
    if (ctx.is_resumable() && ctx.agent_ended())
        co_return;
    // Its span ends however the agent ends: answered, paused, cancelled or failed.
    telemetry::Span span = ctx.start_span("invoke_agent " + name_);
    if (span.recording()) {
        span.set("gen_ai.operation.name", std::string("invoke_agent"));
        span.set("gen_ai.agent.name", name_);
        span.set("gen_ai.agent.description", description_);
        span.set("gen_ai.conversation.id", ctx.session_id());
        span.set("gcp.vertex.agent.invocation_id", ctx.invocation_id());
    }
    if (detail::has_own_context(span, ctx.span_context()))
        ctx = ctx.with_span(span.context());
    std::exception_ptr failure;
    try {
        if (co_await run_callbacks(true, ctx, out)) {
            ctx.set_end_invocation();
            co_return;
        }
        if (ctx.end_invocation())
            co_return;
        co_await run_impl(ctx, out);
        if (ctx.end_invocation() || ctx.paused())
            co_return;  // a paused agent has not finished: it continues when the invocation resumes
        co_await run_callbacks(false, ctx, out);
        if (ctx.is_resumable() && !ctx.end_invocation())
            co_await emit_end_of_agent(ctx, out);
    } catch (...) {
        failure = std::current_exception();
    }
    if (!failure)
        co_return;
    try {
        std::rethrow_exception(failure);
    } catch (const boost::system::system_error&) {
        detail::record_failure(span, failure);
        throw;
    } catch (const std::exception& e) {
        auto error = std::make_exception_ptr(Error(
            errc::agent_failed, "agent '" + name_ + "' failed: " + e.what() +
                                    ". The exception escaped the agent; handle it in the agent or fix its cause"));
        detail::record_failure(span, error);
        std::rethrow_exception(error);
    }
}

}  // namespace adk
