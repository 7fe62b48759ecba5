// One run of one node, as the scheduler starts it and as NodeContext::run_node starts it: passed over with what the
// invocation recorded, or run (its attempts, each within its timeout) with its output recorded. Private to
// adk::workflow.
#pragma once

#include "detail.hpp"

#include <optional>
#include <string>
#include <vector>

namespace adk::workflow::detail {

struct NodeResult {
    json::value output;                 // null: none
    std::optional<json::value> route;   // the route(s) it chose
    bool paused = false;                // it waits for a person (or a node below it does)
};

// The context of run `run` of `node` below `parent`, on `branch`. Its output is also the output of `owners` (the
// paths of the workflows whose last node it is; empty for others).
InvocationContext node_context(const InvocationContext& parent, const Node& node, int run, const std::string& branch,
                               const std::vector<std::string>& owners, json::value input);

// What a run comes to without running the node: what the invocation recorded of it; or, for a node that asked a
// person and does not run again (rerun_on_resume off), the answers as its output (`record`: not yet recorded) or a
// pause while one is missing. nullopt: the node must run.
struct Settled {
    NodeResult result;
    bool record = false;
};
std::optional<Settled> settle(const Node& node, const InvocationContext& node_ctx);

// The event of `author` in `ctx` that records what a node said when it ended: its state changes, its route, and
// its output (null: none) for the paths of ctx.node_output_for(), or ctx's own path when it is no workflow's node.
Event said_event(const InvocationContext& ctx, const std::string& author, json::object state_delta,
                 const std::optional<json::value>& route, const json::value& output);

// Runs the node to its end: its attempts (RetryConfig), each within its timeout, then its output event. Throws what
// its last attempt threw. `settled`: settle's answer for it, when it has one to record.
asio::awaitable<NodeResult> run_node(Node& node, InvocationContext node_ctx, EventSink& out, std::string from,
                                     json::value input, std::optional<Settled> settled = std::nullopt);

}  // namespace adk::workflow::detail
