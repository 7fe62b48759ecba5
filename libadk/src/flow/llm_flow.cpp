#include "llm_flow.hpp"

#include "transfer_tool.hpp"

#include "../plugins/plugin_manager.hpp"

#include <adk/core/ids.hpp>
#include <adk/flow/contents.hpp>
#include <adk/flow/instruction_template.hpp>
#include <adk/plugins/plugin.hpp>
#include <adk/sessions/state.hpp>
#include <adk/tools/json_schema.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>

#include <algorithm>
#include <map>
#include <variant>

namespace adk::detail {

namespace {

// ---- errors -------------------------------------------------------------------------------------------

Error as_error(std::exception_ptr failure)
{
    try {
        std::rethrow_exception(as_adk_error(failure));
    } catch (const Error& e) {
        return e;
    }
}

// Cancellation and a departed consumer stop the invocation; they are never handed to error callbacks.
bool stops_invocation(const Error& e)
{
    return e.code() == errc::cancelled || e.code() == errc::stream_closed ||
           e.code() == asio::error::operation_aborted ||
           e.code() == asio::experimental::error::channel_cancelled;
}

// ---- tools --------------------------------------------------------------------------------------------

struct Tools {
    std::vector<std::shared_ptr<Tool>> all;
    std::map<std::string, Tool*, std::less<>> by_name;
};

asio::awaitable<Tools> resolve_tools(const LlmAgentConfig& cfg, const InvocationContext& ctx,
                                     const std::vector<Agent*>& targets)
{
    Tools tools;
    tools.all = cfg.tools;
    ReadonlyContext ro(ctx);
    for (const auto& toolset : cfg.toolsets) {
        std::vector<std::shared_ptr<Tool>> more = co_await toolset->get_tools(ro);
        tools.all.insert(tools.all.end(), more.begin(), more.end());
    }
    if (!targets.empty())
        tools.all.push_back(std::make_shared<TransferToAgentTool>(targets));
    for (const auto& t : tools.all)
        tools.by_name.emplace(t->name(), t.get());
    co_return tools;
}

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
    // Named operands: g++ 12 and temporaries in co_await expressions (docs/STYLE.md 5.1).
    asio::awaitable<json::value> run = tool.run(tc, std::move(args));
    asio::awaitable<void> expire = timer.async_wait(asio::use_awaitable);
    std::variant<json::value, std::monostate> first = co_await (std::move(run) || std::move(expire));
    if (first.index() == 1)
        throw Error(asio::error::timed_out, "it did not finish within " + std::to_string(timeout->count()) +
                                                " ms and was stopped (Tool::set_timeout, LlmAgentConfig::tool_timeout)");
    co_return std::move(std::get<0>(first));
}

// One call through the fixed pipeline: before-tool callbacks, then the gates in this order,
// confirmation, then auth (the human-in-the-loop issue fills both), then the tool; then after-tool
// callbacks. What the tool throws goes to on-tool-error callbacks, else to the model as {"error": ...}.
asio::awaitable<ToolOutcome> run_tool(const LlmAgentConfig& cfg, const InvocationContext& ctx, const FunctionCall& call,
                                      Tool* tool, const Tools& tools)
{
    ToolOutcome outcome;
    if (!tool) {
        std::string names;
        for (const auto& t : tools.all)
            names += (names.empty() ? "" : ", ") + t->name();
        outcome.response = json::object{
            {"error", "Tool '" + call.name + "' is not available. The tools you can call are: " +
                          (names.empty() ? std::string("none") : names) + "."}};
        co_return outcome;
    }
    ToolContext tc(ctx, call.id);
    json::object args = call.args;
    const PluginManager plugins(ctx.plugins());
    std::optional<json::value> result;
    co_await plugins.before_tool(*tool, args, tc, cfg.before_tool_callbacks, result);
    if (!result) {
        std::exception_ptr failure;
        try {
            result = co_await run_within_timeout(cfg, *tool, tc, args);
        } catch (...) {
            failure = std::current_exception();
        }
        if (failure) {
            Error error = as_error(failure);
            if (stops_invocation(error) || ctx.cancelled())
                std::rethrow_exception(failure);
            co_await plugins.on_tool_error(*tool, args, tc, error, cfg.on_tool_error_callbacks, result);
            if (!result)
                result = json::object{{"error", "Tool '" + call.name + "' failed: " + error.message()}};
        }
    }
    if (result->is_null() && tool->is_long_running()) {
        outcome.actions = std::move(tc.actions());
        co_return outcome;
    }
    std::optional<json::value> replaced;
    co_await plugins.after_tool(*tool, args, tc, *result, cfg.after_tool_callbacks, replaced);
    if (replaced)
        result = std::move(replaced);
    outcome.response = std::move(result);
    outcome.actions = std::move(tc.actions());
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

// Runs every call, several at once (a slow tool does not hold up the others) but no more than
// max_concurrent_tools at a time: that many workers take the calls in order. The responses are merged into
// one event, in call order. nullopt when no call has a response yet.
asio::awaitable<std::optional<Event>> dispatch_tools(const LlmAgentConfig& cfg, const InvocationContext& ctx,
                                                     const std::vector<FunctionCall>& calls, const Tools& tools)
{
    auto tool_for = [&](const FunctionCall& call) -> Tool* {
        auto it = tools.by_name.find(call.name);
        return it == tools.by_name.end() ? nullptr : it->second;
    };
    std::vector<ToolOutcome> outcomes(calls.size());
    const std::size_t workers = std::min(calls.size(), static_cast<std::size_t>(cfg.max_concurrent_tools));
    if (workers == 1) {
        for (std::size_t i = 0; i < calls.size(); ++i)
            outcomes[i] = co_await run_tool(cfg, ctx, calls[i], tool_for(calls[i]), tools);
    } else {
        // The workers run on this coroutine's executor (the invocation's strand, or its branch's), one step
        // at a time: `next` needs no lock.
        std::size_t next = 0;
        auto worker = [&]() -> asio::awaitable<void> {
            while (next < calls.size()) {
                const std::size_t i = next++;
                outcomes[i] = co_await run_tool(cfg, ctx, calls[i], tool_for(calls[i]), tools);
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

// ---- the request --------------------------------------------------------------------------------------

std::string identity_instruction(const LlmAgent& agent)
{
    std::string si = "You are an agent. Your internal name is \"" + agent.name() + "\".";
    if (!agent.description().empty())
        si += " The description about you is \"" + agent.description() + "\".";
    return si;
}

// Fills `request` (owned by the caller, so that no second LlmRequest sits in the caller's coroutine frame).
asio::awaitable<void> build_request(const LlmAgent& agent, const InvocationContext& ctx, const Tools& tools,
                                    const std::vector<Agent*>& targets, LlmRequest& request)
{
    const LlmAgentConfig& cfg = agent.config();
    ReadonlyContext ro(ctx);
    request = LlmRequest();
    request.model = std::string(cfg.model->name());
    request.config = cfg.generate_content_config;
    if (cfg.output_schema) {
        request.config.response_schema = *cfg.output_schema;
        request.config.response_mime_type = "application/json";
    }

    // The dynamic part: the root's global instruction, then this agent's instruction, a blank line apart.
    std::string dynamic;
    Agent* root = ctx.root_agent() ? ctx.root_agent().get() : &const_cast<LlmAgent&>(agent).root_agent();
    if (auto* root_llm = dynamic_cast<const LlmAgent*>(root); root_llm && !root_llm->config().global_instruction.empty())
        dynamic = co_await inject_session_state(root_llm->config().global_instruction, ro);
    // Not a conditional expression with co_await in both arms: g++ 12 frees a wrong pointer for that.
    std::string own;
    if (cfg.instruction_provider)
        own = co_await cfg.instruction_provider(ro);
    else
        own = co_await inject_session_state(cfg.instruction, ro);
    if (!own.empty())
        dynamic += (dynamic.empty() ? "" : "\n\n") + own;

    if (cfg.static_instruction)
        request.system_instruction = *cfg.static_instruction;  // verbatim, byte for byte, every turn
    else
        request.append_instruction(dynamic);
    request.append_instruction(identity_instruction(agent));
    if (!targets.empty())
        request.append_instruction(transfer_instruction(agent, targets));

    for (const auto& tool : tools.all)
        if (auto declaration = tool->declaration())
            request.tools.push_back(std::move(*declaration));

    request.contents = ctx.with_session([&](const Session& s) {
        return build_contents(s.events, agent.name(), ctx.branch(), cfg.include_contents);
    });
    if (cfg.static_instruction && !dynamic.empty())
        request.contents.emplace_back("user", std::vector<Part>{Part::from_text(dynamic)});
}

// ---- the model call -----------------------------------------------------------------------------------

// Joins streamed chunks into the final response: text deltas joined, thoughts joined apart, other parts
// (function calls, ...) kept in order; the latest finish reason, usage and metadata win.
class Aggregator {
public:
    void add(const LlmResponse& r)
    {
        if (r.content) {
            for (const Part& p : r.content->parts) {
                if (p.text && p.thought) {
                    thought_ += *p.text;
                    if (p.thought_signature)
                        thought_signature_ = p.thought_signature;
                } else if (p.text && !p.function_call) {
                    text_ += *p.text;
                    has_text_ = true;
                    if (p.thought_signature)
                        text_signature_ = p.thought_signature;
                } else {
                    others_.push_back(p);
                }
            }
        }
        auto keep = [](auto& into, const auto& from) {
            if (from)
                into = from;
        };
        keep(meta_.finish_reason, r.finish_reason);
        keep(meta_.usage_metadata, r.usage_metadata);
        keep(meta_.error_code, r.error_code);
        keep(meta_.error_message, r.error_message);
        keep(meta_.model_version, r.model_version);
        meta_.turn_complete = meta_.turn_complete || r.turn_complete;
        meta_.interrupted = meta_.interrupted || r.interrupted;
        for (const auto& kv : r.custom_metadata)
            meta_.custom_metadata[kv.key()] = kv.value();
        for (const auto& kv : r.provider_metadata)
            meta_.provider_metadata[kv.key()] = kv.value();
    }

    // The text and thought text joined so far.
    std::size_t bytes() const noexcept { return text_.size() + thought_.size(); }

    LlmResponse finish()
    {
        LlmResponse out = std::move(meta_);
        std::vector<Part> parts;
        if (!thought_.empty()) {
            parts.push_back(Part::from_thought(std::move(thought_)));
            parts.back().thought_signature = thought_signature_;
        }
        if (has_text_) {
            parts.push_back(Part::from_text(std::move(text_)));
            parts.back().thought_signature = text_signature_;
        }
        for (auto& p : others_)
            parts.push_back(std::move(p));
        if (!parts.empty())
            out.content = Content("model", std::move(parts));
        out.partial = false;
        return out;
    }

private:
    std::string text_;
    std::string thought_;
    bool has_text_ = false;
    std::optional<std::string> text_signature_;
    std::optional<std::string> thought_signature_;
    std::vector<Part> others_;
    LlmResponse meta_;
};

void fill_event(Event& event, LlmResponse&& response)
{
    event.content = std::move(response.content);
    if (event.content && event.content->role.empty())
        event.content->role = "model";
    event.partial = response.partial;
    event.turn_complete = response.turn_complete;
    event.interrupted = response.interrupted;
    event.finish_reason = std::move(response.finish_reason);
    event.usage_metadata = std::move(response.usage_metadata);
    event.error_code = std::move(response.error_code);
    event.error_message = std::move(response.error_message);
    event.custom_metadata = std::move(response.custom_metadata);
    event.model_version = std::move(response.model_version);
    event.extra = std::move(response.provider_metadata);
}

// Whether a streamed chunk has text (or thought text) to show. Chunks with only function calls or only
// metadata (finish reason, usage) are not shown as partial events: the final event carries them.
bool carries_text(const LlmResponse& r)
{
    if (!r.content)
        return false;
    for (const Part& p : r.content->parts)
        if (p.text && !p.text->empty())
            return true;
    return false;
}

// ---- the model call, in phases -------------------------------------------------------------------------
//
// DESIGN: g++ gives every local and every co_await temporary of a coroutine its own slot in the frame, for
// the coroutine's whole life, and the frames of the whole call chain are alive while a model streams. With
// thousands of concurrent invocations that is most of their memory. So the chain that is alive while
// streaming (run_llm_flow -> call_model -> stream_model) holds only what streaming needs, the other
// phases are coroutines of their own whose frames are gone by then, and results travel through
// references or as pointers rather than as Event / LlmResponse temporaries.

// Calls the model. In SSE mode every chunk with text is emitted as a partial event with the identity of
// `skeleton` (id, invocation, author, branch, time: it shares the final event's id, as ADK does, so a UI
// replaces the deltas by the whole); `response` gets the whole answer.
asio::awaitable<void> stream_model(const LlmAgent& agent, const InvocationContext& ctx, EventSink& out,
                                   const LlmRequest& request, const Event& skeleton,
                                   std::optional<LlmResponse>& response)
{
    const LlmAgentConfig& cfg = agent.config();
    const bool sse = ctx.run_config().streaming_mode == StreamingMode::sse;
    Stream<LlmResponse> stream = co_await cfg.model->generate(request, sse);
    Aggregator aggregate;
    while (auto chunk = co_await stream.next()) {
        if (!sse) {
            response = std::move(*chunk);
            continue;
        }
        const bool shown = chunk->partial && carries_text(*chunk);
        aggregate.add(*chunk);
        if (aggregate.bytes() > ctx.run_config().max_answer_bytes)
            throw Error(errc::bad_response, "model '" + std::string(cfg.model->name()) + "' streamed an answer over " +
                                                std::to_string(ctx.run_config().max_answer_bytes) +
                                                " bytes of text (RunConfig::max_answer_bytes)");
        if (shown) {
            auto partial = std::make_unique<Event>();
            partial->id = skeleton.id;
            partial->invocation_id = skeleton.invocation_id;
            partial->author = skeleton.author;
            partial->branch = skeleton.branch;
            partial->timestamp = skeleton.timestamp;
            fill_event(*partial, std::move(*chunk));
            partial->partial = true;
            if (!out.try_emit(partial))
                co_await out.emit(std::move(partial));
        }
    }
    if (sse)
        response = aggregate.finish();
    if (!response)
        throw Error(errc::agent_failed, "model '" + std::string(cfg.model->name()) +
                                            "' ended its answer without a response");
}

// A failed model call goes to on-model-error plugins, then callbacks; the first answer stands in for the
// model. Rethrows the failure when nobody answers, or when it stops the invocation.
asio::awaitable<void> recover(const LlmAgentConfig& cfg, const InvocationContext& ctx, CallbackContext& cb,
                              LlmRequest& request, std::exception_ptr failure, std::optional<LlmResponse>& response)
{
    Error error = as_error(failure);
    if (stops_invocation(error))
        std::rethrow_exception(failure);
    const PluginManager plugins(ctx.plugins());
    co_await plugins.on_model_error(cb, request, error, cfg.on_model_error_callbacks, response);
    if (!response)
        std::rethrow_exception(failure);
}

// After-model plugins, then callbacks: the first replacement wins.
asio::awaitable<void> after_model(const LlmAgentConfig& cfg, const InvocationContext& ctx, CallbackContext& cb,
                                  LlmResponse& response)
{
    std::optional<LlmResponse> replaced;
    const PluginManager plugins(ctx.plugins());
    co_await plugins.after_model(cb, response, cfg.after_model_callbacks, replaced);
    if (replaced)
        response = std::move(*replaced);
}

// Calls the model, or takes a before-model callback's answer. Returns the final model event, not yet
// emitted.
asio::awaitable<std::unique_ptr<Event>> call_model(const LlmAgent& agent, const InvocationContext& ctx,
                                                   EventSink& out, LlmRequest& request)
{
    const LlmAgentConfig& cfg = agent.config();
    CallbackContext cb(ctx);
    auto event = std::make_unique<Event>(ctx.make_event());  // on the heap: this frame lives while streaming
    std::optional<LlmResponse> response;  // a before-model plugin or callback may answer in the model's place
    const PluginManager plugins(ctx.plugins());
    co_await plugins.before_model(cb, request, cfg.before_model_callbacks, response);
    if (!response) {
        if (ctx.cancelled())
            throw Error(errc::cancelled, "invocation " + ctx.invocation_id() + " was cancelled");
        ctx.check_and_inc_llm_call();
        std::exception_ptr failure;
        try {
            co_await stream_model(agent, ctx, out, request, *event, response);
        } catch (...) {
            failure = std::current_exception();
        }
        if (failure)
            co_await recover(cfg, ctx, cb, request, failure, response);
    }
    co_await after_model(cfg, ctx, cb, *response);
    event->timestamp = now_seconds();
    fill_event(*event, std::move(*response));
    event->partial = false;
    event->actions = std::move(cb.actions());
    co_return event;
}

// output_key: the final answer's text (thoughts left out), or its parsed JSON with an output schema.
void store_output(const LlmAgent& agent, Event& event)
{
    const LlmAgentConfig& cfg = agent.config();
    if (cfg.output_key.empty() || !event.content || event.error_code || event.author != agent.name())
        return;
    std::string text = event.content->text();
    if (!cfg.output_schema) {
        event.actions.state_delta[cfg.output_key] = text;
        return;
    }
    boost::system::error_code ec;
    json::value parsed = json::parse(text, ec);
    std::optional<std::string> mismatch = ec ? std::optional<std::string>("it is not JSON: " + ec.message())
                                             : schema_mismatch(*cfg.output_schema, parsed);
    if (mismatch)
        throw Error(errc::invalid_argument, "agent '" + agent.name() + "' has an output_schema, but the model's "
                                            "answer does not fit it (" + *mismatch + "): " + text.substr(0, 200));
    event.actions.state_delta[cfg.output_key] = std::move(parsed);
}

}  // namespace

namespace {

// What follows a model call: its event, then the tools it calls and their responses. False when the
// invocation's turn is over.
asio::awaitable<bool> after_model_call(const LlmAgent& agent, InvocationContext& ctx, EventSink& out,
                                       const Tools& tools, std::unique_ptr<Event> model_event)
{
    const LlmAgentConfig& cfg = agent.config();
    std::vector<FunctionCall> calls;
    if (model_event->content) {
        for (Part& p : model_event->content->parts) {
            if (!p.function_call)
                continue;
            if (p.function_call->id.empty())
                p.function_call->id = "adk-" + new_uuid();
            auto tool = tools.by_name.find(p.function_call->name);
            if (tool != tools.by_name.end() && tool->second->is_long_running())
                model_event->long_running_tool_ids.push_back(p.function_call->id);
            calls.push_back(*p.function_call);
        }
    }
    if (calls.empty() && model_event->is_final_response())
        store_output(agent, *model_event);
    co_await out.emit(std::move(*model_event));
    if (calls.empty() || ctx.end_invocation())
        co_return false;

    std::optional<Event> responses = co_await dispatch_tools(cfg, ctx, calls, tools);
    if (!responses)
        co_return false;  // only long-running tools, which answer later
    std::optional<std::string> transfer = responses->actions.transfer_to_agent;
    bool final = responses->is_final_response();
    co_await out.emit(std::move(*responses));
    if (ctx.end_invocation())
        co_return false;
    if (transfer) {
        // Runs the target for the rest of the invocation (the workflow issue adds the routing rules).
        if (auto target = ctx.root_agent() ? ctx.root_agent()->find_agent(*transfer) : nullptr)
            co_await target->run_inline(ctx, out);
        co_return false;
    }
    co_return !final;  // a final tool answer (skip_summarization) is the answer
}

asio::awaitable<void> emit_max_iterations(const LlmAgent& agent, InvocationContext& ctx, EventSink& out)
{
    const LlmAgentConfig& cfg = agent.config();
    Event fail_safe = ctx.make_event();
    fail_safe.error_code = "MAX_ITERATIONS";
    fail_safe.error_message = "agent '" + agent.name() + "' made " + std::to_string(cfg.max_iterations) +
                              " model calls without a final answer and stopped; raise max_iterations if the task "
                              "needs more steps, or check why the model keeps calling tools";
    co_await out.emit(std::move(fail_safe));
}

}  // namespace

asio::awaitable<void> run_llm_flow(const LlmAgent& agent, InvocationContext& ctx, EventSink& out)
{
    const LlmAgentConfig& cfg = agent.config();
    std::vector<Agent*> targets = transfer_targets(agent);
    Tools tools = co_await resolve_tools(cfg, ctx, targets);
    LlmRequest request;
    for (int iteration = 0; iteration < cfg.max_iterations; ++iteration) {
        co_await build_request(agent, ctx, tools, targets, request);
        std::unique_ptr<Event> model_event = co_await call_model(agent, ctx, out, request);
        request = LlmRequest();  // not kept while the tools run
        const bool more = co_await after_model_call(agent, ctx, out, tools, std::move(model_event));
        if (!more)
            co_return;
    }
    co_await emit_max_iterations(agent, ctx, out);
}

}  // namespace adk::detail
