// URLs, NO_PROXY and the retry rules of the HTTP client, sans I/O.
#include <adk/core/error.hpp>
#include <adk/net/retry.hpp>
#include <adk/net/url.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <utility>
#include <vector>

using namespace adk::net;
using namespace std::chrono_literals;

TEST_CASE("URL: scheme, host, default and explicit ports, target, IPv6, userinfo", "[net]")
{
    Url u = parse_url("https://Generativelanguage.googleapis.com/v1beta/models/x:streamGenerateContent?alt=sse");
    CHECK(u.scheme == "https");
    CHECK(u.host == "generativelanguage.googleapis.com");
    CHECK(u.port == "443");
    CHECK(u.target == "/v1beta/models/x:streamGenerateContent?alt=sse");
    CHECK(u.tls());
    CHECK(u.origin() == "https://generativelanguage.googleapis.com:443");

    Url local = parse_url("http://localhost:11434");
    CHECK(local.port == "11434");
    CHECK(local.target == "/");
    CHECK_FALSE(local.tls());

    Url v6 = parse_url("http://[::1]:8080/v1?x=1#frag");
    CHECK(v6.host == "::1");
    CHECK(v6.authority() == "[::1]:8080");
    CHECK(v6.target == "/v1?x=1");

    Url proxy = parse_url("http://us%40r:p%3Ass@proxy.corp:3128");
    CHECK(proxy.userinfo == "us%40r:p%3Ass");
    CHECK(percent_decode(proxy.userinfo) == "us@r:p:ss");
    CHECK(proxy.host == "proxy.corp");

    CHECK(join_url("http://localhost:11434/v1/", "/chat/completions") == "http://localhost:11434/v1/chat/completions");
    CHECK(join_url("https://api.openai.com/v1", "chat/completions") == "https://api.openai.com/v1/chat/completions");
}

TEST_CASE("URL: bad URLs are refused with a message that shows the right form", "[net]")
{
    for (const char* bad : {"localhost:8080/v1", "ftp://example.com/", "http:///path", "http://host:99999/",
                            "http://host:12ab/", "http://[::1/", "http://host/a b", "http://host/v1\r\nX-Smuggled: 1",
                            "http://ho\nst/", "http://host/\x7f", "http://host/caf\xC3\xA9", "http://ho;st/",
                            "http://[::1;x]/"}) {
        INFO(bad);
        try {
            parse_url(bad);
            FAIL("accepted");
        } catch (const adk::Error& e) {
            CHECK(e.code() == adk::errc::invalid_argument);
            CHECK_THAT(e.message(), Catch::Contains("http://host[:port]/path"));
        }
    }
}

TEST_CASE("resolve_dot_segments: RFC 3986's examples, encoded dots, the root, and the query kept", "[net]")
{
    using adk::net::resolve_dot_segments;
    CHECK(resolve_dot_segments("/a/b/c/./../../g") == "/a/g");  // RFC 3986, 5.2.4
    CHECK(resolve_dot_segments("/mid/content=5/../6") == "/mid/6");
    CHECK(resolve_dot_segments("/hooks/../admin") == "/admin");
    CHECK(resolve_dot_segments("/hooks/%2e%2e/admin") == "/admin");
    CHECK(resolve_dot_segments("/hooks/.%2E/admin?x=/../y") == "/admin?x=/../y");
    CHECK(resolve_dot_segments("/hooks/a/./b/") == "/hooks/a/b/");
    CHECK(resolve_dot_segments("/hooks/a/..") == "/hooks/");
    CHECK(resolve_dot_segments("/../../x") == "/x");  // nothing above the root
    CHECK(resolve_dot_segments("/") == "/");
    CHECK(resolve_dot_segments("/a%2eb/..%2fc") == "/a.b/..%2fc");  // a dot inside a segment, an encoded slash kept
}

