// Tools that come with adk-cpp. Give them to an LlmAgent as any tool (LlmAgent::builder(...).tool(...)).
#pragma once

#include <adk/tools/function_tool.hpp>

#include <memory>

namespace adk {

// exit_loop: escalates (and skips summarization), which ends the enclosing LoopAgent.
std::shared_ptr<FunctionTool> exit_loop_tool();

// load_memory(query): the model searches the user's memory (RunnerOptions::memory_service) and gets
// {"memories": [{"content": <the text parts, joined by spaces>, "author", "timestamp": <ISO 8601, UTC>}]}.
// When the Runner has a memory service, it also tells the model, in the instructions, that it has memory.
std::shared_ptr<Tool> load_memory_tool();

// preload_memory: never called by the model. Before each model call, it searches the user's memory with the
// text of the user's message (its first part) and puts what it finds in the instructions, between
// <PAST_CONVERSATIONS> tags, one "Time: ..." line and one "author: text" line per memory. No memory
// service, no text, nothing found: nothing is added. A failed search is logged and the model is called
// without memories.
std::shared_ptr<Tool> preload_memory_tool();

// load_artifacts(artifact_names): lists the session's artifacts (and the user's "user:" ones) in the
// instructions; when the model calls it, the next model request carries each named artifact after the
// history, as "Artifact <name> is:" and the artifact: images, audio, video and PDF as they are, text-like
// files (text/*, JSON, XML, CSV) as text, other bytes as a line that says their type and size. The contents
// are in that one request only, not in the session. A name without "user:" that is not found is looked up
// with it. No artifact service: the tool only declares itself.
std::shared_ptr<Tool> load_artifacts_tool();

}  // namespace adk
