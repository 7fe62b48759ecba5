// Instruction templating with ADK's rules.
//
//   {key}            the state value (error if missing); {key?} empty if missing
//   {app:k} {user:k} {temp:k}   prefixed state keys
//   {artifact.name}  the artifact's text (other parts as JSON); error if missing unless {artifact.name?}
//   anything else in braces that is not a valid state name ({"a": 1}, {1, 2}, { }) stays as written
// String values are inserted as they are, other JSON values serialized.
#pragma once

#include <adk/agents/callback_context.hpp>

#include <boost/asio/awaitable.hpp>

#include <string>
#include <string_view>

namespace adk {

// Throws adk::Error (errc::not_found) naming the key when a required value is missing.
asio::awaitable<std::string> inject_session_state(std::string_view instruction, const ReadonlyContext& ctx);

// A name that can stand in braces: an identifier, or "app:", "user:" or "temp:" followed by one.
bool is_valid_state_name(std::string_view name);

}  // namespace adk
