// Request and response processors: the steps of the LlmAgent's loop that build each model request and
// look at each answer. The flow runs its own processors first, then the agent's
// (LlmAgentConfig::request_processors, response_processors), in order.
//
// The flow's request processors, in order (libadk/src/flow/processors/, one file each):
//   basic         the model's name, the generation config, the output schema
//   (an empty slot: confirmation resume, which will run the tools a person approved)
//   instructions  the root's global instruction and the agent's instruction, templated with state
//   identity      "You are an agent. Your internal name is ..."
//   contents      the session's history for this agent and branch
//   tools         each tool declares itself (Tool::process_request)
//   transfer      the agents it may transfer to, and the transfer_to_agent tool
//   (then code execution, for an agent with a code executor: adk/code_execution/code_executor.hpp)
// Then the agent's own request processors, then the before-model callbacks. The response processors run
// on the model's whole answer (not on each streamed chunk), after the after-model callbacks.
#pragma once

#include <adk/models/llm_request.hpp>
#include <adk/models/llm_response.hpp>

#include <boost/asio/awaitable.hpp>

namespace adk {

namespace asio = boost::asio;

class InvocationContext;
class EventSink;

class RequestProcessor {
public:
    virtual ~RequestProcessor() = default;
    // Adds to `request`, the next model call of the LlmAgent ctx.agent(). May emit events through `out`
    // (they are committed before the model is called), or end the invocation (ctx.set_end_invocation()):
    // then the model is not called.
    virtual asio::awaitable<void> process_request(InvocationContext& ctx, LlmRequest& request, EventSink& out) = 0;
};

class ResponseProcessor {
public:
    virtual ~ResponseProcessor() = default;
    // Looks at, or changes, the model's whole answer before it becomes the model's event.
    virtual asio::awaitable<void> process_response(InvocationContext& ctx, LlmResponse& response,
                                                   EventSink& out) = 0;
};

}  // namespace adk
