#include "processors.hpp"

namespace adk::detail {

asio::awaitable<void> BasicRequestProcessor::process_request(InvocationContext& ctx, LlmRequest& request,
                                                             EventSink&)
{
    const LlmAgentConfig& cfg = llm_agent_of(ctx).config();
    request.model = std::string(cfg.model->name());
    request.config = cfg.generate_content_config;
    if (cfg.output_schema) {
        request.config.response_schema = *cfg.output_schema;
        request.config.response_mime_type = "application/json";
    }
    co_return;
}

}  // namespace adk::detail
