// Gemini models over HTTP: Google AI (generativelanguage.googleapis.com, an API key) or Vertex AI (a
// project, a location and an OAuth access token).
//
//   auto model = adk::gemini::make_model({});               // gemini-2.5-flash, GEMINI_API_KEY
//   GeminiOptions o; o.model = "gemini-2.5-pro"; o.base_url = "http://127.0.0.1:8080";  // e.g. mock-llm
#pragma once

#include <adk/models/http_model.hpp>

#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace adk::gemini {

class GeminiOptions {
public:
    GeminiOptions() = default;
    std::string model = "gemini-2.5-flash";
    std::string api_key;   // empty: GEMINI_API_KEY, then GOOGLE_API_KEY
    std::string base_url;  // empty: GOOGLE_GEMINI_BASE_URL, then Google's endpoint
    std::string api_version = "v1beta";
    // Vertex AI (or GOOGLE_GENAI_USE_VERTEXAI=true): the project (GOOGLE_CLOUD_PROJECT), the location
    // (GOOGLE_CLOUD_LOCATION, default us-central1) and an OAuth access token (GOOGLE_OAUTH_ACCESS_TOKEN,
    // e.g. from `gcloud auth print-access-token`).
    bool vertex = false;
    std::string project;
    std::string location;
    std::string access_token;
    std::vector<std::pair<std::string, std::string>> headers;  // sent with every request
    std::shared_ptr<net::HttpClient> http;                     // empty: net::default_http_client()
    ResponseLimits limits;                                     // how much of an answer is held in memory
};
static_assert(!std::is_aggregate_v<GeminiOptions>);

// Throws adk::Error (invalid_argument) when no key (or for Vertex, no project or token) can be found, with
// the names of the variables to set.
std::shared_ptr<Model> make_model(GeminiOptions options);

// The wire format alone, for tests and for programs with their own transport.
std::shared_ptr<const WireFormat> wire_format(GeminiOptions options);

}  // namespace adk::gemini
