// What mock-llm answers, sans I/O: a scripted turn rendered in one provider's wire format.
//
// The script (mock-llm --script FILE.json), documented in tools/mock_llm/README.md:
//   {"turns": [
//      {"chunks": ["It is ", "sunny."], "repeat": 1},                         streamed text
//      {"text": "It is sunny."},                                              text in one chunk
//      {"function_calls": [{"name": "get_weather", "args": {"city": "Paris"}, "id": "call_1"}]},
//      {"error": {"status": 429, "message": "slow down", "retry_after": 1}}   an HTTP error
//      {"chunks": ["Hel"], "stream_error": "overloaded"}                      an error after the chunks, under 200
//   ]}
// The turn answered is the number of model (assistant) messages in the request's history: the first
// request of a conversation gets turn 0, the request after a tool call gets turn 1, and concurrent
// conversations do not disturb each other. Past the last turn, the last one is answered again.
// A script may also give agents turns of their own, picked when the request's system instruction names the
// agent as ADK does ("Your internal name is \"NAME\"."):
//   {"turns": [...], "agents": {"weather_agent": {"turns": [...]}, "critic": {"turns": [...]}}}
#pragma once

#include <boost/json/value.hpp>

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace adk::mock_llm {

namespace json = boost::json;

enum class Format { gemini, openai, anthropic };

// The format a request path asks for: ".../models/M:streamGenerateContent" or ":generateContent" (Gemini),
// ".../chat/completions" (OpenAI), ".../messages" (Anthropic). False when none matches.
bool format_of_path(std::string_view target, Format& format, bool& stream, std::string& model);

// The streamed body as frames, each written on its own: `head`, then `text_count` text frames made on
// demand (a long answer is never held in memory whole), then `tail`.
struct StreamPlan {
    std::vector<std::string> head;
    std::size_t text_count = 0;
    std::function<std::string(std::size_t)> text_frame;
    std::vector<std::string> tail;
};

struct Answer {
    unsigned status = 200;
    std::string content_type;
    std::vector<std::pair<std::string, std::string>> headers;
    bool streamed = false;
    std::string body;  // when not streamed
    StreamPlan plan;   // when streamed
};

// Throws std::invalid_argument, naming the turn and the field, when `script` is not a script as above.
void validate_script(const json::value& script);

// Renders the turn of `script` that `request_body` asks for (a script that validate_script accepted). Gemini's
// usage reports `cached_tokens` of the prompt as read from a context cache (cachedContentTokenCount).
Answer render(const json::value& script, Format format, bool stream, const std::string& model,
              std::string_view request_body, std::size_t cached_tokens = 0);

// The number of model / assistant messages in a request body of that format.
std::size_t model_turns_in(const json::value& request, Format format);

}  // namespace adk::mock_llm
