#include <adk/mcp/oauth.hpp>

#include <adk/auth/credential_service.hpp>
#include <adk/core/async_mutex.hpp>
#include <adk/core/clock.hpp>
#include <adk/core/error.hpp>
#include <adk/core/log.hpp>
#include <adk/net/sse_parser.hpp>
#include <adk/net/url.hpp>

#include "ascii.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <map>
#include <mutex>

namespace adk::mcp {

namespace {

constexpr std::size_t max_challenge_bytes = 8 << 10;
constexpr std::size_t max_metadata_bytes = 1 << 20;
constexpr std::int64_t refresh_margin_seconds = 60;
constexpr std::int64_t pending_flow_seconds = 600;  // how long a person may take to authorize
constexpr std::size_t max_cached = 64;  // servers and clients an OAuthServerCache keeps

std::string base64(std::string_view bytes)
{
    std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
    const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                  reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
    out.resize(static_cast<std::size_t>(n));
    return out;
}

std::string base64url(std::string_view bytes)
{
    std::string out = base64(bytes);
    for (char& c : out)
        c = c == '+' ? '-' : c == '/' ? '_' : c;
    while (!out.empty() && out.back() == '=')
        out.pop_back();
    return out;
}

std::string random_text(std::size_t bytes)
{
    std::string raw(bytes, '\0');
    if (RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), static_cast<int>(bytes)) != 1)
        throw Error(errc::agent_failed, "OpenSSL gave no random bytes for OAuth");
    return base64url(raw);
}

bool is_token_char(char c)
{
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f)
        return false;
    return std::string_view("()<>@,;:\\\"/[]?={}").find(c) == std::string_view::npos;
}

std::string path_of(const net::Url& url)
{
    std::string path = url.target.substr(0, url.target.find('?'));
    while (path.size() > 1 && path.back() == '/')
        path.pop_back();
    return path == "/" ? std::string() : path;
}

