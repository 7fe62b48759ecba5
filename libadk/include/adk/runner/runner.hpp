// Runner: runs an agent tree for one app, one user message at a time, over a session service.
//
// DESIGN: run() reads the session and stores the user's message before it returns the stream, so a
// missing session is an exception from `co_await runner.run(...)` itself, not a broken stream. Each
// invocation gets a new strand over the executor the caller runs on (its inner executor when the caller
// is on a strand), so invocations run in parallel on a multi-threaded io_context; with
// RunnerOptions::single_threaded they run on the caller's executor itself. cancel() answers whether the
// invocation was running.
//
// Invocations of one session take turns (SessionService::take_turn): run() waits while another invocation
// of the same session runs, here or in another process over the same database, and reads the session once
// its turn comes, so that each invocation starts from what the one before it stored. So do not hold a
// session's stream unread while awaiting another run() of the same session. Different sessions run at once.
#pragma once

#include <adk/agents/agent.hpp>
#include <adk/agents/event_sink.hpp>
#include <adk/agents/run_config.hpp>
#include <adk/compaction/compaction.hpp>
#include <adk/core/content.hpp>

#include <boost/asio/awaitable.hpp>

#include <boost/json/object.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace adk {

class SessionService;
class ArtifactService;
class MemoryService;
class CredentialService;
class Plugin;

namespace detail {
class RunnerRegistry;
class Compactor;
}

// ADK's ResumabilityConfig. A resumable app's agents record where they stand in each invocation
// (actions.agentState, actions.endOfAgent), so that an invocation that paused (waiting for a person or a
// long-running tool) or was interrupted (cancelled, or its process died) continues where it stopped: a
// workflow at the sub-agent it was in, an LlmAgent at the turn it left unfinished. A tool whose response was
// stored never runs again. Resume with RunRequest::invocation_id, or by answering one of its function calls.
struct ResumabilityConfig {
    bool is_resumable = false;
};

// Meant for designated initializers; the defaults keep -Wmissing-field-initializers quiet for the fields
// a user leaves out.
struct RunnerOptions {
    std::string app_name = {};
    std::shared_ptr<Agent> agent = nullptr;  // the root agent
    std::shared_ptr<SessionService> session_service = nullptr;
    std::shared_ptr<ArtifactService> artifact_service = nullptr;
    std::shared_ptr<MemoryService> memory_service = nullptr;
    // Where the credentials users give to tools are kept (adk/auth/credential_service.hpp); one in memory when
    // none is given.
    std::shared_ptr<CredentialService> credential_service = nullptr;
    std::vector<std::shared_ptr<Plugin>> plugins = {};  // in order; see adk/plugins/plugin.hpp
    ResumabilityConfig resumability = {};
    // ADK's App.events_compaction_config: the session's older events summarized after an invocation, so that
    // what the model is sent stays bounded (adk/compaction/compaction.hpp). Off when unset.
    std::optional<EventsCompactionConfig> compaction = std::nullopt;
    // ADK's App.context_cache_config: the models may cache the unchanging start of their requests on the
    // provider's side (ContextCacheConfig, adk/models/llm_request.hpp). A run's RunConfig::context_cache wins.
    std::optional<ContextCacheConfig> context_cache = std::nullopt;
    // Where the spans of the invocations go (adk/telemetry/tracer.hpp): an "invocation" span, then "invoke_agent
    // {agent}", "call_llm" with "generate_content {model}", "execute_tool {tool}", nested as they run. None: no spans
    // (a request's trace context is still passed on to the model calls).
    std::shared_ptr<const telemetry::Tracer> tracer = nullptr;
    // Set it when one thread runs the io_context that calls run() (asio::io_context ioc(1) run by one
    // thread, or a strand you give every caller): invocations then run on the caller's executor instead
    // of strands of their own, which saves a dispatch through the strand at every step of every
    // invocation (about 7% of the CPU of a streamed answer). With several threads and this set,
    // invocations race: leave it false.
    bool single_threaded = false;
};

// What one run is asked to do: the fields of ADK's /run and /run_sse bodies (userId, sessionId, newMessage,
// stateDelta, invocationId) and the RunConfig. It may grow; callers that set fields by name keep compiling.
class RunRequest {
public:
    RunRequest() = default;
    RunRequest(std::string user_id_, std::string session_id_, std::optional<Content> new_message_ = std::nullopt)
        : user_id(std::move(user_id_)), session_id(std::move(session_id_)), new_message(std::move(new_message_))
    {
    }

