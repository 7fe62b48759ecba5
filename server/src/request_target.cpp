#include "request_target.hpp"

#include <adk/net/sse_parser.hpp>

#include <algorithm>

namespace adk::server::detail {

namespace {

int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

// Percent-decodes `text` ('+' as a space when `plus_is_space`, as in a query); false on a bad escape.
bool decode(std::string_view text, bool plus_is_space, std::string& out)
{
    out.clear();
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (c == '%') {
            int hi = i + 1 < text.size() ? hex_value(text[i + 1]) : -1;
            int lo = i + 2 < text.size() ? hex_value(text[i + 2]) : -1;
            if (hi < 0 || lo < 0)
                return false;
            out += static_cast<char>(hi * 16 + lo);
            i += 2;
        } else if (c == '+' && plus_is_space) {
            out += ' ';
        } else {
            out += c;
        }
    }
    return true;
}

bool safe_segment(const std::string& segment)
{
    if (segment == "." || segment == "..")
        return false;
    for (char c : segment) {
        auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7f || c == '/' || c == '\\')
            return false;
    }
    return true;
}

}  // namespace

std::optional<std::string> id_refusal(std::string_view id)
{
    const std::string text(id);
    if (text.empty() || !safe_segment(text))
        return std::string("is empty, '.', '..', or holds a slash, a backslash or a control character");
    if (net::to_valid_utf8(text) != text)
        return std::string("is not UTF-8");
    return std::nullopt;
}

RequestTarget RequestTarget::parse(std::string_view target, std::string& refused, std::size_t max_length)
{
    RequestTarget out;
    refused.clear();
    if (target.empty() || target.front() != '/') {
        refused = "the request target must be a path that starts with '/'";
        return out;
    }
    if (target.size() > max_length) {
        refused = "the request target is longer than " + std::to_string(max_length) + " bytes";
        return out;
    }
    std::string_view path = target.substr(0, target.find('?'));
    std::string_view query = path.size() < target.size() ? target.substr(path.size() + 1) : std::string_view();
    std::string decoded;
    std::size_t start = 1;
    while (start <= path.size()) {
        std::size_t end = path.find('/', start);
        if (end == std::string_view::npos)
            end = path.size();
        std::string_view raw = path.substr(start, end - start);
        if (!raw.empty() || end < path.size()) {  // a trailing '/' adds no segment; "//" is refused below
            if (!decode(raw, false, decoded)) {
                refused = "the path holds a '%' that is not followed by two hex digits";
                return out;
            }
            if (decoded.empty() || !safe_segment(decoded)) {
                refused = "a path segment is empty, '.', '..', or holds a slash, a backslash or a control character";
                return out;
            }
            if (net::to_valid_utf8(decoded) != decoded) {
                refused = "a path segment is not UTF-8 once percent-decoded";
                return out;
            }
            out.segments.push_back(decoded);
        }
        start = end + 1;
    }
    std::string name;
    std::string value;
    while (!query.empty()) {
        std::string_view pair = query.substr(0, query.find('&'));
        query.remove_prefix(std::min(query.size(), pair.size() + 1));
        if (pair.empty())
            continue;
        std::size_t eq = pair.find('=');
        std::string_view raw_name = pair.substr(0, eq);
        std::string_view raw_value = eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
        if (!decode(raw_name, true, name) || !decode(raw_value, true, value)) {
            refused = "the query holds a '%' that is not followed by two hex digits";
            return out;
        }
        if (net::to_valid_utf8(name) != name || net::to_valid_utf8(value) != value) {
            refused = "the query is not UTF-8 once percent-decoded";
            return out;
        }
        out.query[name] = value;
    }
    return out;
}

std::optional<std::string_view> RequestTarget::query_value(std::string_view name) const
{
    auto it = query.find(name);
    if (it == query.end())
        return std::nullopt;
    return it->second;
}

}  // namespace adk::server::detail