std::string string_member(const json::object& o, std::string_view name)
{
    const json::value* v = o.if_contains(name);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

std::vector<std::string> strings_member(const json::object& o, std::string_view name)
{
    std::vector<std::string> out;
    if (const json::value* v = o.if_contains(name); v && v->is_array())
        for (const json::value& s : v->get_array())
            if (s.is_string())
                out.emplace_back(s.get_string());
    return out;
}

std::int64_t number_member(const json::object& o, std::string_view name)
{
    const json::value* v = o.if_contains(name);
    return v && v->is_int64() ? v->get_int64() : 0;
}

bool contains(const std::vector<std::string>& list, std::string_view item)
{
    return std::find(list.begin(), list.end(), item) != list.end();
}

std::int64_t now_seconds()
{
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

class InMemoryTokenStore final : public TokenStore {
public:
    asio::awaitable<std::optional<json::object>> load(const std::string& server) override
    {
        std::lock_guard lock(mutex_);
        auto at = tokens_.find(server);
        co_return at == tokens_.end() ? std::nullopt : std::optional<json::object>(at->second);
    }
    asio::awaitable<void> save(const std::string& server, json::object tokens) override
    {
        std::lock_guard lock(mutex_);
        tokens_[server] = std::move(tokens);
        co_return;
    }

private:
    std::mutex mutex_;
    std::map<std::string, json::object> tokens_;
};

class CredentialTokenStore final : public TokenStore {
public:
    CredentialTokenStore(std::shared_ptr<CredentialService> credentials, std::string app, std::string user)
        : credentials_(std::move(credentials)), app_(std::move(app)), user_(std::move(user))
    {
    }
    asio::awaitable<std::optional<json::object>> load(const std::string& server) override
    {
        CredentialKey where = key(server);
        std::optional<json::object> kept = co_await credentials_->load_credential(std::move(where));
        if (!kept)
            co_return std::nullopt;
        const json::value* tokens = kept->if_contains("mcpOAuthTokens");
        co_return tokens && tokens->is_object() ? std::optional<json::object>(tokens->get_object()) : std::nullopt;
    }
    asio::awaitable<void> save(const std::string& server, json::object tokens) override
    {
        json::object config{{"credentialKey", "mcp-oauth " + server}, {"mcpOAuthTokens", std::move(tokens)}};
        CredentialKey where = key(server);
        co_await credentials_->save_credential(std::move(where), std::move(config));
    }

private:
    CredentialKey key(const std::string& server) const { return CredentialKey(app_, user_, "mcp-oauth " + server); }
    std::shared_ptr<CredentialService> credentials_;
    std::string app_;
    std::string user_;
};

}  // namespace

class OAuthServerCache::Impl {
public:
    class Discovered {
    public:
        json::object resource_metadata;
        json::object server_metadata;
        adk::Clock::time_point read_at;
    };

    explicit Impl(std::chrono::seconds ttl) : metadata_ttl(ttl) {}

    std::optional<Discovered> discovered(const std::string& server)
    {
        std::lock_guard lock(mutex);
        auto at = servers.find(server);
        if (at == servers.end())
            return std::nullopt;
        if (adk::Clock::now() - at->second.read_at >= metadata_ttl) {
            servers.erase(at);
            return std::nullopt;
        }
        return at->second;
    }
    void keep_discovered(const std::string& server, Discovered d)
    {
        std::lock_guard lock(mutex);
        keep_bounded(servers, server, std::move(d), [](const Discovered& x) { return x.read_at; });
    }

    std::optional<json::object> client(const std::string& key)
    {
        std::lock_guard lock(mutex);
        auto at = clients.find(key);
        return at == clients.end() ? std::nullopt : std::optional<json::object>(at->second.first);
    }
    void keep_client(const std::string& key, json::object client)
    {
        std::lock_guard lock(mutex);
        keep_bounded(clients, key, std::pair(std::move(client), adk::Clock::now()),
                     [](const auto& x) { return x.second; });
    }
    void forget_client(const std::string& key)
    {
        std::lock_guard lock(mutex);
        clients.erase(key);
    }

    static std::string client_key(std::string_view token_endpoint, std::string_view redirect_uri)
    {
        return std::string(token_endpoint) + '\n' + std::string(redirect_uri);
    }

    const std::chrono::seconds metadata_ttl;
    AsyncMutex gate;  // one discovery or registration at a time

private:
    // Kept under `key`; past max_cached entries, the one kept longest ago goes.
    template <class Map, class Value, class Stamp>
    static void keep_bounded(Map& map, const std::string& key, Value value, Stamp stamp)
    {
        map.insert_or_assign(key, std::move(value));
        if (map.size() <= max_cached)
            return;
        auto oldest = std::min_element(map.begin(), map.end(),
                                       [&](const auto& a, const auto& b) { return stamp(a.second) < stamp(b.second); });
        map.erase(oldest);
    }

    std::mutex mutex;
    std::map<std::string, Discovered> servers;  // by the MCP server's URL
    std::map<std::string, std::pair<json::object, adk::Clock::time_point>> clients;  // client_key
};

OAuthServerCache::OAuthServerCache(std::chrono::seconds metadata_ttl) : impl_(std::make_unique<Impl>(metadata_ttl)) {}

OAuthServerCache::~OAuthServerCache() = default;

std::shared_ptr<TokenStore> in_memory_token_store()
{
    return std::make_shared<InMemoryTokenStore>();
}

std::shared_ptr<TokenStore> credential_token_store(std::shared_ptr<CredentialService> credentials, std::string app_name,
                                                   std::string user_id)
{
    if (!credentials)
        throw Error(errc::invalid_argument, "credential_token_store needs a CredentialService");
    return std::make_shared<CredentialTokenStore>(std::move(credentials), std::move(app_name), std::move(user_id));
}

std::string authorization_answer_key(std::string_view server_url)
{
    // Sent to the client with the question: the URL's userinfo and query (which may hold secrets) left out. The
    // answer's state tells apart two servers that differ only there.
    return "mcp-oauth-answer " + net::redact_url(server_url);
}

json::object authorization_request(const std::string& server_url, const std::string& authorization_url)
{
    // The parameters the request repeats, decoded: made valid UTF-8, as JSON text must be (an authorization
    // endpoint from metadata may carry percent-escapes of its own).
    std::map<std::string, std::string> query = query_parameters(authorization_url);
    for (auto& [name, value] : query)
        value = net::to_valid_utf8(value);
    const std::string endpoint = authorization_url.substr(0, authorization_url.find('?'));
    json::object flows{{"authorizationCode", {{"authorizationUrl", endpoint}, {"tokenUrl", ""}, {"scopes", json::object()}}}};
    return json::object{
        {"authScheme", {{"type", "oauth2"}, {"flows", std::move(flows)}}},
        {"rawAuthCredential", {{"authType", "oauth2"}, {"oauth2", {{"clientId", query["client_id"]},
                                                                   {"redirectUri", query["redirect_uri"]}}}}},
        {"exchangedAuthCredential", {{"authType", "oauth2"}, {"oauth2", {{"authUri", authorization_url},
                                                                         {"state", query["state"]},
                                                                         {"redirectUri", query["redirect_uri"]}}}}},
        {"credentialKey", authorization_answer_key(server_url)}};
}

std::optional<std::string> authorization_answer(const json::object& answered)
{
    for (const char* credential : {"exchangedAuthCredential", "exchanged_auth_credential"}) {
        const json::value* c = answered.if_contains(credential);
        const json::value* oauth2 = c && c->is_object() ? c->get_object().if_contains("oauth2") : nullptr;
        if (!oauth2 || !oauth2->is_object())
            continue;
        for (const char* uri : {"authResponseUri", "auth_response_uri"})
            if (const json::value* v = oauth2->get_object().if_contains(uri); v && v->is_string() && !v->get_string().empty())
                return std::string(v->get_string());
    }
    return std::nullopt;
}

std::optional<BearerChallenge> parse_bearer_challenge(std::string_view header)
{
    if (header.size() > max_challenge_bytes)
        return std::nullopt;
    std::size_t i = 0;
    auto skip = [&](std::string_view chars) {
        while (i < header.size() && chars.find(header[i]) != std::string_view::npos)
            ++i;
    };
    auto token = [&] {
        const std::size_t start = i;
        while (i < header.size() && is_token_char(header[i]))
            ++i;
        return header.substr(start, i - start);
    };
    std::optional<BearerChallenge> bearer;
    while (i < header.size()) {
        skip(" \t,");
        const std::string_view scheme = token();
        if (scheme.empty()) {
            if (i < header.size())
                ++i;  // a stray character: skipped
            continue;
        }
        const bool is_bearer = lower(scheme) == "bearer";
        std::map<std::string, std::string> params;
        for (;;) {
            skip(" \t");
            const std::size_t param_start = i;
            const std::string_view name = token();
            skip(" \t");
            if (name.empty() || i >= header.size() || header[i] != '=') {
                i = param_start;  // not a parameter: the next challenge's scheme (a token68 reads as a parameter)
                break;
            }
            ++i;  // '='
            skip(" \t");
            std::string value;
            if (i < header.size() && header[i] == '"') {
                ++i;
                bool closed = false;
                while (i < header.size()) {
                    const char c = header[i++];
                    if (c == '"') {
                        closed = true;
                        break;
                    }
                    if (c == '\\' && i < header.size())
                        value += header[i++];
                    else
                        value += c;
                }
                if (!closed)
                    return std::nullopt;
            } else {
                const std::size_t start = i;
                while (i < header.size() && header[i] != ',' && header[i] != ' ' && header[i] != '\t')
                    ++i;
                value = std::string(header.substr(start, i - start));
            }
            params[lower(name)] = std::move(value);
            skip(" \t");
            if (i < header.size() && header[i] == ',') {
                ++i;
                continue;
            }
            break;
        }
        if (is_bearer && !bearer) {
            BearerChallenge b;
            b.scope = params["scope"];
            b.resource_metadata = params["resource_metadata"];
            b.error = params["error"];
            b.error_description = params["error_description"];
            bearer = std::move(b);
        }
    }
    return bearer;
}

std::vector<std::string> protected_resource_metadata_urls(std::string_view server_url)
{
    const net::Url url = net::parse_url(server_url);
    const std::string path = path_of(url);
    std::vector<std::string> out;
    if (!path.empty())
        out.push_back(url.origin() + "/.well-known/oauth-protected-resource" + path);
    out.push_back(url.origin() + "/.well-known/oauth-protected-resource");
    return out;
}

std::vector<std::string> authorization_server_metadata_urls(std::string_view issuer)
{
    const net::Url url = net::parse_url(issuer);
    const std::string path = path_of(url);
    if (path.empty())
        return {url.origin() + "/.well-known/oauth-authorization-server", url.origin() + "/.well-known/openid-configuration"};
    return {url.origin() + "/.well-known/oauth-authorization-server" + path,
            url.origin() + "/.well-known/openid-configuration" + path,
            url.origin() + path + "/.well-known/openid-configuration"};
}

bool resource_covers(std::string_view resource, std::string_view server_url)
{
    try {
        const net::Url r = net::parse_url(resource);
        const net::Url s = net::parse_url(server_url);
        if (r.origin() != s.origin() || resource.find('#') != std::string_view::npos)
            return false;
        const std::string rp = path_of(r);
        const std::string sp = path_of(s);
        return rp.empty() || sp == rp || sp.starts_with(rp + "/");
    } catch (const Error&) {
        return false;
    }
}

std::string pkce_challenge(std::string_view verifier)
{
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char*>(verifier.data()), verifier.size(), digest);
    return base64url(std::string_view(reinterpret_cast<const char*>(digest), sizeof digest));
}

