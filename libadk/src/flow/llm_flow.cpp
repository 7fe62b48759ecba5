// The LlmAgent's loop, top to bottom. Each step:
//   1. the request processors build the model request (adk/flow/processor.hpp, processors/)
//   2. the model is called (model_call.hpp)
//   3. its event is emitted; code it wrote runs (an agent with a code executor) and the model is called again
//      with the result; the tools it calls run through their stages (tool_dispatch.hpp) and their
//      responses are emitted, then what they ask a person
//   4. a transfer hands the rest of the invocation to another agent; a final answer ends the loop; a call that
//      waits for a person or a long-running tool pauses the invocation
// until the agent's max_iterations model calls are spent. A toolset that needs the user's credential before it
// lists its tools (CredentialRequired) is asked for it first, and the invocation pauses without a model call.
// An agent that runs again on a turn it left unfinished (a resumed invocation, an answer to its question) first
// finishes that turn (pending_calls.hpp).
#include "llm_flow.hpp"

#include "../code_execution/code_execution_flow.hpp"
#include "model_call.hpp"
#include "pending_calls.hpp"
#include "processors/processors.hpp"
#include "tool_dispatch.hpp"
#include "transfer_tool.hpp"

#include <adk/core/ids.hpp>
#include <adk/core/log.hpp>
#include <adk/tools/json_schema.hpp>
#include <adk/tools/tool_confirmation.hpp>
#include <adk/tools/toolset.hpp>

#include <boost/json/parse.hpp>

#include <algorithm>
#include <map>
#include <optional>

