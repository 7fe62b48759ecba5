// The model call: before-model plugins and callbacks, the model (streamed chunks emitted as partial
// events), recovery from its failure, after-model plugins and callbacks, the response processors.
//
// DESIGN: g++ gives every local and every co_await temporary of a coroutine its own slot in the frame, for
// the coroutine's whole life, and the frames of the whole call chain are alive while a model streams. With
// thousands of concurrent invocations that is most of their memory. So the chain that is alive while
// streaming (run_llm_flow -> call_model -> stream_model) holds only what streaming needs, the other
// phases are coroutines of their own whose frames are gone by then, and results travel through
// references or as pointers rather than as Event / LlmResponse temporaries.
#pragma once

#include <adk/agents/event_sink.hpp>
#include <adk/agents/invocation_context.hpp>
#include <adk/agents/llm_agent.hpp>

#include <memory>

namespace adk::detail {

// Calls the model, or takes a before-model callback's answer. Returns the final model event, not yet
// emitted.
asio::awaitable<std::unique_ptr<Event>> call_model(const LlmAgent& agent, InvocationContext& ctx, EventSink& out,
                                                   LlmRequest& request);

}  // namespace adk::detail
