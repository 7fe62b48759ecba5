// The /dev/apps/{app}/... routes the web UI draws with: the agent tree (build_graph), that tree as graphviz
// DOT (build_graph_image; the browser renders it), and the graph of one event (its author and the tools it
// called, highlighted). DOT node ids are the agents', nodes' and tools' names: the UI matches them to events.
// A graph workflow (adk/workflow) is described by its graph (nodes and edges, as @google/adk-devtools describes
// it) and drawn as that graph, START to END, one drawing per workflow of the tree, by its path.
#include "api_impl.hpp"
#include "debug_traces.hpp"

#include <adk/agents/llm_agent.hpp>
#include <adk/models/model.hpp>
#include <adk/tools/tool.hpp>
#include <adk/workflow/workflow.hpp>

#include <boost/json/serialize.hpp>

#include <map>
#include <set>

namespace adk::server {

namespace {

constexpr std::string_view start_node = "__START__";

const workflow::Workflow* as_workflow(const Agent& agent)
{
    return dynamic_cast<const workflow::Workflow*>(&agent);
}

std::string node_type(const workflow::Node* node)
{
    if (!node)
        return "start";
    if (auto agent = node->agent())
        return as_workflow(*agent) ? "workflow" : "agent";
    return node->joins() ? "join" : "function";
}

// A route as the UI labels it: "default" for default_route, a list for several.
json::value route_label(const json::value& route)
{
    auto one = [](const json::value& r) -> json::value {
        if (r.is_string())
            return r.get_string() == workflow::default_route ? json::value("default") : r;
        return json::value(json::serialize(r));
    };
    if (const json::array* list = route.if_array()) {
        json::array labels;
        for (const json::value& r : *list)
            labels.push_back(one(r));
        return labels;
    }
    return one(route);
}

json::object agent_node(const Agent& agent);

json::object workflow_graph(const workflow::Workflow& wf)
{
    json::array nodes{json::object{{"name", start_node}, {"type", "start"}}};
    for (const auto& node : wf.nodes()) {
        if (auto agent = node->agent()) {
            nodes.push_back(agent_node(*agent));
            continue;
        }
        nodes.push_back(json::object{{"name", node->name()},
                                     {"type", node_type(node.get())},
                                     {"rerun_on_resume", node->options().rerun_on_resume}});
    }
    json::array edges;
    for (const workflow::Workflow::EdgeView& e : wf.edges()) {
        auto ref = [](const workflow::Node* n) {
            return json::object{{"name", n ? n->name() : std::string(start_node)}, {"type", node_type(n)}};
        };
        json::object edge{{"from_node", ref(e.from)}, {"to_node", ref(e.to)}};
        if (e.route)
            edge["route"] = route_label(*e.route);
        edges.push_back(std::move(edge));
    }
    return json::object{{"nodes", std::move(nodes)}, {"edges", std::move(edges)}};
}

json::object agent_node(const Agent& agent)
{
    if (const workflow::Workflow* wf = as_workflow(agent)) {
        json::object node{{"name", agent.name()}, {"type", "workflow"}};
        if (!agent.description().empty())
            node["description"] = agent.description();
        node["rerun_on_resume"] = true;  // as ADK's: a workflow runs again on resume, passing over what finished
        node["graph"] = workflow_graph(*wf);
        return node;
    }
    json::object node{{"name", agent.name()}, {"type", "agent"}};
    if (!agent.description().empty())
        node["description"] = agent.description();
    const auto* llm = dynamic_cast<const LlmAgent*>(&agent);
    if (llm) {
        if (llm->config().model)
            node["model"] = std::string(llm->config().model->name());
        if (!llm->config().tools.empty()) {
            json::array tools;
            for (const auto& tool : llm->config().tools)
                tools.push_back(json::object{{"name", tool->name()}, {"type", "tool"}});
            node["tools"] = std::move(tools);
        }
    }
    node["rerun_on_resume"] = llm != nullptr;  // as ADK's: an LLM agent's turn runs again on resume
    if (!agent.sub_agents().empty()) {
        json::array subs;
        for (const auto& sub : agent.sub_agents())
            subs.push_back(agent_node(*sub));
        node["sub_agents"] = std::move(subs);
    }
    return node;
}

// A name inside a DOT quoted id.
std::string dot_quoted(std::string_view name)
{
    std::string out = "\"";
    for (char c : name) {
        if (c == '"' || c == '\\')
            out += '\\';
        if (c == '\n' || c == '\r')
            c = ' ';
        out += c;
    }
    return out + "\"";
}

// A name inside a DOT HTML-like label.
std::string html_escaped(std::string_view name)
{
    std::string out;
    for (char c : name) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        default: out += c;
        }
    }
    return out;
}

