#include <adk/net/url.hpp>

#include <adk/core/error.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>

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
                "bad URL '" + std::string(text) + "': " + std::string(why) +
                    "; write it as http://host[:port]/path or https://host[:port]/path");
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
        throw Error(errc::invalid_argument, "proxy '" + *proxy +
                                                "' is https://: only plain-HTTP proxies (CONNECT over http://) are "
                                                "supported; write it as http://" + p.authority());
    return p;
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
