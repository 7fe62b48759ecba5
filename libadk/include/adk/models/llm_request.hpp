// LlmRequest: what an agent sends to a model, in genai's terms.
#pragma once

#include <adk/core/content.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace adk {

class Tool;

// A tool as the model sees it (genai FunctionDeclaration).
class FunctionDeclaration {
public:
    FunctionDeclaration() = default;
    FunctionDeclaration(std::string name_, std::string description_, json::value parameters_);
    std::string name;
    std::string description;
    json::value parameters;  // a JSON schema (type "object"); null when the tool takes no arguments
    friend bool operator==(const FunctionDeclaration&, const FunctionDeclaration&) = default;
};

class ThinkingConfig {
public:
    ThinkingConfig() = default;
    std::optional<bool> include_thoughts;
    std::optional<int> thinking_budget;
    friend bool operator==(const ThinkingConfig&, const ThinkingConfig&) = default;
};

// Generation parameters and the request-level settings genai keeps beside them.
class GenerateContentConfig {
public:
    GenerateContentConfig() = default;
    std::optional<double> temperature;
    std::optional<double> top_p;
    std::optional<int> top_k;
    std::optional<int> max_output_tokens;
    std::vector<std::string> stop_sequences;
    std::optional<ThinkingConfig> thinking_config;
    json::array safety_settings;  // [{"category": ..., "threshold": ...}]
    std::optional<json::value> response_schema;
    std::optional<std::string> response_mime_type;
    json::object tool_config;  // e.g. {"functionCallingConfig": {"mode": "ANY"}}
    friend bool operator==(const GenerateContentConfig&, const GenerateContentConfig&) = default;
};

class LlmRequest {
public:
    LlmRequest() = default;

    // Adds instruction text to the system instruction, separated from what is there by a blank line.
    void append_instruction(const std::string& text);
    // The system instruction's text, parts joined by blank lines; empty when there is none.
    std::string system_text() const;

    std::string model;
    std::vector<Content> contents;
    std::optional<Content> system_instruction;
    std::vector<FunctionDeclaration> tools;
    GenerateContentConfig config;
    // The model runs code itself (BuiltInCodeExecutor; Gemini's codeExecution tool). Providers without such a
    // tool log a warning once and leave it out.
    bool code_execution = false;

    // The tools the flow runs when the model calls them (their declarations are in `tools`; these are not
    // sent). The tools request processor fills it.
    std::vector<std::shared_ptr<Tool>> callable_tools;
    // The callable tool named `name`, or null.
    Tool* find_tool(std::string_view name) const;
};

static_assert(!std::is_aggregate_v<FunctionDeclaration> && !std::is_aggregate_v<ThinkingConfig>);
static_assert(!std::is_aggregate_v<GenerateContentConfig> && !std::is_aggregate_v<LlmRequest>);

}  // namespace adk
