#include "graph.hpp"

#include <adk/core/error.hpp>

#include <boost/json/serialize.hpp>

#include <algorithm>
#include <cmath>
#include <map>

namespace adk::workflow {

std::string route_text(const json::value& route)
{
    switch (route.kind()) {
    case json::kind::string:
        return std::string(route.get_string());
    case json::kind::bool_:
        return route.get_bool() ? "true" : "false";
    case json::kind::int64:
        return std::to_string(route.get_int64());
    case json::kind::uint64:
        return std::to_string(route.get_uint64());
    case json::kind::double_: {
        const double d = route.get_double();
        if (std::isfinite(d) && d == std::trunc(d) && std::fabs(d) < 1e15)
            return std::to_string(static_cast<long long>(d));
        return json::serialize(route);
    }
    default:
        return json::serialize(route);
    }
}

namespace {

bool is_route_value(const json::value& v)
{
    return v.is_string() || v.is_bool() || v.is_number();
}

void check_route(std::string_view workflow, const Node& from, const json::value& route)
{
    bool ok = is_route_value(route);
    if (const json::array* list = route.if_array())
        ok = !list->empty() && std::all_of(list->begin(), list->end(), is_route_value);
    if (!ok)
        throw Error(errc::invalid_argument, "workflow '" + std::string(workflow) + "': the edge from '" + from.name() +
                                                "' has route " + json::serialize(route) +
                                                ": a route is a string, number or bool, or a list of them");
}

bool matches(const json::value& edge_route, const json::value& chosen)
{
    auto any_of = [](const json::value& v, auto&& f) {
        if (const json::array* list = v.if_array())
            return std::any_of(list->begin(), list->end(), f);
        return f(v);
    };
    return any_of(edge_route, [&](const json::value& e) {
        const std::string want = route_text(e);
        return any_of(chosen, [&](const json::value& c) { return route_text(c) == want; });
    });
}

}  // namespace

Workflow::Graph Workflow::Graph::make(std::string_view workflow, std::vector<Workflow::Edge> edges)
{
    const std::string wf(workflow);
    Graph g;
    std::map<const void*, std::size_t> by_source;  // the node made for an agent or a tool
    std::map<std::string, std::size_t, std::less<>> by_name;
    auto index_of = [&](const Step& step) -> std::size_t {
        if (step.is_start())
            return static_cast<std::size_t>(-1);
        std::shared_ptr<Node> node = step.node();
        const void* source = step.agent() ? static_cast<const void*>(step.agent().get())
                                          : static_cast<const void*>(step.tool().get());
        if (source) {
            if (auto it = by_source.find(source); it != by_source.end())
                return it->second;
            if (step.agent())
                node = std::make_shared<AgentNode>(step.agent());
            else
                node = std::make_shared<ToolNode>(step.tool());
        }
        const std::string& name = node->name();
        if (auto it = by_name.find(name); it != by_name.end()) {
            if (g.nodes[it->second] != node)
                throw Error(errc::invalid_argument, "workflow '" + wf + "' has two nodes named '" + name +
                                                        "': node names must be unique in a workflow");
            return it->second;
        }
        const std::size_t i = g.nodes.size();
        g.nodes.push_back(node);
        by_name.emplace(name, i);
        if (source)
            by_source.emplace(source, i);
        g.out.emplace_back();
        g.in.emplace_back();
        return i;
    };
    if (edges.empty())
        throw Error(errc::invalid_argument, "workflow '" + wf + "' has no edges: give at least one from START");
    for (Workflow::Edge& e : edges) {
        const std::size_t from = index_of(e.from);
        const std::size_t to = index_of(e.to);
        if (e.to.is_start())
            throw Error(errc::invalid_argument, "workflow '" + wf + "' has an edge into START: START only begins edges");
        if (from == static_cast<std::size_t>(-1)) {
            if (e.route)
                throw Error(errc::invalid_argument,
                            "workflow '" + wf + "': an edge from START has a route; START has no output to route");
            if (std::find(g.starts.begin(), g.starts.end(), to) == g.starts.end())
                g.starts.push_back(to);
            continue;
        }
        if (e.route)
            check_route(workflow, *g.nodes[from], *e.route);
        g.out[from].push_back(Out{to, std::move(e.route)});
        if (std::find(g.in[to].begin(), g.in[to].end(), from) == g.in[to].end())
            g.in[to].push_back(from);
    }
    if (g.starts.empty())
        throw Error(errc::invalid_argument,
                    "workflow '" + wf + "' has no edge from START: add one to the node it begins with");
    std::vector<bool> reached(g.nodes.size(), false);
    std::vector<std::size_t> todo = g.starts;
    while (!todo.empty()) {
        const std::size_t n = todo.back();
        todo.pop_back();
        if (reached[n])
            continue;
        reached[n] = true;
        for (const Out& o : g.out[n])
            todo.push_back(o.to);
    }
    for (std::size_t i = 0; i < g.nodes.size(); ++i)
        if (!reached[i])
            throw Error(errc::invalid_argument, "workflow '" + wf + "': node '" + g.nodes[i]->name() +
                                                    "' cannot be reached from START: connect it or remove its edges");
    g.terminal.resize(g.nodes.size());
    for (std::size_t i = 0; i < g.nodes.size(); ++i)
        g.terminal[i] = g.out[i].empty();
    return g;
}

std::vector<std::size_t> Workflow::Graph::next(std::size_t from, const std::optional<json::value>& route) const
{
    std::vector<std::size_t> result;
    std::optional<std::size_t> fallback;
    bool matched = false;
    for (const Out& o : out[from]) {
        if (!o.route) {
            result.push_back(o.to);
        } else if (o.route->is_string() && o.route->get_string() == default_route) {
            fallback = o.to;
        } else if (route && matches(*o.route, *route)) {
            result.push_back(o.to);
            matched = true;
        }
    }
    if (!matched && fallback)
        result.push_back(*fallback);
    return result;
}

std::vector<std::shared_ptr<Agent>> Workflow::Graph::agents() const
{
    std::vector<std::shared_ptr<Agent>> result;
    for (const auto& node : nodes)
        if (auto agent = node->agent())
            result.push_back(std::move(agent));
    return result;
}

}  // namespace adk::workflow
