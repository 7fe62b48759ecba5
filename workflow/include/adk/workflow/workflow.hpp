// Graph workflows, as ADK 2.x composes agents (google.adk.workflow, @google/adk's Workflow).
//
//   auto triage = Workflow::Builder("triage")
//       .edge(START, classify)                               // classify gets the user's message
//       .route(classify, "bug", fix)                         // classify's route picks the next node
//       .route(classify, default_route, answer)              // ... or this one, when no route matched
//       .edges(fix, {review, notify})                        // fan-out: both run, each on a branch of its own
//       .edge(review, done).edge(notify, done)               // done is a JoinNode: it waits for both
//       .build();
//
// A node is an Agent (an LlmAgent's final answer is its output), a FunctionNode (a C++ coroutine), a JoinNode
// or a nested Workflow (an Agent too). A node runs when an edge into it fires: its input is the output of the
// node before it (a JoinNode's, an object of its predecessors' outputs by name; a node after START, the user's
// message as text). When a node ends, the edges out of it without a route fire, and of those with routes, the
// ones naming a route it chose (ctx.set_route), else the one with default_route. A node that runs again (an
// edge back to it) is a new run of it: "name@2". Nodes that can run at once do (up to max_concurrency).
//
// Every event of a node carries its path (nodeInfo.path, "workflow@1/node@1", as ADK Python writes it), its
// output (`output`, nodeInfo.outputFor) and its route (actions.route). In a resumable app a workflow that
// resumes (after a pause for a person, or a crash) runs again from the start and passes over each node whose
// output or end its events recorded, with that output: no node that finished runs twice.
#pragma once

#include <adk/agents/agent.hpp>

#include <boost/json/value.hpp>

#include <chrono>
#include <concepts>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace adk::workflow {

namespace json = boost::json;

// Where a workflow starts: the source of its first edges.
struct StartNode {};
inline constexpr StartNode START{};

// The route of the edge a node takes when none of the routes it chose matches another edge.
inline constexpr char default_route[] = "__DEFAULT__";

// When a failed node runs again (ADK's RetryConfig and defaults): up to max_attempts attempts in all, waiting
// initial_delay * backoff_factor^(attempt-1) between them, at most max_delay, spread by +-jitter of itself.
struct RetryConfig {
    int max_attempts = 5;
    std::chrono::milliseconds initial_delay{1000};
    std::chrono::milliseconds max_delay{60000};
    double backoff_factor = 2.0;
    double jitter = 1.0;
    // Which failures are retried; null: every failure but cancellation.
    std::function<bool(const std::exception&)> retry_on;

    // The wait after failed attempt `attempt` (1 for the first); `unit_random` in [0, 1) draws the jitter.
    std::chrono::milliseconds delay_after(int attempt, double unit_random) const;
};

struct NodeOptions {
    std::optional<RetryConfig> retry;             // none: a failure fails the node at once
    std::chrono::milliseconds timeout{0};         // per attempt; 0: none
    std::optional<json::value> input_schema;      // JSON Schema its input must fit (adk/tools/json_schema.hpp)
    std::optional<json::value> output_schema;     // ... and its output
    // A node that waits for more input (ends without output or route) does not fire its edges; the next edge
    // into it runs it again.
    bool wait_for_output = false;
    // A node that asked a person (NodeContext::request_input) runs again when the answer comes, and
    // request_input returns it. Otherwise (ADK's default) the node is not run again: the answer is its output.
    bool rerun_on_resume = false;
};

// A question to a person from a running node (ADK's RequestInput): an adk_request_input function call whose id is
// interrupt_id (a new id when empty; one you give must be unique in the session, as every call id is), listed in
// longRunningToolIds. The invocation pauses; the person's answer, a functionResponse to that id (checked against
// response_schema), resumes it.
struct RequestInput {
    std::string message;
    json::value payload;                        // what the person should see with it; null: none
    std::optional<json::value> response_schema; // JSON Schema the answer must fit
    std::string interrupt_id;
};

class Workflow;

// What a running node sees: its invocation context (its node path, branch and session), its input's sender, the
// state, and where it says its output and route.
class NodeContext {
public:
    NodeContext(InvocationContext ctx, EventSink& out, std::string name, std::string from, int attempt);

    const InvocationContext& invocation() const noexcept { return ctx_; }
    EventSink& sink() noexcept { return out_; }
    const std::string& node_path() const noexcept { return ctx_.node_path(); }
    const std::string& node_name() const noexcept { return name_; }
    // The node whose output is the input ("__START__" for the user's message; a join's, "" ).
    const std::string& from() const noexcept { return from_; }
    int attempt() const noexcept { return attempt_; }  // 1 for the first

    // A state value as the node sees it: the session's, with the changes this node made.
    std::optional<json::value> state(std::string_view key) const;
    // A change of state, stored with the node's next event (its output's, or its end's).
    void set_state(std::string key, json::value value);
    // The route(s) the node chose: a string, number or bool, or an array of them.
    void set_route(json::value route);
    // A message from the node (an event authored by it), with the state changes made so far.
    asio::awaitable<void> emit(Content content);
    // Asks a person. The first time, the question is emitted and the node stops there (the workflow's other
    // branches go on; the invocation pauses when they are done). When the node runs again after the answer came
    // (rerun_on_resume), the same call returns the answer. A node may ask several questions, one after another.
    asio::awaitable<json::value> request_input(RequestInput request);

