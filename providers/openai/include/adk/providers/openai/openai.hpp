// OpenAI Chat Completions, and every server that speaks it by base URL: Ollama, vLLM, llama.cpp,
// OpenRouter, Groq, DeepSeek.
//
//   adk::openai::OpenAIOptions o;  o.model = "gpt-4o-mini";           // OPENAI_API_KEY, OPENAI_BASE_URL
//   o.base_url = "http://localhost:11434/v1"; o.require_key = false;  // a local server
#pragma once

#include <adk/models/http_model.hpp>

#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace adk::openai {

class OpenAIOptions {
public:
    OpenAIOptions() = default;
    std::string model = "gpt-4o-mini";
    std::string api_key;       // empty: OPENAI_API_KEY
    std::string base_url;      // empty: OPENAI_BASE_URL, then https://api.openai.com/v1
    std::string organization;  // empty: OPENAI_ORG_ID
    std::string project;       // empty: OPENAI_PROJECT_ID
    bool require_key = true;   // false for local servers that take none
    std::vector<std::pair<std::string, std::string>> headers;
    std::shared_ptr<net::HttpClient> http;  // empty: net::default_http_client()
    ResponseLimits limits;                  // how much of an answer is held in memory
};
static_assert(!std::is_aggregate_v<OpenAIOptions>);

// Throws adk::Error (invalid_argument) when a key is required and OPENAI_API_KEY is not set.
std::shared_ptr<Model> make_model(OpenAIOptions options);

// The wire format alone: requests, whole responses, streamed chunks (tool_calls assembled by index).
std::shared_ptr<const WireFormat> wire_format(OpenAIOptions options);

}  // namespace adk::openai
