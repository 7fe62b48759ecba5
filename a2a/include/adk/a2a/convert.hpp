// ADK's content and A2A's parts and messages, both ways, as ADK's own A2A converters map them (so that ADK peers
// in Python, Go and TypeScript read what adk-cpp writes):
//
//   ADK Part                     A2A Part
//   text (thought)               {"text"} (metadata {"adk_thought": true})
//   inlineData                   {"raw", "mediaType", "filename" (displayName)}
//   fileData                     {"url", "mediaType", "filename"}
//   functionCall                 {"data": {"name", "args", "id"}, metadata {"adk_type": "function_call"}}
//   functionResponse             {"data": {"name", "response", "id"}, metadata {"adk_type": "function_response"}}
//   executableCode               {"data": {"language", "code"}, metadata {"adk_type": "executable_code"}}
//   codeExecutionResult          {"data": {"outcome", "output"}, metadata {"adk_type": "code_execution_result"}}
//
// A data part without an adk_type (an A2A client's structured input) reads as text: its JSON.
#pragma once

#include <adk/a2a/types.hpp>
#include <adk/core/content.hpp>

#include <string_view>

namespace adk::a2a {

// The metadata key ADK's A2A converters use for `name` ("adk_type", "adk_thought", "adk_author").
std::string adk_metadata_key(std::string_view name);

Part to_a2a(const adk::Part& part);
// Throws adk::Error (invalid_argument) for a part ADK cannot hold (a function call without a name, a file larger
// than adk::max_inline_data_bytes).
adk::Part from_a2a(const Part& part);

// A message of `role` with the content's parts (its role is not carried: A2A's role says who speaks).
Message to_message(const adk::Content& content, Role role, std::string message_id);
// The message's parts as ADK content: "user" for ROLE_USER, "model" for ROLE_AGENT.
adk::Content to_content(const Message& message);

}  // namespace adk::a2a
