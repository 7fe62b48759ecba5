#include <adk/agents/workflow_agents.hpp>
#include <adk/core/error.hpp>
#include <adk/core/strands.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace adk {

SequentialAgent::SequentialAgent(std::string name, std::string description,
                                 std::vector<std::shared_ptr<Agent>> sub_agents)
    : Agent(std::move(name), std::move(description), std::move(sub_agents))
{
}

namespace {

// In a resumable app a workflow agent records which sub-agent it starts (and a loop, which round) in its
// agentState, kept by its node path, so that a resumed invocation continues there. The sub-agent a resumed
// workflow continues with was recorded already, and is not recorded again. Each round of a loop runs its
// sub-agents on a run of their own (round + 1), so what a round recorded never stands for the next.
struct WorkflowPosition {
    std::size_t child = 0;
    int round = 0;
    bool recorded = false;  // read from the invocation's events
};

WorkflowPosition position_of(const InvocationContext& ctx, const Agent& agent)
{
    WorkflowPosition at;
    std::optional<json::object> state = ctx.agent_state();
    if (!state)
        return at;
    const json::value* current = state->if_contains("current_sub_agent");
    const auto children = agent.sub_agents();
    for (std::size_t i = 0; current && current->is_string() && i < children.size(); ++i)
        if (children[i]->name() == current->get_string()) {
            at.child = i;
            at.recorded = true;
        }
    if (const json::value* round = state->if_contains("times_looped"); round && round->is_int64())
        at.round = static_cast<int>(round->get_int64());
    return at;
}

asio::awaitable<void> record_position(const InvocationContext& ctx, EventSink& out, const Agent& child,
                                      std::optional<int> round)
{
    Event event = ctx.make_event();
    json::object state{{"current_sub_agent", child.name()}};
    if (round)
        state.emplace("times_looped", *round);
    event.actions.agent_state = std::move(state);
    co_await out.emit(std::move(event));
}

bool stopped(const InvocationContext& ctx)
{
    return ctx.end_invocation() || ctx.paused();
}

}  // namespace

asio::awaitable<void> SequentialAgent::run_impl(InvocationContext& ctx, EventSink& out)
{
    const auto children = sub_agents();
    const WorkflowPosition at = position_of(ctx, *this);
    for (std::size_t i = at.child; i < children.size(); ++i) {
        if (ctx.is_resumable() && !(at.recorded && i == at.child))
            co_await record_position(ctx, out, *children[i], std::nullopt);
        co_await children[i]->run_inline(ctx, out);
        if (stopped(ctx))
            co_return;
    }
}

ParallelAgent::ParallelAgent(std::string name, std::string description, std::vector<std::shared_ptr<Agent>> sub_agents)
    : Agent(std::move(name), std::move(description), std::move(sub_agents))
{
}

namespace {

// Hands a branch's events on to the parent's stream, on the parent's strand.
asio::awaitable<void> forward_all(EventStream branch, EventSink& out)
{
    while (auto event = co_await branch.next())
        co_await out.forward(std::move(*event));
}

}  // namespace

asio::awaitable<void> ParallelAgent::run_impl(InvocationContext& ctx, EventSink& out)
{
    if (ctx.is_resumable() && !ctx.agent_state()) {
        // Marks that it started; on resume, the branches that finished are not run again (Agent::run_inline).
        Event started = ctx.make_event();
        started.actions.agent_state = json::object();
        co_await out.emit(std::move(started));
    }
    auto ex = co_await asio::this_coro::executor;
    using op_type = decltype(asio::co_spawn(ex, std::declval<asio::awaitable<void>>(), asio::deferred));
    std::vector<op_type> branches;
    for (const auto& child : sub_agents()) {
        std::string branch = (ctx.branch().empty() ? "" : ctx.branch() + ".") + name() + "." + child->name();
        asio::any_io_executor branch_ex = branch_executor(ex);
        InvocationContext branch_ctx = ctx.with_branch(std::move(branch), branch_ex);
        auto producer = [child, branch_ctx](Sink<Event> sink) -> asio::awaitable<void> {
            EventSink branch_out(std::move(sink), branch_ctx.invocation());
            co_await child->run_inline(branch_ctx, branch_out);
        };
        EventStream stream = spawn_stream<Event>(branch_ex, std::move(producer));
        asio::awaitable<void> forwarding = forward_all(std::move(stream), out);
        branches.push_back(asio::co_spawn(ex, std::move(forwarding), asio::deferred));
    }
    // The first failure cancels the other branches (their streams stop their producers).
    auto group = asio::experimental::make_parallel_group(std::move(branches));
    auto [order, failures] =
        co_await group.async_wait(asio::experimental::wait_for_one_error(), asio::use_awaitable);
    for (std::size_t i : order)
        if (failures[i])
            std::rethrow_exception(failures[i]);
}

LoopAgent::LoopAgent(std::string name, std::string description, std::vector<std::shared_ptr<Agent>> sub_agents,
                     int max_iterations)
    : Agent(std::move(name), std::move(description), std::move(sub_agents)), max_iterations_(max_iterations)
{
    if (max_iterations_ < 0)
        throw Error(errc::invalid_argument, "LoopAgent '" + this->name() +
                                                "': max_iterations must be 0 (no limit) or more, got " +
                                                std::to_string(max_iterations_));
}

asio::awaitable<void> LoopAgent::run_impl(InvocationContext& ctx, EventSink& out)
{
    const auto children = sub_agents();
    const WorkflowPosition at = position_of(ctx, *this);
    std::size_t first = at.child;
    for (int round = at.round; max_iterations_ == 0 || round < max_iterations_; ++round, first = 0) {
        for (std::size_t i = first; i < children.size(); ++i) {
            if (ctx.is_resumable() && !(at.recorded && round == at.round && i == at.child))
                co_await record_position(ctx, out, *children[i], round);
            out.clear_escalation();
            co_await children[i]->run_inline(ctx, out, round + 1);
            if (out.escalated() || stopped(ctx))
                co_return;
        }
    }
}

}  // namespace adk
