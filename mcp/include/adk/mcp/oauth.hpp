// OAuth 2.1 for MCP servers over HTTP, as the spec's authorization section (2025-11-25) asks of a client:
//
//   1. a 401 (or a 403 with error="insufficient_scope") names the protected resource metadata in its
//      WWW-Authenticate challenge; else it is looked for at the well-known paths (path-based first);
//   2. its `resource` must cover the server's URL; its first authorization server's metadata is read (RFC 8414,
//      then OpenID Connect discovery, path-aware);
//   3. the client is the one given (pre-registered), or a Client ID Metadata Document's URL when the server
//      supports them, or one registered dynamically (RFC 7591);
//   4. the person's step: the authorization URL (PKCE S256, state, the `resource` of RFC 8707, the scopes the
//      challenge names, else the resource's scopes_supported, else none) goes to OAuthOptions::authorize, which
//      returns the URL the browser came back to;
//   5. the code is exchanged at the token endpoint (auth none, client_secret_basic or client_secret_post, as the
//      server supports), and the tokens kept in the TokenStore, per server. An expired token is refreshed with
//      its refresh token when there is one.
// At most `max_authorizations` flows run for one request (a server that keeps asking for more scope is refused).
#pragma once

#include <adk/net/http_client.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace adk {
class CredentialService;
}

namespace adk::mcp {

namespace asio = boost::asio;
namespace json = boost::json;

// Where the tokens of MCP servers are kept, each under its server's URL (and the client registered for it).
class TokenStore {
public:
    virtual ~TokenStore() = default;
    virtual asio::awaitable<std::optional<json::object>> load(const std::string& server) = 0;
    virtual asio::awaitable<void> save(const std::string& server, json::object tokens) = 0;
};

// In this process only. Safe from any thread.
std::shared_ptr<TokenStore> in_memory_token_store();
// In an app's CredentialService, under (app_name, user_id, "mcp-oauth <server URL>"): where the app keeps its
// users' credentials, in memory or in a store of its own.
std::shared_ptr<TokenStore> credential_token_store(std::shared_ptr<CredentialService> credentials, std::string app_name,
                                                   std::string user_id = "");

// What the OAuth clients of one MCP server share in this process: its protected resource and authorization
// server metadata, read again after `metadata_ttl`, and the client registered at the authorization server for
// each redirect URI, used until the server refuses it (invalid_client). McpToolset gives one to every user's
// connection (OAuthOptions::per_user): a new user, made up or not, neither reads the metadata again nor
// registers another client. One discovery or registration runs at a time; the others wait and take its result.
// At most 64 servers and 64 clients are kept (past that, the oldest go). Safe from any thread.
class OAuthServerCache {
public:
    explicit OAuthServerCache(std::chrono::seconds metadata_ttl = std::chrono::hours(1));
    ~OAuthServerCache();
    OAuthServerCache(const OAuthServerCache&) = delete;
    OAuthServerCache& operator=(const OAuthServerCache&) = delete;

private:
    friend class OAuthClient;
    class Impl;
    std::unique_ptr<Impl> impl_;
};

// The person's step: shown the authorization URL, returns the URL the browser was sent back to (redirect_uri
// with `code` and `state`). Throws to give up.
using AuthorizeHandler = std::function<asio::awaitable<std::string>(std::string authorization_url)>;

class OAuthOptions {
public:
    OAuthOptions() = default;
    std::string client_id;      // a client registered beforehand (with its secret, if it has one)
    std::string client_secret;
    std::string client_metadata_url;  // a Client ID Metadata Document's https URL, used where servers support them
    std::string client_name = "adk-cpp";
    std::string redirect_uri = "http://127.0.0.1:8765/oauth/callback";
    AuthorizeHandler authorize;
    std::shared_ptr<TokenStore> tokens;  // in memory when unset
    std::shared_ptr<OAuthServerCache> cache;  // shared with the server's other clients; one of its own when unset
    // Without an `authorize` handler: each user of the app authorizes for themselves, through the client of
    // their invocation (adk_request_credential, which ADK's web UI answers with a popup), with a connection and
    // tokens of their own kept in the Runner's CredentialService (`tokens` is not used). For servers that run
    // agents for several people (`adk web`, `adk api_server`, an ApiServer of one's own). Set redirect_uri to
    // where the client sends the person back: ADK's web UI uses its own page, http://HOST:PORT/dev-ui/.
    bool per_user = false;
    int max_authorizations = 3;          // flows for one request
};

// A WWW-Authenticate challenge of the Bearer scheme (RFC 6750), its parameters unquoted.
class BearerChallenge {
public:
    std::string scope;
    std::string resource_metadata;
    std::string error;
    std::string error_description;
};

// The Bearer challenge among those of a WWW-Authenticate value; nothing when there is none. Values over 8 KiB
// are refused (nothing).
std::optional<BearerChallenge> parse_bearer_challenge(std::string_view header);
// Where a server's protected resource metadata may be (RFC 9728): the path-based well-known URL, then the root one.
std::vector<std::string> protected_resource_metadata_urls(std::string_view server_url);
// Where an authorization server's metadata may be, in the order the spec gives (RFC 8414 and OpenID Connect
// discovery, path-aware).
std::vector<std::string> authorization_server_metadata_urls(std::string_view issuer);
// Whether a protected resource named `resource` may serve `server_url`: same origin, and its path a prefix of
// the server's at a segment boundary.
bool resource_covers(std::string_view resource, std::string_view server_url);
// base64url(SHA-256(verifier)), unpadded (RFC 7636 S256).
std::string pkce_challenge(std::string_view verifier);
// application/x-www-form-urlencoded.
std::string form_encode(const std::vector<std::pair<std::string, std::string>>& fields);
// The query parameters of a URL, percent-decoded (the last of a repeated name).
std::map<std::string, std::string> query_parameters(std::string_view url);

// The person's step through an invocation's client (OAuthOptions::per_user), sans I/O:
// - the ADK AuthConfig that asks for it with adk_request_credential: an oauth2 scheme, the authorization URL as
//   exchangedAuthCredential.oauth2.authUri (where ADK's web UI sends the person), and the credential key under
//   which the Runner keeps the answer, authorization_answer_key(server_url);
// - the URL the person came back to, from that answer (exchangedAuthCredential.oauth2.authResponseUri).
json::object authorization_request(const std::string& server_url, const std::string& authorization_url);
std::string authorization_answer_key(std::string_view server_url);
std::optional<std::string> authorization_answer(const json::object& answered);

// The flow against one server, over the transport's HttpClient; used by HttpTransport on its strand.
class OAuthClient {
public:
    OAuthClient(OAuthOptions options, std::string server_url, net::HttpClient& http);

