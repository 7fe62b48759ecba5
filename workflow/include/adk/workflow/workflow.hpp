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
#include <adk/tools/tool.hpp>

#include <boost/json/value.hpp>

#include <chrono>
#include <concepts>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <set>
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
    // The node's events, and those of what runs below it, in an isolation scope (Event::isolation_scope): an
    // LlmAgent in the scope sees only its events and those of no scope, and agents outside it do not see them.
    // "": a scope of each run of its own (its node path); a name: the scope nodes that give that name share.
    std::optional<std::string> isolation_scope;
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
class Node;

// How NodeContext::run_node runs a node below the calling one.
struct RunNodeOptions {
    // Which run of the node it is: its path is the caller's plus "name@run". 0: the next run of that name in this
    // caller. A caller that runs nodes from several coroutines at once numbers them itself, so that a resumed run
    // gives each call the same number again.
    int run = 0;
    // A branch of its own below the caller's ("branch.name@run"), as a fan-out gives: what the nodes running at
    // once should have, so that an LlmAgent among them sees only its own conversation.
    bool own_branch = false;
};

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
    // The event that carries the node's output, for a node whose output is more than a message (a tool's
    // response): `output` and nodeInfo.outputFor are set here, and the workflow records no other event of it.
    asio::awaitable<void> emit_output(Event event, json::value output);
    bool output_emitted() const noexcept { return output_emitted_; }
    // Asks a person. The first time, the question is emitted and the node stops there (the workflow's other
    // branches go on; the invocation pauses when they are done). When the node runs again after the answer came
    // (rerun_on_resume), the same call returns the answer. A node may ask several questions, one after another.
    asio::awaitable<json::value> request_input(RequestInput request);

    // Runs `node` (or an agent, as an AgentNode) below this node, as ADK's ctx.run_node does: its path is this
    // node's plus "name@run", its events go out with this node's, and its output is returned. A child that fails
    // (after its retries) throws adk::Error naming it. In a resumed invocation a child that finished is passed over
    // with the output it recorded, so a node that runs again (rerun_on_resume, a dynamic workflow's entry) runs
    // each child once. A child that asks a person pauses this node too: run_node does not return (it throws an
    // exception that is not an std::exception; let it pass), and this node runs again when the answer came.
    asio::awaitable<json::value> run_node(std::shared_ptr<Node> node, json::value input, RunNodeOptions options = {});
    asio::awaitable<json::value> run_node(std::shared_ptr<Agent> agent, json::value input, RunNodeOptions options = {});

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
    bool output_emitted_ = false;
    struct ChildRuns {
        std::set<int> used;
        int highest = 0;
    };
    std::map<std::string, ChildRuns, std::less<>> child_runs_;  // run_node's runs so far, by node name
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

// Runs `inner` once per item of its input (a JSON array; anything else is one item) on up to `max_workers` items
// at once, each as a run of its own ("inner@1", "inner@2", ... below this node, each on a branch of its own); its
// output is the array of their outputs, in the items' order (ADK's ParallelWorker; @google/adk numbers the runs
// from 0). The first item that fails fails it (the items running then finish, and no other starts). An item that
// asks a person pauses it when the items running are done; when the answer comes it runs again, and the items that
// finished are passed over.
class ParallelWorker final : public Node {
public:
    explicit ParallelWorker(std::shared_ptr<Node> inner, int max_workers = 8, NodeOptions options = {});
    const std::shared_ptr<Node>& inner() const noexcept { return inner_; }
    asio::awaitable<json::value> run(NodeContext& ctx, json::value input) override;

private:
    std::shared_ptr<Node> inner_;
    int max_workers_;
};

// Runs a Tool as a node (ADK's ToolNode): its input is the call's arguments (a JSON object, a text holding one, or
// null for none), its event the function's response, and its output that response (a result that is not an object
// as {"result": ...}, as a model sees it). A failure of the tool fails the node (so RetryConfig applies). Tools that
// run long, or ask for a confirmation or a credential, need a model's turn to wait in: they are refused.
class ToolNode final : public Node {
public:
    explicit ToolNode(std::shared_ptr<Tool> tool, NodeOptions options = {});
    asio::awaitable<json::value> run(NodeContext& ctx, json::value input) override;

private:
    std::shared_ptr<Tool> tool_;
};

std::shared_ptr<FunctionNode> function_node(std::string name, FunctionNode::Function fn, NodeOptions options = {});
std::shared_ptr<JoinNode> join_node(std::string name, NodeOptions options = {});

// One end of an edge: START, a node, an agent (run by an AgentNode; one node per agent however often named) or a
// tool (run by a ToolNode).
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
    // A tool: run by a ToolNode of its name (one node per tool however often named).
    template <std::derived_from<Tool> T>
    Step(std::shared_ptr<T> tool) : tool_(std::move(tool))
    {
    }
    bool is_start() const noexcept { return !node_ && !agent_ && !tool_; }
    const std::shared_ptr<Node>& node() const noexcept { return node_; }
    const std::shared_ptr<Agent>& agent() const noexcept { return agent_; }
    const std::shared_ptr<Tool>& tool() const noexcept { return tool_; }

private:
    std::shared_ptr<Node> node_;
    std::shared_ptr<Agent> agent_;
    std::shared_ptr<Tool> tool_;
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

    // A workflow without edges, whose entry runs its nodes itself (NodeContext::run_node; ADK's dynamicEntry):
    // entry(ctx, input) gets the workflow's input and returns its output (null: none). In a resumed invocation the
    // entry runs again from its start, and run_node passes over each node that finished, with its output.
    using Entry = std::function<asio::awaitable<json::value>(NodeContext&, json::value)>;
    Workflow(std::string name, Entry entry, WorkflowOptions options = {});
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
    // web UI draws (ApiServer's build_graph). A workflow with an entry has none.
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

    asio::awaitable<void> run_entry(InvocationContext& ctx, EventSink& out, json::value input);

    std::unique_ptr<Graph> graph_;  // null for a workflow with an entry
    Entry entry_;
    WorkflowOptions options_;
};

}  // namespace adk::workflow
