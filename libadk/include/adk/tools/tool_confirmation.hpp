// Human in the loop: the function calls through which an agent asks a person, and what the person answers.
//
// A tool call that needs a person's approval does not run. The agent emits a function call named
// adk_request_confirmation (a fresh id, listed in longRunningToolIds) whose args are
//   {"originalFunctionCall": {"id", "name", "args"}, "toolConfirmation": {"hint", "confirmed": false, "payload"}}
// and the invocation pauses. The client answers with a functionResponse of the same id and name whose response
// is {"confirmed": true|false, "payload": ...} (or {"response": "<that object as a JSON string>"}). Then the tool
// runs and sees the answer in ToolContext::tool_confirmation(), or the model is told that it was rejected.
//
// A tool that needs credentials asks through adk_request_credential: args {"functionCallId", "authConfig",
// "message"}; the client answers with the authConfig, its credential filled in (adk/auth/credential_service.hpp).
#pragma once

#include <adk/core/content.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace adk {

namespace json = boost::json;

inline constexpr std::string_view request_confirmation_function = "adk_request_confirmation";
inline constexpr std::string_view request_credential_function = "adk_request_credential";
// A workflow node's question to a person (ADK 2.x RequestInput, adk/workflow): args {interruptId, message, payload,
// response_schema}; the call's id is the interrupt id.
inline constexpr std::string_view request_input_function = "adk_request_input";

// Whether a function is one of the three above: a question to a person, which the model never sees.
inline bool is_question(std::string_view function_name)
{
    return function_name == request_confirmation_function || function_name == request_credential_function ||
           function_name == request_input_function;
}

// A person's answer to adk_request_input, as ADK reads it: a bare value comes wrapped as {"result": value} (a
// functionResponse's response is an object), unless the question's response_schema (may be null) asks for an
// object. Throws adk::Error (invalid_argument) that says how the answer misses the schema.
json::value read_input_answer(const json::object& response, const json::value* response_schema);

// The id of the call a question is about (args.originalFunctionCall.id, or args.functionCallId); empty when it
// names none.
std::string asked_about(const FunctionCall& question);

// A client's answer to a long-running call that says the work goes on ({"status": "pending"}): an update that the
// model hears, not the final answer.
bool is_progress_update(const json::object& response);

// What a person is asked (hint, payload) and what they answered (confirmed, payload). ADK's ToolConfirmation.
class ToolConfirmation {
public:
    ToolConfirmation() = default;
    ToolConfirmation(std::string hint_, bool confirmed_, json::value payload_ = nullptr)
        : hint(std::move(hint_)), confirmed(confirmed_), payload(std::move(payload_))
    {
    }

    std::string hint;
    bool confirmed = false;
    json::value payload;  // null: none

    friend bool operator==(const ToolConfirmation&, const ToolConfirmation&) = default;
};
static_assert(!std::is_aggregate_v<ToolConfirmation>);

void tag_invoke(const json::value_from_tag&, json::value& out, const ToolConfirmation& v);
// Reads {"hint"?, "confirmed", "payload"?}; throws adk::Error (invalid_argument) that says what is wrong.
ToolConfirmation tag_invoke(const json::value_to_tag<ToolConfirmation>&, const json::value& v);

// A person's answer to adk_request_confirmation, as a client sends it: the response object itself, or
// {"response": "<JSON text of it>"}. Throws adk::Error (invalid_argument) naming what is wrong.
ToolConfirmation read_confirmation_answer(const json::object& response);

}  // namespace adk
