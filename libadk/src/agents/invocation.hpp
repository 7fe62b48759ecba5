// detail::Invocation: what the InvocationContexts of one invocation share (adk/agents/invocation_context.hpp).
// Private to libadk.
#pragma once

#include <adk/agents/invocation_context.hpp>
#include <adk/core/async_mutex.hpp>
#include <adk/sessions/session_service.hpp>

#include <any>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace adk {

namespace detail {

class RunState;

class Invocation {
public:
    explicit Invocation(InvocationOptions options);
    ~Invocation();

    // Appends a non-partial event to the session through the session service, then to this invocation's
    // copy of it under the lock; on return `event` is what was stored. Safe from any branch's strand.
    // Commits run one at a time (parallel branches wait their turn), so that the order in which the
    // service stores events is the order the invocation sees them in. Every state key is checked first
    // (temp: keys too), and a refused event changes nothing. Returns the event as this invocation's copy of
    // the session holds it (shared with the service's, for a backend that keeps events in memory); null for a
    // partial event, which is not stored.
    asio::awaitable<std::shared_ptr<const Event>> commit(Event& event);

    InvocationOptions options;
    mutable std::mutex session_mutex;  // guards options.session's state and events
    std::atomic<bool> cancelled{false};
    std::atomic<bool> end_invocation{false};
    // The agents that paused the invocation (InvocationContext::pause), read by InvocationContext::paused().
    std::atomic<bool> any_paused{false};
    std::mutex paused_mutex;
    std::vector<const Agent*> paused_agents;
    std::atomic<int> llm_calls{0};
    std::atomic<int> node_runs{0};
    // Token budgets (RunConfig::max_invocation_tokens, max_session_tokens): the tokens the invocation's model
    // calls used (those of its earlier runs included, when it resumed), and those of the session's other events.
    std::atomic<std::int64_t> invocation_tokens{0};
    std::int64_t other_tokens = 0;
    std::mutex attributes_mutex;
    std::map<std::string, std::any, std::less<>> attributes;
    // The session's turn (SessionService::take_turn), held by the Runner's invocations until they end.
    SessionTurn session_turn;
    // Who the invocation's spans belong to (telemetry::SpanOwner); null when its tracer records nothing.
    std::shared_ptr<const telemetry::SpanOwner> span_owner;
    // Where the invocation's nodes stand (resumable apps; null otherwise): read once from the session's events,
    // then kept current by commit().
    std::unique_ptr<RunState> run_state;

private:
    asio::awaitable<void> wait_commit_turn();

    AsyncMutex commit_order_;  // one commit at a time
};

}  // namespace detail

}  // namespace adk
