#include "node_runner.hpp"

#include <adk/core/clock.hpp>
#include <adk/core/error.hpp>

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace adk::workflow::detail {

InvocationContext node_context(const InvocationContext& parent, const Node& node, int run, const std::string& branch,
                               const std::vector<std::string>& owners, json::value input)
{
    std::shared_ptr<Agent> agent = node.agent();
    InvocationContext ctx = agent ? parent.for_agent(*agent, run) : parent.for_node(node.name(), run);
    if (branch != ctx.branch())
        ctx = ctx.with_branch(branch);
    if (const std::optional<std::string>& scope = node.options().isolation_scope)
        ctx = ctx.with_isolation_scope(scope->empty() ? ctx.node_path() : *scope);
    std::vector<std::string> output_for{ctx.node_path()};
    output_for.insert(output_for.end(), owners.begin(), owners.end());
    return ctx.as_workflow_node(std::move(output_for), std::move(input));
}

std::optional<Settled> settle(const Node& node, const InvocationContext& node_ctx)
{
    if (std::optional<NodeOutcome> recorded = node_ctx.node_outcome()) {
        Settled s;
        s.result.output = recorded->output ? std::move(*recorded->output) : json::value();
        s.result.route = std::move(recorded->route);
        return s;
    }
    if (node.agent() || node.options().rerun_on_resume)
        return std::nullopt;
    const std::vector<std::string> asked = node_ctx.node_interrupts();
    if (asked.empty())
        return std::nullopt;
    Settled s;
    if (std::optional<json::value> answered = answers_to(node_ctx, asked)) {
        s.result.output = std::move(*answered);
        s.record = true;
    } else {
        node_ctx.pause();
        s.result.paused = true;
    }
    return s;
}

Event said_event(const InvocationContext& ctx, const std::string& author, json::object state_delta,
                 const std::optional<json::value>& route, const json::value& output)
{
    Event event = ctx.make_event();
    event.author = author;
    if (!event.node_info) {
        event.node_info.emplace();
        event.node_info->path = ctx.node_path();
    }
    event.actions.state_delta = std::move(state_delta);
    event.actions.route = route;
    if (!output.is_null()) {
        event.content = content_of(output, false);
        event.output = output;
        event.node_info->output_for = ctx.node_output_for();
        if (event.node_info->output_for.empty())
            event.node_info->output_for.push_back(ctx.node_path());
    }
    return event;
}

namespace {

asio::awaitable<json::value> attempt_once(Node& node, NodeContext& nc, const json::value& input)
{
    const std::chrono::milliseconds timeout = node.options().timeout;
    if (timeout.count() == 0)
        co_return co_await node.run(nc, input);
    using namespace asio::experimental::awaitable_operators;
    adk::Timer timer(co_await asio::this_coro::executor, timeout);
    auto result = co_await (node.run(nc, input) || timer.async_wait(asio::use_awaitable));
    if (result.index() == 1)
        throw Error(errc::timed_out, "node '" + node.name() + "' did not finish within its timeout of " +
                                         std::to_string(timeout.count()) + " ms");
    co_return std::move(std::get<0>(result));
}

// A function's or join's output, route and state changes as its event; in a resumable app a node that said nothing
// records its end, so that a resumed workflow passes over it. (An agent's events record an agent node.)
asio::awaitable<void> record(const Node& node, const InvocationContext& node_ctx, NodeContext& nc, EventSink& out,
                             const NodeResult& result)
{
    json::object state_delta = nc.take_state_delta();
    const bool output = !result.output.is_null() && !nc.output_emitted();
    if (nc.output_emitted() && !result.route && state_delta.empty())
        co_return;
    const bool said = output || result.route || !state_delta.empty();
    if (!said && !node_ctx.is_resumable())
        co_return;
    Event event = said_event(node_ctx, node.name(), std::move(state_delta), result.route,
                             output ? result.output : json::value());
    if (result.output.is_null() && !result.route && node_ctx.is_resumable())
        event.actions.end_of_agent = true;
    co_await out.emit(std::move(event));
}

}  // namespace

asio::awaitable<NodeResult> run_node(Node& node, InvocationContext node_ctx, EventSink& out, std::string from,
                                     json::value input, std::optional<Settled> settled)
{
    if (settled) {
        if (settled->record) {
            NodeContext nc(node_ctx, out, node.name(), from, 1);
            co_await record(node, node_ctx, nc, out, settled->result);
        }
        co_return std::move(settled->result);
    }
    check_schema(node.options().input_schema, input, node, "input");
    for (int attempt = 1;; ++attempt) {
        NodeContext nc(node_ctx, out, node.name(), from, attempt);
        bool interrupted = false;
        try {
            json::value output = co_await attempt_once(node, nc, input);
            NodeResult result;
            if (node.agent() && node_ctx.paused()) {
                result.paused = true;
                co_return result;
            }
            if (!output.is_null())
                check_schema(node.options().output_schema, output, node, "output");
            result.output = std::move(output);
            result.route = nc.route();
            if (!node.agent())
                co_await record(node, node_ctx, nc, out, result);
            co_return result;
        } catch (const NodeInterrupted&) {
            interrupted = true;
        } catch (const std::exception& e) {
            const std::optional<RetryConfig>& retry = node.options().retry;
            if (is_cancellation(e, node_ctx) || !retry || attempt >= retry->max_attempts ||
                (retry->retry_on && !retry->retry_on(e)))
                throw;
        }
        if (interrupted) {
            node_ctx.pause();
            NodeResult result;
            result.paused = true;
            co_return result;
        }
        adk::Timer timer(co_await asio::this_coro::executor, node.options().retry->delay_after(attempt, unit_random()));
        co_await timer.async_wait(asio::use_awaitable);
    }
}

}  // namespace adk::workflow::detail
