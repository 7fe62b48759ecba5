// Pending calls: where an LlmAgent stands when it runs again after its invocation paused, was interrupted or
// was answered (a person approved a call, a client answered a long-running tool).
//
// It reads the session: the agent's model turn that called tools, and what came after it. In a resumed invocation
// that turn is its node's latest (RunState knows where it is: a loop's rounds are nodes of their own); for an
// answer that starts a new invocation, the agent's latest turn in the session. For each call:
//   answered        it has its response (a long-running tool's: a final answer from the client)
//   run             it never ran, or the process died before its response was stored: it runs now
//   run_approved    a person approved it (adk_request_confirmation answered): it runs now
//   reject          a person rejected it: the model is told so
//   waits           its question (approval, credential) has no answer yet, or it is a long-running tool that
//                   returned nothing and has no answer: the invocation pauses again
// A call whose response is stored never runs again. When the agent answered (a final text) after the last
// answer, it has nothing left to do. When its turn's responses handed the invocation to another agent, that
// agent continues.
#pragma once

#include "tool_dispatch.hpp"

#include <adk/agents/invocation_context.hpp>

#include <optional>
#include <string>
#include <vector>

namespace adk::detail {

class PendingCalls {
public:
    PendingCalls() = default;
    std::vector<PlannedCall> to_run;             // run, run_approved and reject, in call order
    bool waits = false;                          // some call still waits
    bool done = false;                           // the agent answered after the last answer
    std::optional<std::string> transferred_to;   // the turn's responses transferred to this agent
};

// nullopt when there is nothing to continue: the invocation is new and its message answers none of the
// agent's calls, or the agent never called a tool in it. `agent` is the agent's name.
std::optional<PendingCalls> find_pending_calls(const InvocationContext& ctx, const std::string& agent);

}  // namespace adk::detail
