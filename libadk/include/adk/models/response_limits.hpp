// ResponseLimits: how much of a model's answer adk-cpp holds in memory, so that a broken or hostile server
// cannot make it buffer without bound (README, "Invariants", 2). Each provider's options carry one; the
// defaults are far above what real models send. Going over a limit ends the model call with adk::Error
// (errc::bad_response) naming the limit, which the agent's on-model-error callbacks see like any failure.
#pragma once

#include <cstddef>
#include <type_traits>

namespace adk {

class ResponseLimits {
public:
    ResponseLimits() = default;
    // One server-sent event: its lines and its data together (a generated image inline in one chunk fits).
    std::size_t max_event_bytes = std::size_t{32} << 20;
    // One answer: a body that is not streamed, or what a streamed answer gathers before it is handed on (a
    // function call's arguments, arriving in fragments).
    std::size_t max_answer_bytes = std::size_t{64} << 20;
    // Function calls one streamed answer may assemble.
    std::size_t max_function_calls = 1024;
};
static_assert(!std::is_aggregate_v<ResponseLimits>);

}  // namespace adk
