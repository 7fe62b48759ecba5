// InvocationContext: what an agent knows about the invocation it runs in.
//
// DESIGN: an invocation's shared part (session, services, ids, config, cancellation, budget) lives in one
// detail::Invocation owned by shared_ptr, private to libadk; an InvocationContext adds the agent that runs and
// its branch.
// Entering a sub-agent makes a new, cheap InvocationContext over the same Invocation, as ADK does with
// model_copy. An invocation runs on its strand (executor()); a ParallelAgent gives each branch a strand
// of its own, so branches run at once on a multi-threaded io_context. The invocation's copy of the
// session is therefore read and written under a mutex: session() and state() return copies, and
// with_session() runs a function under the lock.
#pragma once

#include <adk/agents/run_config.hpp>
#include <adk/core/content.hpp>
#include <adk/core/event.hpp>
#include <adk/sessions/session.hpp>
#include <adk/telemetry/tracer.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <any>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>
#include <utility>

namespace adk {

namespace asio = boost::asio;

class Agent;
class SessionService;
class ArtifactService;
class MemoryService;
class CredentialService;
class Plugin;

// What an invocation is made of. The Runner fills it; tests of a single agent may fill it themselves.
struct InvocationOptions {
    std::string app_name;
    std::string user_id;
    Session session;  // the caller's copy; events are appended to it as they are committed
    std::shared_ptr<SessionService> session_service;
    std::shared_ptr<ArtifactService> artifact_service;
    std::shared_ptr<MemoryService> memory_service;
    std::shared_ptr<CredentialService> credential_service;
    RunConfig run_config;
    std::optional<Content> user_content;
    std::shared_ptr<Agent> root_agent;
    asio::any_io_executor executor;  // the invocation's strand (the caller's executor if single-threaded)
    std::string invocation_id;       // "e-<uuid>" when empty
    std::string origin = "runner";   // what started the invocation: "runner", "api", "cli", ...
    std::vector<std::shared_ptr<Plugin>> plugins;  // run in order, before the agents' own callbacks
    // The app is resumable (ResumabilityConfig): its agents record where they are (actions.agentState,
    // actions.endOfAgent) so that a paused or interrupted invocation continues where it stopped.
    bool resumable = false;
    // This run continues invocation_id, which ran before (Runner::run with RunRequest::invocation_id, or an
    // answer to one of its function calls).
    bool resumed = false;
    // Where the invocation's spans go (adk/telemetry/tracer.hpp); none: no spans. The Tracer outlives the
    // invocation.
    std::shared_ptr<const telemetry::Tracer> tracer;
    // The trace the invocation continues (a request's traceparent); not valid: it starts one.
    telemetry::SpanContext trace_parent;
};

namespace detail {
class Invocation;  // the shared part; libadk/src/agents/invocation.hpp
}  // namespace detail

// What a workflow's node recorded in this invocation (adk/workflow): its output, the route it chose, and whether
// it ended. A node with any of them has finished; a resumed workflow does not run it again.
struct NodeOutcome {
    std::optional<json::value> output;
    std::optional<json::value> route;
    bool ended = false;
};

class InvocationContext {
public:
    // A context for `agent` (may be null until the first agent runs) over a new invocation.
    explicit InvocationContext(InvocationOptions options, Agent* agent = nullptr);
    InvocationContext(std::shared_ptr<detail::Invocation> invocation, Agent* agent, std::string branch,
                      asio::any_io_executor executor = {}, std::string node_path = {});

    // The same invocation, seen by `agent` on its `run`-th run below this context's node (a sub-agent entering
    // its run; a loop's children run once per round). The branch is kept; the node path gains "name@run".
    InvocationContext for_agent(Agent& agent, int run = 1) const;
    // The same invocation and agent, on the `run`-th run of node `name` below this context's node: what a workflow
    // gives a node that is not an agent (a function, a join).
    InvocationContext for_node(std::string_view name, int run) const;
    // This context as a workflow's node (adk/workflow): every event it and the agents below it make carries its
    // node path, resumable app or not, and its agent's answer is the node's output (an LlmAgent's final response
    // gets `output` and nodeInfo.messageAsOutput), recorded for the paths in `output_for` (its own first, then
    // those of the workflows whose output it also is). `input` is what the node was given.
    InvocationContext as_workflow_node(std::vector<std::string> output_for, json::value input = nullptr) const;
    // The paths this context's answer is the output of (nodeInfo.outputFor); empty when it is no workflow's node.
    const std::vector<std::string>& node_output_for() const noexcept;
    // The input this context's node was given; nullptr when it is no workflow's node.
    const json::value* node_input() const noexcept;
    // The same invocation, its events in isolation scope `scope` (Event::isolation_scope, a workflow node's
    // NodeOptions::isolation_scope): an LlmAgent in it sees only the events of its scope and those of none. The
    // contexts made from it keep it. Empty: none.
    InvocationContext with_isolation_scope(std::string scope) const;
    const std::string& isolation_scope() const noexcept { return isolation_scope_; }
    // The same invocation and agent on another branch ("parallel.child"), running on `executor` (the
    // branch's own strand) when one is given.
    InvocationContext with_branch(std::string branch, asio::any_io_executor executor = {}) const;