class Palette {
public:
    explicit Palette(bool dark)
        : background(dark ? "#0F172A" : "#F8FAFC"), node_fill(dark ? "#1E293B" : "#FFFFFF"),
          node_border(dark ? "#475569" : "#94A3B8"), text(dark ? "#E2E8F0" : "#0F172A"),
          edge(dark ? "#94A3B8" : "#64748B")
    {
    }
    std::string background, node_fill, node_border, text, edge;
};

void add_agent(std::string& dot, const Agent& agent, std::set<std::string>& drawn, const Palette& colors)
{
    if (drawn.insert(agent.name()).second)
        dot += "  " + dot_quoted(agent.name()) + " [label = <<FONT COLOR=\"#42A5F5\" POINT-SIZE=\"14\">&#10022;</FONT> " +
               html_escaped(agent.name()) + ">; tooltip = \"Agent\"];\n";
    if (const auto* llm = dynamic_cast<const LlmAgent*>(&agent)) {
        for (const auto& tool : llm->config().tools) {
            if (drawn.insert(tool->name()).second)
                dot += "  " + dot_quoted(tool->name()) +
                       " [label = <<FONT COLOR=\"#6B7280\" POINT-SIZE=\"14\">&#128295;</FONT> " +
                       html_escaped(tool->name()) + ">; tooltip = \"Tool\"; style = \"rounded,filled,dashed\"];\n";
            dot += "  " + dot_quoted(agent.name()) + " -> " + dot_quoted(tool->name()) + " [style = \"dashed\"; color = \"" +
                   colors.edge + "\"];\n";
        }
    }
    for (const auto& sub : agent.sub_agents()) {
        add_agent(dot, *sub, drawn, colors);
        dot += "  " + dot_quoted(agent.name()) + " -> " + dot_quoted(sub->name()) + ";\n";
    }
}

std::string dot_header(const Agent& level, const Palette& colors)
{
    return "digraph " + dot_quoted(level.name()) + " {\n  bgcolor = \"" + colors.background +
           "\";\n  pad = 0.5;\n  nodesep = 0.5;\n  ranksep = 0.8;\n  fontname = \"Helvetica\";\n"
           "  edge [color = \"" + colors.edge + "\"; penwidth = 1.2; arrowhead = \"vee\"; arrowsize = 0.7];\n"
           "  node [shape = \"rect\"; style = \"rounded,filled\"; fillcolor = \"" + colors.node_fill +
           "\"; color = \"" + colors.node_border + "\"; penwidth = 1.5; fontname = \"Helvetica\"; fontcolor = \"" +
           colors.text + "\"; fontsize = 12; margin = \"0.25,0.15\"];\n";
}

