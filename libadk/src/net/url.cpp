#include <adk/net/url.hpp>

#include <adk/core/error.hpp>

#include "../core/printable.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <vector>

namespace adk::net {
namespace {

std::string lower(std::string_view s)
{
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
    return out;
}

[[noreturn]] void bad_url(std::string_view text, std::string_view why)
{
    throw Error(errc::invalid_argument,
                "bad URL '" + redact_url(text) + "': " + std::string(why) +
                    "; write it as http://host[:port]/path or https://host[:port]/path");
}

// Letters, digits and -._~ (RFC 3986's unreserved characters).
bool unreserved(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
           c == '_' || c == '~';
}

// A host name (letters, digits, '-', '.', '_'), an IPv4 address, or what stood between an IPv6 literal's
// brackets (hex digits, ':', '.', and a zone after '%').
bool valid_host(std::string_view host, bool bracketed)
{
    return std::all_of(host.begin(), host.end(), [&](char c) {
        if (bracketed)
            return std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.' || c == '%' ||
                   unreserved(c);
        return unreserved(c) && c != '~';
    });
}

std::optional<std::string> environment(const char* upper, const char* lower_name)
{
    if (const char* v = std::getenv(upper); v && *v)
        return std::string(v);
    if (const char* v = std::getenv(lower_name); v && *v)
        return std::string(v);
    return std::nullopt;
}

std::string_view trim(std::string_view s)
{
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
        s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.remove_suffix(1);
    return s;
}

}  // namespace

std::string Url::authority() const
{
    const bool v6 = host.find(':') != std::string::npos;
    return (v6 ? "[" + host + "]" : host) + ":" + port;
}

std::string Url::origin() const { return scheme + "://" + authority(); }

Url parse_url(std::string_view text)
{
    Url url;
    const auto sep = text.find("://");
    if (sep == std::string_view::npos)
        bad_url(text, "it has no scheme");
    for (char c : text) {
        const auto u = static_cast<unsigned char>(c);
        if (u <= 0x20 || u >= 0x7f)
            bad_url(text, u == ' ' ? "it holds a space (write it as %20)"
                                   : u >= 0x80 ? "it holds a byte that is not ASCII (percent-encode it)"
                                               : "it holds a control character such as a line break");
    }
    url.scheme = lower(text.substr(0, sep));
    if (url.scheme != "http" && url.scheme != "https")
        bad_url(text, "only http and https are supported");
    std::string_view rest = text.substr(sep + 3);
    const auto path_start = rest.find_first_of("/?#");
    std::string_view authority = rest.substr(0, path_start);
    std::string_view target = path_start == std::string_view::npos ? "" : rest.substr(path_start);
    if (const auto hash = target.find('#'); hash != std::string_view::npos)
        target = target.substr(0, hash);
    if (const auto at = authority.rfind('@'); at != std::string_view::npos) {
        url.userinfo = std::string(authority.substr(0, at));
        authority = authority.substr(at + 1);
    }
    std::string_view port;
    if (!authority.empty() && authority.front() == '[') {
        const auto close = authority.find(']');
        if (close == std::string_view::npos)
            bad_url(text, "an IPv6 address lacks its ']'");
        url.host = lower(authority.substr(1, close - 1));
        if (!valid_host(url.host, true))
            bad_url(text, "the IPv6 address holds a character that is not one");
        std::string_view after = authority.substr(close + 1);
        if (!after.empty()) {
            if (after.front() != ':')
                bad_url(text, "unexpected text after the IPv6 address");
            port = after.substr(1);
        }
    } else {
        const auto colon = authority.rfind(':');
        url.host = lower(authority.substr(0, colon));
        if (colon != std::string_view::npos)
            port = authority.substr(colon + 1);
        if (!valid_host(url.host, false))
            bad_url(text, "the host holds a character that no host name has");
    }
    if (url.host.empty())
        bad_url(text, "it has no host");
    if (!port.empty()) {
        if (port.size() > 5 || !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
            std::stoi(std::string(port)) > 65535)
            bad_url(text, "the port is not a number from 0 to 65535");
        url.port = std::string(port);
    } else {
        url.port = url.tls() ? "443" : "80";
    }
    url.target = target.empty() ? "/" : (target.front() == '?' ? "/" + std::string(target) : std::string(target));
    return url;
}

std::string encode_path_segment(std::string_view text)
{
    static constexpr char hex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        if (unreserved(c)) {
            out += c;
        } else {
            const auto u = static_cast<unsigned char>(c);
            out += '%';
            out += hex[u >> 4];
            out += hex[u & 15];
        }
    }
    return out;
}

std::string redact_url(std::string_view url)
{
    std::string out;
    std::string_view rest = url;
    if (const auto sep = rest.find("://"); sep != std::string_view::npos) {
        out.append(rest.substr(0, sep + 3));
        rest.remove_prefix(sep + 3);
        const auto authority_end = rest.find_first_of("/?#");
        const std::string_view authority = rest.substr(0, authority_end);
        if (const auto at = authority.rfind('@'); at != std::string_view::npos) {
            out += "***@";
            out.append(authority.substr(at + 1));
        } else {
            out.append(authority);
        }
        rest = authority_end == std::string_view::npos ? std::string_view{} : rest.substr(authority_end);
    }
    rest = rest.substr(0, rest.find('#'));
    if (const auto query = rest.find('?'); query != std::string_view::npos)
        out.append(rest.substr(0, query)).append("?***");
    else
        out.append(rest);
    return adk::detail::printable(out, 2000);
}

