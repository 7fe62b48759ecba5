// The scheduler of a workflow's run: which nodes run when, their attempts, their events, and where a resumed run
// passes over what finished. Private to adk::workflow.
#pragma once

#include "graph.hpp"

namespace adk::workflow::detail {

// Runs `graph` of workflow `wf` from START with `input`, in ctx's invocation, emitting into `out`.
asio::awaitable<void> run_graph(const Workflow& wf, const Workflow::Graph& graph, int max_concurrency,
                                InvocationContext& ctx, EventSink& out, json::value input);

}  // namespace adk::workflow::detail