// A workflow drawn as its graph: START, its nodes (an icon by kind; a node with routes as a diamond, flagged when
// no edge of it is taken by default; a join as an oval), their routes as edge labels, the tools of its LlmAgents,
// and END after the nodes no edge leaves.
std::string workflow_dot(const workflow::Workflow& wf, bool dark)
{
    const Palette colors(dark);
    std::string dot = dot_header(wf, colors);
    const std::vector<workflow::Workflow::EdgeView> edges = wf.edges();
    std::set<std::string> drawn;
    const std::map<std::string, std::pair<std::string, std::string>> icons{
        {"agent", {"&#10022;", "#42A5F5"}}, {"workflow", {"&#8887;", "#9333EA"}},
        {"function", {"&#402;", "#10B981"}}, {"join", {"&#9013;", "#F59E0B"}}};
    std::vector<std::string> terminals;
    for (const auto& node : wf.nodes()) {
        const std::string type = node_type(node.get());
        bool routed = false, fallback = false, leaves = false;
        for (const auto& e : edges)
            if (e.from == node.get()) {
                leaves = true;
                routed = routed || e.route.has_value();
                fallback = fallback || !e.route || (e.route->is_string() && e.route->get_string() == workflow::default_route);
            }
        if (!leaves)
            terminals.push_back(node->name());
        const auto& [icon, color] = icons.at(type);
        std::string label = "<FONT COLOR=\"" + color + "\" POINT-SIZE=\"14\">" + icon + "</FONT> " + html_escaped(node->name());
        if (routed && !fallback)
            label += "<br/><br/><FONT POINT-SIZE=\"10\">[NO DEFAULT]</FONT>";
        std::string tooltip = type;
        tooltip[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(tooltip[0])));
        std::string shape = routed ? "shape = \"diamond\"; style = \"filled\"; height = 1.2; width = 0.8; margin = \"0.0,0.0\""
                            : type == "join" ? "shape = \"oval\"; style = \"filled\"; margin = \"0.05,0.05\""
                                             : "style = \"rounded,filled\"";
        drawn.insert(node->name());
        dot += "  " + dot_quoted(node->name()) + " [label = <" + label + ">; tooltip = \"" + tooltip + "\"; " + shape + "];\n";
    }
    dot += "  " + dot_quoted(start_node) + " [label = \"START\"; shape = \"oval\"; style = \"filled\"; fillcolor = \"" +
           std::string(dark ? "#059669" : "#10B981") + "\"; color = \"" + (dark ? "#047857" : "#059669") +
           "\"; fontname = \"Helvetica-Bold\"; width = 0.9; fixedsize = true];\n";
    for (const auto& e : edges) {
        std::string label;
        if (e.route) {
            json::value shown = route_label(*e.route);
            if (const json::array* list = shown.if_array())
                for (const json::value& r : *list)
                    label += (label.empty() ? "" : ", ") + std::string(r.get_string());
            else
                label = std::string(shown.get_string());
        }
        dot += "  " + dot_quoted(e.from ? e.from->name() : std::string(start_node)) + " -> " + dot_quoted(e.to->name()) +
               (label.empty() ? "" : " [label = " + dot_quoted("  " + label) + "]") + ";\n";
    }
    for (const auto& node : wf.nodes())
        if (auto agent = node->agent())
            if (const auto* llm = dynamic_cast<const LlmAgent*>(agent.get()))
                for (const auto& tool : llm->config().tools) {
                    if (drawn.insert(tool->name()).second)
                        dot += "  " + dot_quoted(tool->name()) +
                               " [label = <<FONT COLOR=\"#6B7280\" POINT-SIZE=\"14\">&#128295;</FONT> " +
                               html_escaped(tool->name()) + ">; tooltip = \"Tool\"; style = \"rounded,filled,dashed\"];\n";
                    dot += "  " + dot_quoted(node->name()) + " -> " + dot_quoted(tool->name()) + " [style = \"dashed\"];\n";
                }
    if (!terminals.empty()) {
        dot += "  \"__END__\" [label = \"END\"; shape = \"oval\"; style = \"filled\"; fillcolor = \"" +
               std::string(dark ? "#DC2626" : "#EF4444") + "\"; color = \"" + (dark ? "#B91C1C" : "#DC2626") +
               "\"; fontname = \"Helvetica-Bold\"; width = 0.9; fixedsize = true];\n";
        for (const std::string& t : terminals)
            dot += "  " + dot_quoted(t) + " -> \"__END__\";\n";
    }
    return dot + "}\n";
}

std::string app_dot(const Agent& level, bool dark)
{
    if (const workflow::Workflow* wf = as_workflow(level))
        return workflow_dot(*wf, dark);
    const Palette colors(dark);
    std::string dot = dot_header(level, colors);
    std::set<std::string> drawn;
    add_agent(dot, level, drawn, colors);
    return dot + "}\n";
}

// What a level of the tree holds: a workflow's agent nodes, an agent's sub-agents.
std::vector<std::shared_ptr<Agent>> children_of(const Agent& agent)
{
    if (const workflow::Workflow* wf = as_workflow(agent)) {
        std::vector<std::shared_ptr<Agent>> out;
        for (const auto& node : wf->nodes())
            if (auto a = node->agent())
                out.push_back(std::move(a));
        return out;
    }
    return {agent.sub_agents().begin(), agent.sub_agents().end()};
}

// The agent at `path` ("a/b", names below `root`; the root's own name may lead), or null.
const Agent* agent_at(const Agent& root, std::string_view path)
{
    const Agent* at = &root;
    bool first = true;
    while (!path.empty()) {
        const std::size_t slash = path.find('/');
        const std::string_view name = path.substr(0, slash);
        path = slash == std::string_view::npos ? std::string_view() : path.substr(slash + 1);
        if (name.empty() || (first && name == root.name())) {
            first = false;
            continue;
        }
        first = false;
        const Agent* next = nullptr;
        for (const auto& child : children_of(*at))
            if (child->name() == name)
                next = child.get();
        if (!next)
            return nullptr;
        at = next;
    }
    return at;
}

// Every workflow at or below `level`, by path ("a/b", below the level whose path is `base`).
void collect_workflows(const Agent& level, const std::string& path, std::map<std::string, const Agent*>& out)
{
    if (as_workflow(level))
        out.emplace(path, &level);
    for (const auto& child : children_of(level))
        collect_workflows(*child, path.empty() ? child->name() : path + "/" + child->name(), out);
}

