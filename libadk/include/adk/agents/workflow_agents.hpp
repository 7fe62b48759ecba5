// Workflow agents: run their sub-agents in a fixed shape, without a model.
//
//   SequentialAgent  each child in order; each sees what the others committed.
//   ParallelAgent    every child at once, each in its own branch ("parallel.child") on its own strand,
//                    so branches run in parallel on a multi-threaded io_context. A branch's LlmAgents see
//                    only their branch's history. One failing branch cancels its siblings and its error
//                    ends the run; cancelling the invocation stops every branch.
//   LoopAgent        the children in order, again and again, until one escalates (exit_loop_tool(), or
//                    a tool setting actions.escalate) or max_iterations rounds ran (0: no limit).
#pragma once

#include <adk/agents/agent.hpp>

#include <memory>
#include <string>
#include <vector>

namespace adk {

class SequentialAgent final : public Agent {
public:
    SequentialAgent(std::string name, std::string description, std::vector<std::shared_ptr<Agent>> sub_agents);

protected:
    asio::awaitable<void> run_impl(InvocationContext& ctx, EventSink& out) override;
};

class ParallelAgent final : public Agent {
public:
    ParallelAgent(std::string name, std::string description, std::vector<std::shared_ptr<Agent>> sub_agents);

protected:
    asio::awaitable<void> run_impl(InvocationContext& ctx, EventSink& out) override;
};

class LoopAgent final : public Agent {
public:
    LoopAgent(std::string name, std::string description, std::vector<std::shared_ptr<Agent>> sub_agents,
              int max_iterations = 0);
    int max_iterations() const noexcept { return max_iterations_; }

protected:
    asio::awaitable<void> run_impl(InvocationContext& ctx, EventSink& out) override;

private:
    int max_iterations_;
};

}  // namespace adk
