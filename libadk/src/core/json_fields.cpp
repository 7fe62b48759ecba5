#include <adk/core/json_fields.hpp>

#include <adk/core/error.hpp>

#include <algorithm>
#include <array>
#include <cmath>

namespace adk::json_fields {

std::string snake_case(std::string_view camel)
{
    std::string out;
    out.reserve(camel.size() + 4);
    for (char c : camel) {
        if (c >= 'A' && c <= 'Z') {
            out.push_back('_');
            out.push_back(static_cast<char>(c - 'A' + 'a'));
        } else {
            out.push_back(c);
        }
    }
    return out;
}

FieldReader::FieldReader(const json::value& v, std::string_view what) : obj_(v.if_object()), what_(what)
{
    if (!obj_)
        throw Error(errc::invalid_argument,
                    std::string(what_) + " must be a JSON object, got " + std::string(json::to_string(v.kind())));
}

void FieldReader::mark_used(std::size_t index)
{
    if (used(index))
        return;
    ++found_;
    if (index < 64)
        used_first_64_ |= std::uint64_t{1} << index;
    else
        used_beyond_64_.push_back(index);
}

bool FieldReader::used(std::size_t index) const
{
    if (index < 64)
        return (used_first_64_ >> index) & 1;
    return std::find(used_beyond_64_.begin(), used_beyond_64_.end(), index) != used_beyond_64_.end();
}

namespace {

// Whether `key` is the snake_case spelling of `camel` ("thought_signature" of "thoughtSignature"), compared
// in place. Most keys differ at their first character.
bool is_snake_of(std::string_view key, std::string_view camel)
{
    std::size_t k = 0;
    for (char c : camel) {
        if (c >= 'A' && c <= 'Z') {
            if (k + 1 >= key.size() || key[k] != '_' || key[k + 1] != static_cast<char>(c - 'A' + 'a'))
                return false;
            k += 2;
        } else if (k >= key.size() || key[k++] != c) {
            return false;
        }
    }
    return k == key.size();
}

bool has_uppercase(std::string_view s)
{
    return std::any_of(s.begin(), s.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
}

}  // namespace

const json::value* FieldReader::find(std::string_view camel)
{
    const json::key_value_pair* hit = nullptr;
    if (obj_->size() <= 8) {
        // Small objects (most of a model's JSON): one pass, the camelCase key winning over its alias.
        const json::key_value_pair* alias = nullptr;
        for (const auto& kv : *obj_) {
            if (kv.key() == camel) {
                hit = &kv;
                break;
            }
            if (!alias && is_snake_of(kv.key(), camel))
                alias = &kv;
        }
        if (!hit)
            hit = alias;
    } else {
        auto it = obj_->find(camel);
        if (it == obj_->end() && has_uppercase(camel))
            it = obj_->find(snake_case(camel));
        if (it != obj_->end())
            hit = &*it;
    }
    if (!hit)
        return nullptr;
    mark_used(static_cast<std::size_t>(hit - obj_->begin()));
    return hit->value().is_null() ? nullptr : &hit->value();
}

std::optional<std::string> FieldReader::string(std::string_view camel)
{
    const json::value* v = find(camel);
    if (!v)
        return std::nullopt;
    if (!v->is_string())
        fail(camel, "a string");
    return std::string(v->get_string());
}

std::optional<bool> FieldReader::boolean(std::string_view camel)
{
    const json::value* v = find(camel);
    if (!v)
        return std::nullopt;
    if (!v->is_bool())
        fail(camel, "true or false");
    return v->get_bool();
}

std::optional<double> FieldReader::number(std::string_view camel)
{
    const json::value* v = find(camel);
    if (!v)
        return std::nullopt;
    if (!v->is_number())
        fail(camel, "a number");
    const double d = v->to_number<double>();
    if (!std::isfinite(d))
        fail(camel, "a finite number");
    return d;
}

std::optional<double> FieldReader::timestamp(std::string_view camel)
{
    auto t = number(camel);
    if (!t || *t <= 1e11)
        return t;
    if (*t > 1e14)
        fail(camel, "seconds (or milliseconds) since the epoch");
    return *t / 1000.0;
}

std::optional<std::int64_t> FieldReader::integer(std::string_view camel)
{
    const json::value* v = find(camel);
    if (!v)
        return std::nullopt;
    if (v->is_int64())
        return v->get_int64();
    if (v->is_uint64() && v->get_uint64() <= static_cast<std::uint64_t>(INT64_MAX))
        return static_cast<std::int64_t>(v->get_uint64());
    if (v->is_double()) {
        double d = v->get_double();
        if (std::trunc(d) == d && std::abs(d) < 9.0e18)
            return static_cast<std::int64_t>(d);
    }
    fail(camel, "an integer");
}

std::optional<json::object> FieldReader::object(std::string_view camel)
{
    const json::value* v = find(camel);
    if (!v)
        return std::nullopt;
    if (!v->is_object())
        fail(camel, "an object");
    check_finite(*v, camel);
    return json::object(v->get_object(), json::storage_ptr());  // a copy on the heap, whatever held the parse
}

const json::array* FieldReader::array(std::string_view camel)
{
    const json::value* v = find(camel);
    if (!v)
        return nullptr;
    if (!v->is_array())
        fail(camel, "an array");
    return &v->get_array();
}

json::object FieldReader::rest() const
{
    json::object out;
    if (unread() == 0)
        return out;
    std::size_t index = 0;
    for (const auto& kv : *obj_) {
        if (!kv.value().is_null() && !used(index)) {
            check_finite(kv.value(), kv.key());
            out.emplace(kv.key(), kv.value());
        }
        ++index;
    }
    return out;
}

void check_finite(const json::value& v, std::string_view where)
{
    switch (v.kind()) {
    case json::kind::double_:
        if (!std::isfinite(v.get_double()))
            throw Error(errc::invalid_argument, "'" + std::string(where) +
                                                    "' holds a number too large for JSON (such as 1e400): write it "
                                                    "as a string, or a smaller number");
        return;
    case json::kind::object:
        for (const auto& kv : v.get_object())
            check_finite(kv.value(), where);
        return;
    case json::kind::array:
        for (const auto& x : v.get_array())
            check_finite(x, where);
        return;
    default: return;
    }
}

void FieldReader::fail(std::string_view camel, std::string_view expected) const
{
    throw Error(errc::invalid_argument, std::string(what_) + "." + std::string(camel) + " must be " +
                                            std::string(expected) + ": fix the JSON");
}

void put_nonempty(json::object& o, std::string_view key, const std::string& v)
{
    if (!v.empty())
        o.emplace(key, v);
}

void put_true(json::object& o, std::string_view key, bool v)
{
    if (v)
        o.emplace(key, true);
}

void put_extra(json::object& o, const json::object& extra)
{
    for (const auto& kv : extra)
        o.emplace(kv.key(), kv.value());
}

namespace {
constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::array<signed char, 256> decode_table()
{
    std::array<signed char, 256> t{};
    for (auto& x : t)
        x = -1;
    for (int i = 0; i < 64; ++i)
        t[static_cast<unsigned char>(alphabet[i])] = static_cast<signed char>(i);
    t['-'] = 62;  // URL-safe alphabet
    t['_'] = 63;
    return t;
}
constexpr auto table = decode_table();
}  // namespace

std::string base64_encode(std::string_view bytes)
{
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    std::size_t i = 0;
    auto byte = [&](std::size_t k) { return static_cast<unsigned char>(bytes[k]); };
    for (; i + 3 <= bytes.size(); i += 3) {
        unsigned n = (byte(i) << 16) | (byte(i + 1) << 8) | byte(i + 2);
        out.push_back(alphabet[(n >> 18) & 63]);
        out.push_back(alphabet[(n >> 12) & 63]);
        out.push_back(alphabet[(n >> 6) & 63]);
        out.push_back(alphabet[n & 63]);
    }
    if (std::size_t left = bytes.size() - i) {
        unsigned n = byte(i) << 16;
        if (left == 2)
            n |= byte(i + 1) << 8;
        out.push_back(alphabet[(n >> 18) & 63]);
        out.push_back(alphabet[(n >> 12) & 63]);
        out.push_back(left == 2 ? alphabet[(n >> 6) & 63] : '=');
        out.push_back('=');
    }
    return out;
}

std::string base64_decode(std::string_view text, std::string_view what)
{
    while (!text.empty() && text.back() == '=')
        text.remove_suffix(1);
    std::string out;
    out.reserve(text.size() * 3 / 4);
    unsigned acc = 0;
    int bits = 0;
    for (char c : text) {
        signed char d = table[static_cast<unsigned char>(c)];
        if (d < 0)
            throw Error(errc::invalid_argument,
                        std::string(what) + " is not valid base64 (unexpected character '" + std::string(1, c) +
                            "'): send the bytes base64-encoded");
        acc = (acc << 6) | static_cast<unsigned>(d);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out.push_back(static_cast<char>((acc >> bits) & 0xFF));
        }
    }
    if (bits >= 6)  // a single leftover character cannot encode a byte
        throw Error(errc::invalid_argument, std::string(what) + " is not valid base64 (truncated)");
    return out;
}

}  // namespace adk::json_fields
