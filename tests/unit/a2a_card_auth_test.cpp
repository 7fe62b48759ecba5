// How RemoteA2aAgent reads a card's security schemes (A2A 1.0's and 0.3's forms) as ADK's AuthConfig, and presents
// a kept credential: headers, a query parameter, a cookie; what it refuses, and that a refusal never holds the
// secret.
#include <adk/a2a/card_auth.hpp>
#include <adk/core/error.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value_to.hpp>

#include <catch2/catch.hpp>

namespace a2a = adk::a2a;
namespace json = boost::json;

namespace {

a2a::AgentCard card(std::string_view schemes, std::string_view requirements)
{
    a2a::AgentCard c;
    c.name = "remote";
    c.security_schemes = json::parse(schemes).as_object();
    c.security_requirements = json::parse(requirements).as_array();
    return c;
}

json::object scheme_of(const a2a::CardAuth& auth)
{
    return auth.auth_config.at("authScheme").as_object();
}

json::object answered(std::string_view credential)
{
    return json::object{{"rawAuthCredential", json::parse(credential)}};
}

// The message of the adk::Error that `f` throws.
template <class F>
std::string refusal(F f)
{
    try {
        f();
    } catch (const adk::Error& e) {
        return e.what();
    }
    return "(nothing thrown)";
}

}  // namespace

TEST_CASE("card_auth: A2A 1.0's schemes as ADK's auth schemes, the required one first", "[a2a][auth]")
{
    auto auth = a2a::card_auth(card(R"({"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}})",
                                    R"([{"schemes": {"bearer": {"list": []}}}])"),
                               "http://agents.example/a2a/flights?tenant=7#x");
    REQUIRE(auth);
    CHECK(auth->scheme_name == "bearer");
    CHECK(auth->required);
    CHECK(scheme_of(*auth) == json::parse(R"({"type": "http", "scheme": "bearer"})"));
    // The key names the agent (its query left out) and the scheme.
    CHECK(auth->auth_config.at("credentialKey") == "a2a http://agents.example/a2a/flights bearer");

    auth = a2a::card_auth(card(R"({"mtls": {"mtlsSecurityScheme": {}},
                                   "key": {"apiKeySecurityScheme": {"location": "query", "name": "api_key"}}})",
                               R"([{"schemes": {"mtls": {"list": []}}}, {"schemes": {"key": {"list": []}}}])"),
                          "http://h/a");
    REQUIRE(auth);  // the first requirement it can meet
    CHECK(auth->scheme_name == "key");
    CHECK(scheme_of(*auth) == json::parse(R"({"type": "apiKey", "in": "query", "name": "api_key"})"));

    auth = a2a::card_auth(card(R"({"oauth": {"oauth2SecurityScheme": {"flows": {"clientCredentials":
                                     {"tokenUrl": "https://auth/token", "scopes": {"a": "A"}}}}}})",
                               R"([{"schemes": {"oauth": {"list": ["a"]}}}])"),
                          "http://h/a");
    REQUIRE(auth);
    CHECK(scheme_of(*auth) == json::parse(R"({"type": "oauth2", "flows": {"clientCredentials":
                                              {"tokenUrl": "https://auth/token", "scopes": {"a": "A"}}}})"));

    auth = a2a::card_auth(card(R"({"oidc": {"openIdConnectSecurityScheme": {"openIdConnectUrl": "https://id/x"}}})",
                               "[]"),
                          "http://h/a");
    REQUIRE(auth);  // listed, not required: used once the agent refuses a request without it
    CHECK_FALSE(auth->required);
    CHECK(scheme_of(*auth) == json::parse(R"({"type": "openIdConnect", "openIdConnectUrl": "https://id/x"})"));
}

TEST_CASE("card_auth: A 0.3 card's schemes (OpenAPI's form) and its security list", "[a2a][auth]")
{
    a2a::AgentCard c = card(R"({"key": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
                                "basic": {"type": "http", "scheme": "Basic"}})",
                            "[]");
    c.extra["security"] = json::parse(R"([{"basic": []}])");
    auto auth = a2a::card_auth(c, "http://h/a");
    REQUIRE(auth);
    CHECK(auth->scheme_name == "basic");
    CHECK(auth->required);
    CHECK(scheme_of(*auth) == json::parse(R"({"type": "http", "scheme": "basic"})"));
}

