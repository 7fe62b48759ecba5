// Agent: ADK's BaseAgent. A custom agent overrides run_impl, one coroutine that emits events.
//
// DESIGN: besides run(ctx) -> EventStream, an agent has run_inline(ctx, out), which runs it
// inside the caller's coroutine and emits straight into the caller's EventSink. Workflow agents run
// their children that way: no extra channel, no extra hop per event, and backpressure and cancellation
// are the caller's own. run() is for children that must run concurrently (ParallelAgent branches).
// Sub-agents are given at construction only, so a tree is checked once and never changes under a run.
#pragma once

#include <adk/agents/callback_context.hpp>
#include <adk/agents/event_sink.hpp>
#include <adk/agents/invocation_context.hpp>

#include <boost/asio/awaitable.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace adk {

namespace asio = boost::asio;

// Returns content to answer in the agent's place (before) or after it (after); std::nullopt to go on.
using AgentCallback = std::function<asio::awaitable<std::optional<Content>>(CallbackContext&)>;

class Toolset;

class Agent : public std::enable_shared_from_this<Agent> {
public:
    // Throws adk::Error when the name is not an identifier or is "user", when a sub-agent already has a
    // parent, or when two agents of the tree share a name.
    Agent(std::string name, std::string description, std::vector<std::shared_ptr<Agent>> sub_agents = {});
    virtual ~Agent();
    Agent(const Agent&) = delete;
    Agent& operator=(const Agent&) = delete;

    const std::string& name() const noexcept { return name_; }
    const std::string& description() const noexcept { return description_; }
    std::span<const std::shared_ptr<Agent>> sub_agents() const noexcept { return sub_agents_; }
    Agent* parent() const noexcept { return parent_; }
    Agent& root_agent() noexcept;

    // This agent or a descendant with that name, depth-first; nullptr when none. The result is null for
    // this agent itself when it is not owned by a shared_ptr.
    std::shared_ptr<Agent> find_agent(std::string_view name) const;
    // A descendant (not this agent) with that name, depth-first; nullptr when none.
    std::shared_ptr<Agent> find_sub_agent(std::string_view name) const;

    // Callbacks run in the order added; the first that returns content wins. An exception propagates and
    // ends the invocation with it.
    void add_before_agent_callback(AgentCallback callback);
    void add_after_agent_callback(AgentCallback callback);

    // Runs the agent as its own producer on ctx's executor and returns its events.
    EventStream run(std::shared_ptr<InvocationContext> ctx, std::size_t capacity = default_stream_capacity);

    // Runs the agent inside the caller's coroutine, emitting into `out`: how workflow agents run their
    // children without an extra stream. `parent` is the caller's context; the agent gets its own, on its
    // `run`-th run below the parent's node (InvocationContext::for_agent).
    asio::awaitable<void> run_inline(const InvocationContext& parent, EventSink& out, int run = 1);
    // The same with the agent's context made by the caller (parent.for_agent(agent, run), perhaps as a workflow's
    // node): what a workflow calls. Throws adk::Error when ctx is another agent's.
    asio::awaitable<void> run_in(InvocationContext ctx, EventSink& out);

    // Checks a name: an identifier ([A-Za-z_][A-Za-z0-9_]*) that is not "user".
    static void validate_name(std::string_view name);

    // The toolsets this agent uses itself, not its sub-agents' (adk/tools/toolset.hpp): none by default; an
    // LlmAgent's, with those of the agents its AgentTools wrap. Whoever runs the tree closes them (Runner::close).
    virtual std::vector<std::shared_ptr<Toolset>> toolsets() const;

protected:
    virtual asio::awaitable<void> run_impl(InvocationContext& ctx, EventSink& out) = 0;

private:
    asio::awaitable<bool> run_callbacks(bool before, InvocationContext& ctx, EventSink& out);

    std::string name_;
    std::string description_;
    std::vector<std::shared_ptr<Agent>> sub_agents_;
    Agent* parent_ = nullptr;
    std::vector<AgentCallback> before_agent_callbacks_;
    std::vector<AgentCallback> after_agent_callbacks_;
};

// Every toolset of the tree under `root` (its own, its sub-agents', depth-first), each once.
std::vector<std::shared_ptr<Toolset>> toolsets_in(const Agent& root);

}  // namespace adk
