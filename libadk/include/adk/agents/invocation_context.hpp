// InvocationContext: what an agent knows about the invocation it runs in.
//
// DESIGN: an invocation's shared part (session, services, ids, config, cancellation, budget) lives in one
// detail::Invocation owned by shared_ptr; an InvocationContext adds the agent that runs and its branch.
// Entering a sub-agent makes a new, cheap InvocationContext over the same Invocation, as ADK does with
// model_copy. An invocation runs on its strand (executor()); a ParallelAgent gives each branch a strand
// of its own, so branches run at once on a multi-threaded io_context. The invocation's copy of the
// session is therefore read and written under a mutex: session() and state() return copies, and
// with_session() runs a function under the lock.
#pragma once

#include <adk/agents/run_config.hpp>
#include <adk/core/content.hpp>
#include <adk/core/event.hpp>
#include <adk/sessions/session.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <any>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>
#include <utility>

namespace adk {

namespace asio = boost::asio;

class Agent;
class SessionService;
class ArtifactService;
class MemoryService;
class Plugin;

// What an invocation is made of. The Runner fills it; tests of a single agent may fill it themselves.
struct InvocationOptions {
    std::string app_name;
    std::string user_id;
    Session session;  // the caller's copy; events are appended to it as they are committed
    std::shared_ptr<SessionService> session_service;
    std::shared_ptr<ArtifactService> artifact_service;
    std::shared_ptr<MemoryService> memory_service;
    RunConfig run_config;
    std::optional<Content> user_content;
    std::shared_ptr<Agent> root_agent;
    asio::any_io_executor executor;  // the invocation's strand (the caller's executor if single-threaded)
    std::string invocation_id;       // "e-<uuid>" when empty
    std::string origin = "runner";   // what started the invocation: "runner", "api", "cli", ...
    std::vector<std::shared_ptr<Plugin>> plugins;  // run in order, before the agents' own callbacks
};

namespace detail {

class CommitOrder;

class Invocation {
public:
    explicit Invocation(InvocationOptions options);
    ~Invocation();

    // Appends a non-partial event to the session through the session service, then to this invocation's
    // copy of it under the lock; on return `event` is what was stored. Safe from any branch's strand.
    // Commits run one at a time (parallel branches wait their turn), so that the order in which the
    // service stores events is the order the invocation sees them in. Every state key is checked first
    // (temp: keys too), and a refused event changes nothing.
    asio::awaitable<void> commit(Event& event);

    InvocationOptions options;
    mutable std::mutex session_mutex;  // guards options.session's state and events
    std::atomic<bool> cancelled{false};
    std::atomic<bool> end_invocation{false};
    std::atomic<int> llm_calls{0};
    std::mutex attributes_mutex;
    std::map<std::string, std::any, std::less<>> attributes;

private:
    std::unique_ptr<CommitOrder> commit_order_;
};

}  // namespace detail

class InvocationContext {
public:
    // A context for `agent` (may be null until the first agent runs) over a new invocation.
    explicit InvocationContext(InvocationOptions options, Agent* agent = nullptr);
    InvocationContext(std::shared_ptr<detail::Invocation> invocation, Agent* agent, std::string branch,
                      asio::any_io_executor executor = {});

    // The same invocation, seen by `agent` (a sub-agent entering its run). The branch is kept.
    InvocationContext for_agent(Agent& agent) const;
    // The same invocation and agent on another branch ("parallel.child"), running on `executor` (the
    // branch's own strand) when one is given.
    InvocationContext with_branch(std::string branch, asio::any_io_executor executor = {}) const;

    const std::string& invocation_id() const noexcept { return inv_->options.invocation_id; }
    const std::string& app_name() const noexcept { return inv_->options.app_name; }
    const std::string& user_id() const noexcept { return inv_->options.user_id; }
    const std::string& origin() const noexcept { return inv_->options.origin; }
    const std::string& branch() const noexcept { return branch_; }
    Agent& agent() const;
    const std::shared_ptr<Agent>& root_agent() const noexcept { return inv_->options.root_agent; }
    // A copy of the session as this invocation sees it now (events committed so far, temp: state too).
    Session session() const;
    const std::string& session_id() const noexcept { return inv_->options.session.id; }
    // Runs f(const Session&) under the session lock and returns its result. Keep f short: no waiting.
    template <class F>
    auto with_session(F&& f) const
    {
        std::lock_guard lock(inv_->session_mutex);
        return std::forward<F>(f)(std::as_const(inv_->options.session));
    }
    const RunConfig& run_config() const noexcept { return inv_->options.run_config; }
    const std::optional<Content>& user_content() const noexcept { return inv_->options.user_content; }
    const std::shared_ptr<SessionService>& session_service() const noexcept
    {
        return inv_->options.session_service;
    }
    const std::shared_ptr<ArtifactService>& artifact_service() const noexcept
    {
        return inv_->options.artifact_service;
    }
    const std::shared_ptr<MemoryService>& memory_service() const noexcept { return inv_->options.memory_service; }
    // The strand this context's agent runs on: the invocation's, or its branch's.
    const std::vector<std::shared_ptr<Plugin>>& plugins() const noexcept { return inv_->options.plugins; }

    const asio::any_io_executor& executor() const noexcept
    {
        return executor_ ? executor_ : inv_->options.executor;
    }

    // A copy of a state value as this invocation sees it (session, app:, user: and temp: keys).
    std::optional<json::value> state(std::string_view key) const;

    // An event authored by this context's agent, with the invocation id, branch, a fresh id and the time.
    Event make_event(Content content) const;
    Event make_event() const;

    // True once the invocation was cancelled (Runner::cancel or the consumer left). Long computations
    // that do not await should check it.
    bool cancelled() const noexcept { return inv_->cancelled.load(); }
    void cancel() const noexcept { inv_->cancelled.store(true); }

    // Set by an agent or callback to stop the whole invocation after the current event.
    bool end_invocation() const noexcept { return inv_->end_invocation.load(); }
    void set_end_invocation(bool value = true) const noexcept { inv_->end_invocation.store(value); }

    // Counts one model call against RunConfig::max_llm_calls; throws adk::Error
    // (errc::llm_call_limit_exceeded) past the limit.
    void check_and_inc_llm_call() const;
    int llm_calls() const noexcept { return inv_->llm_calls.load(); }

    // Per-invocation values for plugins and callbacks. Safe from any thread.
    void set_attribute(std::string key, std::any value) const;
    std::any attribute(std::string_view key) const;

    const std::shared_ptr<detail::Invocation>& invocation() const noexcept { return inv_; }

private:
    std::shared_ptr<detail::Invocation> inv_;
    Agent* agent_ = nullptr;
    std::string branch_;
    asio::any_io_executor executor_;  // empty: the invocation's
};

}  // namespace adk
