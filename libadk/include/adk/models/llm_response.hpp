// LlmResponse: one response, or one streamed chunk of a response, from a model.
#pragma once

#include <adk/core/content.hpp>
#include <adk/core/event.hpp>

#include <boost/json/object.hpp>

#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace adk {

class LlmResponse {
public:
    LlmResponse() = default;
    explicit LlmResponse(Content content_);

    static LlmResponse text(std::string text);
    // One model turn that calls one function. `id` may be empty: the agent then assigns "adk-<uuid>".
    static LlmResponse function_call(std::string name, json::object args, std::string id = {});
    static LlmResponse function_calls(std::vector<FunctionCall> calls);
    // A model-side failure reported as data (ADK's errorCode / errorMessage).
    static LlmResponse error(std::string code, std::string message);

    std::optional<Content> content;
    bool partial = false;        // a streamed chunk: its text is a delta
    bool turn_complete = false;
    bool interrupted = false;
    std::optional<std::string> finish_reason;
    std::optional<UsageMetadata> usage_metadata;
    std::optional<std::string> error_code;
    std::optional<std::string> error_message;
    std::optional<std::string> model_version;
    json::object custom_metadata;
    json::object provider_metadata;  // groundingMetadata, citations, ... kept for the event's extra fields
};

static_assert(!std::is_aggregate_v<LlmResponse>);

}  // namespace adk