    const std::string& invocation_id() const noexcept;
    const std::string& app_name() const noexcept;
    const std::string& user_id() const noexcept;
    const std::string& origin() const noexcept;
    const std::string& branch() const noexcept { return branch_; }
    // This context's node: "name@run" segments from the agent the invocation started at down to this agent,
    // joined by '/' ("root@1/loop@1/critic@2"), as ADK writes nodeInfo.path. Empty before the first agent runs.
    const std::string& node_path() const noexcept { return node_path_; }
    Agent& agent() const;
    const std::shared_ptr<Agent>& root_agent() const noexcept;
    // A copy of the session as this invocation sees it now (events committed so far, temp: state too).
    Session session() const;
    const std::string& session_id() const noexcept;
    // Runs f(const Session&) under the session lock and returns its result. Keep f short: no waiting.
    template <class F>
    auto with_session(F&& f) const
    {
        using Result = std::invoke_result_t<F&, const Session&>;
        if constexpr (std::is_void_v<Result>) {
            visit_session([&](const Session& s) { f(s); });
        } else {
            std::optional<Result> result;
            visit_session([&](const Session& s) { result.emplace(f(s)); });
            return std::move(*result);
        }
    }
    const RunConfig& run_config() const noexcept;
    const std::optional<Content>& user_content() const noexcept;
    const std::shared_ptr<SessionService>& session_service() const noexcept;
    const std::shared_ptr<ArtifactService>& artifact_service() const noexcept;
    const std::shared_ptr<MemoryService>& memory_service() const noexcept;
    const std::shared_ptr<CredentialService>& credential_service() const noexcept;
    const std::vector<std::shared_ptr<Plugin>>& plugins() const noexcept;
    // The strand this context's agent runs on: the invocation's, or its branch's.
    const asio::any_io_executor& executor() const noexcept;

    // A copy of a state value as this invocation sees it (session, app:, user: and temp: keys).
    std::optional<json::value> state(std::string_view key) const;

    // An event authored by this context's agent, with the invocation id, branch, a fresh id and the time; in a
    // resumable app, its node path too (nodeInfo.path), by which a resumed invocation finds where it stood.
    Event make_event(Content content) const;
    Event make_event() const;

    // True once the invocation was cancelled (Runner::cancel or the consumer left). Long computations
    // that do not await should check it.
    bool cancelled() const noexcept;
    void cancel() const noexcept;

    // Set by an agent or callback to stop the whole invocation after the current event.
    bool end_invocation() const noexcept;
    void set_end_invocation(bool value = true) const noexcept;

    // Pause and resume (adk/tools/tool_confirmation.hpp). An agent that waits for a person or a long-running
    // tool pauses: it and the agents above it stop without recording their end, and a later run resumes them.
    // Other branches of a ParallelAgent go on and finish. paused(): this context's agent, or one below it, paused.
    bool paused() const;
    void pause() const;
    bool is_resumable() const noexcept;
    bool resumed() const noexcept;
    // Where this context's node stands in the invocation, from its events (resumable apps only): the latest
    // actions.agentState it recorded, and whether it recorded actions.endOfAgent. Kept by node path, so each
    // run of a node (a loop's rounds) has its own. Read from the invocation's run state (built once from the
    // session's events when the invocation starts, then kept current as events are committed).
    std::optional<json::object> agent_state() const;
    bool agent_ended() const;
    // What this context's node recorded in the invocation (any app: a workflow reads its nodes' outcomes here);
    // nullopt when it recorded no output, route or end.
    std::optional<NodeOutcome> node_outcome() const;
    // The ids of the long-running calls this context's node made in the invocation, in order (a workflow node's
    // questions to a person, which it asks once and finds answered when it runs again).
    std::vector<std::string> node_interrupts() const;

    // Counts one model call against RunConfig::max_llm_calls; throws adk::Error
    // (errc::llm_call_limit_exceeded) past the limit.
    void check_and_inc_llm_call() const;
    int llm_calls() const noexcept;
    // Counts one run of a workflow's node against RunConfig::max_node_runs; throws adk::Error
    // (errc::node_run_limit_exceeded) past the limit.
    void check_and_inc_node_run() const;

    // Token budgets (RunConfig::max_invocation_tokens, max_session_tokens): the tokens the invocation's model
    // calls used so far, and the session's (its other events' usage included). add_tokens counts a model call's
    // usage (the flow calls it). exhausted_token_budget(): which budget ran out, in words, or nullopt.
    std::int64_t invocation_tokens() const noexcept;
    std::int64_t session_tokens() const noexcept;
    void add_tokens(const UsageMetadata& usage) const;
    std::optional<std::string> exhausted_token_budget() const;

    // Telemetry (adk/telemetry/tracer.hpp). The span this context runs in (its agent's, model call's or tool's, else
    // the invocation's), the parent of the spans started from it; what a call this context makes carries as its
    // traceparent.
    const telemetry::SpanContext& span_context() const noexcept { return span_context_; }
    // The same context, in `span`.
    InvocationContext with_span(const telemetry::SpanContext& span) const;
    // A span under span_context(), of the invocation's tracer and owned by its session; one that only passes
    // span_context() on when the invocation has no tracer that records.
    telemetry::Span start_span(std::string name, telemetry::SpanKind kind = telemetry::SpanKind::internal) const;

    // Per-invocation values for plugins and callbacks. Safe from any thread.
    void set_attribute(std::string key, std::any value) const;
    std::any attribute(std::string_view key) const;

    // The invocation's shared part, opaque outside libadk (an EventSink is made from it).
    const std::shared_ptr<detail::Invocation>& invocation() const noexcept { return inv_; }

private:
    void visit_session(const std::function<void(const Session&)>& f) const;

    std::shared_ptr<detail::Invocation> inv_;
    Agent* agent_ = nullptr;
    std::string branch_;
    asio::any_io_executor executor_;  // empty: the invocation's
    std::string node_path_;
    std::string isolation_scope_;  // with_isolation_scope; empty: none
    struct NodeRole;
    bool in_workflow_ = false;                // write node paths (as_workflow_node)
    std::shared_ptr<const NodeRole> role_;    // as_workflow_node; null otherwise
    telemetry::SpanContext span_context_;     // InvocationOptions::trace_parent until a span is entered
};

}  // namespace adk
