// ADK's session database, schema version 1: what the SQL backends share so that they write the same rows as
// ADK Python's and ADK TypeScript's DatabaseSessionService (and read theirs).
//
//   adk_internal_metadata(key, value)          key "schema_version", value "1"
//   sessions(app_name, user_id, id, state JSON, create_time, update_time)
//   events(id, app_name, user_id, session_id, invocation_id, timestamp, event_data JSON)
//   app_states(app_name, state JSON, update_time)
//   user_states(app_name, user_id, state JSON, update_time)
//
// Key columns hold at most 191 characters. A stored state holds its scope's keys without their prefix
// (split_state_delta). event_data is the event's JSON with snake_case keys, as ADK stores it, except inside
// the members that hold the user's own keys (state and artifact deltas, function arguments and responses,
// custom metadata ...), which are kept as they are.
#pragma once

#include <adk/core/event.hpp>
#include <adk/sessions/session.hpp>

#include <boost/json/value.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace adk::database {

inline constexpr std::string_view schema_version_key = "schema_version";
inline constexpr std::string_view schema_version = "1";
inline constexpr std::size_t max_key_length = 191;

// Throws adk::Error (invalid_argument) when an app name, user id or session id is longer than a key column
// holds, before anything is written.
void check_key_lengths(const SessionKey& key);

// The event as event_data holds it, and back. Reading accepts camelCase too. Throws adk::Error
// (storage_failed) for a row that is not an event.
std::string event_to_json(const Event& event);
Event event_from_json(std::string_view text);
Event event_from_json_value(json::value event);

// ADK's camelCase and snake_case forms of an event's JSON, converted in place.
void event_to_snake_case(json::value& event);
void event_to_camel_case(json::value& event);

// A stored state column (a session's, a user's, an app's) read back; `where` names its owner for the error.
// Throws adk::Error (storage_failed) when it is not a JSON object.
json::object parse_state(std::string_view text, std::string_view where);

// A 64-bit hash of the session's key (FNV-1a), the same in every process and on every machine: what the
// backends' locks across processes are keyed by.
std::uint64_t session_key_hash(const SessionKey& key);

// A time column as text, "YYYY-MM-DD HH:MM:SS.ffffff" in UTC (the form SQLAlchemy writes on SQLite): it
// sorts as the time does. And back to seconds since the epoch.
std::string format_time(double seconds);
double parse_time(std::string_view text);

}  // namespace adk::database
