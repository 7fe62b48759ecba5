#include "processors.hpp"

#include <adk/agents/invocation_context.hpp>

namespace adk::detail {

asio::awaitable<void> BasicRequestProcessor::process_request(InvocationContext& ctx, LlmRequest& request,
                                                             EventSink&)
{
    const LlmAgentConfig& cfg = llm_agent_of(ctx).config();
    request.model = std::string(cfg.model->name());
    request.config = cfg.generate_content_config;
    request.cache_config = ctx.run_config().context_cache;
    if (cfg.output_schema) {
        request.config.response_schema = *cfg.output_schema;
        request.config.response_mime_type = "application/json";
    }
    co_return;
}

}  // namespace adk::detail