std::string form_encode(const std::vector<std::pair<std::string, std::string>>& fields)
{
    std::string out;
    for (const auto& [name, value] : fields) {
        if (!out.empty())
            out += '&';
        out += net::encode_path_segment(name) + "=" + net::encode_path_segment(value);
    }
    return out;
}

std::map<std::string, std::string> query_parameters(std::string_view url)
{
    std::map<std::string, std::string> out;
    const auto q = url.find('?');
    if (q == std::string_view::npos)
        return out;
    std::string_view query = url.substr(q + 1);
    query = query.substr(0, query.find('#'));
    while (!query.empty()) {
        const std::string_view pair = query.substr(0, query.find('&'));
        query.remove_prefix(std::min(query.size(), pair.size() + 1));
        const auto eq = pair.find('=');
        std::string name(pair.substr(0, eq));
        std::string value(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1));
        for (std::string* s : {&name, &value})
            for (char& c : *s)
                c = c == '+' ? ' ' : c;
        out[net::percent_decode(name)] = net::percent_decode(value);
    }
    return out;
}

OAuthClient::OAuthClient(OAuthOptions options, std::string server_url, net::HttpClient& http)
    : options_(std::move(options)), server_url_(std::move(server_url)), http_(http)
{
    if (!options_.tokens)
        options_.tokens = in_memory_token_store();
    if (!options_.cache)
        options_.cache = std::make_shared<OAuthServerCache>();
}

