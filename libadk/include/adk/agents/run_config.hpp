// RunConfig: how one invocation runs.
#pragma once

#include <adk/models/llm_request.hpp>

#include <boost/json/object.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace adk {

enum class StreamingMode {
    none,  // whole events only
    sse,   // partial events carry the model's text as it arrives
    bidi,  // live audio/video sessions (not supported yet)
};

class RunConfig {
public:
    RunConfig() = default;

    StreamingMode streaming_mode = StreamingMode::none;
    // The most model calls one invocation may make; 0 or less means no limit. Guards against loops.
    int max_llm_calls = 500;
    // The most node runs a graph workflow's invocation may make (its nested workflows' included); 0 or less means
    // no limit. A cycle of function or tool nodes calls no model, so max_llm_calls does not end it.
    int max_node_runs = 1000;
    // The most text and thought text one streamed model answer may join in an LlmAgent (the deltas a UI
    // sees are joined into the answer that is stored); a longer answer fails the model call with adk::Error
    // (bad_response). Guards memory against a model that never stops.
    std::size_t max_answer_bytes = std::size_t{64} << 20;
    // Each inline blob (an uploaded file) of the user's message is saved as an artifact of the session, named
    // by its display name when that is a plain file name, else "artifact_<invocation id>_<part index>"; in
    // the stored message it becomes the text "Uploaded file: <name>. It is saved into artifacts", and the
    // user event's artifactDelta lists it. The model sees it through load_artifacts_tool(). Needs
    // RunnerOptions::artifact_service (Runner::run throws adk::Error without one).
    bool save_input_blobs_as_artifacts = false;
    // Token budgets: the most tokens (input and output, as the models report them: adk::total_tokens) that the
    // invocation's model calls may use, and that the session's may have used, its earlier invocations and
    // compactions counted; 0 means no limit. Checked before each model call: once one is reached the invocation
    // ends with a final event by the agent (errorCode "TOKEN_BUDGET_EXHAUSTED") that says which budget ran out;
    // the answer that crossed it is kept whole. With a budget set, each model event's customMetadata
    // "adk_token_budget" holds the counts so far ({"invocationTokens", "sessionTokens"}).
    std::int64_t max_invocation_tokens = 0;
    std::int64_t max_session_tokens = 0;
    // Context caching (ADK's App.context_cache_config): the models may cache the unchanging start of their
    // requests on the provider's side. Unset: RunnerOptions::context_cache, else none.
    std::optional<ContextCacheConfig> context_cache;
    std::vector<std::string> response_modalities;  // e.g. {"TEXT"}
    boost::json::object custom_metadata;           // passed through to plugins and callbacks
};

static_assert(!std::is_aggregate_v<RunConfig>);

}  // namespace adk
