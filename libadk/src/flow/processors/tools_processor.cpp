#include "processors.hpp"

#include <adk/agents/callback_context.hpp>

namespace adk::detail {

asio::awaitable<void> ToolsRequestProcessor::process_request(InvocationContext& ctx, LlmRequest& request,
                                                             EventSink&)
{
    if (request.callable_tools.empty())
        co_return;
    ReadonlyContext ro(ctx);
    // By index: a tool may add tools of its own to the list it is in.
    for (std::size_t i = 0; i < request.callable_tools.size(); ++i) {
        std::shared_ptr<Tool> tool = request.callable_tools[i];
        co_await tool->process_request(ro, request);
    }
}

}  // namespace adk::detail
