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

asio::awaitable<void> SequentialAgent::run_impl(InvocationContext& ctx, EventSink& out)
{
    for (const auto& child : sub_agents()) {
        co_await child->run_inline(ctx, out);
        if (ctx.end_invocation())
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
    for (int round = 0; max_iterations_ == 0 || round < max_iterations_; ++round) {
        for (const auto& child : sub_agents()) {
            out.clear_escalation();
            co_await child->run_inline(ctx, out);
            if (out.escalated() || ctx.end_invocation())
                co_return;
        }
    }
}

}  // namespace adk
