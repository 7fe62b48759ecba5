// The Gemini wire format (Generative Language API v1beta), sans I/O: an LlmRequest as the JSON body of
// :generateContent / :streamGenerateContent, and each response (or streamed chunk) as an LlmResponse.
#pragma once

#include <adk/models/llm_request.hpp>
#include <adk/models/llm_response.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <optional>
#include <string_view>

namespace adk::gemini {

namespace json = boost::json;

// contents, systemInstruction, tools (functionDeclarations with parametersJsonSchema), toolConfig,
// generationConfig (with responseJsonSchema and thinkingConfig), safetySettings. Built in `sp`.
json::object encode_request(const LlmRequest& request, json::storage_ptr sp = {});
// The same request as JSON text, written without building the tree: the same text as serializing
// encode_request(request). What a model call sends.
std::string encode_request_text(const LlmRequest& request);

// One GenerateContentResponse: the first candidate's content (thought parts, function calls with their
// ids and thought signatures), finish reason, usage, model version; grounding and citations as provider
// metadata. An {"error": {...}} body or a blocked prompt becomes error_code / error_message.
// `partial` marks a streamed chunk.
LlmResponse decode_response(const json::value& body, bool partial);

// The same for the usual streamed chunk, read straight from its text into `out` (a new LlmResponse)
// without building a JSON tree: the first candidate's content made of text parts (text, thought, extra
// members), its finish reason and grounding, usage counts and details, the model version; members
// decode_response ignores are skipped. Returns false for anything else (function calls, thought
// signatures, errors, nulls or numbers written as doubles where a field is read, snake_case spellings,
// keys given twice, malformed JSON), leaving `out` partly filled: discard it and use decode_response,
// which gives what this would have.
//
// `text_is`: what the caller knows of the text's UTF-8. Utf8::valid (an SseEvent's data, which the SSE parser
// makes valid) skips checking its strings again (180 instructions of a paced chunk's 20,400 in the server);
// text that is not valid UTF-8 must then not be given, as its strings would keep the bytes. Utf8::unchecked
// checks them, and declines text whose strings are not valid UTF-8.
enum class Utf8 { unchecked, valid };
bool decode_text_chunk(std::string_view text, bool partial, LlmResponse& out, Utf8 text_is = Utf8::unchecked);

// The retry delay a 429 body asks for (google.rpc.RetryInfo, e.g. "34.4s"), if any.
std::optional<std::chrono::milliseconds> retry_delay(const json::value& error_body);

}  // namespace adk::gemini