    // What the workflow records when the node ends: the route it chose, and the state changes not yet stored.
    const std::optional<json::value>& route() const noexcept { return route_; }
    json::object take_state_delta() { return std::exchange(state_delta_, {}); }

private:
    InvocationContext ctx_;
    EventSink& out_;
    std::string name_;
    std::string from_;
    int attempt_;
    json::object state_delta_;
    std::optional<json::value> route_;
    std::size_t asked_ = 0;  // request_input calls so far in this attempt
};

class Node {
public:
    // Throws adk::Error for a name that is not an identifier.
    explicit Node(std::string name, NodeOptions options = {});
    virtual ~Node();
    Node(const Node&) = delete;
    Node& operator=(const Node&) = delete;

    const std::string& name() const noexcept { return name_; }
    const NodeOptions& options() const noexcept { return options_; }
    // A join waits until every node with an edge into it has ended, and gets their outputs by name.
    virtual bool joins() const noexcept { return false; }
    // The agent an agent node runs; null for other nodes.
    virtual std::shared_ptr<Agent> agent() const { return nullptr; }

    // Runs the node once: its output (null for none). Throw to fail the attempt.
    virtual asio::awaitable<json::value> run(NodeContext& ctx, json::value input) = 0;

private:
    std::string name_;
    NodeOptions options_;
};

// A node that is a C++ coroutine: fn(ctx, input) returns the node's output (null for none).
class FunctionNode final : public Node {
public:
    using Function = std::function<asio::awaitable<json::value>(NodeContext&, json::value)>;
    FunctionNode(std::string name, Function fn, NodeOptions options = {});
    asio::awaitable<json::value> run(NodeContext& ctx, json::value input) override;

private:
    Function fn_;
};

// Waits for every predecessor; its output is {predecessor: output, ...}.
class JoinNode final : public Node {
public:
    explicit JoinNode(std::string name, NodeOptions options = {});
    bool joins() const noexcept override { return true; }
    asio::awaitable<json::value> run(NodeContext& ctx, json::value input) override;
};

// Runs an Agent as a node (what an edge to an agent makes): its input, unless it is the user's message, becomes
// a user turn of its branch; an LlmAgent's final answer is the node's output (its JSON with an output schema).
class AgentNode final : public Node {
public:
    explicit AgentNode(std::shared_ptr<Agent> agent, NodeOptions options = {});
    std::shared_ptr<Agent> agent() const override { return agent_; }
    asio::awaitable<json::value> run(NodeContext& ctx, json::value input) override;

private:
    std::shared_ptr<Agent> agent_;
};

std::shared_ptr<FunctionNode> function_node(std::string name, FunctionNode::Function fn, NodeOptions options = {});
std::shared_ptr<JoinNode> join_node(std::string name, NodeOptions options = {});

// One end of an edge: START, a node, or an agent (run by an AgentNode; one node per agent however often named).
class Step {
public:
    Step(StartNode) {}
    template <std::derived_from<Node> N>
    Step(std::shared_ptr<N> node) : node_(std::move(node))
    {
    }
    template <std::derived_from<Agent> A>
    Step(std::shared_ptr<A> agent) : agent_(std::move(agent))
    {
    }
    bool is_start() const noexcept { return !node_ && !agent_; }
    const std::shared_ptr<Node>& node() const noexcept { return node_; }
    const std::shared_ptr<Agent>& agent() const noexcept { return agent_; }

private:
    std::shared_ptr<Node> node_;
    std::shared_ptr<Agent> agent_;
};

struct WorkflowOptions {
    std::string description;
    int max_concurrency = 0;  // nodes running at once; 0: no limit
};

class Workflow final : public Agent {
public:
    struct Edge {
        Step from;
        Step to;
        std::optional<json::value> route;  // none: always taken
    };

    // Throws adk::Error for a graph it cannot run: no edge from START, an edge into START, a node no edge from
    // START reaches, two nodes of one name, a route that is not a string, number, bool or array of them.
    Workflow(std::string name, std::vector<Edge> edges, WorkflowOptions options = {});
    ~Workflow() override;

    class Builder {
    public:
        explicit Builder(std::string name);
        Builder& description(std::string text);
        Builder& max_concurrency(int n);
        Builder& edge(Step from, Step to);
        // An edge taken when `from` chose `route` (default_route: when no other route of it matched).
        Builder& route(Step from, json::value route, Step to);
        Builder& edges(Step from, std::initializer_list<Step> to);  // fan-out
        Builder& chain(std::initializer_list<Step> steps);          // a -> b -> c
        std::shared_ptr<Workflow> build();

    private:
        std::string name_;
        WorkflowOptions options_;
        std::vector<Edge> edges_;
    };

    // Its nodes, in the order its edges name them, and its edges (an edge from START has a null `from`): what the
    // web UI draws (ApiServer's build_graph).
    struct EdgeView {
        const Node* from;
        const Node* to;
        std::optional<json::value> route;
    };
    std::vector<std::shared_ptr<Node>> nodes() const;
    std::vector<EdgeView> edges() const;

    struct Graph;  // workflow/src/graph.hpp

protected:
    asio::awaitable<void> run_impl(InvocationContext& ctx, EventSink& out) override;

private:
    Workflow(std::string name, std::unique_ptr<Graph> graph, WorkflowOptions options);

    std::unique_ptr<Graph> graph_;
    WorkflowOptions options_;
};

}  // namespace adk::workflow
