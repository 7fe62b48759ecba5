#include "tool_dispatch.hpp"

#include "flow_errors.hpp"

#include "../plugins/plugin_manager.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <variant>

namespace adk::detail {

namespace {

struct ToolOutcome {
    std::optional<json::value> response;  // none: a long-running tool that will answer later
    EventActions actions;
};

// Runs the tool, cancelled after its timeout (the tool's own, else the agent's): then it throws
// adk::Error(timed_out), which goes where any failure of the tool goes.
asio::awaitable<json::value> run_within_timeout(const LlmAgentConfig& cfg, Tool& tool, ToolContext& tc,
                                                json::object args)
{
    const auto timeout = tool.timeout() ? tool.timeout() : cfg.tool_timeout;
    if (!timeout)
        co_return co_await tool.run(tc, std::move(args));
    using namespace asio::experimental::awaitable_operators;
    asio::steady_timer timer(co_await asio::this_coro::executor, *timeout);
    // Named operands: g++ 12 miscompiles class-type temporaries built inside a co_await expression.
    asio::awaitable<json::value> run = tool.run(tc, std::move(args));
    asio::awaitable<void> expire = timer.async_wait(asio::use_awaitable);
    std::variant<json::value, std::monostate> first = co_await (std::move(run) || std::move(expire));
    if (first.index() == 1)
        throw Error(asio::error::timed_out, "it did not finish within " + std::to_string(timeout->count()) +
                                                " ms and was stopped (Tool::set_timeout, LlmAgentConfig::tool_timeout)");
    co_return std::move(std::get<0>(first));
}

json::object not_available(const FunctionCall& call, const std::vector<std::shared_ptr<Tool>>& tools)
{
    std::string names;
    for (const auto& t : tools)
        names += (names.empty() ? "" : ", ") + t->name();
    return json::object{{"error", "Tool '" + call.name + "' is not available. The tools you can call are: " +
                                      (names.empty() ? std::string("none") : names) + "."}};
}

// One call through the stages (tool_dispatch.hpp).
asio::awaitable<ToolOutcome> run_tool(const LlmAgentConfig& cfg, const InvocationContext& ctx,
                                      const FunctionCall& call, const std::vector<std::shared_ptr<Tool>>& tools)
{
    ToolOutcome outcome;
    auto found = std::find_if(tools.begin(), tools.end(), [&](const auto& t) { return t->name() == call.name; });
    if (found == tools.end()) {
        outcome.response = not_available(call, tools);
        co_return outcome;
    }
    ToolCall tc(ctx, call, **found);
    const PluginManager plugins(ctx.plugins());
    co_await plugins.before_tool(tc.tool, tc.args, tc.context, cfg.before_tool_callbacks, tc.result);
    if (!tc.result) {
        co_await confirmation_gate(cfg, tc);
        if (!tc.stopped && !tc.result)
            co_await auth_gate(cfg, tc);
        if (!tc.stopped && !tc.result)
            co_await run_stage(cfg, tc);
    }
    if (!tc.result || (tc.result->is_null() && tc.tool.is_long_running())) {
        outcome.actions = std::move(tc.context.actions());
        co_return outcome;
    }
    std::optional<json::value> replaced;
    co_await plugins.after_tool(tc.tool, tc.args, tc.context, *tc.result, cfg.after_tool_callbacks, replaced);
    if (replaced)
        tc.result = std::move(replaced);
    outcome.response = std::move(tc.result);
    outcome.actions = std::move(tc.context.actions());
    co_return outcome;
}

void merge_actions(EventActions& into, EventActions from)
{
    for (auto& kv : from.state_delta)
        into.state_delta[kv.key()] = std::move(kv.value());
    for (auto& [name, version] : from.artifact_delta)
        into.artifact_delta[name] = version;
    into.skip_summarization = into.skip_summarization || from.skip_summarization;
    into.escalate = into.escalate || from.escalate;
    if (from.transfer_to_agent)
        into.transfer_to_agent = std::move(from.transfer_to_agent);
    for (auto& kv : from.requested_tool_confirmations)
        into.requested_tool_confirmations[kv.key()] = std::move(kv.value());
    for (auto& kv : from.requested_auth_configs)
        into.requested_auth_configs[kv.key()] = std::move(kv.value());
}

}  // namespace

asio::awaitable<void> confirmation_gate(const LlmAgentConfig&, ToolCall&)
{
    co_return;  // every call passes until tools can ask for confirmation
}

asio::awaitable<void> auth_gate(const LlmAgentConfig&, ToolCall&)
{
    co_return;  // every call passes until tools can ask for credentials
}

asio::awaitable<void> run_stage(const LlmAgentConfig& cfg, ToolCall& call)
{
    std::exception_ptr failure;
    try {
        call.result = co_await run_within_timeout(cfg, call.tool, call.context, call.args);
    } catch (...) {
        failure = std::current_exception();
    }
    if (!failure)
        co_return;
    Error error = as_error(failure);
    const InvocationContext& ctx = call.context.invocation_context();
    if (stops_invocation(error) || ctx.cancelled())
        std::rethrow_exception(failure);
    const PluginManager plugins(ctx.plugins());
    co_await plugins.on_tool_error(call.tool, call.args, call.context, error, cfg.on_tool_error_callbacks,
                                   call.result);
    if (!call.result)
        call.result = json::object{{"error", "Tool '" + call.call.name + "' failed: " + error.message()}};
}

asio::awaitable<std::optional<Event>> dispatch_tools(const LlmAgentConfig& cfg, const InvocationContext& ctx,
                                                     const std::vector<FunctionCall>& calls,
                                                     const std::vector<std::shared_ptr<Tool>>& tools)
{
    std::vector<ToolOutcome> outcomes(calls.size());
    const std::size_t workers = std::min(calls.size(), static_cast<std::size_t>(cfg.max_concurrent_tools));
    if (workers == 1) {
        for (std::size_t i = 0; i < calls.size(); ++i)
            outcomes[i] = co_await run_tool(cfg, ctx, calls[i], tools);
    } else {
        // The workers run on this coroutine's executor (the invocation's strand, or its branch's), one step
        // at a time: `next` needs no lock.
        std::size_t next = 0;
        auto worker = [&]() -> asio::awaitable<void> {
            while (next < calls.size()) {
                const std::size_t i = next++;
                outcomes[i] = co_await run_tool(cfg, ctx, calls[i], tools);
            }
        };
        auto ex = co_await asio::this_coro::executor;
        using op_type = decltype(asio::co_spawn(ex, worker, asio::deferred));
        std::vector<op_type> ops;
        for (std::size_t w = 0; w < workers; ++w)
            ops.push_back(asio::co_spawn(ex, worker, asio::deferred));
        auto group = asio::experimental::make_parallel_group(std::move(ops));
        auto [order, failures] = co_await group.async_wait(asio::experimental::wait_for_all(), asio::use_awaitable);
        (void)order;
        for (const auto& failure : failures)
            if (failure)
                std::rethrow_exception(failure);
    }

    Event event = ctx.make_event(Content("user", {}));
    for (std::size_t i = 0; i < calls.size(); ++i) {
        merge_actions(event.actions, std::move(outcomes[i].actions));
        if (!outcomes[i].response)
            continue;
        json::value& response = *outcomes[i].response;
        json::object body = response.is_object() ? std::move(response.get_object())
                                                 : json::object{{"result", std::move(response)}};
        event.content->parts.push_back(Part::from_function_response(calls[i].name, std::move(body), calls[i].id));
    }
    if (event.content->parts.empty())
        co_return std::nullopt;
    co_return event;
}

}  // namespace adk::detail
