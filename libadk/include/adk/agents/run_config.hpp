// RunConfig: how one invocation runs.
#pragma once

#include <boost/json/object.hpp>

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
    bool save_input_blobs_as_artifacts = false;
    std::vector<std::string> response_modalities;  // e.g. {"TEXT"}
    boost::json::object custom_metadata;           // passed through to plugins and callbacks
};

static_assert(!std::is_aggregate_v<RunConfig>);

}  // namespace adk