void validate_header(std::string_view name, std::string_view value)
{
    static constexpr std::string_view token_symbols = "!#$%&'*+-.^_`|~";
    const bool token = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || token_symbols.find(c) != std::string_view::npos;
    });
    if (!token)
        throw Error(errc::invalid_argument, "the HTTP header name '" + adk::detail::printable(name, 100) +
                                                "' is not a token: use letters, digits and -");
    for (char c : value) {
        const auto u = static_cast<unsigned char>(c);
        if ((u < 0x20 && c != '\t') || u == 0x7f)
            throw Error(errc::invalid_argument,
                        "the value of the HTTP header '" + std::string(name) +
                            "' holds a control character (a line break would add a header to the request): "
                            "check the option or environment variable it comes from for a stray newline");
    }
}

std::string join_url(std::string_view base, std::string_view path)
{
    std::string out(base);
    while (!out.empty() && out.back() == '/')
        out.pop_back();
    if (!path.empty() && path.front() != '/')
        out += '/';
    out += path;
    return out;
}

bool no_proxy_matches(std::string_view no_proxy, std::string_view host, std::string_view port)
{
    const std::string h = lower(host);
    while (!no_proxy.empty()) {
        const auto comma = no_proxy.find(',');
        std::string entry = lower(trim(no_proxy.substr(0, comma)));
        no_proxy = comma == std::string_view::npos ? std::string_view{} : no_proxy.substr(comma + 1);
        if (entry.empty())
            continue;
        if (entry == "*")
            return true;
        // An entry may carry a port: "example.com:8080", "[::1]:8080".
        std::string entry_port;
        if (entry.front() == '[') {
            const auto close = entry.find(']');
            if (close != std::string::npos) {
                if (close + 1 < entry.size() && entry[close + 1] == ':')
                    entry_port = entry.substr(close + 2);
                entry = entry.substr(1, close - 1);
            }
        } else if (std::count(entry.begin(), entry.end(), ':') == 1) {
            const auto colon = entry.find(':');
            entry_port = entry.substr(colon + 1);
            entry.resize(colon);
        }
        if (!entry_port.empty() && entry_port != port)
            continue;
        if (entry.front() == '.')
            entry.erase(0, 1);
        if (h == entry || (h.size() > entry.size() && h.ends_with(entry) && h[h.size() - entry.size() - 1] == '.'))
            return true;
    }
    return false;
}

std::optional<Url> proxy_for(const Url& url, const std::optional<std::string>& configured,
                             const std::optional<std::string>& no_proxy)
{
    std::optional<std::string> proxy = configured;
    if (!proxy)
        proxy = url.tls() ? environment("HTTPS_PROXY", "https_proxy") : environment("HTTP_PROXY", "http_proxy");
    if (!proxy || proxy->empty())
        return std::nullopt;
    const std::optional<std::string> bypass = no_proxy ? no_proxy : environment("NO_PROXY", "no_proxy");
    if (bypass && no_proxy_matches(*bypass, url.host, url.port))
        return std::nullopt;
    std::string text = *proxy;
    if (text.find("://") == std::string::npos)
        text = "http://" + text;
    Url p = parse_url(text);
    if (p.tls())
        throw Error(errc::invalid_argument, "proxy '" + redact_url(*proxy) +
                                                "' is https://: only plain-HTTP proxies (CONNECT over http://) are "
                                                "supported; write it as http://" + p.authority());
    return p;
}

std::string resolve_dot_segments(std::string_view target)
{
    const std::size_t query = target.find('?');
    const std::string_view path = target.substr(0, query);
    std::vector<std::string> kept;
    bool directory = false;  // the path ends with a '/' (a "." or ".." at its end leaves one)
    std::size_t start = path.starts_with('/') ? 1 : 0;
    while (start <= path.size()) {
        std::size_t end = path.find('/', start);
        if (end == std::string_view::npos)
            end = path.size();
        std::string segment(path.substr(start, end - start));
        for (std::size_t at = segment.find('%'); at != std::string::npos; at = segment.find('%', at + 1))
            if (segment.compare(at, 3, "%2e") == 0 || segment.compare(at, 3, "%2E") == 0)
                segment.replace(at, 3, ".");
        const bool last = end == path.size();
        if (segment == "." || segment == "..") {
            if (segment == ".." && !kept.empty())
                kept.pop_back();
            directory = last;
        } else {
            kept.push_back(std::move(segment));
            directory = false;
        }
        start = end + 1;
    }
    std::string out;
    for (const std::string& segment : kept)
        out += "/" + segment;
    if (out.empty() || directory)
        out += '/';
    if (query != std::string_view::npos)
        out += target.substr(query);
    return out;
}

std::string percent_decode(std::string_view text)
{
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '%' && i + 2 < text.size() && std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
            std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
            out += static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16));
            i += 2;
        } else {
            out += text[i];
        }
    }
    return out;
}

}  // namespace adk::net
