// JSON schemas for tool arguments: checking arguments against one, generating one from a C++ type
// described with Boost.Describe, and converting arguments into that type.
//
//   struct WeatherArgs { std::string city; std::optional<int> days; };
//   BOOST_DESCRIBE_STRUCT(WeatherArgs, (), (city, days))
//   json::value schema = adk::json_schema_for<WeatherArgs>();   // days is optional, city required
//   WeatherArgs a = adk::from_json<WeatherArgs>(args);
#pragma once

#include <adk/core/error.hpp>

#include <boost/describe/enum.hpp>
#include <boost/describe/enumerators.hpp>
#include <boost/describe/members.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <boost/mp11/algorithm.hpp>

#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace adk {

namespace json = boost::json;

// The first way `value` does not fit `schema` ("'days' must be an integer"), or nullopt when it fits.
// Understands type (one or a list), properties, required, items, enum, nullable and
// additionalProperties: false; other keywords are ignored.
std::optional<std::string> schema_mismatch(const json::value& schema, const json::value& value);

// Descriptions of fields, by name, for json_schema_for.
using FieldDocs = std::map<std::string, std::string, std::less<>>;

namespace detail {
template <class T> struct is_optional : std::false_type {};
template <class T> struct is_optional<std::optional<T>> : std::true_type {};
template <class T> struct is_vector : std::false_type {};
template <class T, class A> struct is_vector<std::vector<T, A>> : std::true_type {};
[[noreturn]] void conversion_error(std::string_view path, std::string_view expected);
}  // namespace detail

template <class T>
json::value json_schema_for(const FieldDocs& docs = {})
{
    if constexpr (std::is_same_v<T, std::string>)
        return json::object{{"type", "string"}};
    else if constexpr (std::is_same_v<T, bool>)
        return json::object{{"type", "boolean"}};
    else if constexpr (std::is_integral_v<T>)
        return json::object{{"type", "integer"}};
    else if constexpr (std::is_floating_point_v<T>)
        return json::object{{"type", "number"}};
    else if constexpr (detail::is_optional<T>::value)
        return json_schema_for<typename T::value_type>();
    else if constexpr (detail::is_vector<T>::value)
        return json::object{{"type", "array"}, {"items", json_schema_for<typename T::value_type>()}};
    else if constexpr (std::is_same_v<T, json::object>)
        return json::object{{"type", "object"}};
    else if constexpr (std::is_same_v<T, json::value>)
        return json::object{};
    else if constexpr (std::is_enum_v<T> && boost::describe::has_describe_enumerators<T>::value) {
        json::array names;
        boost::mp11::mp_for_each<boost::describe::describe_enumerators<T>>([&](auto e) { names.emplace_back(e.name); });
        return json::object{{"type", "string"}, {"enum", std::move(names)}};
    } else {
        static_assert(boost::describe::has_describe_members<T>::value,
                      "describe the argument type with BOOST_DESCRIBE_STRUCT, or give the schema explicitly");
        json::object properties;
        json::array required;
        using members = boost::describe::describe_members<T, boost::describe::mod_public>;
        boost::mp11::mp_for_each<members>([&](auto m) {
            using M = std::remove_cvref_t<decltype(std::declval<T&>().*m.pointer)>;
            json::value s = json_schema_for<M>();
            if (auto it = docs.find(m.name); it != docs.end())
                s.as_object()["description"] = it->second;
            properties.emplace(m.name, std::move(s));
            if (!detail::is_optional<M>::value)
                required.emplace_back(m.name);
        });
        json::object schema{{"type", "object"}, {"properties", std::move(properties)}};
        if (!required.empty())
            schema.emplace("required", std::move(required));
        return schema;
    }
}

// Converts JSON into T (the types json_schema_for knows). Throws adk::Error naming the path on a
// mismatch; a missing member that is not optional is a mismatch.
template <class T>
T from_json(const json::value& v, std::string_view path = "arguments")
{
    if constexpr (std::is_same_v<T, std::string>) {
        if (!v.is_string())
            detail::conversion_error(path, "a string");
        return std::string(v.get_string());
    } else if constexpr (std::is_same_v<T, bool>) {
        if (!v.is_bool())
            detail::conversion_error(path, "true or false");
        return v.get_bool();
    } else if constexpr (std::is_integral_v<T>) {
        // Boost.JSON checks the range before it converts (3.0 is 3; 1e300 or 2^40 for an int are refused).
        boost::system::error_code ec;
        const T out = v.is_number() ? v.to_number<T>(ec) : T{};
        if (!v.is_number() || ec)
            detail::conversion_error(path, "an integer within the range of its type");
        return out;
    } else if constexpr (std::is_floating_point_v<T>) {
        if (!v.is_number())
            detail::conversion_error(path, "a number");
        const double d = v.to_number<double>();
        if (!std::isfinite(d) || std::abs(d) > static_cast<double>(std::numeric_limits<T>::max()))
            detail::conversion_error(path, "a finite number within the range of its type");
        return static_cast<T>(d);
    } else if constexpr (detail::is_optional<T>::value) {
        if (v.is_null())
            return std::nullopt;
        return from_json<typename T::value_type>(v, path);
    } else if constexpr (detail::is_vector<T>::value) {
        if (!v.is_array())
            detail::conversion_error(path, "an array");
        T out;
        for (std::size_t i = 0; i < v.get_array().size(); ++i)
            out.push_back(from_json<typename T::value_type>(v.get_array()[i],
                                                            std::string(path) + "[" + std::to_string(i) + "]"));
        return out;
    } else if constexpr (std::is_same_v<T, json::object>) {
        if (!v.is_object())
            detail::conversion_error(path, "an object");
        return v.get_object();
    } else if constexpr (std::is_same_v<T, json::value>) {
        return v;
    } else if constexpr (std::is_enum_v<T> && boost::describe::has_describe_enumerators<T>::value) {
        if (v.is_string()) {
            std::optional<T> found;
            boost::mp11::mp_for_each<boost::describe::describe_enumerators<T>>([&](auto e) {
                if (v.get_string() == e.name)
                    found = e.value;
            });
            if (found)
                return *found;
        }
        detail::conversion_error(path, "one of the listed values");
    } else {
        if (!v.is_object())
            detail::conversion_error(path, "an object");
        T out{};
        using members = boost::describe::describe_members<T, boost::describe::mod_public>;
        boost::mp11::mp_for_each<members>([&](auto m) {
            using M = std::remove_cvref_t<decltype(out.*m.pointer)>;
            std::string member_path = std::string(path) + "." + m.name;
            const json::value* field = v.get_object().if_contains(m.name);
            if (!field || field->is_null()) {
                if constexpr (!detail::is_optional<M>::value)
                    detail::conversion_error(member_path, "present");
                return;
            }
            out.*m.pointer = from_json<M>(*field, member_path);
        });
        return out;
    }
}

}  // namespace adk