    // Reads the store's tokens for the server, the first time.
    asio::awaitable<void> load();
    // "Bearer <token>" for the next request, or "" while no token is held.
    std::string bearer() const;
    // The token held expires within a minute and has a refresh token: refresh() before using it.
    bool expiring() const;
    // A new access token for the refresh token; false (and the tokens dropped) when the server refuses it.
    asio::awaitable<bool> refresh();
    // After a 401, or a 403 with error="insufficient_scope": a new token (refreshed, or by the whole flow).
    // Throws adk::Error that says what failed.
    asio::awaitable<void> authorize(unsigned status, std::string_view www_authenticate);

    int max_authorizations() const noexcept { return options_.max_authorizations; }

private:
    // Discovery, the client, PKCE and state: the flow's authorization URL and what its end needs.
    asio::awaitable<json::object> prepare(const BearerChallenge& challenge);
    // The server's protected resource metadata and its authorization server's (from the cache when it has them).
    asio::awaitable<std::pair<json::object, json::object>> discover(const BearerChallenge& challenge);
    // The client registered at `registration` (from the cache when one is kept for the token endpoint).
    asio::awaitable<json::object> registered_client(const json::object& meta);
    // The person's answer for the flow: its code exchanged for tokens, which are saved.
    asio::awaitable<void> complete(const json::object& flow, std::string_view callback);
    asio::awaitable<std::optional<json::object>> get_json(const std::string& url);
    asio::awaitable<json::object> post_form(const std::string& url, std::vector<std::pair<std::string, std::string>> form,
                                            const std::string& basic, std::string_view what);
    asio::awaitable<void> save();

    OAuthOptions options_;
    std::string server_url_;
    net::HttpClient& http_;
    bool loaded_ = false;
    json::object tokens_;  // access_token, refresh_token, expires_at, and the client and endpoint they came from
    std::string token_error_;  // the `error` of the last token request refused (invalid_client, invalid_grant, ...)
};

}  // namespace adk::mcp
