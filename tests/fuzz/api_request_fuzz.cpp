// The API server's router and body decoding (server/src): any request a client sends (method, target,
// headers, body) gets exactly one answer, never a crash or a 500, and an error answer is JSON that says what
// was wrong. The input is the request as text: "METHOD TARGET", header lines "name: value", an empty line,
// the body (a Host of the server's own is added when none is given). Requests pass the server's head check and
// run through ApiServer's handler on an io_context, against SQLite sessions, in-memory
// artifacts and an agent that answers without a model. And what a request stored reads back and writes again:
// after each request, every session of the user it names is read (GET answers 200), imported again as a new
// session (200), and that copy reads back with the same state and as many events.
#include "api_impl.hpp"

#include "fuzz.hpp"

#include <adk/adk.hpp>
#include <adk/core/json_limits.hpp>
#include <adk/net/url.hpp>
#include <adk/sqlite/sqlite_session_service.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

// Keeps what the handler answers.
class Recorder final : public adk::net::ResponseWriter {
public:
    void close() override {}
    void watch_client() override {}
    unsigned status = 0;
    std::string body;
    int heads = 0;

protected:
    asio::awaitable<void> write_head(unsigned status_, std::string_view, const adk::net::HeaderList&,
                                     const std::string_view* whole) override
    {
        status = status_;
        ++heads;
        if (whole)
            body = *whole;
        co_return;
    }
    asio::awaitable<void> write_chunk(std::string_view data, bool) override
    {
        body += data;
        co_return;
    }
};

adk::server::ApiServer::Impl& server(asio::io_context& ioc)
{
    static adk::server::ApiServer::Impl impl = [&ioc] {
        auto answer = [](adk::CallbackContext&, adk::LlmRequest&) -> asio::awaitable<std::optional<adk::LlmResponse>> {
            co_return adk::LlmResponse::text("ok");
        };
        auto agent = adk::LlmAgent::builder("agent")
                         .model(std::make_shared<adk::testing::ScriptedModel>(std::vector<adk::testing::ScriptedModel::Turn>{}))
                         .before_model_callback(answer)
                         .build();
        adk::server::ApiServerOptions options;
        options.session_service = std::make_shared<adk::sqlite::SqliteSessionService>(":memory:");
        options.artifact_service = std::make_shared<adk::InMemoryArtifactService>();
        options.http.single_threaded = true;
        options.run_grace = std::chrono::milliseconds(0);  // a finished run is forgotten at once
        options.max_inline_data_bytes = 64;
        options.allow_imported_calls = true;  // the round trip imports whatever a session holds
        return adk::server::ApiServer::Impl(ioc.get_executor(), {{"app", agent}}, options);
    }();
    return impl;
}

// One request through the handler, answered.
Recorder handle(asio::io_context& ioc, std::string method, std::string target, std::string body = {})
{
    adk::net::IncomingRequest req;
    req.method = std::move(method);
    req.target = std::move(target);
    req.body = std::move(body);
    Recorder res;
    bool threw = false;
    asio::co_spawn(ioc, server(ioc).handle(req, res), [&threw](std::exception_ptr e) { threw = e != nullptr; });
    ioc.restart();
    ioc.run();
    adk::fuzz::check(!threw && res.heads == 1, "the handler answers once; it does not throw");
    return res;
}

json::value parse(const std::string& text)
{
    boost::system::error_code ec;
    json::value v = adk::parse_json(text, ec);
    adk::fuzz::check(!ec, "what the server answers is JSON it reads back");
    return v;
}

// The session's own keys of a state (not app: nor user:).
json::object own_keys(const json::value& state)
{
    json::object out;
    for (const auto& kv : state.as_object())
        if (!kv.key().starts_with("app:") && !kv.key().starts_with("user:"))
            out.emplace(kv.key(), kv.value());
    return out;
}