TEST_CASE("NO_PROXY: names, domains, wildcard, ports, IP literals", "[net]")
{
    CHECK(no_proxy_matches("localhost,127.0.0.1", "localhost", "80"));
    CHECK(no_proxy_matches("localhost, 127.0.0.1", "127.0.0.1", "8080"));
    CHECK(no_proxy_matches("*", "api.openai.com", "443"));
    CHECK(no_proxy_matches(".corp.example", "llm.corp.example", "443"));
    CHECK(no_proxy_matches("corp.example", "llm.corp.example", "443"));
    CHECK(no_proxy_matches("corp.example", "corp.example", "443"));
    CHECK_FALSE(no_proxy_matches("corp.example", "notcorp.example", "443"));
    CHECK(no_proxy_matches("api.example:8443", "api.example", "8443"));
    CHECK_FALSE(no_proxy_matches("api.example:8443", "api.example", "443"));
    CHECK(no_proxy_matches("[::1]:8080", "::1", "8080"));
    CHECK(no_proxy_matches("::1", "::1", "8080"));
    CHECK_FALSE(no_proxy_matches("", "localhost", "80"));
}

TEST_CASE("proxy_for: options first, then the environment, and NO_PROXY", "[net]")
{
    const Url api = parse_url("https://api.anthropic.com/v1/messages");
    auto p = proxy_for(api, std::string("proxy.corp:3128"), std::string("localhost"));
    REQUIRE(p);
    CHECK(p->origin() == "http://proxy.corp:3128");
    CHECK_FALSE(proxy_for(api, std::string(""), std::nullopt));                          // "" means none
    CHECK_FALSE(proxy_for(api, std::string("http://p:1"), std::string(".anthropic.com")));  // bypassed

    ::setenv("HTTPS_PROXY", "http://envproxy:8080", 1);
    ::setenv("NO_PROXY", "localhost", 1);
    auto from_env = proxy_for(api, std::nullopt, std::nullopt);
    CHECK((from_env && from_env->host == "envproxy"));
    CHECK_FALSE(proxy_for(parse_url("https://localhost:8443/"), std::nullopt, std::nullopt));
    CHECK_FALSE(proxy_for(parse_url("http://example.com/"), std::nullopt, std::nullopt));  // HTTP_PROXY unset
    ::unsetenv("HTTPS_PROXY");
    ::unsetenv("NO_PROXY");

    CHECK_THROWS_AS(proxy_for(api, std::string("https://secure-proxy:443"), std::nullopt), adk::Error);
}

TEST_CASE("retry: which statuses, and x-should-retry overrides", "[net]")
{
    for (unsigned s : {408u, 409u, 429u, 500u, 502u, 503u, 529u})
        CHECK(retryable_status(s, ""));
    for (unsigned s : {400u, 401u, 403u, 404u, 422u})
        CHECK_FALSE(retryable_status(s, ""));
    CHECK(retryable_status(400, "true"));
    CHECK_FALSE(retryable_status(503, "false"));
    CHECK(retryable_status(429, " TRUE "));
}