TEST_CASE("card_auth: no credential needed, and cards it cannot meet", "[a2a][auth]")
{
    CHECK_FALSE(a2a::card_auth(card("{}", "[]"), "http://h/a"));
    // An empty requirement: authentication is optional.
    CHECK_FALSE(a2a::card_auth(card(R"({"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}})", "[{}]"),
                               "http://h/a"));
    // Only schemes it does not speak listed, none required: nothing to present.
    CHECK_FALSE(a2a::card_auth(card(R"({"mtls": {"mtlsSecurityScheme": {}}})", "[]"), "http://h/a"));

    CHECK_THAT(refusal([] {
                   (void)a2a::card_auth(card(R"({"mtls": {"mtlsSecurityScheme": {}}})",
                                             R"([{"schemes": {"mtls": {"list": []}}}])"),
                                        "http://h/a");
               }),
               Catch::Contains("requires 'mtls'") && Catch::Contains("does not speak"));
    CHECK_THAT(refusal([] {
                   (void)a2a::card_auth(card(R"({"a": {"httpAuthSecurityScheme": {"scheme": "Bearer"}},
                                                 "b": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}})",
                                             R"([{"schemes": {"a": {"list": []}, "b": {"list": []}}}])"),
                                        "http://h/a");
               }),
               Catch::Contains("two schemes at once"));
    CHECK_THAT(refusal([] {
                   (void)a2a::card_auth(card(R"({"digest": {"httpAuthSecurityScheme": {"scheme": "Digest"}}})",
                                             R"([{"schemes": {"digest": {"list": []}}}])"),
                                        "http://h/a");
               }),
               Catch::Contains("requires 'digest'"));
    CHECK_THAT(refusal([] {
                   (void)a2a::card_auth(card("{}", R"([{"schemes": {"gone": {"list": []}}}])"), "http://h/a");
               }),
               Catch::Contains("'gone', which its securitySchemes do not list"));
    CHECK_THAT(refusal([] {
                   (void)a2a::card_auth(card(R"({"k": {"apiKeySecurityScheme": {"location": "body", "name": "k"}}})",
                                             R"([{"schemes": {"k": {"list": []}}}])"),
                                        "http://h/a");
               }),
               Catch::Contains("\"header\", \"query\" or \"cookie\""));
    // A header name that would split the request.
    CHECK_THAT(refusal([] {
                   (void)a2a::card_auth(
                       card(R"({"k": {"apiKeySecurityScheme": {"location": "header", "name": "X-Key\r\nHost: evil"}}})",
                            R"([{"schemes": {"k": {"list": []}}}])"),
                       "http://h/a");
               }),
               Catch::Contains("not an HTTP token"));
    const std::string long_name(300, 'k');
    CHECK_THAT(refusal([&] {
                   (void)a2a::card_auth(card(R"({"k": {"apiKeySecurityScheme": {"location": "header", "name": ")" +
                                                 long_name + R"("}}})",
                                             R"([{"schemes": {"k": {"list": []}}}])"),
                                        "http://h/a");
               }),
               Catch::Contains("at most 256 bytes"));
    CHECK_THAT(refusal([] { (void)a2a::card_auth(card(R"({"k": 5})", "[]"), "http://h/a"); }),
               Catch::Contains("'k' is not a JSON object"));
}

TEST_CASE("present_credential: each scheme's credential where the scheme says", "[a2a][auth]")
{
    const json::object bearer = json::parse(R"({"type": "http", "scheme": "bearer"})").as_object();
    auto p = a2a::present_credential(
        bearer, answered(R"({"authType": "http", "http": {"scheme": "bearer", "credentials": {"token": "t1"}}})"));
    CHECK(p.headers == std::vector<std::pair<std::string, std::string>>{{"authorization", "Bearer t1"}});
    CHECK(p.query.empty());

    // exchangedAuthCredential wins over rawAuthCredential; an OAuth 2.0 access token goes as a bearer token.
    json::object both = answered(R"({"authType": "oauth2", "oauth2": {"clientId": "c"}})");
    both["exchangedAuthCredential"] = json::parse(R"({"authType": "oauth2", "oauth2": {"access_token": "t2"}})");
    p = a2a::present_credential(json::parse(R"({"type": "oauth2"})").as_object(), both);
    CHECK(p.headers == std::vector<std::pair<std::string, std::string>>{{"authorization", "Bearer t2"}});

    p = a2a::present_credential(json::parse(R"({"type": "http", "scheme": "basic"})").as_object(),
                                answered(R"({"authType": "http", "http": {"scheme": "basic",
                                             "credentials": {"username": "ann", "password": "pw"}}})"));
    CHECK(p.headers == std::vector<std::pair<std::string, std::string>>{{"authorization", "Basic YW5uOnB3"}});

    const auto key = answered(R"({"authType": "apiKey", "apiKey": "k&1 2"})");
    p = a2a::present_credential(json::parse(R"({"type": "apiKey", "in": "header", "name": "X-API-Key"})").as_object(),
                                key);
    CHECK(p.headers == std::vector<std::pair<std::string, std::string>>{{"X-API-Key", "k&1 2"}});
    p = a2a::present_credential(json::parse(R"({"type": "apiKey", "in": "query", "name": "api key"})").as_object(),
                                key);
    CHECK(p.headers.empty());
    CHECK(p.query == "api%20key=k%261%202");
    p = a2a::present_credential(json::parse(R"({"type": "apiKey", "in": "cookie", "name": "session"})").as_object(),
                                key);
    CHECK(p.headers == std::vector<std::pair<std::string, std::string>>{{"cookie", "session=k&1 2"}});
}

TEST_CASE("present_credential: what it refuses says what is missing, never the secret", "[a2a][auth]")
{
    const json::object bearer = json::parse(R"({"type": "http", "scheme": "bearer"})").as_object();
    CHECK_THAT(refusal([&] { (void)a2a::present_credential(bearer, json::object{}); }),
               Catch::Contains("neither exchangedAuthCredential nor rawAuthCredential"));
    CHECK_THAT(refusal([&] { (void)a2a::present_credential(bearer, answered(R"({"authType": "http"})")); }),
               Catch::Contains("holds no token"));
    const std::string split = refusal([&] {
        (void)a2a::present_credential(
            bearer, answered(R"({"http": {"credentials": {"token": "hunter2\r\nX-Evil: 1"}}})"));
    });
    CHECK_THAT(split, Catch::Contains("line break"));
    CHECK(split.find("hunter2") == std::string::npos);
    CHECK_THAT(refusal([&] {
                   (void)a2a::present_credential(json::parse(R"({"type": "apiKey", "in": "header", "name": "K"})")
                                                     .as_object(),
                                                 answered(R"({"authType": "apiKey"})"));
               }),
               Catch::Contains("no API key"));
    CHECK_THAT(refusal([&] {
                   (void)a2a::present_credential(json::parse(R"({"type": "mutualTLS"})").as_object(),
                                                 answered(R"({"authType": "apiKey", "apiKey": "k"})"));
               }),
               Catch::Contains("'mutualTLS' is not one"));
}
