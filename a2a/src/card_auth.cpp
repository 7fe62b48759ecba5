#include <adk/a2a/card_auth.hpp>

#include <adk/core/json_fields.hpp>  // base64_encode

#include <adk/core/error.hpp>
#include <adk/net/url.hpp>

#include <algorithm>
#include <cctype>

namespace adk::a2a {

namespace {

std::string lower(std::string_view text)
{
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

std::string bounded(std::string_view text)
{
    return std::string(text.substr(0, 100));
}

const json::object* object_at(const json::object& o, std::string_view key)
{
    const json::value* v = o.if_contains(key);
    return v && v->is_object() ? &v->get_object() : nullptr;
}

// A string member, by its camelCase name or its snake_case one; empty when absent.
std::string string_at(const json::object& o, std::string_view camel, std::string_view snake = {})
{
    const json::value* v = o.if_contains(camel);
    if (!v && !snake.empty())
        v = o.if_contains(snake);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

// A scheme of the card in OpenAPI's form; nothing for one this client does not speak. Throws for one it would
// speak written wrong.
std::optional<json::object> openapi_scheme(const std::string& name, const json::value& written)
{
    const std::string what = "the agent card's security scheme '" + bounded(name) + "'";
    if (!written.is_object())
        throw Error(errc::invalid_argument, what + " is not a JSON object");
    const json::object& s = written.get_object();
    std::string type = string_at(s, "type");
    json::object scheme;
    if (const json::object* key = object_at(s, "apiKeySecurityScheme")) {
        scheme = {{"type", "apiKey"}, {"in", string_at(*key, "location")}, {"name", string_at(*key, "name")}};
    } else if (const json::object* http = object_at(s, "httpAuthSecurityScheme")) {
        scheme = {{"type", "http"}, {"scheme", lower(string_at(*http, "scheme"))}};
    } else if (const json::object* oauth = object_at(s, "oauth2SecurityScheme")) {
        scheme = {{"type", "oauth2"}};
        if (const json::object* flows = object_at(*oauth, "flows"))
            scheme["flows"] = *flows;
    } else if (const json::object* oidc = object_at(s, "openIdConnectSecurityScheme")) {
        scheme = {{"type", "openIdConnect"}, {"openIdConnectUrl", string_at(*oidc, "openIdConnectUrl")}};
    } else if (type == "apiKey") {  // 0.3: OpenAPI's form already
        scheme = {{"type", "apiKey"}, {"in", string_at(s, "in")}, {"name", string_at(s, "name")}};
    } else if (type == "http") {
        scheme = {{"type", "http"}, {"scheme", lower(string_at(s, "scheme"))}};
    } else if (type == "oauth2" || type == "openIdConnect") {
        scheme = s;
    } else {
        return std::nullopt;  // mutual TLS, or a kind this client does not know
    }
    if (scheme.at("type") == "apiKey") {
        const std::string in(scheme.at("in").get_string());
        const std::string key_name(scheme.at("name").get_string());
        if (in != "header" && in != "query" && in != "cookie")
            throw Error(errc::invalid_argument, what + " puts its API key in '" + bounded(in) +
                                                    "': A2A allows \"header\", \"query\" or \"cookie\"");
        try {
            if (key_name.size() > 256)
                throw Error(errc::invalid_argument, "too long");
            net::validate_header(key_name, "");
        } catch (const Error&) {
            throw Error(errc::invalid_argument, what + " names its API key '" + bounded(key_name) +
                                                    "', which is not an HTTP token of at most 256 bytes (letters, digits, !#$%&'*+-.^_`|~)");
        }
    } else if (scheme.at("type") == "http") {
        const json::value& http_scheme = scheme.at("scheme");
        if (http_scheme != "bearer" && http_scheme != "basic")
            return std::nullopt;  // Digest and the rest: not spoken
    }
    return scheme;
}

// The scheme names of the card's requirements, each requirement's names in a list: A2A 1.0's
// [{"schemes": {"name": {"list": [scopes]}}}] and 0.3's "security": [{"name": [scopes]}].
std::vector<std::vector<std::string>> requirements_of(const AgentCard& card)
{
    std::vector<std::vector<std::string>> out;
    auto read = [&](const json::array& list, bool v10) {
        for (const json::value& r : list) {
            if (!r.is_object())
                continue;
            const json::object* names = v10 ? object_at(r.get_object(), "schemes") : &r.get_object();
            std::vector<std::string>& each = out.emplace_back();  // none: authentication is optional
            if (names)
                for (const auto& member : *names)
                    each.emplace_back(member.key());
        }
    };
    read(card.security_requirements, true);
    if (card.security_requirements.empty())
        if (const json::value* v03 = card.extra.if_contains("security"); v03 && v03->is_array())
            read(v03->get_array(), false);
    return out;
}

std::string credential_key(std::string_view agent_url, const std::string& scheme_name)
{
    return "a2a " + std::string(agent_url.substr(0, agent_url.find_first_of("?#"))) + " " + scheme_name;
}

// A credential's value fit for a header: no line break or other control character (which would split the
// request).
void check_value(const std::string& value, std::string_view what)
{
    if (value.empty())
        throw Error(errc::invalid_argument, "the credential holds no " + std::string(what));
    try {
        net::validate_header("x", value);
    } catch (const Error&) {
        throw Error(errc::invalid_argument, "the credential's " + std::string(what) +
                                                " holds a line break or another control character, which no request "
                                                "can carry: give it without them");
    }
}

}  // namespace

std::optional<CardAuth> card_auth(const AgentCard& card, std::string_view agent_url)
{
    auto make = [&](const std::string& name, json::object scheme, bool required) {
        CardAuth auth;
        auth.scheme_name = name;
        auth.auth_config = {{"authScheme", std::move(scheme)}, {"credentialKey", credential_key(agent_url, name)}};
        auth.required = required;
        return auth;
    };
    const std::vector<std::vector<std::string>> requirements = requirements_of(card);
    std::string unmet;
    for (const std::vector<std::string>& names : requirements) {
        if (names.empty())
            return std::nullopt;  // an empty requirement: no credential is needed
        if (names.size() != 1) {
            unmet = "two schemes at once";
            continue;
        }
        const json::value* written = card.security_schemes.if_contains(names.front());
        if (!written)
            throw Error(errc::invalid_argument, "the agent card requires the security scheme '" +
                                                    bounded(names.front()) + "', which its securitySchemes do not list");
        if (std::optional<json::object> scheme = openapi_scheme(names.front(), *written))
            return make(names.front(), std::move(*scheme), true);
        unmet = "'" + bounded(names.front()) + "'";
    }
    if (!requirements.empty())
        throw Error(errc::invalid_argument,
                    "the agent card requires " + unmet + " to authenticate, which RemoteA2aAgent does not speak: it "
                    "presents an HTTP Bearer or Basic credential, an API key, or an OAuth 2.0 / OpenID Connect access "
                    "token; give RemoteAgentOptions::bearer_token if the agent takes a token");
    for (const auto& member : card.security_schemes) {
        const std::string name(member.key());
        if (std::optional<json::object> scheme = openapi_scheme(name, member.value()))
            return make(name, std::move(*scheme), false);
    }
    return std::nullopt;
}

PresentedCredential present_credential(const json::object& auth_scheme, const json::object& answered)
{
    const json::object* credential = object_at(answered, "exchangedAuthCredential");
    if (!credential)
        credential = object_at(answered, "rawAuthCredential");
    if (!credential)
        throw Error(errc::invalid_argument, "the credential holds neither exchangedAuthCredential nor "
                                            "rawAuthCredential");
    const std::string type = string_at(auth_scheme, "type");
    // A token from whichever member carries one: http.credentials.token, oauth2.accessToken.
    auto token = [&] {
        std::string t;
        if (const json::object* http = object_at(*credential, "http"))
            if (const json::object* c = object_at(*http, "credentials"))
                t = string_at(*c, "token");
        if (t.empty())
            if (const json::object* oauth = object_at(*credential, "oauth2"))
                t = string_at(*oauth, "accessToken", "access_token");
        check_value(t, "token (http.credentials.token, or oauth2.accessToken)");
        return t;
    };
    PresentedCredential out;
    if (type == "apiKey") {
        std::string key = string_at(*credential, "apiKey", "api_key");
        check_value(key, "API key (apiKey)");
        const std::string in = string_at(auth_scheme, "in");
        const std::string name = string_at(auth_scheme, "name");
        if (in == "query")
            out.query = net::encode_path_segment(name) + "=" + net::encode_path_segment(key);
        else if (in == "cookie")
            out.headers.emplace_back("cookie", name + "=" + key);
        else
            out.headers.emplace_back(name, std::move(key));
    } else if (type == "http" && string_at(auth_scheme, "scheme") == "basic") {
        const json::object* http = object_at(*credential, "http");
        const json::object* c = http ? object_at(*http, "credentials") : nullptr;
        const std::string user = c ? string_at(*c, "username") : std::string();
        const std::string password = c ? string_at(*c, "password") : std::string();
        check_value(user, "user name (http.credentials.username)");
        out.headers.emplace_back("authorization", "Basic " + json_fields::base64_encode(user + ":" + password));
    } else if (type == "http" || type == "oauth2" || type == "openIdConnect") {
        out.headers.emplace_back("authorization", "Bearer " + token());
    } else {
        throw Error(errc::invalid_argument, "the credential's scheme '" + bounded(type) + "' is not one RemoteA2aAgent "
                                            "presents");
    }
    for (const auto& [name, value] : out.headers)
        net::validate_header(name, value);
    return out;
}

}  // namespace adk::a2a
