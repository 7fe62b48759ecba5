// Session state keys and their scopes.
//
//   "app:k"   shared by every user and session of the app
//   "user:k"  shared by every session of the user
//   "temp:k"  this invocation only: visible to the invocation's agents, never persisted
//   "k"       this session
#pragma once

#include <adk/core/json_limits.hpp>

#include <boost/json/object.hpp>

#include <cstddef>
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

// How large state may grow: every SessionService checks them before it stores anything
// (SessionService::set_state_limits). State is for small values that agents read at every step: the app's
// state is read with every session of the app. Files belong in an artifact service.
class StateLimits {
public:
    StateLimits() = default;
    std::size_t max_value_bytes = std::size_t{1} << 20;  // one key's value, as JSON text
    std::size_t max_delta_bytes = std::size_t{2} << 20;  // what one event (or a new session) sets, all keys
    std::size_t max_scope_bytes = std::size_t{4} << 20;  // what the app's, a user's or a session's state holds
};

// How deep a state value may nest: a delta's value stands 3 levels down in its event (event, actions,
// stateDelta), and an event is stored no deeper than max_json_depth.
inline constexpr std::size_t max_state_value_depth = max_json_depth - 3;

// Checks a state delta (or a new session's state) before it is stored: every key (validate_state_key), every
// value (no deeper than max_state_value_depth, every number finite: adk::Error invalid_argument), and their
// sizes as JSON text (errc::too_large past a limit, naming the key and the limit).
void check_state_delta(const json::object& delta, const StateLimits& limits);

// Throws adk::Error (too_large) when a scope's state would hold `bytes` of JSON, over
// limits.max_scope_bytes; `scope` names it ("the app 'a'"). Backends call it before they store a scope's state
// that a delta changed.
void check_scope_bytes(const StateLimits& limits, std::string_view scope, std::size_t bytes);

// The size of `state` as JSON text once `delta` is assigned to it (estimated as check_json does), without
// changing either.
std::size_t state_bytes_after(const json::object& state, const json::object& delta);

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
