// Anthropic's Messages API: text, tool use (input_json_delta), thinking with signatures, redacted thinking.
//
//   adk::anthropic::AnthropicOptions o;  o.model = "claude-sonnet-4-5";  // ANTHROPIC_API_KEY
#pragma once

#include <adk/models/http_model.hpp>

#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace adk::anthropic {

class AnthropicOptions {
public:
    AnthropicOptions() = default;
    std::string model = "claude-sonnet-4-5";
    std::string api_key;   // empty: ANTHROPIC_API_KEY
    std::string base_url;  // empty: ANTHROPIC_BASE_URL, then https://api.anthropic.com
    std::string version = "2023-06-01";  // the anthropic-version header
    int default_max_tokens = 4096;       // max_tokens is required; used when the request sets none
    std::vector<std::pair<std::string, std::string>> headers;  // e.g. anthropic-beta
    std::shared_ptr<net::HttpClient> http;                     // empty: net::default_http_client()
    ResponseLimits limits;                                     // how much of an answer is held in memory
};
static_assert(!std::is_aggregate_v<AnthropicOptions>);

// The key of a redacted thinking block in Part::extra; sent back unchanged in later turns.
inline constexpr const char* redacted_thinking_key = "anthropicRedactedThinking";

// Throws adk::Error (invalid_argument) when ANTHROPIC_API_KEY is not set (and no base URL is given).
std::shared_ptr<Model> make_model(AnthropicOptions options);

std::shared_ptr<const WireFormat> wire_format(AnthropicOptions options);

}  // namespace adk::anthropic
