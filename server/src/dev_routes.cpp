// The /dev/apps/{app}/... routes the web UI draws with: the agent tree (build_graph), that tree as graphviz
// DOT (build_graph_image; the browser renders it), and the graph of one event (its author and the tools it
// called, highlighted). DOT node ids are the agents' and tools' names: the UI matches them to events.
#include "api_impl.hpp"
#include "trace_recorder.hpp"

#include <adk/agents/llm_agent.hpp>
#include <adk/models/model.hpp>
#include <adk/tools/tool.hpp>

#include <set>

namespace adk::server {

namespace {

json::object agent_node(const Agent& agent)
{
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

std::string app_dot(const Agent& root, bool dark)
{
    const Palette colors(dark);
    std::string dot = "digraph " + dot_quoted(root.name()) + " {\n  bgcolor = \"" + colors.background +
                      "\";\n  pad = 0.5;\n  nodesep = 0.5;\n  ranksep = 0.8;\n  fontname = \"Helvetica\";\n"
                      "  edge [color = \"" + colors.edge + "\"; penwidth = 1.2; arrowhead = \"vee\"; arrowsize = 0.7];\n"
                      "  node [shape = \"rect\"; style = \"rounded,filled\"; fillcolor = \"" + colors.node_fill +
                      "\"; color = \"" + colors.node_border + "\"; penwidth = 1.5; fontname = \"Helvetica\"; fontcolor = \"" +
                      colors.text + "\"; fontsize = 12; margin = \"0.25,0.15\"];\n";
    std::set<std::string> drawn;
    add_agent(dot, root, drawn, colors);
    return dot + "}\n";
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
    // The tree has no sub-workflows: the root ("") is the only path, and any node asked for is drawn in it.
    const std::string dot = app_dot(*entry.app.root_agent, dark);
    json::value v = json::object{{"", json::object{{"dotSrc", dot}}}, {"dotSrc", dot}};
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
