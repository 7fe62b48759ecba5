// LlmRequest: what an agent sends to a model, in genai's terms.
#pragma once

#include <adk/core/content.hpp>
#include <adk/telemetry/tracer.hpp>

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

// ADK's ContextCacheConfig: what a model may keep on the provider's side between calls, so that a request's
// unchanging start (instructions, tools, earlier turns) is not processed again. Gemini: a cachedContents resource
// made from the request's start, named by later requests while their start is the same; Anthropic: cache_control
// breakpoints; OpenAI caches by itself. Cached input shows in usage (cachedContentTokenCount).
class ContextCacheConfig {
public:
    ContextCacheConfig() = default;
    int cache_intervals = 10;   // requests one Gemini cache serves before it is made anew
    int ttl_seconds = 1800;     // how long a Gemini cache lives unused; refreshed while it serves
    int min_tokens = 0;         // a request estimated smaller (its JSON bytes / 4) is not cached
    friend bool operator==(const ContextCacheConfig&, const ContextCacheConfig&) = default;
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
    // Set from RunConfig::context_cache: the model may cache the request's start (ContextCacheConfig).
    std::optional<ContextCacheConfig> cache_config;
    // Set by a model that cached the request's start: the provider's name of that cache (Gemini's
    // "cachedContents/..."); the request then holds only what follows it.
    std::string cached_content;

    // The span of this model call (adk/telemetry/tracer.hpp): an HTTP model sends it as `traceparent` (and
    // `tracestate`), so that the provider's side of the call joins the trace. Not part of the request's content.
    telemetry::SpanContext span_context;

    // The tools the flow runs when the model calls them (their declarations are in `tools`; these are not
    // sent). The tools request processor fills it.
    std::vector<std::shared_ptr<Tool>> callable_tools;
    // The callable tool named `name`, or null.
    Tool* find_tool(std::string_view name) const;
};

static_assert(!std::is_aggregate_v<FunctionDeclaration> && !std::is_aggregate_v<ThinkingConfig>);
static_assert(!std::is_aggregate_v<GenerateContentConfig> && !std::is_aggregate_v<LlmRequest>);
static_assert(!std::is_aggregate_v<ContextCacheConfig>);

}  // namespace adk
