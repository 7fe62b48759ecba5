// What JSON adk-cpp accepts, so that whatever it accepts it can store, read back and write again on every
// backend. Boost.JSON reads 1e400 as infinity (which no JSON can hold) and, by default, refuses documents that
// nest deeper than 32 levels; a stored value sits a few levels deeper than it was sent at (inside an event, a
// session, PostgreSQL's json_agg). So values are checked on the way in against max_json_depth, and every
// reader allows max_read_json_depth: there is always room for the wrapping.
#pragma once

#include <boost/json/value.hpp>
#include <boost/system/error_code.hpp>

#include <cstddef>
#include <string_view>

namespace adk {

class Event;
namespace json = boost::json;

// How deep a document adk-cpp stores may nest (an event as ADK writes it, a session's state), in containers.
inline constexpr std::size_t max_json_depth = 64;
// How deep a document a reader of adk-cpp takes: stored documents, and request bodies before their checks.
inline constexpr std::size_t max_read_json_depth = 128;

// Parses with max_read_json_depth (and Boost.JSON's other defaults); `ec` says why text is refused.
json::value parse_json(std::string_view text, boost::system::error_code& ec);

// Checks `v` and returns the size of its JSON text, estimated from above (strings with their escapes, a
// double as 25 bytes). Throws adk::Error (invalid_argument) naming `where` when `v` nests deeper than
// `max_depth` containers (an object of scalars is 1 deep) or holds a number that is not finite.
std::size_t check_json(const json::value& v, std::string_view where, std::size_t max_depth = max_json_depth);

// Checks every JSON member of an event as it will be stored (its JSON no deeper than max_json_depth, every
// number finite). Throws adk::Error (invalid_argument) that names the member.
void check_event_json(const Event& event);

}  // namespace adk
