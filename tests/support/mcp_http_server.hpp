// A small MCP server over Streamable HTTP (and the old HTTP+SSE transport), in the test's own process, on adk's
// HttpServer over loopback: for the transport tests of adk::mcp (tests/integration/mcp_http_test.cpp), which need
// a server that misbehaves on cue. The protocol itself is judged by the official conformance suite and
// server-everything (tests/interop). Single-threaded: run its io_context on one thread.
//
// POST /mcp: initialize opens a session ("s-1", "s-2", ...); other requests need a live session (404 otherwise,
// 400 without one). tools/list gives: echo {text} (answered as JSON, or as SSE when `sse_answers`), cut (an SSE
// stream that ends after a priming event "id: cut-N, retry: 100"; the answer waits for a GET with that
// Last-Event-ID), cut_without_id (an SSE stream that ends with no event id), fail (HTTP 500), slow (SSE: a
// progress notification every 20 ms, for ever), changed (sends notifications/tools/list_changed on the GET
// stream, then answers). GET /mcp without Last-Event-ID is the server's own stream; DELETE /mcp ends a session.
// With `legacy`, POST /mcp answers 405 and the old transport is served: GET /mcp opens the stream, whose first
// event names the endpoint /messages, where each POST is answered 202 and its answer goes on the stream.
// With `oauth`, it is its own OAuth 2.1 authorization server too: a request to /mcp without the latest access
// token gets 401 naming its protected resource metadata; /authorize redirects at once with a code (PKCE checked
// at /token), /register registers, /token grants access tokens of `token_lifetime` seconds with refresh tokens.
#pragma once

#include <adk/mcp/jsonrpc.hpp>
#include <adk/mcp/oauth.hpp>
#include <adk/net/url.hpp>
#include <adk/net/http_server.hpp>

#include <boost/asio/experimental/channel.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace adk::test {

class McpHttpServer {
public:
    // What a request carried.
    class Seen {
    public:
        std::string http_method;
        std::string mcp_method;  // of a POSTed request or notification; "" for GET and DELETE
        std::string session;
        std::string protocol;
        std::string last_event_id;
        std::string bearer;  // its authorization header (oauth)
        std::string route;   // the authorization server's (oauth): prm, metadata, register, authorize, token
    };

    bool sse_answers = false;
    bool legacy = false;
    bool oauth = false;
    int token_lifetime = 3600;
    bool revoke_after_listing = false;  // revoke_tokens() once the next tools/list is answered
    // tools/list answers this many pages first, each one tool "pad<k>" with a description of padding bytes (what
    // a hostile server lists), then the tools below.
    // With oauth: the origin its 401 names its resource metadata at (its own when empty).
    std::string metadata_named_at;
    int padded_pages = 0;
    std::size_t padding = 0;
    std::vector<Seen> seen;
    std::map<std::string, int> grants;  // token grants made, by grant_type

    explicit McpHttpServer(boost::asio::any_io_executor executor)
        : server_(executor, options(), [this](net::IncomingRequest& req, net::ResponseWriter& res) {
              return handle(req, res);
          })
    {
        server_.start();
    }
    ~McpHttpServer() { server_.stop(); }

    std::string url() const { return server_.base_url() + "/mcp"; }
    void stop() { server_.stop(); }
    // The server forgets every session: their next requests get 404.
    void forget_sessions() { sessions_.clear(); }
    // Every token given is withdrawn (oauth): the next request gets 401, and refresh tokens are refused.
    void revoke_tokens()
    {
        access_tokens_.clear();
        refresh_tokens_.clear();
    }
    std::size_t count(std::string_view http_method, std::string_view mcp_method = {}) const
    {
        std::size_t n = 0;
        for (const Seen& s : seen)
            n += s.http_method == http_method && (mcp_method.empty() || s.mcp_method == mcp_method);
        return n;
    }
    std::size_t open_streams() const { return streams_.size(); }
    // Requests to a route of the authorization server (oauth): "prm", "metadata", "register", "token", ...
    std::size_t routed(std::string_view route) const
    {
        return static_cast<std::size_t>(
            std::count_if(seen.begin(), seen.end(), [&](const Seen& s) { return s.route == route; }));
    }
    // The authorization server forgets the clients it registered: their token requests get invalid_client.
    void forget_clients() { clients_.clear(); }

private:
    using Channel = boost::asio::experimental::channel<void(boost::system::error_code, std::string)>;
    using json_value = boost::json::value;

    static net::HttpServerOptions options()
    {
        net::HttpServerOptions o;
        o.single_threaded = true;
        return o;
    }

    static std::string frame(const std::string& data, const std::string& id = {}, int retry = 0)
    {
        std::string out;
        if (!id.empty())
            out += "id: " + id + "\n";
        if (retry > 0)
            out += "retry: " + std::to_string(retry) + "\n";
        return out + "data: " + data + "\n\n";
    }