    std::string user_id;
    std::string session_id;
    // The user's message, stored as the invocation's first event. None (or no parts): the agent runs on the
    // session as it is. Its functionResponse parts answer the agents' function calls (a person's approval, a
    // credential, a long-running tool's result); each is checked first (adk/tools/tool_confirmation.hpp).
    std::optional<Content> new_message;
    // State to set before the agent runs (any scope, temp: too), carried by the user's event as ADK does; with
    // no message, by an event of the user's that holds only it.
    json::object state_delta;
    // The invocation to resume (paused or interrupted) in a resumable app (RunnerOptions::resumability). An
    // answer to one of its calls resumes it without this. Refused with adk::Error when the app is not
    // resumable, when the session has no such invocation, or when it finished.
    std::optional<std::string> invocation_id;
    RunConfig run_config;
    // The trace this run continues (telemetry::SpanContext::parse of a request's traceparent); not valid: the
    // invocation starts a trace of its own.
    telemetry::SpanContext trace_parent;
    // Where the invocation's events go as they are emitted, in place of the returned stream's channel: for a
    // caller that keeps them itself (the API server's run log), so that each costs no hop between coroutines.
    // The stream then carries only the end (see StreamReceiver); without one it carries every event.
    std::shared_ptr<StreamReceiver<Event>> receiver;
};
static_assert(!std::is_aggregate_v<RunRequest>);

class Runner {
public:
    // Throws adk::Error when the app name, agent or session service is missing, or the compaction config has no
    // trigger (or no model to summarize with).
    explicit Runner(RunnerOptions options);
    ~Runner();
    Runner(const Runner&) = delete;
    Runner& operator=(const Runner&) = delete;

    // Appends the user's message to the session, then starts the agent on a strand of its own and
    // returns its events. Throws adk::Error (errc::not_found) when the session does not exist, and for an
    // answer that does not fit (invalid_argument; already_exists for a call answered before): nothing is
    // stored then.
    // The invocation runs while the stream lives: dropping or cancelling the stream stops it.
    asio::awaitable<EventStream> run(RunRequest request);
    // The same, with the invocation's id known before its first event (a server names the run by it: an A2A task).
    class Started {
    public:
        Started(EventStream events_, std::string invocation_id_)
            : events(std::move(events_)), invocation_id(std::move(invocation_id_))
        {
        }
        EventStream events;
        std::string invocation_id;
    };
    asio::awaitable<Started> start(RunRequest request);
    // The common case: a message in a session.
    asio::awaitable<EventStream> run(std::string user_id, std::string session_id, Content new_message,
                                     RunConfig config = {});

    // Stops a running invocation from any thread; its stream ends with adk::Error(errc::cancelled).
    // Returns false when no invocation with that id is running.
    bool cancel(std::string_view invocation_id);

    // ADK's rewind: takes the session back to before the invocation. A marker event (by "user",
    // actions.rewindBeforeInvocationId) sets the state back to what it was then (app: and user: keys
    // excepted) and saves the artifacts as they were as new versions; the history is kept, and agents no
    // longer see the events from that invocation on. Throws adk::Error (not_found) for an unknown session or
    // invocation.
    asio::awaitable<void> rewind(std::string user_id, std::string session_id, std::string before_invocation_id);

    // Closes the toolsets of the agent tree (adk::toolsets_in), all at once, then its LlmAgents' models
    // (Model::close: Gemini's context caches are deleted), and returns when each has closed
    // (a toolset whose close fails is logged). Call it when the Runner's work is done, before destroying it:
    // the Runner's destructor cannot wait. Idempotent; an invocation that runs later opens them again.
    asio::awaitable<void> close();

    // Returns once no compaction of this Runner runs (they run in the background after invocations). close()
    // waits for them too.
    asio::awaitable<void> wait_for_compactions();

    const RunnerOptions& options() const noexcept { return options_; }

private:
    RunnerOptions options_;
    std::shared_ptr<detail::RunnerRegistry> registry_;
    std::shared_ptr<detail::Compactor> compactor_;  // null without RunnerOptions::compaction
};

}  // namespace adk