// Every session of `user` (the first few) reads back and writes again.
void round_trip(asio::io_context& ioc, const std::string& user)
{
    const std::string sessions = "/apps/app/users/" + user + "/sessions";
    Recorder listed = handle(ioc, "GET", sessions);
    if (listed.status == 400)
        return;  // a user id the server refuses in a path, and so in a body
    adk::fuzz::check(listed.status == 200, "a user's sessions are listed");
    const json::value list = parse(listed.body);
    std::size_t n = 0;
    for (const json::value& entry : list.as_array()) {
        if (++n > 3)
            break;
        const std::string id(entry.at("id").as_string());
        Recorder got = handle(ioc, "GET", sessions + "/" + adk::net::encode_path_segment(id));
        adk::fuzz::check(got.status == 200, "a stored session reads back");
        json::value session = parse(got.body);
        // The copy goes to a user of its own (user: state is per user); app: state is shared, so only the
        // session's own keys are compared: replaying the events sets each to its last value again.
        static int copies = 0;
        const std::string copies_path = "/apps/app/users/round-trip-" + std::to_string(++copies) + "/sessions";
        json::value copy = json::object{{"state", own_keys(session.at("state"))}, {"events", session.at("events")}};
        Recorder again = handle(ioc, "POST", copies_path, json::serialize(copy));
        adk::fuzz::check(again.status == 200, "what a session holds is imported again");
        const json::value stored = parse(again.body);
        adk::fuzz::check(own_keys(stored.at("state")) == own_keys(session.at("state")), "the copy holds the same state");
        adk::fuzz::check(stored.at("events").as_array().size() == session.at("events").as_array().size(),
                         "the copy holds as many events");
        Recorder gone = handle(ioc, "DELETE", copies_path + "/" + std::string(stored.at("id").as_string()));
        adk::fuzz::check(gone.status == 204, "the copy is deleted");
    }
}

// The user a request names, as a path segment: in its path (/apps/app/users/{user}/...) or its body's
// "userId" (encoded).
std::string user_of(const adk::net::IncomingRequest& req)
{
    constexpr std::string_view prefix = "/apps/app/users/";
    if (req.target.rfind(prefix, 0) == 0) {
        const std::string rest = req.target.substr(prefix.size());
        return rest.substr(0, rest.find_first_of("/?"));
    }
    boost::system::error_code ec;
    json::value body = json::parse(req.body, ec);
    if (!ec && body.is_object())
        if (const json::value* user = body.as_object().if_contains("userId"); user && user->is_string())
            return adk::net::encode_path_segment(user->get_string());
    return {};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size)
{
    static asio::io_context ioc;
    std::string_view text = adk::fuzz::as_text(data, size);
    adk::net::IncomingRequest req;
    const auto line_end = text.find('\n');
    std::string_view first = text.substr(0, line_end);
    const auto space = first.find(' ');
    if (space == std::string_view::npos)
        return 0;
    req.method = std::string(first.substr(0, space));
    req.target = std::string(first.substr(space + 1));
    text = line_end == std::string_view::npos ? std::string_view() : text.substr(line_end + 1);
    while (!text.empty() && text.front() != '\n') {
        const auto end = text.find('\n');
        std::string_view line = text.substr(0, end);
        if (const auto colon = line.find(": "); colon != std::string_view::npos) {
            std::string name(line.substr(0, colon));  // as HttpServer hands them on: in lower case
            for (char& c : name)
                c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
            req.headers.emplace_back(std::move(name), std::string(line.substr(colon + 2)));
        }
        text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    }
    if (!text.empty())
        req.body = std::string(text.substr(1));

    if (req.header("host").empty())
        req.headers.emplace_back("host", "127.0.0.1:8000");
    Recorder res;
    adk::server::ApiServer::Impl& impl = server(ioc);
    // As HttpServer does: the head check first, and a refused request goes no further.
    if (std::optional<adk::net::Refusal> refusal = impl.check_head(req)) {
        res.status = refusal->status;
        res.body = refusal->body;
        res.heads = 1;
    } else {
        bool threw = false;
        asio::co_spawn(ioc, impl.handle(req, res), [&threw](std::exception_ptr e) { threw = e != nullptr; });
        ioc.restart();
        ioc.run();
        adk::fuzz::check(!threw, "the handler answers; it does not throw");
    }
    adk::fuzz::check(res.heads == 1, "one answer per request");
    adk::fuzz::check(res.status != 500, "no request makes the server fail");
    if (res.status >= 400) {
        boost::system::error_code ec;
        json::value error = json::parse(res.body, ec);
        adk::fuzz::check(!ec && error.is_object() && error.as_object().contains("error") &&
                             error.at("error").is_string(),
                         "an error answer is {\"error\": \"...\"}");
    }
    if (const std::string user = user_of(req); !user.empty() && !user.starts_with("round-trip"))
        round_trip(ioc, user);
    return 0;
}
