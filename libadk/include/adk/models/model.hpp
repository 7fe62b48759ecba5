// Model: a language model behind one interface, whatever the provider.
//
// DESIGN: generate() is an awaitable that returns the stream, rather than the stream itself. Awaiting gives the model the caller's executor, the invocation's strand, on which to run its
// producer (HttpModel has none: its stream is pulled, read by the consumer's next()), and lets it fail
// before streaming (a bad key, a refused connection) with an exception from the co_await itself.
#pragma once

#include <adk/core/stream.hpp>
#include <adk/models/llm_request.hpp>
#include <adk/models/llm_response.hpp>

#include <boost/asio/awaitable.hpp>

#include <string_view>

namespace adk {

class Model {
public:
    virtual ~Model() = default;
    virtual std::string_view name() const = 0;

    // stream == false: one complete response (partial == false).
    // stream == true: chunks with partial == true whose text parts are deltas, the last of which may carry
    // finish_reason and usage; complete function calls may come in any chunk. Model-side failures arrive
    // as responses with error_code; transport failures end the stream with adk::Error.
    virtual asio::awaitable<Stream<LlmResponse>> generate(LlmRequest request, bool stream) = 0;
    // Lets go of what the model keeps on the provider's side (Gemini's context caches). Runner::close calls it
    // for the models of its agents; idempotent; the model may be used again after it.
    virtual asio::awaitable<void> close() { co_return; }
};

// The model id used when a sample or tool needs a default; LlmAgent's builder always wants a model given.
inline constexpr std::string_view default_model_id = "gemini-2.5-flash";

}  // namespace adk
