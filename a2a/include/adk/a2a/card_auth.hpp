// How a remote agent's card asks its clients to authenticate, and how a credential is presented to it. Sans I/O:
// what RemoteA2aAgent uses to ask a person for a credential (adk_request_credential, with ADK's AuthConfig) and
// to put the credential kept in the CredentialService on its requests.
//
//   card (A2A 1.0)                                        AuthConfig's authScheme (OpenAPI's form, as ADK's)
//   {"httpAuthSecurityScheme": {"scheme": "Bearer"}}      {"type": "http", "scheme": "bearer"}
//   {"apiKeySecurityScheme": {"location": "header",       {"type": "apiKey", "in": "header", "name": "X-API-Key"}
//                             "name": "X-API-Key"}}
//   {"oauth2SecurityScheme": {"flows": {...}}}            {"type": "oauth2", "flows": {...}}
//   {"openIdConnectSecurityScheme": {...}}                {"type": "openIdConnect", "openIdConnectUrl": "..."}
//
// A 0.3 card writes its schemes in OpenAPI's form already ({"type": "http", "scheme": "bearer"}) and its
// requirements as "security": [{"name": [scopes]}]; both are read.
//
//   the credential (exchangedAuthCredential, else rawAuthCredential)       presented as
//   {"authType": "http", "http": {"scheme": "bearer",                       Authorization: Bearer t
//                                 "credentials": {"token": "t"}}}
//   {"authType": "http", "http": {"credentials": {"username", "password"}}} Authorization: Basic ... (scheme basic)
//   {"authType": "apiKey", "apiKey": "k"}                                   X-API-Key: k, ?name=k, or a cookie
//   {"authType": "oauth2", "oauth2": {"accessToken": "t"}}                  Authorization: Bearer t
#pragma once

#include <adk/a2a/types.hpp>

#include <boost/json/object.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace adk::a2a {

class CardAuth {
public:
    std::string scheme_name;  // the card's name for the scheme
    // ADK's AuthConfig: {"authScheme": {...}, "credentialKey": "a2a <agent URL> <scheme name>"}.
    json::object auth_config;
    // Whether the card requires it (a security requirement names it); a scheme only listed is used after the
    // agent refuses a request without credentials.
    bool required = false;
};

// The card's scheme this client presents a credential for: the first security requirement that names one scheme
// it speaks (HTTP Bearer or Basic, an API key, an OAuth 2.0 or OpenID Connect access token); with no requirement,
// the first such scheme listed (not required). Nothing when the card lists no scheme. Throws adk::Error
// (invalid_argument) naming the scheme and what is wrong when the card requires only schemes it does not speak
// (mutual TLS, two schemes at once) or writes a scheme it needs in a form that is not A2A's.
// `agent_url`: the interface's URL (its query is left out of the credential key).
std::optional<CardAuth> card_auth(const AgentCard& card, std::string_view agent_url);

// What a credential puts on each request.
class PresentedCredential {
public:
    std::vector<std::pair<std::string, std::string>> headers;
    std::string query;  // "name=value", percent-encoded; empty: none
};

// The credential of `answered` (an AuthConfig answered or kept: its exchangedAuthCredential, else its
// rawAuthCredential) presented as `auth_scheme` (OpenAPI's form) says. Throws adk::Error (invalid_argument) naming
// what is missing or what a header cannot carry (a line break in a key); never the secret itself.
PresentedCredential present_credential(const json::object& auth_scheme, const json::object& answered);

}  // namespace adk::a2a