    static std::string answer(const json_value& id, boost::json::object result)
    {
        return boost::json::serialize(boost::json::object{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
    }

    static boost::json::object text_result(const std::string& text)
    {
        return {{"content", boost::json::array{boost::json::object{{"type", "text"}, {"text", text}}}}};
    }

    static boost::json::object tools()
    {
        boost::json::array list;
        for (const char* name : {"echo", "cut", "cut_without_id", "fail", "slow", "changed"})
            list.push_back(boost::json::object{{"name", name},
                                               {"description", std::string("the test tool ") + name},
                                               {"inputSchema", boost::json::object{{"type", "object"}}}});
        return {{"tools", std::move(list)}};
    }

    // The page of tools/list that `params` asks for (its cursor "<k>": the k-th padded page).
    boost::json::object page(const boost::json::value& params) const
    {
        int k = 0;
        if (const boost::json::value* cursor = params.is_object() ? params.get_object().if_contains("cursor") : nullptr)
            k = std::stoi(std::string(cursor->as_string()));
        if (k >= padded_pages)
            return tools();
        boost::json::array list{boost::json::object{{"name", "pad" + std::to_string(k)},
                                                    {"description", std::string(padding, 'd')},
                                                    {"inputSchema", boost::json::object{{"type", "object"}}}}};
        return {{"tools", std::move(list)}, {"nextCursor", std::to_string(k + 1)}};
    }

    // Writes what arrives on `channel` to the stream until the client leaves or the server stops.
    static boost::asio::awaitable<void> pump(net::ResponseWriter& res, std::shared_ptr<Channel> channel)
    {
        for (;;) {
            std::string data = co_await channel->async_receive(boost::asio::use_awaitable);
            co_await res.write(data);
        }
    }

    boost::asio::awaitable<void> handle(net::IncomingRequest& req, net::ResponseWriter& res)
    {
        Seen s;
        s.http_method = req.method;
        s.session = std::string(req.header("mcp-session-id"));
        s.protocol = std::string(req.header("mcp-protocol-version"));
        s.last_event_id = std::string(req.header("last-event-id"));
        boost::system::error_code ec;
        json_value body = req.body.empty() ? json_value() : boost::json::parse(req.body, ec);
        const boost::json::object* message = body.if_object();
        if (message && message->contains("method") && message->at("method").is_string())
            s.mcp_method = std::string(message->at("method").get_string());
        seen.push_back(s);
        const bool messages_endpoint = req.target.starts_with("/messages");
        if (oauth) {
            if (std::optional<std::string> answered = co_await authorization_server(req, res)) {
                seen.back().route = *answered;
                co_return;
            }
            const std::string bearer(req.header("authorization"));
            seen.back().bearer = bearer;
            if (!bearer.starts_with("Bearer ") || !access_tokens_.contains(bearer.substr(7))) {
                const net::HeaderList challenge{
                    {"www-authenticate", "Bearer resource_metadata=\"" +
                                             (metadata_named_at.empty() ? server_.base_url() : metadata_named_at) +
                                             "/.well-known/oauth-protected-resource/mcp\""}};
                co_return co_await res.send(401, "application/json", R"({"error": "invalid_token"})", challenge);
            }
        }

        if (req.method == "GET")
            co_return co_await get(res, s);
        if (req.method == "DELETE") {
            sessions_.erase(s.session);
            co_return co_await res.send(200, "application/json", "{}");
        }
        if (legacy && !messages_endpoint)
            co_return co_await res.send(405, "application/json", R"({"error": "POST is not served here"})");
        if (!message)
            co_return co_await res.send(400, "application/json", R"({"error": "not JSON"})");
        const json_value* id = message->if_contains("id");
        if (legacy) {
            // The old transport: accepted here, answered on the stream.
            co_await res.send(202, "application/json", "");
            if (id && s.mcp_method == "initialize")
                deliver_legacy(answer(*id, initialize_result()));
            else if (id && s.mcp_method == "tools/list")
                deliver_legacy(answer(*id, tools()));
            else if (id && s.mcp_method == "tools/call")
                deliver_legacy(answer(*id, text_result("legacy echo")));
            co_return;
        }
        if (s.mcp_method == "initialize") {
            const std::string session = "s-" + std::to_string(++sessions_made_);
            sessions_.insert(session);
            const net::HeaderList headers{{"mcp-session-id", session}};
            const std::string initialized = answer(*id, initialize_result());
            co_return co_await res.send(200, "application/json", initialized, headers);
        }
        if (s.session.empty())
            co_return co_await res.send(400, "application/json", R"({"error": "no session id"})");
        if (!sessions_.contains(s.session))
            co_return co_await res.send(404, "application/json", R"({"error": "no such session"})");
        if (!id || s.mcp_method.empty())  // a notification or a response
            co_return co_await res.send(202, "application/json", "");
        if (s.mcp_method != "tools/call") {
            if (s.mcp_method == "tools/list" && std::exchange(revoke_after_listing, false))
                revoke_tokens();
            const std::string listed =
                answer(*id, s.mcp_method == "tools/list" ? page(message->at("params")) : boost::json::object());
            co_return co_await res.send(200, "application/json", listed);
        }
        const std::string tool(message->at("params").at("name").as_string());
        co_await call(res, *id, tool, message->at("params"));
    }

    boost::asio::awaitable<void> call(net::ResponseWriter& res, const json_value& id, const std::string& tool,
                                      const json_value& params)
    {
        if (tool == "fail")
            co_return co_await res.send(500, "text/plain", "the tool broke, by request");
        if (tool == "echo") {
            const json_value* args = params.as_object().if_contains("arguments");
            const json_value* text = args && args->is_object() ? args->as_object().if_contains("text") : nullptr;
            const std::string said = text && text->is_string() ? std::string(text->get_string()) : "";
            const std::string body = answer(id, text_result("echo " + said));
            if (!sse_answers)
                co_return co_await res.send(200, "application/json", body);
            co_await res.begin_stream(200, "text/event-stream");
            const std::string priming = frame("", "e-" + std::to_string(++events_));
            co_await res.write(priming);
            const std::string chunk = frame(body, "e-" + std::to_string(++events_));
            co_await res.write(chunk);
            co_return co_await res.end_stream();
        }
        if (tool == "cut") {
            const std::string event = "cut-" + std::to_string(++events_);
            kept_[event] = answer(id, text_result("resumed"));
            co_await res.begin_stream(200, "text/event-stream");
            const std::string chunk = frame("", event, 100);
            co_await res.write(chunk);
            co_return co_await res.end_stream();
        }
        if (tool == "cut_without_id") {
            co_await res.begin_stream(200, "text/event-stream");
            const std::string chunk = frame(R"({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "working"}})");
            co_await res.write(chunk);
            co_return co_await res.end_stream();
        }
        if (tool == "changed") {
            deliver_own(R"({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})");
            const std::string body = answer(id, text_result("changed"));
            co_return co_await res.send(200, "application/json", body);
        }
        // slow: progress for ever, until the client leaves or the server stops.
        co_await res.begin_stream(200, "text/event-stream");
        boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
        const json_value* meta = params.as_object().if_contains("_meta");
        const json_value token = meta && meta->is_object() && meta->as_object().contains("progressToken")
                                     ? meta->as_object().at("progressToken")
                                     : json_value(0);
        for (int step = 1;; ++step) {
            boost::json::object progress{{"jsonrpc", "2.0"},
                                         {"method", "notifications/progress"},
                                         {"params", boost::json::object{{"progressToken", token}, {"progress", step}}}};
            const std::string chunk = frame(boost::json::serialize(progress));
            co_await res.write(chunk);
            timer.expires_after(std::chrono::milliseconds(20));
            co_await timer.async_wait(boost::asio::use_awaitable);
        }
    }

    boost::asio::awaitable<void> get(net::ResponseWriter& res, const Seen& s)
    {
        if (legacy) {
            auto channel = std::make_shared<Channel>(co_await boost::asio::this_coro::executor, 64);
            legacy_stream_ = channel;
            co_await res.begin_stream(200, "text/event-stream");
            co_await res.write("event: endpoint\ndata: /messages?session=legacy-1\n\n");
            co_return co_await pump(res, channel);
        }
        if (!sessions_.contains(s.session))
            co_return co_await res.send(404, "application/json", R"({"error": "no such session"})");
        if (!s.last_event_id.empty()) {
            auto kept = kept_.find(s.last_event_id);
            if (kept == kept_.end())
                co_return co_await res.send(404, "application/json", R"({"error": "no such event"})");
            co_await res.begin_stream(200, "text/event-stream");
            const std::string chunk = frame(kept->second, s.last_event_id + "-answer");
            co_await res.write(chunk);
            kept_.erase(kept);
            co_return co_await res.end_stream();
        }
        auto channel = std::make_shared<Channel>(co_await boost::asio::this_coro::executor, 64);
        streams_.insert(channel);
        co_await res.begin_stream(200, "text/event-stream");
        try {
            co_await pump(res, channel);
        } catch (...) {
            streams_.erase(channel);
            throw;
        }
    }

    // The authorization server's routes; nothing when the request is for another.
    boost::asio::awaitable<std::optional<std::string>> authorization_server(net::IncomingRequest& req,
                                                                           net::ResponseWriter& res)
    {
        const std::string base = server_.base_url();
        const std::string path = req.target.substr(0, req.target.find('?'));
        if (req.method == "GET" && path == "/.well-known/oauth-protected-resource/mcp") {
            boost::json::object prm{{"resource", base + "/mcp"}, {"authorization_servers", boost::json::array{base}}};
            const std::string body = boost::json::serialize(prm);
            co_await res.send(200, "application/json", body);
            co_return "prm";
        }
        if (req.method == "GET" && path == "/.well-known/oauth-authorization-server") {
            boost::json::object meta{{"issuer", base},
                                     {"authorization_endpoint", base + "/authorize"},
                                     {"token_endpoint", base + "/token"},
                                     {"registration_endpoint", base + "/register"},
                                     {"code_challenge_methods_supported", boost::json::array{"S256"}},
                                     {"token_endpoint_auth_methods_supported", boost::json::array{"none"}}};
            const std::string body = boost::json::serialize(meta);
            co_await res.send(200, "application/json", body);
            co_return "metadata";
        }
        if (req.method == "POST" && path == "/register") {
            const std::string client_id = "client-" + std::to_string(++registered_);
            clients_.insert(client_id);
            co_await res.send(201, "application/json", R"({"client_id": ")" + client_id + R"("})");
            co_return "register";
        }
        if (req.method == "GET" && path == "/authorize") {
            auto q = mcp::query_parameters(req.target);
            const std::string code = "code-" + std::to_string(++codes_);
            challenges_[code] = q["code_challenge"];
            redirects_[code] = q["redirect_uri"];
            const net::HeaderList location{
                {"location", q["redirect_uri"] + "?code=" + code + "&state=" + net::encode_path_segment(q["state"])}};
            co_await res.send(302, "text/plain", "", location);
            co_return "authorize";
        }
        if (req.method == "POST" && path == "/token") {
            auto form = mcp::query_parameters("?" + req.body);
            const std::string grant = form["grant_type"];
            const bool good = grant == "authorization_code"
                                  ? challenges_.contains(form["code"]) &&
                                        mcp::pkce_challenge(form["code_verifier"]) == challenges_[form["code"]] &&
                                        redirects_[form["code"]] == form["redirect_uri"]
                                  : grant == "refresh_token" && refresh_tokens_.erase(form["refresh_token"]) == 1;
            if (!clients_.contains(form["client_id"])) {
                co_await res.send(401, "application/json", R"({"error": "invalid_client"})");
                co_return "token";
            }
            if (!good) {
                co_await res.send(400, "application/json", R"({"error": "invalid_grant"})");
                co_return "token";
            }
            ++grants[grant];
            challenges_.erase(form["code"]);  // a code is good once
            const std::string access_token = "at-" + std::to_string(++tokens_);
            const std::string refresh_token = "rt-" + std::to_string(tokens_);
            access_tokens_.insert(access_token);
            refresh_tokens_.insert(refresh_token);
            boost::json::object answer{{"access_token", access_token},
                                       {"token_type", "Bearer"},
                                       {"expires_in", token_lifetime},
                                       {"refresh_token", refresh_token}};
            const std::string body = boost::json::serialize(answer);
            co_await res.send(200, "application/json", body);
            co_return "token";
        }
        co_return std::nullopt;
    }

    static boost::json::object initialize_result()
    {
        return {{"protocolVersion", "2025-11-25"},
                {"capabilities", boost::json::object{{"tools", boost::json::object{{"listChanged", true}}}}},
                {"serverInfo", boost::json::object{{"name", "mcp-http-test-server"}, {"version", "1"}}}};
    }

    void deliver_own(const std::string& message)
    {
        for (const auto& channel : streams_)
            channel->try_send(boost::system::error_code{}, frame(message));
    }

    void deliver_legacy(const std::string& message)
    {
        if (legacy_stream_)
            legacy_stream_->try_send(boost::system::error_code{}, "event: message\n" + frame(message));
    }

    net::HttpServer server_;
    std::set<std::string> sessions_;
    int sessions_made_ = 0;
    int events_ = 0;
    std::map<std::string, std::string> kept_;  // answers of cut streams, by the event id to resume from
    std::set<std::shared_ptr<Channel>> streams_;
    std::shared_ptr<Channel> legacy_stream_;
    int codes_ = 0;
    int tokens_ = 0;
    int registered_ = 0;
    std::set<std::string> clients_;  // the client ids registered
    std::map<std::string, std::string> challenges_;  // PKCE challenges, by the code they came with
    std::map<std::string, std::string> redirects_;   // redirect URIs, by the code they came with
    std::set<std::string> access_tokens_;            // every one given stays good
    std::set<std::string> refresh_tokens_;           // each good once
};

}  // namespace adk::test