// The event graph: every agent (ellipse) and tool (box) of the tree, with the event's author and the tools it
// called or answered filled, and the edges between them lit.
void add_event_nodes(std::string& dot, const Agent& agent, const std::string& author, const std::set<std::string>& tools,
                     std::set<std::string>& drawn)
{
    const auto node = [&](const std::string& name, std::string_view shape, bool lit) {
        if (!drawn.insert(name).second)
            return;
        dot += "  " + dot_quoted(name) + " [shape = \"" + std::string(shape) + "\"" +
               (lit ? "; style = \"filled\"; fillcolor = \"#0F5223\"; fontcolor = \"#FFFFFF\"" : "") + "];\n";
    };
    node(agent.name(), "ellipse", agent.name() == author);
    if (const auto* llm = dynamic_cast<const LlmAgent*>(&agent)) {
        for (const auto& tool : llm->config().tools) {
            const bool lit = agent.name() == author && tools.count(tool->name()) > 0;
            node(tool->name(), "box", lit);
            dot += "  " + dot_quoted(agent.name()) + " -> " + dot_quoted(tool->name()) +
                   (lit ? " [color = \"#69CB87\"; penwidth = 2]" : " [style = \"dashed\"]") + ";\n";
        }
    }
    for (const auto& sub : agent.sub_agents()) {
        add_event_nodes(dot, *sub, author, tools, drawn);
        const bool lit = sub->name() == author;
        dot += "  " + dot_quoted(agent.name()) + " -> " + dot_quoted(sub->name()) +
               (lit ? " [color = \"#69CB87\"; penwidth = 2]" : "") + ";\n";
    }
}

}  // namespace

asio::awaitable<void> ApiServer::Impl::build_graph(ResponseWriter& res, const std::string& app_name)
{
    const AppEntry& entry = app(app_name);
    json::value v = json::object{{"name", app_name}, {"root_agent", agent_node(*entry.app.root_agent)}};
    co_await detail::reply_json(res, 200, v);
}

asio::awaitable<void> ApiServer::Impl::build_graph_image(ResponseWriter& res, const std::string& app_name,
                                                         const detail::RequestTarget& target)
{
    const AppEntry& entry = app(app_name);
    const bool dark = target.query_value("dark_mode").value_or("false") == "true";
    // One drawing for the level asked for (`node`, a path of names; the root by default) and one for each workflow
    // below it, by path.
    const std::string node(target.query_value("node").value_or(""));
    const Agent* level = agent_at(*entry.app.root_agent, node);
    if (!level)
        throw Error(errc::not_found, "Node not found: " + node.substr(0, 200) + " (in app " + app_name + ")");
    std::map<std::string, const Agent*> levels;
    collect_workflows(*level, node, levels);
    levels.emplace(node, level);
    json::object v;
    for (const auto& [path, agent] : levels)
        v[path] = json::object{{"dotSrc", app_dot(*agent, dark)}};
    v["dotSrc"] = v.at(node).at("dotSrc");
    co_await detail::reply_json(res, 200, v);
}

asio::awaitable<void> ApiServer::Impl::event_graph(ResponseWriter& res, const std::vector<std::string>& p)
{
    const AppEntry& entry = app(p[0]);
    Session session = co_await read_session(p[0], p[1], p[2]);
    const Event* event = nullptr;
    for (const Event& e : session.events)
        if (e.id == p[3])
            event = &e;
    if (!event)
        throw Error(errc::not_found, "Event not found: " + p[3] + " (in session " + p[2] + ")");
    std::set<std::string> tools;
    if (event->content)
        for (const Part& part : event->content->parts) {
            if (part.function_call)
                tools.insert(part.function_call->name);
            if (part.function_response)
                tools.insert(part.function_response->name);
        }
    std::string dot = "strict digraph {\n  rankdir = LR;\n  bgcolor = \"transparent\";\n";
    std::set<std::string> drawn;
    add_event_nodes(dot, *entry.app.root_agent, event->author, tools, drawn);
    dot += "}\n";
    json::value v = json::object{{"dotSrc", dot}};
    co_await detail::reply_json(res, 200, v);
}

namespace {

std::optional<std::string> user_param(const detail::RequestTarget& target)
{
    std::optional<std::string_view> user = target.query_value("user_id");
    if (!user)
        user = target.query_value("userId");
    return user ? std::optional<std::string>(std::string(*user)) : std::nullopt;
}

}  // namespace

asio::awaitable<void> ApiServer::Impl::session_trace(ResponseWriter& res, const std::string& app_name,
                                                     const detail::RequestTarget& target, const std::string& session_id)
{
    if (!app_name.empty())
        app(app_name);
    json::value v = traces->session_spans(app_name, user_param(target), session_id);
    co_await detail::reply_json(res, 200, v);
}

asio::awaitable<void> ApiServer::Impl::event_trace(ResponseWriter& res, const std::string& app_name,
                                                   const detail::RequestTarget& target, const std::string& event_id)
{
    if (!app_name.empty())
        app(app_name);
    std::optional<json::object> attributes = traces->event_trace(app_name, user_param(target), event_id);
    if (!attributes)
        throw Error(errc::not_found, "Trace not found");
    json::value v = std::move(*attributes);
    co_await detail::reply_json(res, 200, v);
}

}  // namespace adk::server
