// The parts of MCP's OAuth client that need no server (adk/mcp/oauth.hpp): challenges, the well-known metadata
// URLs in the spec's order, which resources cover a server, PKCE, and the tokens kept in a CredentialService. The
// whole flow runs against the official conformance suite's authorization servers (tests/interop) and against
// one on loopback (tests/integration/mcp_oauth_test.cpp).
#include <adk/auth/credential_service.hpp>
#include <adk/mcp/oauth.hpp>

#include "support/run.hpp"

#include <catch2/catch.hpp>

namespace mcp = adk::mcp;
namespace json = boost::json;

TEST_CASE("OAuth: a Bearer challenge among others, its parameters unquoted", "[mcp][oauth]")
{
    auto c = mcp::parse_bearer_challenge(
        R"(Basic realm="x", Bearer realm="mcp", scope="mcp:read mcp:write", resource_metadata="https://h/.well-known/oauth-protected-resource/mcp", error="insufficient_scope", error_description="needs \"write\"")");
    REQUIRE(c);
    CHECK(c->scope == "mcp:read mcp:write");
    CHECK(c->resource_metadata == "https://h/.well-known/oauth-protected-resource/mcp");
    CHECK(c->error == "insufficient_scope");
    CHECK(c->error_description == "needs \"write\"");

    auto bare = mcp::parse_bearer_challenge("bearer");
    REQUIRE(bare);
    CHECK(bare->scope.empty());
    auto token68 = mcp::parse_bearer_challenge("Negotiate abc==, Bearer error=invalid_token");
    REQUIRE(token68);
    CHECK(token68->error == "invalid_token");

    CHECK_FALSE(mcp::parse_bearer_challenge(""));
    CHECK_FALSE(mcp::parse_bearer_challenge("Basic realm=\"x\""));
    CHECK_FALSE(mcp::parse_bearer_challenge("Bearer scope=\"unterminated"));
    CHECK_FALSE(mcp::parse_bearer_challenge("Bearer scope=\"" + std::string(9000, 'a') + "\""));
}

TEST_CASE("OAuth: metadata URLs in the spec's order, path-aware", "[mcp][oauth]")
{
    CHECK(mcp::protected_resource_metadata_urls("https://h:8443/api/mcp?x=1") ==
          std::vector<std::string>{"https://h:8443/.well-known/oauth-protected-resource/api/mcp",
                                   "https://h:8443/.well-known/oauth-protected-resource"});
    CHECK(mcp::protected_resource_metadata_urls("http://h/") ==
          std::vector<std::string>{"http://h:80/.well-known/oauth-protected-resource"});
    CHECK(mcp::authorization_server_metadata_urls("https://auth.example.com") ==
          std::vector<std::string>{"https://auth.example.com:443/.well-known/oauth-authorization-server",
                                   "https://auth.example.com:443/.well-known/openid-configuration"});
    CHECK(mcp::authorization_server_metadata_urls("https://auth.example.com/tenant1/") ==
          std::vector<std::string>{"https://auth.example.com:443/.well-known/oauth-authorization-server/tenant1",
                                   "https://auth.example.com:443/.well-known/openid-configuration/tenant1",
                                   "https://auth.example.com:443/tenant1/.well-known/openid-configuration"});
}

TEST_CASE("OAuth: a resource covers the servers under it, of its own origin only", "[mcp][oauth]")
{
    CHECK(mcp::resource_covers("https://h/mcp", "https://h/mcp"));
    CHECK(mcp::resource_covers("https://h", "https://h/mcp"));
    CHECK(mcp::resource_covers("https://h/", "https://h/a/mcp"));
    CHECK(mcp::resource_covers("https://h:443/a", "https://h/a/mcp"));
    CHECK_FALSE(mcp::resource_covers("https://evil.example.com/mcp", "https://h/mcp"));
    CHECK_FALSE(mcp::resource_covers("http://h/mcp", "https://h/mcp"));
    CHECK_FALSE(mcp::resource_covers("https://h/mc", "https://h/mcp"));
    CHECK_FALSE(mcp::resource_covers("https://h/other", "https://h/mcp"));
    CHECK_FALSE(mcp::resource_covers("https://h/mcp#frag", "https://h/mcp"));
    CHECK_FALSE(mcp::resource_covers("not a url", "https://h/mcp"));
}

TEST_CASE("OAuth: PKCE S256 as RFC 7636 computes it, forms and queries encoded and decoded", "[mcp][oauth]")
{
    // RFC 7636, appendix B.
    CHECK(mcp::pkce_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk") ==
          "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
    CHECK(mcp::form_encode({{"scope", "a b"}, {"redirect_uri", "http://h/cb?x=1&y"}}) ==
          "scope=a%20b&redirect_uri=http%3A%2F%2Fh%2Fcb%3Fx%3D1%26y");
    auto q = mcp::query_parameters("http://localhost:3000/callback?code=abc%2F1&state=s+t&error=#frag");
    CHECK(q["code"] == "abc/1");
    CHECK(q["state"] == "s t");
    CHECK(q["error"].empty());
    CHECK(mcp::query_parameters("http://h/cb").empty());
}

TEST_CASE("OAuth: tokens kept in the app's CredentialService read back per server", "[mcp][oauth]")
{
    auto credentials = std::make_shared<adk::InMemoryCredentialService>();
    auto store = mcp::credential_token_store(credentials, "app");
    boost::asio::io_context ioc;
    adk::test::run(ioc, [&]() -> boost::asio::awaitable<void> {
        json::object tokens{{"access_token", "a1"}, {"refresh_token", "r1"}, {"expires_at", 42}};
        co_await store->save("https://h/mcp", tokens);
        auto back = co_await store->load("https://h/mcp");
        REQUIRE(back);
        CHECK(*back == tokens);
        auto other = co_await store->load("https://other/mcp");
        CHECK_FALSE(other);
        adk::CredentialKey key("app", "", "mcp-oauth https://h/mcp");
        auto raw = co_await credentials->load_credential(std::move(key));
        REQUIRE(raw);
        CHECK(raw->at("mcpOAuthTokens").as_object() == tokens);
    }());
}