asio::awaitable<void> OAuthClient::load()
{
    if (loaded_)
        co_return;
    loaded_ = true;
    if (std::optional<json::object> kept = co_await options_.tokens->load(server_url_))
        tokens_ = std::move(*kept);
    // A flow the person left unfinished past its time is not asked again: dropped with the next save.
    if (const json::value* pending = tokens_.if_contains("pending");
        pending && (!pending->is_object() || number_member(pending->get_object(), "expires_at") <= now_seconds()))
        tokens_.erase("pending");
}

std::string OAuthClient::bearer() const
{
    const std::string access = string_member(tokens_, "access_token");
    return access.empty() ? std::string() : "Bearer " + access;
}

bool OAuthClient::expiring() const
{
    const json::value* expires = tokens_.if_contains("expires_at");
    return expires && expires->is_int64() && !string_member(tokens_, "refresh_token").empty() &&
           !string_member(tokens_, "access_token").empty() &&
           now_seconds() + refresh_margin_seconds >= expires->get_int64();
}

asio::awaitable<std::optional<json::object>> OAuthClient::get_json(const std::string& url)
{
    net::HttpRequest req("GET", url);
    req.set("accept", "application/json");
    net::HttpResponse res = co_await http_.send(std::move(req));
    std::string body = co_await res.read_all(max_metadata_bytes);
    if (!res.ok())
        co_return std::nullopt;
    boost::system::error_code ec;
    json::value v = json::parse(body, ec);
    if (ec || !v.is_object())
        co_return std::nullopt;
    co_return std::move(v.get_object());
}

