#include <adk/core/error.hpp>
#include <adk/core/json_fields.hpp>
#include <adk/core/json_limits.hpp>
#include <adk/sessions/database_format.hpp>

#include "../core/printable.hpp"

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <array>
#include <cmath>
#include <cstdio>
#include <ctime>

namespace adk::database {

namespace {

// The members whose keys are the user's own, by their path in the event (array elements keep their
// array's path), in each spelling. ADK keeps them as they are when it converts an event.
constexpr std::array<std::string_view, 12> preserved_camel = {
    "actions.stateDelta", "actions.artifactDelta", "actions.requestedAuthConfigs",
    "actions.requestedToolConfirmations", "actions.customMetadata", "customMetadata",
    "content.parts.functionCall.args", "content.parts.functionResponse.response", "output", "route",
    "actions.route", "actions.agentState"};
constexpr std::array<std::string_view, 12> preserved_snake = {
    "actions.state_delta", "actions.artifact_delta", "actions.requested_auth_configs",
    "actions.requested_tool_confirmations", "actions.custom_metadata", "custom_metadata",
    "content.parts.function_call.args", "content.parts.function_response.response", "output", "route",
    "actions.route", "actions.agent_state"};

std::string camel_key(std::string_view key)
{
    std::string out;
    out.reserve(key.size());
    for (std::size_t i = 0; i < key.size(); ++i) {
        if (key[i] == '_' && i + 1 < key.size() && key[i + 1] >= 'a' && key[i + 1] <= 'z') {
            out.push_back(static_cast<char>(key[++i] - 'a' + 'A'));
        } else {
            out.push_back(key[i]);
        }
    }
    return out;
}

bool has_upper(std::string_view key)
{
    for (char c : key)
        if (c >= 'A' && c <= 'Z')
            return true;
    return false;
}

bool has_underscore_word(std::string_view key)
{
    for (std::size_t i = 0; i + 1 < key.size(); ++i)
        if (key[i] == '_' && key[i + 1] >= 'a' && key[i + 1] <= 'z')
            return true;
    return false;
}

// Converts the keys of `v` and of what it holds, except under the preserved paths. `path` is the path of
// `v`, extended and restored on the way down. An object is rebuilt only when one of its keys changes.
template <class Convert, class Changes, std::size_t N>
void convert(json::value& v, std::string& path, Convert key_of, Changes changes,
             const std::array<std::string_view, N>& keep)
{
    if (auto* array = v.if_array()) {
        for (auto& item : *array)
            convert(item, path, key_of, changes, keep);
        return;
    }
    auto* object = v.if_object();
    if (!object)
        return;
    bool rename = false;
    for (auto& kv : *object) {
        std::size_t length = path.size();
        if (!path.empty())
            path.push_back('.');
        path.append(kv.key());
        bool preserved = false;
        for (std::string_view p : keep)
            preserved = preserved || p == path;
        if (!preserved)
            convert(kv.value(), path, key_of, changes, keep);
        path.resize(length);
        rename = rename || changes(kv.key());
    }
    if (!rename)
        return;
    json::object converted(object->storage());
    converted.reserve(object->size());
    for (auto& kv : *object)
        converted[key_of(kv.key())] = std::move(kv.value());
    *object = std::move(converted);
}

}  // namespace

void check_key_lengths(const SessionKey& key)
{
    auto check = [](std::string_view what, const std::string& value) {
        if (value.size() > max_key_length)
            throw Error(errc::invalid_argument,
                        std::string(what) + " '" + detail::printable(value, 40) + "...' is " +
                            std::to_string(value.size()) + " bytes long; the session database holds at most " +
                            std::to_string(max_key_length) + ": use a shorter one");
    };
    check("the app name", key.app_name);
    check("the user id", key.user_id);
    check("the session id", key.session_id);
}

void event_to_snake_case(json::value& event)
{
    std::string path;
    convert(event, path, json_fields::snake_case, has_upper, preserved_camel);
}

void event_to_camel_case(json::value& event)
{
    std::string path;
    convert(event, path, camel_key, has_underscore_word, preserved_snake);
}

std::string event_to_json(const Event& event)
{
    unsigned char scratch[4096];
    json::monotonic_resource buffer(scratch, sizeof scratch);
    json::value v = json::value_from(event, &buffer);
    event_to_snake_case(v);
    return json::serialize(v);
}

Event event_from_json(std::string_view text)
{
    boost::system::error_code ec;
    json::value v = parse_json(text, ec);
    if (ec)
        throw Error(errc::storage_failed,
                    "a stored event is not JSON (" + ec.message() + "): the database holds a damaged events row");
    return event_from_json_value(std::move(v));
}

Event event_from_json_value(json::value v)
{
    if (!v.is_object())
        throw Error(errc::storage_failed, "a stored event is not a JSON object: the database holds a damaged events row");
    event_to_camel_case(v);
    try {
        return json::value_to<Event>(v);
    } catch (const std::exception& e) {
        throw Error(errc::storage_failed, std::string("a stored event cannot be read: ") + e.what());
    }
}

json::object parse_state(std::string_view text, std::string_view where)
{
    boost::system::error_code ec;
    json::value v = parse_json(text, ec);
    if (ec || !v.is_object())
        throw Error(errc::storage_failed, "the stored state of " + std::string(where) +
                                              " is not a JSON object: the database holds a damaged row");
    return std::move(v.as_object());
}

std::uint64_t session_key_hash(const SessionKey& key)
{
    std::uint64_t hash = 14695981039346656037ULL;
    auto mix = [&](const std::string& part) {
        for (unsigned char c : part) {
            hash ^= c;
            hash *= 1099511628211ULL;
        }
        hash ^= 0xff;  // a separator no UTF-8 text holds
        hash *= 1099511628211ULL;
    };
    mix(key.app_name);
    mix(key.user_id);
    mix(key.session_id);
    return hash;
}

std::string format_time(double seconds)
{
    auto micros = static_cast<std::int64_t>(std::llround(seconds * 1e6));
    std::time_t whole = static_cast<std::time_t>(micros / 1000000);
    auto fraction = static_cast<long>(micros % 1000000);
    if (fraction < 0) {
        fraction += 1000000;
        --whole;
    }
    std::tm utc{};
    gmtime_r(&whole, &utc);
    std::array<char, 40> text{};
    int n = std::snprintf(text.data(), text.size(), "%04d-%02d-%02d %02d:%02d:%02d.%06ld", utc.tm_year + 1900,
                          utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, fraction);
    return std::string(text.data(), static_cast<std::size_t>(n));
}

double parse_time(std::string_view text)
{
    std::tm utc{};
    int year = 0;
    int consumed = 0;
    std::string copy(text);
    if (std::sscanf(copy.c_str(), "%4d-%2d-%2d%*1[ T]%2d:%2d:%2d%n", &year, &utc.tm_mon, &utc.tm_mday, &utc.tm_hour,
                    &utc.tm_min, &utc.tm_sec, &consumed) != 6)
        throw Error(errc::storage_failed, "a stored time '" + detail::printable(text, 40) +
                                              "' is not of the form YYYY-MM-DD HH:MM:SS[.ffffff]");
    utc.tm_year = year - 1900;
    utc.tm_mon -= 1;
    auto whole = static_cast<std::int64_t>(timegm(&utc));
    std::int64_t micros = 0;
    std::string_view rest = text.substr(static_cast<std::size_t>(consumed));
    if (!rest.empty() && rest.front() == '.') {
        std::int64_t scale = 100000;
        for (std::size_t i = 1; i < rest.size() && rest[i] >= '0' && rest[i] <= '9' && scale > 0; ++i, scale /= 10)
            micros += (rest[i] - '0') * scale;
    }
    // Whole microseconds divided once: the same double as a timestamp rounded to the microsecond.
    return static_cast<double>(whole * 1000000 + micros) / 1e6;
}

}  // namespace adk::database
