// The server's request targets (server/src/request_target.hpp): segments, percent-decoding, queries, and
// what is refused.
#include "request_target.hpp"

#include <catch2/catch.hpp>

using adk::server::detail::RequestTarget;

namespace {
std::string refusal_of(std::string_view target)
{
    std::string refused;
    (void)RequestTarget::parse(target, refused);
    return refused;
}
}  // namespace

TEST_CASE("request targets split into decoded segments and a query", "[server]")
{
    std::string refused;
    RequestTarget t = RequestTarget::parse("/apps/weather/users/u%201/sessions/?dark_mode=true&x=a+b&x=c&flag", refused);
    CHECK(refused.empty());
    CHECK(t.segments == std::vector<std::string>{"apps", "weather", "users", "u 1", "sessions"});
    CHECK(t.query_value("dark_mode") == "true");
    CHECK(t.query_value("x") == "c");  // the last value of a repeated name
    CHECK(t.query_value("flag") == "");
    CHECK(!t.query_value("missing"));

    RequestTarget root = RequestTarget::parse("/", refused);
    CHECK(refused.empty());
    CHECK(root.segments.empty());
}

TEST_CASE("request targets that could fool a route are refused with the reason", "[server]")
{
    CHECK_THAT(refusal_of("apps"), Catch::Contains("starts with '/'"));
    CHECK_THAT(refusal_of("/apps/%zz"), Catch::Contains("two hex digits"));
    CHECK_THAT(refusal_of("/apps/a%2"), Catch::Contains("two hex digits"));
    CHECK_THAT(refusal_of("/apps/a%2Fb"), Catch::Contains("slash"));  // an encoded '/' never splits a segment
    CHECK_THAT(refusal_of("/apps/a%5Cb"), Catch::Contains("backslash"));
    CHECK_THAT(refusal_of("/apps/%2E%2E/users"), Catch::Contains("'..'"));
    CHECK_THAT(refusal_of("/apps/./users"), Catch::Contains("'.'"));
    CHECK_THAT(refusal_of("/apps//users"), Catch::Contains("empty"));
    CHECK_THAT(refusal_of("/apps/a%00b"), Catch::Contains("control character"));
    CHECK_THAT(refusal_of("/x?a=%G1"), Catch::Contains("two hex digits"));
    CHECK_THAT(refusal_of("/" + std::string(5000, 'a')), Catch::Contains("longer than 4096 bytes"));
}

// Found by fuzz_api_request: a byte that is not UTF-8 reached an error message, and the JSON answer with it.
TEST_CASE("request targets whose segments or query are not UTF-8 are refused, UTF-8 ones kept", "[server]")
{
    CHECK(refusal_of("/ru\x93_sse") == "a path segment is not UTF-8 once percent-decoded");
    CHECK(refusal_of("/apps/%C3%28") == "a path segment is not UTF-8 once percent-decoded");
    CHECK(refusal_of("/list-apps?x=%FF") == "the query is not UTF-8 once percent-decoded");
    std::string refused;
    RequestTarget t = RequestTarget::parse("/apps/caf%C3%A9/users/%E2%9C%93", refused);
    CHECK(refused.empty());
    CHECK(t.segments == std::vector<std::string>{"apps", "caf\xc3\xa9", "users", "\xe2\x9c\x93"});
}
