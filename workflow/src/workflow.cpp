#include "graph.hpp"
#include "node_runner.hpp"
#include "scheduler.hpp"

#include <adk/core/error.hpp>

namespace adk::workflow {

// --- the workflow ---

Workflow::Workflow(std::string name, std::vector<Edge> edges, WorkflowOptions options)
    : Workflow(name, std::make_unique<Graph>(Graph::make(name, std::move(edges))), std::move(options))
{
}

Workflow::Workflow(std::string name, std::unique_ptr<Graph> graph, WorkflowOptions options)
    : Agent(std::move(name), options.description, graph->agents()), graph_(std::move(graph)),
      options_(std::move(options))
{
    if (options_.max_concurrency < 0)
        throw Error(errc::invalid_argument, "workflow '" + this->name() +
                                                "': max_concurrency must be 0 (no limit) or more");
}

Workflow::Workflow(std::string name, Entry entry, WorkflowOptions options)
    : Agent(std::move(name), options.description, {}), entry_(std::move(entry)), options_(std::move(options))
{
    if (!entry_)
        throw Error(errc::invalid_argument, "workflow '" + this->name() + "' was given no entry and no edges");
}

Workflow::~Workflow() = default;

std::vector<std::shared_ptr<Node>> Workflow::nodes() const
{
    return graph_ ? graph_->nodes : std::vector<std::shared_ptr<Node>>{};
}

std::vector<Workflow::EdgeView> Workflow::edges() const
{
    std::vector<EdgeView> out;
    if (!graph_)
        return out;
    for (std::size_t s : graph_->starts)
        out.push_back(EdgeView{nullptr, graph_->nodes[s].get(), std::nullopt});
    for (std::size_t i = 0; i < graph_->nodes.size(); ++i)
        for (const Graph::Out& o : graph_->out[i])
            out.push_back(EdgeView{graph_->nodes[i].get(), graph_->nodes[o.to].get(), o.route});
    return out;
}

Workflow::Builder::Builder(std::string name) : name_(std::move(name)) {}

Workflow::Builder& Workflow::Builder::description(std::string text)
{
    options_.description = std::move(text);
    return *this;
}

Workflow::Builder& Workflow::Builder::max_concurrency(int n)
{
    options_.max_concurrency = n;
    return *this;
}

Workflow::Builder& Workflow::Builder::edge(Step from, Step to)
{
    edges_.push_back(Edge{std::move(from), std::move(to), std::nullopt});
    return *this;
}

Workflow::Builder& Workflow::Builder::route(Step from, json::value route, Step to)
{
    edges_.push_back(Edge{std::move(from), std::move(to), std::move(route)});
    return *this;
}

Workflow::Builder& Workflow::Builder::edges(Step from, std::initializer_list<Step> to)
{
    for (const Step& t : to)
        edges_.push_back(Edge{from, t, std::nullopt});
    return *this;
}

Workflow::Builder& Workflow::Builder::chain(std::initializer_list<Step> steps)
{
    for (auto it = steps.begin(); it != steps.end() && std::next(it) != steps.end(); ++it)
        edges_.push_back(Edge{*it, *std::next(it), std::nullopt});
    return *this;
}

std::shared_ptr<Workflow> Workflow::Builder::build()
{
    return std::make_shared<Workflow>(name_, std::move(edges_), std::move(options_));
}

asio::awaitable<void> Workflow::run_impl(InvocationContext& ctx, EventSink& out)
{
    // A nested workflow's input is its node's; the workflow an invocation starts at gets the user's message.
    json::value input;
    if (const json::value* given = ctx.node_input()) {
        input = *given;
    } else if (const std::optional<Content>& message = ctx.user_content()) {
        const std::string text = message->text();
        if (!text.empty())
            input = json::value(text);
    }
    if (entry_)
        co_await run_entry(ctx, out, std::move(input));
    else
        co_await detail::run_graph(*this, *graph_, options_.max_concurrency, ctx, out, std::move(input));
}

asio::awaitable<void> Workflow::run_entry(InvocationContext& ctx, EventSink& out, json::value input)
{
    NodeContext nc(ctx, out, name(), std::string(detail::start_name), 1);
    json::value output;
    bool interrupted = false;
    try {
        output = co_await entry_(nc, std::move(input));
    } catch (const detail::NodeInterrupted&) {
        interrupted = true;
    }
    if (interrupted) {  // a node it ran waits for a person: so does the workflow
        ctx.pause();
        co_return;
    }
    // Its output, route and state changes, as a node's are recorded (its end is recorded as every agent's is).
    json::object state_delta = nc.take_state_delta();
    if (output.is_null() && !nc.route() && state_delta.empty())
        co_return;
    Event event = detail::said_event(ctx, name(), std::move(state_delta), nc.route(), output);
    co_await out.emit(std::move(event));
}


}  // namespace adk::workflow