namespace adk::detail {

namespace {

class ResolvedTools {
public:
    ResolvedTools() = default;
    std::vector<std::shared_ptr<Tool>> tools;
    std::vector<std::pair<std::string, json::object>> credentials_asked;  // toolset name, auth config
};

// The names of the calls the agent makes or answers itself (its transfers, and the questions it asks the person).
bool reserved_tool_name(std::string_view name)
{
    return name == transfer_tool_name || name == request_confirmation_function || name == request_credential_function ||
           name == request_input_function;
}

// The agent's tools and its toolsets' tools for this invocation: resolved once per run of the agent. A toolset
// that fails ends the run with an error that names it; so does a tool name offered twice (the model calls tools
// by name). A toolset that needs the user's credential first is listed among those asked.
asio::awaitable<ResolvedTools> resolve_tools(const LlmAgentConfig& cfg, const InvocationContext& ctx)
{
    ResolvedTools resolved;
    resolved.tools = cfg.tools;
    if (cfg.toolsets.empty())
        co_return resolved;  // names checked when the agent was built
    std::vector<std::shared_ptr<Tool>>& tools = resolved.tools;
    std::map<std::string, std::string, std::less<>> origin;  // tool name -> where it came from
    for (const auto& tool : tools)
        origin.emplace(tool->name(), "the agent itself");
    ReadonlyContext ro(ctx);
    for (const auto& toolset : cfg.toolsets) {
        std::vector<std::shared_ptr<Tool>> more;
        std::optional<Error> failure;
        try {
            more = co_await toolset->get_tools(ro);
        } catch (const CredentialRequired& e) {
            resolved.credentials_asked.emplace_back(toolset->name(), e.auth_config());
        } catch (const Error& e) {
            if (e.code() == make_error_code(errc::cancelled))
                throw;
            failure.emplace(e.code(), "toolset " + toolset->name() + " did not give its tools: " + e.message());
        } catch (const boost::system::system_error& e) {
            if (e.code() == asio::error::operation_aborted)
                throw;
            failure.emplace(errc::agent_failed, "toolset " + toolset->name() + " did not give its tools: " + e.what());
        } catch (const std::exception& e) {
            failure.emplace(errc::agent_failed, "toolset " + toolset->name() + " did not give its tools: " + e.what());
        }
        if (failure)
            throw *failure;
        for (auto& tool : more) {
            if (!tool)
                continue;
            const std::string from = "toolset " + toolset->name();
            if (reserved_tool_name(tool->name())) {
                // A toolset's server chooses its tools' names: one of the agent's own would take its transfers,
                // or answer in place of the person. Left out, said once per run of the agent.
                log(LogLevel::warning, from + " offers a tool named '" + tool->name() +
                                           "', a name the agent keeps for its own calls: the tool is left out "
                                           "(rename it on its server, or give the toolset a filter that leaves it out)",
                    ctx.span_context());
                continue;
            }
            auto [at, fresh] = origin.emplace(tool->name(), from);
            if (!fresh)
                throw Error(errc::invalid_argument,
                            from + " offers a tool named '" + tool->name() + "', which " + at->second +
                                " has already: the model calls tools by name, so give the toolset a filter that "
                                "leaves one out");
            tools.push_back(std::move(tool));
        }
    }
    co_return resolved;
}

// Asks the client for the credentials toolsets need before they can list their tools: one long-running
// adk_request_credential call each, as a tool's are asked (tool_dispatch.cpp), about a call id of the toolset's.
asio::awaitable<void> ask_toolset_credentials(InvocationContext& ctx, EventSink& out,
                                              std::vector<std::pair<std::string, json::object>> asked)
{
    Event event = ctx.make_event(Content("user", {}));
    for (auto& [toolset, auth_config] : asked)
        ask_credential(event, "adk-toolset-" + new_uuid(), std::move(auth_config),
                       "Toolset '" + toolset + "' needs a credential before it can give its tools: answer with the "
                       "authConfig, its credential filled in.");
    co_await out.emit(std::move(event));
    ctx.pause();
}

// The flow's request processors, code execution's step, then the agent's processors.
asio::awaitable<void> prepare_request(const LlmAgent& agent, InvocationContext& ctx, EventSink& out,
                                      LlmRequest& request, CodeRunState& code)
{
    for (RequestProcessor* processor : flow_request_processors())
        co_await processor->process_request(ctx, request, out);
    prepare_code_execution(agent.config(), request, code);
    for (const auto& processor : agent.config().request_processors)
        co_await processor->process_request(ctx, request, out);
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

// A workflow's node (InvocationContext::as_workflow_node): its final answer is the node's output, its text or, with
// an output schema, its JSON, as ADK 2.x marks it (output, nodeInfo.messageAsOutput and outputFor).
void mark_node_output(const LlmAgent& agent, const InvocationContext& ctx, Event& event)
{
    const std::vector<std::string>& output_for = ctx.node_output_for();
    if (output_for.empty() || !event.content || event.error_code || event.author != agent.name())
        return;
    std::string text = event.content->text();
    json::value output(text);
    if (agent.config().output_schema) {
        boost::system::error_code ec;
        json::value parsed = json::parse(text, ec);
        if (!ec)
            output = std::move(parsed);
    }
    event.output = std::move(output);
    if (!event.node_info)
        event.node_info.emplace();
    event.node_info->message_as_output = true;
    event.node_info->output_for = output_for;
}

// The agent a transfer names runs for the rest of the invocation. When it pauses, so does the agent that
// handed over: a resumed invocation goes back through it to the target.
asio::awaitable<void> run_transfer_target(InvocationContext& ctx, EventSink& out, const std::string& name)
{
    auto target = ctx.root_agent() ? ctx.root_agent()->find_agent(name) : nullptr;
    if (!target)
        co_return;
    co_await target->run_inline(ctx, out);
    if (ctx.for_agent(*target).paused())
        ctx.pause();
}

// Runs the calls and emits their responses, then what they ask a person. False when the invocation's turn is
// over: it paused, ended, was handed to another agent, or a tool's answer is final.
asio::awaitable<bool> run_calls(const LlmAgent& agent, InvocationContext& ctx, EventSink& out,
                                const std::vector<std::shared_ptr<Tool>>& tools, const std::vector<PlannedCall>& calls)
{
    Dispatched dispatched = co_await dispatch_tools(agent.config(), ctx, calls, tools);
    std::optional<std::string> transfer;
    bool final = false;
    if (dispatched.responses) {
        transfer = dispatched.responses->actions.transfer_to_agent;
        final = dispatched.responses->is_final_response();
        co_await out.emit(std::move(*dispatched.responses));
    }
    if (dispatched.requests)
        co_await out.emit(std::move(*dispatched.requests));
    if (ctx.end_invocation())
        co_return false;
    if (transfer) {
        co_await run_transfer_target(ctx, out, *transfer);
        co_return false;
    }
    if (dispatched.waits) {
        ctx.pause();
        co_return false;
    }
    co_return !final && dispatched.responses.has_value();  // a final tool answer (skip_summarization) is the answer
}

// What follows a model call: its event, then the tools it calls. False when the invocation's turn is over.
asio::awaitable<bool> after_model_call(const LlmAgent& agent, InvocationContext& ctx, EventSink& out,
                                       const std::vector<std::shared_ptr<Tool>>& tools,
                                       std::unique_ptr<Event> model_event)
{
    std::vector<PlannedCall> calls;
    if (model_event->content) {
        for (Part& p : model_event->content->parts) {
            if (!p.function_call)
                continue;
            if (p.function_call->id.empty())
                p.function_call->id = "adk-" + new_uuid();
            auto tool = std::find_if(tools.begin(), tools.end(),
                                     [&](const auto& t) { return t->name() == p.function_call->name; });
            if (tool != tools.end() && (*tool)->is_long_running())
                model_event->long_running_tool_ids.push_back(p.function_call->id);
            calls.emplace_back(*p.function_call);
        }
    }
    if (calls.empty() && model_event->is_final_response()) {
        store_output(agent, *model_event);
        mark_node_output(agent, ctx, *model_event);
    }
    co_await out.emit(std::move(*model_event));
    if (calls.empty() || ctx.end_invocation())
        co_return false;
    co_return co_await run_calls(agent, ctx, out, tools, calls);
}

// An agent that runs again on a turn it left unfinished finishes it first. False when nothing more is to
// be done in this run (the model is not called).
asio::awaitable<bool> finish_pending_turn(const LlmAgent& agent, InvocationContext& ctx, EventSink& out,
                                          const std::vector<std::shared_ptr<Tool>>& tools)
{
    std::optional<PendingCalls> pending = find_pending_calls(ctx, agent.name());
    if (!pending)
        co_return true;
    if (pending->transferred_to) {
        co_await run_transfer_target(ctx, out, *pending->transferred_to);
        co_return false;
    }
    if (pending->done)
        co_return false;
    if (!pending->to_run.empty() && !co_await run_calls(agent, ctx, out, tools, pending->to_run))
        co_return false;
    if (pending->waits) {
        ctx.pause();
        co_return false;
    }
    co_return true;
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

// A token budget ran out (RunConfig::max_invocation_tokens, max_session_tokens): the invocation ends with a
// final event that says which, before the model is called again.
asio::awaitable<bool> stopped_by_budget(InvocationContext& ctx, EventSink& out)
{
    std::optional<std::string> exhausted = ctx.exhausted_token_budget();
    if (!exhausted)
        co_return false;
    Event stop = ctx.make_event(Content::model("I stopped: " + *exhausted + "."));
    stop.error_code = "TOKEN_BUDGET_EXHAUSTED";
    stop.error_message = *exhausted + "; raise it, or start a new session";
    stop.turn_complete = true;
    stop.custom_metadata["adk_token_budget"] =
        json::object{{"invocationTokens", ctx.invocation_tokens()}, {"sessionTokens", ctx.session_tokens()}};
    co_await out.emit(std::move(stop));
    ctx.set_end_invocation();
    co_return true;
}

}  // namespace

asio::awaitable<void> run_llm_flow(const LlmAgent& agent, InvocationContext& ctx, EventSink& out)
{
    const LlmAgentConfig& cfg = agent.config();
    ResolvedTools resolved = co_await resolve_tools(cfg, ctx);
    if (!resolved.credentials_asked.empty()) {
        co_await ask_toolset_credentials(ctx, out, std::move(resolved.credentials_asked));
        co_return;
    }
    const std::vector<std::shared_ptr<Tool>> tools = std::move(resolved.tools);
    if (!co_await finish_pending_turn(agent, ctx, out, tools))
        co_return;
    LlmRequest request;
    CodeRunState code;
    for (int iteration = 0; iteration < cfg.max_iterations; ++iteration) {
        request.callable_tools = tools;
        co_await prepare_request(agent, ctx, out, request, code);
        if (ctx.end_invocation())
            co_return;  // a processor ended it
        if (co_await stopped_by_budget(ctx, out))
            co_return;
        std::unique_ptr<Event> model_event = co_await call_model(agent, ctx, out, request);
        std::vector<std::shared_ptr<Tool>> called = std::move(request.callable_tools);
        request = LlmRequest();  // not kept while the tools run
        if (co_await run_model_code(agent, ctx, out, *model_event, code)) {
            if (ctx.end_invocation())
                co_return;
            continue;  // the model reads the code's result
        }
        const bool more = co_await after_model_call(agent, ctx, out, called, std::move(model_event));
        if (!more)
            co_return;
    }
    co_await emit_max_iterations(agent, ctx, out);
}

}  // namespace adk::detail