TEST_CASE("retry: retry-after-ms, retry-after in seconds and as an HTTP date, bounds", "[net]")
{
    RetryPolicy policy;
    const auto now = std::chrono::system_clock::time_point(std::chrono::seconds(784111777));  // 1994-11-06 08:49:37
    CHECK(retry_after_hint("1500", "", now, policy) == 1500ms);
    CHECK(retry_after_hint("250", "9", now, policy) == 250ms);  // -ms wins
    CHECK(retry_after_hint("", "2", now, policy) == 2000ms);
    CHECK(retry_after_hint("", "0.5", now, policy) == 500ms);
    CHECK(retry_after_hint("", "Sun, 06 Nov 1994 08:49:47 GMT", now, policy) == 10000ms);
    CHECK_FALSE(retry_after_hint("", "", now, policy));
    CHECK_FALSE(retry_after_hint("", "0", now, policy));                              // not in (0, 60] s
    CHECK_FALSE(retry_after_hint("", "61", now, policy));
    CHECK_FALSE(retry_after_hint("", "Sun, 06 Nov 1994 08:49:30 GMT", now, policy));  // in the past
    CHECK_FALSE(retry_after_hint("", "soon", now, policy));

    REQUIRE(parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT"));
    CHECK(parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT")->time_since_epoch().count() == 0);
    CHECK_FALSE(parse_http_date("Thu, 01 Foo 1970 00:00:00 GMT"));
}

TEST_CASE("retry: exponential backoff with jitter, capped", "[net]")
{
    RetryPolicy policy;
    CHECK(backoff_delay(1, policy, 0.0) == 500ms);
    CHECK(backoff_delay(2, policy, 0.0) == 1000ms);
    CHECK(backoff_delay(3, policy, 0.0) == 2000ms);
    CHECK(backoff_delay(10, policy, 0.0) == 8000ms);
    CHECK(backoff_delay(1, policy, 0.999) >= 375ms);
    CHECK(backoff_delay(1, policy, 0.999) < 380ms);
}

TEST_CASE("URL: redacted for messages, path segments encoded, header values checked", "[net]")
{
    CHECK(redact_url("https://user:secret@proxy.corp:3128/v1/x?key=AIza123&alt=sse#frag") ==
          "https://***@proxy.corp:3128/v1/x?***");
    CHECK(redact_url("http://127.0.0.1:8080/v1/chat/completions") == "http://127.0.0.1:8080/v1/chat/completions");
    CHECK(redact_url("user:pw@host?q=1") == "user:pw@host?***");  // not a URL: the query still goes
    CHECK(redact_url("http://h/\r\nX: 1") == "http://h/\\x0d\\x0aX: 1");

    // A bad URL's message does not quote its credentials or its query.
    try {
        parse_url("http://user:hunter2@host:99999/?key=AIzaSECRET");
        FAIL("accepted");
    } catch (const adk::Error& e) {
        CHECK_THAT(e.message(), !Catch::Contains("hunter2") && !Catch::Contains("AIzaSECRET"));
    }
    try {
        proxy_for(parse_url("https://api.example.com/"), std::string("https://user:hunter2@proxy:3128"), std::string());
        FAIL("accepted");
    } catch (const adk::Error& e) {
        CHECK_THAT(e.message(), !Catch::Contains("hunter2") && Catch::Contains("https://***@proxy:3128"));
    }

    CHECK(encode_path_segment("gemini-2.5-flash") == "gemini-2.5-flash");
    CHECK(encode_path_segment("x\r\nX-Smuggled: 1") == "x%0D%0AX-Smuggled%3A%201");
    CHECK(encode_path_segment("../../admin?a=b") == "..%2F..%2Fadmin%3Fa%3Db");

    CHECK_NOTHROW(validate_header("x-goog-api-key", "AIza\tvalue"));
    for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
             {"authorization", "Bearer k\r\nX-Smuggled: 1"},
             {"x-api-key", std::string("k\0", 2)},
             {"x-bad name", "v"},
             {"", "v"},
             {"x:y", "v"}}) {
        INFO(name);
        CHECK_THROWS_AS(validate_header(name, value), adk::Error);
    }
    try {
        validate_header("authorization", "Bearer sk-SECRET\n");
    } catch (const adk::Error& e) {
        CHECK_THAT(e.message(), Catch::Contains("authorization") && !Catch::Contains("sk-SECRET"));
    }
}

TEST_CASE("retry: a hint from an error body is honoured only from 1 ms up to max_server_hint", "[net]")
{
    RetryPolicy policy;
    CHECK(bounded_hint(1500ms, policy) == 1500ms);
    CHECK(bounded_hint(policy.max_server_hint, policy) == policy.max_server_hint);
    CHECK_FALSE(bounded_hint(std::chrono::milliseconds(86400000), policy));  // a day
    CHECK_FALSE(bounded_hint(-5ms, policy));
    CHECK_FALSE(bounded_hint(0ms, policy));
    CHECK_FALSE(bounded_hint(std::nullopt, policy));
}
