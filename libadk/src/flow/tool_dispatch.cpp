#include "tool_dispatch.hpp"

#include "flow_errors.hpp"

#include "../plugins/plugin_manager.hpp"
#include "../telemetry/genai_spans.hpp"
#include "../telemetry/span_errors.hpp"

#include <adk/core/clock.hpp>
#include <adk/core/ids.hpp>
#include <adk/core/workers.hpp>

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <variant>

namespace adk::detail {

namespace {

struct ToolOutcome {
    std::optional<json::value> response;  // none: the call waits
    std::vector<Part> parts;              // ToolContext::add_response_part
    EventActions actions;
    bool waits = false;
    std::exception_ptr failure;  // the tool threw: answered by a callback or as {"error": ...}, its span says so
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
    adk::Timer timer(co_await asio::this_coro::executor, *timeout);
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

asio::awaitable<void> run_stages(const LlmAgentConfig& cfg, const InvocationContext& ctx, const PlannedCall& planned,
                                 Tool& tool, ToolOutcome& outcome);

// One call through the stages (tool_dispatch.hpp), in its execute_tool span; `event_id` is the event its response
// goes out in.
asio::awaitable<ToolOutcome> run_tool(const LlmAgentConfig& cfg, const InvocationContext& ctx,
                                      const PlannedCall& planned, const std::vector<std::shared_ptr<Tool>>& tools,
                                      const std::string& event_id)
{
    ToolOutcome outcome;
    const FunctionCall& call = planned.call;
    if (planned.step == PlannedCall::Step::reject) {
        outcome.response = rejected_response();
        co_return outcome;
    }
    auto found = std::find_if(tools.begin(), tools.end(), [&](const auto& t) { return t->name() == call.name; });
    if (found == tools.end()) {
        outcome.response = not_available(call, tools);
        co_return outcome;
    }
    telemetry::Span span = ctx.start_span("execute_tool " + call.name);
    trace_tool_call(span, ctx, **found, call.id, call.args, event_id);
    std::exception_ptr failure;
    try {
        if (has_own_context(span, ctx.span_context())) {
            const InvocationContext in_span = ctx.with_span(span.context());  // what the tool calls joins the trace
            co_await run_stages(cfg, in_span, planned, **found, outcome);
        } else {
            co_await run_stages(cfg, ctx, planned, **found, outcome);
        }
    } catch (...) {
        failure = std::current_exception();
    }
    if (failure) {
        record_failure(span, failure);
        std::rethrow_exception(failure);
    }
    if (outcome.failure)
        record_failure(span, outcome.failure);
    if (outcome.response)
        trace_tool_result(span, *outcome.response);
    co_return outcome;
}

// The stages of a call whose tool was found.
asio::awaitable<void> run_stages(const LlmAgentConfig& cfg, const InvocationContext& ctx, const PlannedCall& planned,
                                 Tool& tool, ToolOutcome& outcome)
{
    const FunctionCall& call = planned.call;
    ToolCall tc(ctx, call, tool);
    if (planned.confirmation)
        tc.context.set_tool_confirmation(*planned.confirmation);
    const PluginManager plugins(ctx.plugins());
    co_await plugins.before_tool(tc.tool, tc.args, tc.context, cfg.before_tool_callbacks, tc.result);
    if (!tc.result) {
        co_await confirmation_gate(cfg, tc);
        if (!tc.stopped && !tc.result)
            co_await auth_gate(cfg, tc);
        if (!tc.stopped && !tc.result)
            co_await run_stage(cfg, tc);
    }
    const EventActions& asked = tc.context.actions();
    const bool asks_person = asked.requested_tool_confirmations.contains(call.id) ||
                             asked.requested_auth_configs.contains(call.id);
    if (asks_person || !tc.result || (tc.result->is_null() && tc.tool.is_long_running())) {
        outcome.actions = std::move(tc.context.actions());
        outcome.waits = true;
        co_return;
    }
    std::optional<json::value> replaced;
    co_await plugins.after_tool(tc.tool, tc.args, tc.context, *tc.result, cfg.after_tool_callbacks, replaced);
    if (replaced)
        tc.result = std::move(replaced);
    outcome.failure = tc.failure;
    outcome.response = std::move(tc.result);
    outcome.parts = std::move(tc.context.response_parts());
    outcome.actions = std::move(tc.context.actions());
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
}

// The event that asks a person: one long-running adk_request_confirmation or adk_request_credential call per
// question, and the questions in actions, keyed by the original call's id.
std::optional<Event> requests_event(const InvocationContext& ctx, const std::vector<PlannedCall>& calls,
                                    std::vector<ToolOutcome>& outcomes)
{
    Event event = ctx.make_event(Content("user", {}));
    for (std::size_t i = 0; i < calls.size(); ++i) {
        const FunctionCall& call = calls[i].call;
        EventActions& asked = outcomes[i].actions;
        if (auto c = asked.requested_tool_confirmations.find(call.id); c != asked.requested_tool_confirmations.end()) {
            json::object original{{"id", call.id}, {"name", call.name}, {"args", call.args}};
            json::object args{{"originalFunctionCall", std::move(original)}, {"toolConfirmation", c->value()}};
            std::string id = "adk-" + new_uuid();
            event.content->parts.push_back(
                Part::from_function_call(std::string(request_confirmation_function), std::move(args), id));
            event.long_running_tool_ids.push_back(std::move(id));
            event.actions.requested_tool_confirmations[call.id] = std::move(c->value());
        }
        if (auto a = asked.requested_auth_configs.find(call.id); a != asked.requested_auth_configs.end())
            ask_credential(event, call.id, std::move(a->value().as_object()),
                           "Tool '" + call.name + "' needs a credential: answer with the authConfig, its credential "
                           "filled in.");
        asked.requested_tool_confirmations.clear();
        asked.requested_auth_configs.clear();
    }
    if (event.content->parts.empty())
        return std::nullopt;
    return event;
}

}  // namespace

void ask_credential(Event& event, const std::string& about, json::object auth_config, std::string message)
{
    json::object args{{"functionCallId", about}, {"authConfig", auth_config}, {"message", std::move(message)}};
    std::string id = "adk-" + new_uuid();
    event.content->parts.push_back(Part::from_function_call(std::string(request_credential_function), std::move(args), id));
    event.long_running_tool_ids.push_back(std::move(id));
    event.actions.requested_auth_configs[about] = std::move(auth_config);
}

json::object rejected_response()
{
    return json::object{{"error", "This tool call was rejected by the person asked to approve it."}};
}

asio::awaitable<void> confirmation_gate(const LlmAgentConfig&, ToolCall& call)
{
    if (call.context.tool_confirmation() || !call.tool.requires_confirmation(call.args))
        co_return;
    call.context.request_confirmation("Approve or reject the call of tool '" + call.call.name + "'.");
    call.stopped = true;
}

asio::awaitable<void> auth_gate(const LlmAgentConfig&, ToolCall& call)
{
    const std::optional<json::object>& auth_config = call.tool.auth_config();
    if (!auth_config)
        co_return;
    if (co_await call.context.load_credential(*auth_config))
        co_return;
    call.context.request_credential(*auth_config);
    call.stopped = true;
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
    call.failure = failure;
    const PluginManager plugins(ctx.plugins());
    co_await plugins.on_tool_error(call.tool, call.args, call.context, error, cfg.on_tool_error_callbacks,
                                   call.result);
    if (!call.result)
        call.result = json::object{{"error", "Tool '" + call.call.name + "' failed: " + error.message()}};
}

asio::awaitable<Dispatched> dispatch_tools(const LlmAgentConfig& cfg, const InvocationContext& ctx,
                                           const std::vector<PlannedCall>& calls,
                                           const std::vector<std::shared_ptr<Tool>>& tools)
{
    // The responses' event is made first, so that each call's span names it.
    Event event = ctx.make_event(Content("user", {}));
    std::vector<ToolOutcome> outcomes(calls.size());
    const std::size_t workers = std::min(calls.size(), static_cast<std::size_t>(cfg.max_concurrent_tools));
    if (workers == 1) {
        for (std::size_t i = 0; i < calls.size(); ++i)
            outcomes[i] = co_await run_tool(cfg, ctx, calls[i], tools, event.id);
    } else if (workers > 1) {
        // The workers run on this coroutine's executor (the invocation's strand, or its branch's), one step
        // at a time: `next` needs no lock.
        std::size_t next = 0;
        auto worker = [&]() -> asio::awaitable<void> {
            while (next < calls.size()) {
                const std::size_t i = next++;
                outcomes[i] = co_await run_tool(cfg, ctx, calls[i], tools, event.id);
            }
        };
        co_await run_workers(workers, worker);
    }

    Dispatched result;
    result.requests = requests_event(ctx, calls, outcomes);
    event.timestamp = now_seconds();
    for (std::size_t i = 0; i < calls.size(); ++i) {
        result.waits = result.waits || outcomes[i].waits;
        merge_actions(event.actions, std::move(outcomes[i].actions));
        if (!outcomes[i].response)
            continue;
        json::value& response = *outcomes[i].response;
        json::object body = response.is_object() ? std::move(response.get_object())
                                                 : json::object{{"result", std::move(response)}};
        const FunctionCall& call = calls[i].call;
        event.content->parts.push_back(Part::from_function_response(call.name, std::move(body), call.id));
    }
    for (ToolOutcome& outcome : outcomes)
        for (Part& part : outcome.parts)
            event.content->parts.push_back(std::move(part));
    if (!event.content->parts.empty())
        result.responses = std::move(event);
    co_return result;
}

}  // namespace adk::detail
