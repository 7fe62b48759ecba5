// Models by the ids users write:
//   "gemini-2.5-flash", "gemini/gemini-2.5-pro"          Gemini (GEMINI_API_KEY or GOOGLE_API_KEY,
//                                                          GOOGLE_GEMINI_BASE_URL; Vertex AI with
//                                                          GOOGLE_GENAI_USE_VERTEXAI=true)
//   "openai/gpt-4o-mini", "gpt-4o", "o3-mini"              OpenAI (OPENAI_API_KEY, OPENAI_BASE_URL)
//   "anthropic/claude-sonnet-4-5", "claude-haiku-4-5"      Anthropic (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL)
//   "ollama/llama3.2"                                      Ollama's OpenAI-compatible API (OLLAMA_HOST,
//                                                          default http://localhost:11434)
//   "openrouter/<vendor>/<model>", "groq/<model>", "deepseek/<model>"
//                                                          their OpenAI-compatible APIs (OPENROUTER_API_KEY,
//                                                          GROQ_API_KEY, DEEPSEEK_API_KEY)
// Link adk::providers to use it.
#pragma once

#include <adk/models/model.hpp>
#include <adk/net/http_client.hpp>

#include <memory>
#include <string_view>

namespace adk {

// Throws adk::Error (invalid_argument) for an id of no known provider, or when the provider's key is missing;
// the message names the variable to set. `http` defaults to net::default_http_client().
std::shared_ptr<Model> make_model(std::string_view id, std::shared_ptr<net::HttpClient> http = nullptr);

}  // namespace adk