asio::awaitable<json::object> OAuthClient::post_form(const std::string& url,
                                                     std::vector<std::pair<std::string, std::string>> form,
                                                     const std::string& basic, std::string_view what)
{
    net::HttpRequest req("POST", url);
    req.set("content-type", "application/x-www-form-urlencoded");
    req.set("accept", "application/json");
    if (!basic.empty())
        req.set("authorization", basic);
    req.body = form_encode(form);
    net::HttpResponse res = co_await http_.send(std::move(req));
    std::string body = co_await res.read_all(max_metadata_bytes);
    boost::system::error_code ec;
    json::value v = json::parse(body, ec);
    const json::object* o = ec ? nullptr : v.if_object();
    token_error_.clear();
    if (!res.ok() || !o) {
        token_error_ = o ? string_member(*o, "error") : std::string();
        std::string said = token_error_;
        if (o && !string_member(*o, "error_description").empty())
            said += ": " + string_member(*o, "error_description");
        throw Error(errc::unavailable, std::string(what) + " at " + net::redact_url(url) + " answered HTTP " +
                                           std::to_string(res.status()) + (said.empty() ? "" : " (" + said + ")"));
    }
    if (string_member(*o, "access_token").empty())
        throw Error(errc::bad_response, std::string(what) + " at " + net::redact_url(url) + " gave no access_token");
    const std::string type = lower(string_member(*o, "token_type"));
    if (!type.empty() && type != "bearer")
        throw Error(errc::bad_response, std::string(what) + " gave a token of type " + type + ", not Bearer");
    co_return *o;
}

asio::awaitable<void> OAuthClient::save()
{
    co_await options_.tokens->save(server_url_, tokens_);
}

namespace {

// The client's credentials at the token endpoint, as its method says: the form fields, and a Basic header.
std::string client_auth(const json::object& tokens, std::vector<std::pair<std::string, std::string>>& form)
{
    const std::string method = string_member(tokens, "auth_method");
    const std::string id = string_member(tokens, "client_id");
    const std::string secret = string_member(tokens, "client_secret");
    if (method == "client_secret_basic")
        return "Basic " + base64(net::encode_path_segment(id) + ":" + net::encode_path_segment(secret));
    form.emplace_back("client_id", id);
    if (method == "client_secret_post")
        form.emplace_back("client_secret", secret);
    return std::string();
}

// Takes a token response into `tokens`.
void take_tokens(json::object& tokens, const json::object& answer)
{
    tokens["access_token"] = answer.at("access_token");
    if (const json::value* r = answer.if_contains("refresh_token"); r && r->is_string())
        tokens["refresh_token"] = *r;
    tokens.erase("expires_at");
    if (const json::value* e = answer.if_contains("expires_in"); e && e->is_number()) {
        boost::system::error_code ec;
        const auto seconds = e->to_number<std::int64_t>(ec);
        if (!ec && seconds > 0)
            tokens["expires_at"] = now_seconds() + seconds;
    }
    if (const json::value* s = answer.if_contains("scope"); s && s->is_string())
        tokens["scope"] = *s;
}

// The token endpoint auth method: the registered one, else the best the server supports for this client.
std::string auth_method(const std::vector<std::string>& supported, bool has_secret)
{
    if (!has_secret)
        return "none";
    if (supported.empty() || contains(supported, "client_secret_basic"))
        return "client_secret_basic";
    if (contains(supported, "client_secret_post"))
        return "client_secret_post";
    return contains(supported, "none") ? "none" : "client_secret_basic";
}

}  // namespace

asio::awaitable<bool> OAuthClient::refresh()
{
    const std::string refresh_token = string_member(tokens_, "refresh_token");
    const std::string endpoint = string_member(tokens_, "token_endpoint");
    if (refresh_token.empty() || endpoint.empty())
        co_return false;
    std::vector<std::pair<std::string, std::string>> form{{"grant_type", "refresh_token"},
                                                          {"refresh_token", refresh_token}};
    if (const std::string resource = string_member(tokens_, "resource"); !resource.empty())
        form.emplace_back("resource", resource);
    const std::string basic = client_auth(tokens_, form);
    try {
        json::object answer = co_await post_form(endpoint, std::move(form), basic, "the token refresh");
        take_tokens(tokens_, answer);
    } catch (const Error& e) {
        log(LogLevel::info, "the MCP server at " + net::redact_url(server_url_) + ": " + e.message() +
                                "; authorizing again");
        tokens_.erase("access_token");
        tokens_.erase("refresh_token");
        co_return false;
    }
    co_await save();
    co_return true;
}

