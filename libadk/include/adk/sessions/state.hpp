// Session state keys and their scopes.
//
//   "app:k"   shared by every user and session of the app
//   "user:k"  shared by every session of the user
//   "temp:k"  this invocation only: visible to the invocation's agents, never persisted
//   "k"       this session
#pragma once

#include <boost/json/object.hpp>

#include <string_view>

namespace adk {

namespace json = boost::json;

inline constexpr std::string_view app_state_prefix = "app:";
inline constexpr std::string_view user_state_prefix = "user:";
inline constexpr std::string_view temp_state_prefix = "temp:";

inline constexpr std::size_t max_state_key_bytes = 256;

// Throws adk::Error (errc::invalid_argument) for a key that is empty, longer than 256 bytes, or holds a
// path separator ('/' or '\'), "..", a NUL or another control character. Prefixes are allowed.
void validate_state_key(std::string_view key);
// validate_state_key for each key of `state`.
void validate_state_keys(const json::object& state);

// A state delta split by scope, as a backend stores it: each key without its prefix; temp: keys dropped.
class ScopedState {
public:
    ScopedState() = default;

    json::object app;
    json::object user;
    json::object session;
};

ScopedState split_state_delta(const json::object& delta);

// The state a reader sees: the session's keys, then the app's and the user's with their prefixes.
json::object merge_state(const json::object& app, const json::object& user, const json::object& session);

// Sets each key of `delta` in `state`, moving the values out of `delta`.
void assign_state(json::object& state, json::object& delta);

// Moves the temp: keys out of `delta` and returns them.
json::object take_temp_state(json::object& delta);

}  // namespace adk
