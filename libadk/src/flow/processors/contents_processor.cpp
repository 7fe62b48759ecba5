#include "processors.hpp"

#include <adk/agents/invocation_context.hpp>
#include <adk/flow/contents.hpp>

#include <iterator>

namespace adk::detail {

asio::awaitable<void> ContentsRequestProcessor::process_request(InvocationContext& ctx, LlmRequest& request,
                                                                EventSink&)
{
    const LlmAgent& agent = llm_agent_of(ctx);
    std::vector<Content> history = ctx.with_session([&](const Session& s) {
        return build_contents(s.events, agent.name(), ctx.branch(), agent.config().include_contents,
                              ctx.isolation_scope());
    });
    if (request.contents.empty())
        request.contents = std::move(history);
    else
        request.contents.insert(request.contents.begin(), std::make_move_iterator(history.begin()),
                                std::make_move_iterator(history.end()));
    co_return;
}

}  // namespace adk::detail
