#include <adk/tools/json_schema.hpp>

#include <boost/json/serialize.hpp>

#include <cmath>

namespace adk {

namespace detail {
void conversion_error(std::string_view path, std::string_view expected)
{
    throw Error(errc::invalid_argument, "'" + std::string(path) + "' must be " + std::string(expected));
}
}  // namespace detail

namespace {

bool has_type(const json::value& value, std::string_view type)
{
    if (type == "string")
        return value.is_string();
    if (type == "integer")  // 3.0 is an integer; no cast, which 1e300 would overflow
        return value.is_int64() || value.is_uint64() ||
               (value.is_double() && std::isfinite(value.get_double()) &&
                std::trunc(value.get_double()) == value.get_double());
    if (type == "number")
        return value.is_number() && (!value.is_double() || std::isfinite(value.get_double()));
    if (type == "boolean")
        return value.is_bool();
    if (type == "object")
        return value.is_object();
    if (type == "array")
        return value.is_array();
    if (type == "null")
        return value.is_null();
    return true;  // an unknown type name constrains nothing
}

std::string lowercase(std::string_view s)
{
    std::string out(s);
    for (char& c : out)
        c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    return out;  // genai schemas spell types in capitals ("STRING")
}

std::optional<std::string> mismatch(const json::object& schema, const json::value& value, const std::string& path)
{
    auto where = [&] { return path.empty() ? std::string("the arguments") : "'" + path + "'"; };
    if (value.is_null()) {
        if (auto* n = schema.if_contains("nullable"); n && n->is_bool() && n->get_bool())
            return std::nullopt;
    }
    if (const json::value* type = schema.if_contains("type")) {
        bool ok = false;
        std::string names;
        auto check = [&](const json::value& t) {
            if (!t.is_string())
                return;
            std::string name = lowercase(t.get_string());
            ok = ok || has_type(value, name);
            names += (names.empty() ? "" : " or ") + name;
        };
        if (type->is_array())
            for (const auto& t : type->get_array())
                check(t);
        else
            check(*type);
        if (!ok && !names.empty())
            return where() + " must be " + (names == "integer" || names == "object" || names == "array" ? "an " : "a ") +
                   names + ", got " + json::serialize(value);
    }
    if (const json::value* choices = schema.if_contains("enum"); choices && choices->is_array()) {
        bool found = false;
        for (const auto& c : choices->get_array())
            found = found || c == value;
        if (!found)
            return where() + " must be one of " + json::serialize(*choices) + ", got " + json::serialize(value);
    }
    if (value.is_object()) {
        const json::object& obj = value.get_object();
        if (const json::value* required = schema.if_contains("required"); required && required->is_array())
            for (const auto& r : required->get_array())
                if (r.is_string() && !obj.contains(r.get_string()))
                    return "'" + (path.empty() ? "" : path + ".") + std::string(r.get_string()) + "' is required";
        const json::object* properties = nullptr;
        if (const json::value* p = schema.if_contains("properties"); p && p->is_object())
            properties = &p->get_object();
        for (const auto& kv : obj) {
            std::string child = path.empty() ? std::string(kv.key()) : path + "." + std::string(kv.key());
            const json::value* sub = properties ? properties->if_contains(kv.key()) : nullptr;
            if (sub && sub->is_object()) {
                if (auto m = mismatch(sub->get_object(), kv.value(), child))
                    return m;
            } else if (auto* extra = schema.if_contains("additionalProperties");
                       extra && extra->is_bool() && !extra->get_bool()) {
                return "'" + child + "' is not an argument of this tool";
            }
        }
    }
    if (value.is_array()) {
        if (const json::value* items = schema.if_contains("items"); items && items->is_object()) {
            const json::array& arr = value.get_array();
            for (std::size_t i = 0; i < arr.size(); ++i)
                if (auto m = mismatch(items->get_object(), arr[i], path + "[" + std::to_string(i) + "]"))
                    return m;
        }
    }
    return std::nullopt;
}

}  // namespace

std::optional<std::string> schema_mismatch(const json::value& schema, const json::value& value)
{
    if (!schema.is_object())
        return std::nullopt;
    return mismatch(schema.get_object(), value, "");
}

}  // namespace adk
