// Reading and writing ADK's JSON as its types do (Content, Event, Session) and as ProtoJSON reads: camelCase keys
// with snake_case aliases, nulls treated as absent, unknown keys collected so that they survive a round trip,
// numbers checked finite, bytes as base64. For the components that read and write JSON of the same kind (A2A's
// types, eval sets).
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace adk::json_fields {

namespace json = boost::json;

std::string snake_case(std::string_view camel);

class FieldReader {
public:
    // `what` names the object in error messages, e.g. "Event" or "Part.functionCall"; it must outlive the
    // reader (a string literal).
    FieldReader(const json::value& v, std::string_view what);

    // The value under `camel` or its snake_case spelling; nullptr when absent or null.
    const json::value* find(std::string_view camel);

    std::optional<std::string> string(std::string_view camel);
    std::optional<bool> boolean(std::string_view camel);
    // A finite number (Boost.JSON reads 1e400 as infinity, which no JSON can hold).
    std::optional<double> number(std::string_view camel);
    // A time in seconds since the epoch: float seconds (ADK Python), or epoch milliseconds (the TypeScript
    // ADK writes those; a value above 1e11 cannot be seconds, that is the year 5138). Above 1e14 it is
    // neither, and refused: otherwise each read and write would divide it by 1000 again.
    std::optional<double> timestamp(std::string_view camel);
    std::optional<std::int64_t> integer(std::string_view camel);
    // A copy of the object, every number in it finite.
    std::optional<json::object> object(std::string_view camel);
    const json::array* array(std::string_view camel);

    // Every non-null member that no call above asked for, every number in it finite.
    json::object rest() const;
    // How many members no call above has found yet: 0 means every later lookup would miss.
    std::size_t unread() const noexcept { return obj_->size() - found_; }

    [[noreturn]] void fail(std::string_view camel, std::string_view expected) const;

private:
    void mark_used(std::size_t index);
    bool used(std::size_t index) const;

    const json::object* obj_;
    std::string_view what_;
    std::size_t found_ = 0;            // distinct members found
    std::uint64_t used_first_64_ = 0;  // by member index: no allocation for ordinary objects
    std::vector<std::size_t> used_beyond_64_;
};

// Writers that omit what ADK omits (nulls, unset optionals).
// `v` a std::optional<std::string> or a Boxed<std::string>: written when it holds a value.
template <class Optional>
void put(json::object& o, std::string_view key, const Optional& v)
{
    if (v)
        o.emplace(key, *v);
}
void put_nonempty(json::object& o, std::string_view key, const std::string& v);
void put_true(json::object& o, std::string_view key, bool v);
void put_extra(json::object& o, const json::object& extra);

// Throws adk::Error (invalid_argument) naming `where` when `v` holds a number that is not finite anywhere.
void check_finite(const json::value& v, std::string_view where);

std::string base64_encode(std::string_view bytes);
// Accepts the standard and the URL-safe alphabets, with or without padding. Throws adk::Error naming
// `what` on any other character.
std::string base64_decode(std::string_view text, std::string_view what);

}  // namespace adk::json_fields
