// Workflow::Graph: a workflow's nodes and edges, checked once when it is built. Private to adk::workflow.
#pragma once

#include <adk/workflow/workflow.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace adk::workflow {

struct Workflow::Graph {
    struct Out {
        std::size_t to;
        std::optional<json::value> route;  // none: always taken
    };
    std::vector<std::shared_ptr<Node>> nodes;      // in the order the edges name them
    std::vector<std::vector<Out>> out;             // by node
    std::vector<std::vector<std::size_t>> in;      // the nodes with an edge into each node, each once
    std::vector<std::size_t> starts;               // the nodes START leads to
    std::vector<bool> terminal;                    // no edge leaves it: its output is the workflow's

    // Checks and indexes `edges` of workflow `workflow` (named in errors).
    static Graph make(std::string_view workflow, std::vector<Workflow::Edge> edges);

    // The nodes to run after `from` ended having chosen `route` (ADK's get_next_pending_nodes): every edge without a
    // route, those whose route is among the chosen, and the default_route edge when none of those matched.
    std::vector<std::size_t> next(std::size_t from, const std::optional<json::value>& route) const;

    // The agents of agent nodes, each once: the workflow's sub-agents.
    std::vector<std::shared_ptr<Agent>> agents() const;
};

// A route as ADK compares routes: as text ("true", "3", "bug").
std::string route_text(const json::value& route);

}  // namespace adk::workflow