asio::awaitable<void> OAuthClient::authorize(unsigned status, std::string_view www_authenticate)
{
    const std::string server = "the MCP server at " + net::redact_url(server_url_);
    const BearerChallenge challenge = parse_bearer_challenge(www_authenticate).value_or(BearerChallenge());
    if (status == 401 && challenge.error != "insufficient_scope" && co_await refresh())
        co_return;
    if (!options_.authorize)
        throw Error(errc::unavailable, server + " asks for OAuth authorization (HTTP " + std::to_string(status) +
                                           "): give its toolset an OAuthOptions::authorize handler, or a token in "
                                           "its headers");
    // A flow the person has not finished is asked again, as it was: their answer may come in a later request.
    json::object flow;
    if (const json::value* kept = tokens_.if_contains("pending"); kept && kept->is_object() && status == 401 &&
                                                                  kept->get_object().contains("url") &&
                                                                  number_member(kept->get_object(), "expires_at") > now_seconds())
        flow = kept->get_object();
    else
        flow = co_await prepare(challenge);
    tokens_["pending"] = flow;
    co_await save();
    std::string callback = co_await options_.authorize(string_member(flow, "url"));
    tokens_.erase("pending");
    co_await complete(flow, callback);
}

asio::awaitable<std::pair<json::object, json::object>> OAuthClient::discover(const BearerChallenge& challenge)
{
    OAuthServerCache::Impl& cache = *options_.cache->impl_;
    if (std::optional<OAuthServerCache::Impl::Discovered> kept = cache.discovered(server_url_))
        co_return std::pair(std::move(kept->resource_metadata), std::move(kept->server_metadata));
    const std::string server = "the MCP server at " + net::redact_url(server_url_);
    // The protected resource and its authorization server.
    std::optional<json::object> prm;
    if (!challenge.resource_metadata.empty()) {
        // The 401 names where the server's metadata is: fetched only at the server's own origin, so that a server
        // cannot send the client to any URL it likes (another host, this machine's own services).
        const net::Url named = net::parse_url(challenge.resource_metadata);  // throws for what is not http(s)
        if (named.origin() == net::parse_url(server_url_).origin())
            prm = co_await get_json(challenge.resource_metadata);
        else
            log(LogLevel::warning, server + " named its resource metadata at " +
                                       net::redact_url(challenge.resource_metadata) +
                                       ", another origin than its own: not fetched; its well-known URLs are read instead");
    }
    for (const std::string& url : protected_resource_metadata_urls(server_url_)) {
        if (prm)
            break;
        prm = co_await get_json(url);
    }
    if (!prm) {
        // A server of 2025-03-26, before protected resource metadata: its own origin is the authorization server.
        prm = json::object{{"resource", server_url_},
                           {"authorization_servers", json::array{json::value(net::parse_url(server_url_).origin())}}};
    }
    if (string_member(*prm, "resource").empty())
        (*prm)["resource"] = server_url_;
    if (!resource_covers(string_member(*prm, "resource"), server_url_))
        throw Error(errc::bad_response, server + ": its protected resource metadata names the resource " +
                                            net::redact_url(string_member(*prm, "resource")) +
                                            ", which is not this server; refused");
    const std::vector<std::string> issuers = strings_member(*prm, "authorization_servers");
    if (issuers.empty())
        throw Error(errc::bad_response, server + ": its protected resource metadata names no authorization server");
    const std::string issuer = issuers.front();
    std::optional<json::object> meta;
    for (const std::string& url : authorization_server_metadata_urls(issuer)) {
        meta = co_await get_json(url);
        if (meta && !string_member(*meta, "authorization_endpoint").empty() &&
            !string_member(*meta, "token_endpoint").empty())
            break;
        meta.reset();
    }
    if (!meta) {
        // Servers of 2025-03-26 may publish no metadata: the default endpoints at the issuer's origin.
        const std::string origin = net::parse_url(issuer).origin();
        meta = json::object{{"authorization_endpoint", origin + "/authorize"},
                            {"token_endpoint", origin + "/token"},
                            {"registration_endpoint", origin + "/register"}};
    }
    const std::vector<std::string> pkce_methods = strings_member(*meta, "code_challenge_methods_supported");
    if (meta->contains("code_challenge_methods_supported") && !contains(pkce_methods, "S256"))
        throw Error(errc::bad_response, server + ": its authorization server does not support PKCE with S256; refused");
    (void)net::parse_url(string_member(*meta, "authorization_endpoint"));
    (void)net::parse_url(string_member(*meta, "token_endpoint"));
    OAuthServerCache::Impl::Discovered found;
    found.resource_metadata = *prm;
    found.server_metadata = *meta;
    found.read_at = adk::Clock::now();
    cache.keep_discovered(server_url_, std::move(found));
    co_return std::pair(std::move(*prm), std::move(*meta));
}

