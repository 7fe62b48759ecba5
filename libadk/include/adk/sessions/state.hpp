// Session state keys and their scopes.
//
//   "app:k"   shared by every user and session of the app
//   "user:k"  shared by every session of the user
//   "temp:k"  this invocation only: visible to the invocation's agents, never persisted
//   "k"       this session
#pragma once

#include <string_view>

namespace adk {

inline constexpr std::string_view app_state_prefix = "app:";
inline constexpr std::string_view user_state_prefix = "user:";
inline constexpr std::string_view temp_state_prefix = "temp:";

inline constexpr std::size_t max_state_key_bytes = 256;

// Throws adk::Error (errc::invalid_argument) for a key that is empty, longer than 256 bytes, or holds a
// path separator ('/' or '\'), "..", a NUL or another control character. Prefixes are allowed.
void validate_state_key(std::string_view key);

}  // namespace adk
