// URLs as the HTTP client needs them, and the proxy a URL goes through. Sans I/O.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace adk::net {

class Url {
public:
    Url() = default;
    std::string scheme;    // "http" or "https", lower case
    std::string userinfo;  // "user:password" before '@', percent-encoded as written
    std::string host;      // lower case; an IPv6 literal without its brackets
    std::string port;      // always set: 80 or 443 when the URL has none
    std::string target;    // path and query, at least "/"

    bool tls() const noexcept { return scheme == "https"; }
    // "host:port" with brackets around an IPv6 literal: the Host header and the CONNECT target.
    std::string authority() const;
    // scheme://authority: the key of a connection pool.
    std::string origin() const;
    friend bool operator==(const Url&, const Url&) = default;
};
static_assert(!std::is_aggregate_v<Url>);

// Parses an absolute http or https URL. Throws adk::Error (invalid_argument) naming what is wrong: among
// others a space, a control character (a line break would add a header to the request) or a byte that is
// not ASCII anywhere, and a host that is not a name or an IP address.
Url parse_url(std::string_view text);

// `text` percent-encoded to stand as one segment of a URL's path (a model id, a project): everything but
// letters, digits and -._~ is encoded, '/' included.
std::string encode_path_segment(std::string_view text);

// A URL fit to print in an error or a log: its userinfo (user:password@) and its query string (which may
// hold a key) replaced with "***", its fragment dropped, control characters escaped. Works on any text.
std::string redact_url(std::string_view url);

// Throws adk::Error (invalid_argument) for a header that Beast would write as it is but HTTP forbids: a
// name that is not a token, a value holding CR, LF, NUL or another control character but tab. Such a
// value in an option (an API key pasted with its line break, a model id) would split the request.
void validate_header(std::string_view name, std::string_view value);

// Joins a base URL such as "http://localhost:11434/v1/" and a path such as "/chat/completions".
std::string join_url(std::string_view base, std::string_view path);

// True when `host` matches a NO_PROXY list: comma-separated names, "*" for all, ".example.com" or
// "example.com" for a domain and its subdomains, IP literals; an entry's ":port" must match the port.
bool no_proxy_matches(std::string_view no_proxy, std::string_view host, std::string_view port);

// The proxy for `url`: `configured` when given (empty: none), otherwise HTTPS_PROXY / https_proxy for https
// URLs and HTTP_PROXY / http_proxy for http ones, unless NO_PROXY / no_proxy (or `no_proxy` when given)
// names the host. A proxy written without a scheme is taken as http://.
std::optional<Url> proxy_for(const Url& url, const std::optional<std::string>& configured,
                             const std::optional<std::string>& no_proxy);

// Percent-decodes "user%40corp:p%3Ass" as found in a URL's userinfo.
std::string percent_decode(std::string_view text);

// A request target (path and query) with its path's "." and ".." segments resolved as RFC 3986 (5.2.4) resolves
// them, a percent-encoded dot (%2e, %2E) read as the dot it stands for: what a server that receives the target
// serves. ".." at the root stays at the root. Compare paths after this, never before.
std::string resolve_dot_segments(std::string_view target);

}  // namespace adk::net