asio::awaitable<json::object> OAuthClient::registered_client(const json::object& meta)
{
    OAuthServerCache::Impl& cache = *options_.cache->impl_;
    const std::string key =
        OAuthServerCache::Impl::client_key(string_member(meta, "token_endpoint"), options_.redirect_uri);
    if (std::optional<json::object> kept = cache.client(key))
        co_return std::move(*kept);
    const std::string registration = string_member(meta, "registration_endpoint");
    if (registration.empty())
        throw Error(errc::unavailable, "the MCP server at " + net::redact_url(server_url_) +
                                           ": its authorization server takes no dynamic registration; register a "
                                           "client there and give its client_id in OAuthOptions");
    const std::vector<std::string> methods = strings_member(meta, "token_endpoint_auth_methods_supported");
    const std::string wanted = contains(methods, "none") && methods.size() == 1 ? "none" : auth_method(methods, true);
    json::object body{{"client_name", options_.client_name},
                      {"redirect_uris", json::array{json::value(options_.redirect_uri)}},
                      {"grant_types", json::array{"authorization_code", "refresh_token"}},
                      {"response_types", json::array{"code"}},
                      {"token_endpoint_auth_method", wanted}};
    net::HttpRequest req("POST", registration);
    req.set("content-type", "application/json");
    req.set("accept", "application/json");
    req.body = json::serialize(body);
    net::HttpResponse res = co_await http_.send(std::move(req));
    std::string text = co_await res.read_all(max_metadata_bytes);
    boost::system::error_code ec;
    json::value answer = json::parse(text, ec);
    if (!res.ok() || ec || !answer.is_object() || string_member(answer.get_object(), "client_id").empty())
        throw Error(errc::unavailable, "the MCP server at " + net::redact_url(server_url_) + ": registering a client at " +
                                           net::redact_url(registration) + " failed (HTTP " +
                                           std::to_string(res.status()) + ")");
    const json::object& registered = answer.get_object();
    json::object client;
    client["client_id"] = string_member(registered, "client_id");
    client["client_secret"] = string_member(registered, "client_secret");
    std::string method = string_member(registered, "token_endpoint_auth_method");
    if (method.empty())
        method = auth_method(methods, !string_member(registered, "client_secret").empty());
    client["auth_method"] = method;
    cache.keep_client(key, client);
    co_return client;
}

