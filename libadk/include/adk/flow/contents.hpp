// The conversation an LlmAgent sends to its model, built from the session's events the way ADK does:
//   * events without content, partial events, and events of other branches are left out (an event
//     belongs to branch "a.b" when its branch is empty, "a.b", or an ancestor such as "a");
//   * the user's and this agent's own events keep their content; function call and response ids that
//     adk-cpp made up ("adk-...") are removed, since the model never saw them;
//   * other agents' events become user content that tells the model who said what ("For context:",
//     "[agent] said: ...", "[agent] called tool `f` with parameters: {...}", "[agent] `f` tool returned
//     result: {...}");
//   * with IncludeContents::none only the current turn is kept: from the latest event of the user or of
//     another agent on;
//   * questions to a person (adk_request_confirmation, adk_request_credential) and their answers are left out;
//     each call's latest response follows the call at once (responses given at different times join, and a
//     long-running tool's final answer replaces its first response), followed by the media its tool sent
//     with it (ToolContext::add_response_part); a call that never got a response is left out;
//   * the events that a Runner::rewind marker took back are left out;
//   * a compaction's summary (actions.compaction, adk/compaction/compaction.hpp) stands, as this agent's own
//     content, in place of the events its range covers (ADK's rule: see detail::apply_compactions).
#pragma once

#include <adk/agents/llm_agent.hpp>
#include <adk/core/event.hpp>
#include <adk/sessions/event_list.hpp>

#include <string_view>
#include <vector>

namespace adk {

// `isolation_scope`: the agent's (InvocationContext::isolation_scope); an event in another scope is left out.
std::vector<Content> build_contents(const EventList& events, std::string_view agent_name,
                                    std::string_view branch, IncludeContents mode,
                                    std::string_view isolation_scope = {});

}  // namespace adk