asio::awaitable<json::object> OAuthClient::prepare(const BearerChallenge& challenge)
{
    // Discovery and registration, one at a time among the server's clients: the second user takes the first's.
    AsyncMutex& gate = options_.cache->impl_->gate;
    co_await gate.lock();
    AsyncLockGuard unlock(gate);
    auto [prm, meta] = co_await discover(challenge);
    const std::string resource = string_member(prm, "resource");
    const std::string authorization_endpoint = string_member(meta, "authorization_endpoint");
    const std::string token_endpoint = string_member(meta, "token_endpoint");

    // The scopes: the challenge's, else the resource's, else none.
    std::string scope = challenge.scope;
    if (scope.empty())
        for (const std::string& s : strings_member(prm, "scopes_supported"))
            scope += (scope.empty() ? "" : " ") + s;

    // The client: the one given, a metadata document's URL, the one these tokens came from, or one registered.
    json::object client;
    const std::vector<std::string> methods = strings_member(meta, "token_endpoint_auth_methods_supported");
    const json::value* cimd = meta.if_contains("client_id_metadata_document_supported");
    if (!options_.client_id.empty()) {
        client["client_id"] = options_.client_id;
        client["client_secret"] = options_.client_secret;
        client["auth_method"] = auth_method(methods, !options_.client_secret.empty());
    } else if (cimd && cimd->is_bool() && cimd->get_bool() && !options_.client_metadata_url.empty()) {
        client["client_id"] = options_.client_metadata_url;
        client["auth_method"] = "none";
    } else if (string_member(tokens_, "token_endpoint") == token_endpoint && !string_member(tokens_, "client_id").empty()) {
        for (const char* k : {"client_id", "client_secret", "auth_method"})
            if (const json::value* v = tokens_.if_contains(k))
                client[k] = *v;
    } else {
        client = co_await registered_client(meta);
    }

    // The person's step, with PKCE and a state.
    const std::string verifier = random_text(48);
    const std::string state = random_text(24);
    std::vector<std::pair<std::string, std::string>> query{{"response_type", "code"},
                                                           {"client_id", string_member(client, "client_id")},
                                                           {"redirect_uri", options_.redirect_uri},
                                                           {"code_challenge", pkce_challenge(verifier)},
                                                           {"code_challenge_method", "S256"},
                                                           {"state", state},
                                                           {"resource", resource}};
    if (!scope.empty())
        query.emplace_back("scope", scope);
    const std::string url = authorization_endpoint +
                            (authorization_endpoint.find('?') == std::string::npos ? "?" : "&") + form_encode(query);
    json::object flow = client;
    flow["url"] = url;
    flow["state"] = state;
    flow["verifier"] = verifier;
    flow["redirect_uri"] = options_.redirect_uri;
    flow["token_endpoint"] = token_endpoint;
    flow["resource"] = resource;
    flow["expires_at"] = now_seconds() + pending_flow_seconds;
    co_return flow;
}

asio::awaitable<void> OAuthClient::complete(const json::object& flow, std::string_view callback)
{
    const std::string server = "the MCP server at " + net::redact_url(server_url_);
    std::map<std::string, std::string> back = query_parameters(callback);
    if (!back["error"].empty())
        throw Error(errc::unavailable, server + ": authorization was refused: " + back["error"] +
                                           (back["error_description"].empty() ? "" : " (" + back["error_description"] + ")"));
    if (back["state"] != string_member(flow, "state"))
        throw Error(errc::bad_response, server + ": the authorization's answer carries another state; refused");
    if (back["code"].empty())
        throw Error(errc::bad_response, server + ": the authorization's answer carries no code");

    // The code for tokens, sent with the redirect URI the browser came back to: a client may set its own (ADK's
    // web UI sends the person back to its /dev-ui/ page), and the token endpoint wants the one authorized.
    json::object tokens;
    for (const char* k : {"client_id", "client_secret", "auth_method", "token_endpoint", "resource"})
        if (const json::value* v = flow.if_contains(k))
            tokens[k] = *v;
    const std::string token_endpoint = string_member(flow, "token_endpoint");
    const std::string resource = string_member(flow, "resource");
    std::string redirect = string_member(flow, "redirect_uri");
    if (const std::string base(callback.substr(0, callback.find_first_of("?#"))); !base.empty() &&
                                                                                  redirect.find('?') == std::string::npos)
        redirect = base;
    std::vector<std::pair<std::string, std::string>> form{{"grant_type", "authorization_code"},
                                                          {"code", back["code"]},
                                                          {"redirect_uri", redirect},
                                                          {"code_verifier", string_member(flow, "verifier")},
                                                          {"resource", resource}};
    const std::string basic = client_auth(tokens, form);
    std::optional<json::object> answer;
    std::exception_ptr failure;
    try {
        answer = co_await post_form(token_endpoint, std::move(form), basic, "the token request");
    } catch (const Error&) {
        failure = std::current_exception();
    }
    if (failure) {
        // The authorization server no longer knows the client (it forgot its registrations): the next flow,
        // this user's or another's, registers again, and the flow kept with the old client is not asked again.
        if (token_error_ == "invalid_client") {
            options_.cache->impl_->forget_client(
                OAuthServerCache::Impl::client_key(token_endpoint, string_member(flow, "redirect_uri")));
            for (const char* k : {"client_id", "client_secret", "auth_method", "pending"})
                tokens_.erase(k);
            co_await save();
        }
        std::rethrow_exception(failure);
    }
    take_tokens(tokens, *answer);
    tokens_ = std::move(tokens);
    loaded_ = true;
    co_await save();
}

}  // namespace adk::mcp
