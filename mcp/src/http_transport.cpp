#include <adk/mcp/http_transport.hpp>

#include <adk/core/clock.hpp>
#include <adk/core/error.hpp>
#include <adk/core/log.hpp>
#include <adk/core/wakeup.hpp>
#include <adk/mcp/jsonrpc.hpp>
#include <adk/net/sse_reader.hpp>
#include <adk/net/url.hpp>

#include "ascii.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>

#include <deque>
#include <map>
#include <set>

namespace adk::mcp {

namespace json = boost::json;

namespace {

constexpr std::size_t max_error_body_bytes = 64 << 10;
constexpr std::size_t max_session_id_bytes = 1024;
constexpr std::chrono::milliseconds delete_timeout{2000};

bool is_event_stream(const net::HttpResponse& res)
{
    return lower(res.header("content-type")).starts_with("text/event-stream");
}

// A session id as the spec allows it: visible ASCII (0x21 to 0x7E), and not absurdly long.
bool valid_session_id(std::string_view id)
{
    if (id.empty() || id.size() > max_session_id_bytes)
        return false;
    for (char c : id)
        if (c < 0x21 || c > 0x7e)
            return false;
    return true;
}

// What an error body says, for an error message: a JSON-RPC error's message, or the start of the text.
std::string error_text(std::string_view body)
{
    boost::system::error_code ec;
    json::value v = json::parse(body, ec);
    if (!ec && v.is_object())
        if (const json::value* e = v.get_object().if_contains("error"); e && e->is_object())
            if (const json::value* m = e->get_object().if_contains("message"); m && m->is_string())
                return std::string(m->get_string());
    std::string text = net::to_valid_utf8(body.substr(0, 200));
    for (char& c : text)
        if (static_cast<unsigned char>(c) < 0x20)
            c = ' ';
    return text;
}

// Whether `text` (one message or a batch) holds the response to `id`.
bool answers(std::string_view text, const jsonrpc::Id& id)
{
    for (const jsonrpc::Item& item : jsonrpc::decode(text).items)
        if (const auto* r = std::get_if<jsonrpc::Response>(&item); r && r->id == id)
            return true;
    return false;
}

// An exception's message without the error code's own text and source location.
std::string reason(const std::exception& e)
{
    if (const auto* adk_error = dynamic_cast<const Error*>(&e))
        return adk_error->message();
    if (const auto* system = dynamic_cast<const boost::system::system_error*>(&e))
        return system->code().message();
    return e.what();
}

// What send() was given, as far as the transport cares.
class Outgoing {
public:
    explicit Outgoing(std::string_view text)
    {
        boost::system::error_code ec;
        json::value v = json::parse(text, ec);
        const json::object* o = ec ? nullptr : v.if_object();
        if (!o)
            return;
        if (const json::value* m = o->if_contains("method"); m && m->is_string())
            method = std::string(m->get_string());
        if (const json::value* i = o->if_contains("id"); i && !method.empty()) {
            if (i->is_int64())
                id = jsonrpc::Id(i->get_int64());
            else if (i->is_string())
                id = jsonrpc::Id(std::string(i->get_string()));
        }
    }
    std::string method;
    std::optional<jsonrpc::Id> id;  // set for a request
};

// One run of a task at a time (renewing the session, authorizing): whoever joins while it runs waits for its end
// instead of running it again. On the transport's strand.
class Flight {
public:
    // True for the caller that runs it (and must call done()); false, after it ended, for the others.
    asio::awaitable<bool> join(const asio::any_io_executor& executor)
    {
        if (!running_) {
            running_ = true;
            co_return true;
        }
        auto wake = std::make_shared<Wakeup>(executor);
        waiters_.push_back(wake);
        co_await wake->async_wait(asio::use_awaitable);
        co_return false;
    }
    void done()
    {
        running_ = false;
        for (auto& w : std::exchange(waiters_, {}))
            w->notify();
    }

private:
    bool running_ = false;
    std::vector<std::shared_ptr<Wakeup>> waiters_;
};

// Calls done() on every way out of the runner's part.
class FlightGuard {
public:
    explicit FlightGuard(Flight& flight) : flight_(flight) {}
    FlightGuard(const FlightGuard&) = delete;
    FlightGuard& operator=(const FlightGuard&) = delete;
    ~FlightGuard() { flight_.done(); }

private:
    Flight& flight_;
};

}  // namespace

HttpServerParams::HttpServerParams(std::string url_) : url(std::move(url_))
{
    http.retry.max_retries = 0;
}

class HttpTransport::Impl : public std::enable_shared_from_this<Impl> {
public:
    Impl(asio::any_io_executor executor, HttpServerParams params)
        : strand_(std::move(executor)), params_(std::move(params)), client_(params_.http),
          name_("MCP server at " + net::redact_url(params_.url))
    {
        if (params_.oauth)
            oauth_.emplace(*params_.oauth, params_.url, client_);
    }

    asio::awaitable<void> open()
    {
        try {
            (void)net::parse_url(params_.url);
            for (const auto& [header, value] : params_.headers)
                net::validate_header(header, value);
        } catch (const Error& e) {
            throw Error(errc::invalid_argument, "the " + name_ + ": " + e.message());
        }
        closed_ = false;
        co_return;
    }

    asio::awaitable<void> send(std::string text)
    {
        if (closed_ || !ended_.empty())
            throw Error(errc::unavailable, "the " + name_ + (closed_ ? " was closed" : " ended: " + ended_));
        Outgoing out(text);
        if (out.id) {
            if (out.method == "initialize")
                initialize_text_ = text;
            // The answer may take as long as the tool does: the exchange goes on beside the sender.
            spawn(exchange(shared_from_this(), std::move(text), *out.id, out.method));
            co_return;
        }
        // A notification or a response: the server accepts it (202) at once. Awaited, so that what follows
        // reaches the server after it (notifications/initialized before the first request).
        const bool initialized = out.method == "notifications/initialized";
        if (initialized)
            initialized_text_ = text;
        auto signal = std::make_shared<asio::cancellation_signal>();
        const std::uint64_t key = track(signal);
        std::exception_ptr failure;
        try {
            auto task = deliver_one_way(shared_from_this(), std::move(text));
            auto token = asio::bind_cancellation_slot(signal->slot(), asio::use_awaitable);
            co_await asio::co_spawn(strand_, std::move(task), std::move(token));
        } catch (...) {
            failure = std::current_exception();
        }
        tasks_.erase(key);
        if (failure && !closed_)
            std::rethrow_exception(failure);
        if (initialized && params_.listen && !listening_ && !legacy_) {
            listening_ = true;
            spawn(listen(shared_from_this()));
        }
    }

    asio::awaitable<std::optional<std::string>> receive()
    {
        for (;;) {
            if (!inbox_.empty()) {
                std::string text = std::move(inbox_.front());
                inbox_.pop_front();
                co_return text;
            }
            if (closed_ || !ended_.empty())
                co_return std::nullopt;
            auto wake = std::make_shared<Wakeup>(strand_);
            receiver_ = wake;
            co_await wake->async_wait(asio::use_awaitable);
        }
    }

    asio::awaitable<void> close()
    {
        if (closed_)
            co_return;
        closed_ = true;
        cancel_all();
        wake_receiver();
        std::string session = std::exchange(session_id_, std::string());
        if (session.empty() || legacy_)
            co_return;
        // DELETE ends the session on the server; a server that is gone or slow does not hold close() up.
        auto signal = std::make_shared<asio::cancellation_signal>();
        adk::Timer deadline(strand_, delete_timeout);
        deadline.async_wait([signal](boost::system::error_code ec) {
            if (!ec)
                signal->emit(asio::cancellation_type::terminal);
        });
        try {
            auto task = end_session(shared_from_this(), std::move(session));
            auto token = asio::bind_cancellation_slot(signal->slot(), asio::use_awaitable);
            co_await asio::co_spawn(strand_, std::move(task), std::move(token));
        } catch (const std::exception& e) {
            log(LogLevel::debug, "the " + name_ + ": DELETE of the session failed: " + reason(e));
        }
        deadline.cancel();
    }

    const std::string& name() const { return name_; }
    std::string diagnostics() const { return ended_; }
    const asio::any_io_executor& executor() const { return strand_; }
    // Dropped unclosed: whatever runs is cancelled, nothing is sent.
    void abandon()
    {
        closed_ = true;
        cancel_all();
        wake_receiver();
    }
    std::string session_id() const { return session_id_; }
    bool legacy() const { return legacy_; }

private:
    // --- the exchanges under way, cancelled by close() ---

    std::uint64_t track(std::shared_ptr<asio::cancellation_signal> signal)
    {
        const std::uint64_t key = ++next_task_;
        tasks_[key] = std::move(signal);
        return key;
    }

    void spawn(asio::awaitable<void> task)
    {
        auto signal = std::make_shared<asio::cancellation_signal>();
        const std::uint64_t key = track(signal);
        // The signal outlives the coroutine bound to its slot: the completion handler holds it.
        auto done = [self = shared_from_this(), key, signal](std::exception_ptr) { self->tasks_.erase(key); };
        asio::co_spawn(strand_, std::move(task), asio::bind_cancellation_slot(signal->slot(), std::move(done)));
    }

    void cancel_all()
    {
        auto tasks = std::move(tasks_);
        tasks_.clear();
        for (auto& [key, signal] : tasks) {
            (void)key;
            signal->emit(asio::cancellation_type::terminal);
        }
    }

    // --- what the connection reads ---

    void deliver(std::string text)
    {
        inbox_.push_back(std::move(text));
        wake_receiver();
    }

    void deliver_error(const jsonrpc::Id& id, std::string message)
    {
        deliver(jsonrpc::encode(jsonrpc::Response::failure(id, jsonrpc::RpcError(jsonrpc::code::internal_error,
                                                                                 std::move(message)))));
    }

    // The connection is over (initialize could not reach the server, the old transport's stream ended).
    void end(std::string why)
    {
        if (ended_.empty())
            ended_ = std::move(why);
        wake_receiver();
    }

    void wake_receiver()
    {
        if (auto r = std::exchange(receiver_, nullptr))
            r->notify();
    }

    // --- HTTP ---

    net::HttpRequest request(std::string method, const std::string& url) const
    {
        net::HttpRequest req(std::move(method), url);
        for (const auto& [header, value] : params_.headers)
            req.set(header, value);
        if (!session_id_.empty())
            req.set("mcp-session-id", session_id_);
        if (!protocol_version_.empty())
            req.set("mcp-protocol-version", protocol_version_);
        return req;
    }

    // Sends `req` with the OAuth token when there is one; a 401 (or a 403 for more scope) authorizes, once for
    // all the requests that met it, and sends it again, up to the options' limit of flows.
    asio::awaitable<net::HttpResponse> send(net::HttpRequest req)
    {
        if (!oauth_)
            co_return co_await client_.send(std::move(req));
        for (int flows = 0;; ++flows) {
            net::HttpRequest attempt = req;
            co_await oauth_->load();
            if (oauth_->expiring()) {
                // One refresh for every request that finds the token expiring (a refresh token may be single-use).
                const std::uint64_t before = auth_generation_;
                if (co_await authorizing_.join(strand_)) {
                    FlightGuard guard(authorizing_);
                    if (before == auth_generation_ && oauth_->expiring()) {
                        co_await oauth_->refresh();
                        ++auth_generation_;
                    }
                }
            }
            const std::uint64_t generation = auth_generation_;
            if (std::string bearer = oauth_->bearer(); !bearer.empty())
                attempt.set("authorization", bearer);
            unsigned status = 0;
            std::string challenge;
            {
                net::HttpResponse res = co_await client_.send(std::move(attempt));
                challenge = std::string(res.header("www-authenticate"));
                const bool more_scope =
                    res.status() == 403 &&
                    parse_bearer_challenge(challenge).value_or(BearerChallenge()).error == "insufficient_scope";
                if ((res.status() != 401 && !more_scope) || flows >= oauth_->max_authorizations())
                    co_return res;
                status = res.status();
            }  // the connection is not held while a person decides
            if (generation != auth_generation_)
                continue;  // another request authorized meanwhile: try its token
            if (co_await authorizing_.join(strand_)) {
                FlightGuard guard(authorizing_);
                co_await oauth_->authorize(status, challenge);
                ++auth_generation_;
            }
        }
    }

    asio::awaitable<net::HttpResponse> post(const std::string& text)
    {
        net::HttpRequest req = request("POST", legacy_ ? endpoint_ : params_.url);
        req.set("content-type", "application/json");
        req.set("accept", "application/json, text/event-stream");
        req.body = text;
        co_return co_await send(std::move(req));
    }

    asio::awaitable<net::HttpResponse> get(const std::string& last_event_id)
    {
        net::HttpRequest req = request("GET", params_.url);
        req.set("accept", "text/event-stream");
        if (!last_event_id.empty())
            req.set("last-event-id", last_event_id);
        co_return co_await send(std::move(req));
    }

    asio::awaitable<void> sleep(std::chrono::milliseconds delay)
    {
        adk::Timer timer(strand_, delay);
        co_await timer.async_wait(asio::use_awaitable);
    }

    std::string status_text(const net::HttpResponse& res, std::string_view body) const
    {
        std::string text = "the " + name_ + " answered HTTP " + std::to_string(res.status());
        const std::string said = error_text(body);
        if (!said.empty())
            text += ": " + said;
        if (res.status() == 401 && !oauth_)
            text += " (it asks for authorization: give HttpServerParams::oauth, or a token in its headers)";
        return text;
    }

    // A notification or a response of ours.
    static asio::awaitable<void> deliver_one_way(std::shared_ptr<Impl> self, std::string text)
    {
        net::HttpResponse res = co_await self->post(text);
        std::string body;
        try {
            body = co_await res.read_all(max_error_body_bytes);
        } catch (const Error&) {
            // Nothing of it matters but the status.
        }
        if (!res.ok())
            log(LogLevel::warning, self->status_text(res, body) + " to a notification");
    }

    // A request of ours, until its answer is delivered (or an error in its place).
    static asio::awaitable<void> exchange(std::shared_ptr<Impl> self, std::string text, jsonrpc::Id id,
                                          std::string method)
    {
        const bool initialize = method == "initialize";
        try {
            for (bool retried = false;; retried = true) {
                const std::string sent_session = self->session_id_;
                const std::uint64_t generation = self->generation_;
                net::HttpResponse res = co_await self->post(text);
                if (self->legacy_) {
                    // The old transport accepts the request here and answers it on its stream.
                    std::string body = co_await res.read_all(max_error_body_bytes);
                    if (!res.ok())
                        self->deliver_error(id, self->status_text(res, body));
                    co_return;
                }
                if (res.status() == 404 && !sent_session.empty() && !initialize && !retried && !self->legacy_) {
                    co_await self->renew_session(generation);
                    continue;
                }
                if (initialize && !res.ok() && self->params_.legacy_fallback && !self->legacy_ &&
                    (res.status() == 400 || res.status() == 404 || res.status() == 405)) {
                    if (co_await self->try_legacy(text))
                        co_return;
                }
                co_await self->take_answer(std::move(res), id, initialize);
                co_return;
            }
        } catch (const std::exception& e) {
            if (self->closed_)
                co_return;
            if (initialize)
                self->end(reason(e));
            else
                self->deliver_error(id, "the " + self->name_ + ": " + reason(e));
        }
    }

    // The answer to a request: a JSON body, or an SSE stream that carries it.
    asio::awaitable<void> take_answer(net::HttpResponse res, const jsonrpc::Id& id, bool initialize)
    {
        if (!res.ok()) {
            std::string body;
            try {
                body = co_await res.read_all(max_error_body_bytes);
            } catch (const Error&) {
            }
            deliver_error(id, status_text(res, body));
            co_return;
        }
        if (initialize && !note_session(res)) {
            deliver_error(id, "the " + name_ + " gave an Mcp-Session-Id that is not visible ASCII of at most " +
                                  std::to_string(max_session_id_bytes) + " bytes");
            co_return;
        }
        if (is_event_stream(res)) {
            co_await follow(std::move(res), id, initialize);
            co_return;
        }
        std::string body = co_await res.read_all(params_.max_message_bytes);
        if (body.find_first_not_of(" \t\r\n") == std::string::npos) {
            deliver_error(id, "the " + name_ + " answered a request with HTTP " + std::to_string(res.status()) +
                                  " and no body");
            co_return;
        }
        if (initialize)
            note_protocol(body);
        deliver(std::move(body));
    }

    // Reads an SSE stream, delivering each message. With `awaited`, it is the stream of that request: it ends
    // when the answer came, and is resumed (GET with Last-Event-ID) when it ends before. Without, it is the GET
    // stream: resumed whenever it ends, until close().
    asio::awaitable<void> follow(net::HttpResponse res, std::optional<jsonrpc::Id> awaited, bool initialize = false)
    {
        std::string last_id;
        std::optional<std::chrono::milliseconds> retry;
        int attempts = 0;
        bool have_stream = true;  // false after a resumption that could not connect
        bool resumed = false;     // reading a GET that resumed the stream
        std::string why;
        for (;;) {
            bool answered = false;
            bool read_any = false;
            if (have_stream) {
                net::SseReader reader(std::move(res), params_.max_message_bytes);
                std::vector<net::SseEvent> events;
                try {
                    for (;;) {
                        const bool more = co_await reader.read(events);
                        for (net::SseEvent& event : events) {
                            read_any = true;
                            if (!event.id.empty())
                                last_id = event.id;
                            if (event.retry)
                                retry = std::chrono::milliseconds(*event.retry);
                            if (event.event != "message" || event.data.find_first_not_of(" \t\r\n") == std::string::npos)
                                continue;  // a priming event (an id, no data), or a type MCP does not use
                            if (awaited && answers(event.data, *awaited)) {
                                answered = true;
                                if (initialize)
                                    note_protocol(event.data);
                            }
                            deliver(std::move(event.data));
                        }
                        events.clear();
                        // The request's own stream is read to its end, which the server sends right after the
                        // answer: the connection then goes back to the pool. A resumed stream may stay open.
                        if (!more || (answered && resumed))
                            break;
                    }
                    why = "the stream ended";
                } catch (const boost::system::system_error& e) {
                    if (closed_ || e.code() == asio::error::operation_aborted)
                        throw;
                    why = "the stream broke: " + reason(e);
                }
            }
            if (answered || closed_)
                co_return;
            attempts = read_any ? 1 : attempts + 1;
            if (awaited && last_id.empty()) {
                deliver_error(*awaited, "the " + name_ + " ended the answer's stream before the answer (" + why +
                                            ") and gave no event id to resume it from");
                co_return;
            }
            if (attempts > params_.max_reconnects) {
                const std::string text = "the " + name_ + ": " + why + "; " + std::to_string(params_.max_reconnects) +
                                         " attempts in a row to resume it brought nothing";
                if (awaited)
                    deliver_error(*awaited, text);
                else
                    log(LogLevel::warning, text);
                co_return;
            }
            co_await sleep(retry.value_or(params_.reconnect_delay));
            try {
                res = co_await get(last_id);
                have_stream = true;
                resumed = true;
            } catch (const boost::system::system_error& e) {
                if (closed_ || e.code() == asio::error::operation_aborted)
                    throw;
                why = "resuming it failed: " + reason(e);
                have_stream = false;
                continue;
            }
            if (res.status() == 405 && !awaited)
                co_return;  // the server offers no GET stream after all
            if (!res.ok() || !is_event_stream(res)) {
                const std::string text = "the " + name_ + " refused to resume a stream: HTTP " +
                                         std::to_string(res.status());
                if (awaited)
                    deliver_error(*awaited, text);
                else
                    log(LogLevel::debug, text);
                co_return;
            }
        }
    }

    // The GET stream, for the server's own requests and notifications.
    static asio::awaitable<void> listen(std::shared_ptr<Impl> self)
    {
        try {
            net::HttpResponse res = co_await self->get("");
            if (res.status() == 405)
                co_return;  // the server offers none
            if (!res.ok() || !is_event_stream(res)) {
                log(LogLevel::debug, "the " + self->name_ + " opened no GET stream: HTTP " + std::to_string(res.status()));
                co_return;
            }
            co_await self->follow(std::move(res), std::nullopt);
        } catch (const std::exception& e) {
            if (!self->closed_)
                log(LogLevel::debug, "the " + self->name_ + ": the GET stream ended: " + reason(e));
        }
    }

    // The session id of an answer to initialize; false when it is not one the spec allows.
    bool note_session(const net::HttpResponse& res)
    {
        const std::string_view id = res.header("mcp-session-id");
        if (id.empty())
            return true;
        if (!valid_session_id(id))
            return false;
        session_id_ = std::string(id);
        return true;
    }

    void note_protocol(std::string_view answer)
    {
        boost::system::error_code ec;
        json::value v = json::parse(answer, ec);
        if (ec || !v.is_object())
            return;
        const json::value* result = v.get_object().if_contains("result");
        const json::value* version = result && result->is_object() ? result->get_object().if_contains("protocolVersion")
                                                                   : nullptr;
        if (version && version->is_string())
            protocol_version_ = std::string(version->get_string());
    }

    // The server forgot the session (404): one new initialize and notifications/initialized, unless another
    // request has renewed it since `generation`.
    asio::awaitable<void> renew_session(std::uint64_t generation)
    {
        if (generation != generation_ || !co_await renewing_.join(strand_))
            co_return;  // renewed already, or by another request meanwhile
        FlightGuard guard(renewing_);
        ++generation_;
        log(LogLevel::info, "the " + name_ + " forgot the session: starting a new one");
        session_id_.clear();
        protocol_version_.clear();
        net::HttpResponse res = co_await post(initialize_text_);
        if (!res.ok()) {
            std::string body = co_await res.read_all(max_error_body_bytes);
            throw Error(errc::unavailable, status_text(res, body) + " to a new initialize");
        }
        if (!note_session(res))
            throw Error(errc::bad_response, "the " + name_ + " gave an Mcp-Session-Id that is not visible ASCII");
        std::string answer;
        if (is_event_stream(res)) {
            net::SseReader reader(std::move(res), params_.max_message_bytes);
            std::vector<net::SseEvent> events;
            for (bool more = true; more && answer.empty();) {
                more = co_await reader.read(events);
                for (const net::SseEvent& e : events)
                    if (e.event == "message" && !e.data.empty() && answer.empty())
                        answer = e.data;
                events.clear();
            }
        } else {
            answer = co_await res.read_all(params_.max_message_bytes);
        }
        note_protocol(answer);
        if (protocol_version_.empty())
            throw Error(errc::bad_response, "the " + name_ + " did not answer a new initialize");
        if (!initialized_text_.empty()) {
            net::HttpResponse ack = co_await post(initialized_text_);
            (void)co_await ack.read_all(max_error_body_bytes);
        }
    }

    // The old HTTP+SSE transport: a GET whose stream names the endpoint to POST to first. True when the
    // server speaks it (initialize has then been sent to the endpoint, its answer comes on the stream).
    asio::awaitable<bool> try_legacy(const std::string& initialize)
    {
        net::HttpResponse res = co_await get("");
        if (!res.ok() || !is_event_stream(res))
            co_return false;
        net::SseReader reader(std::move(res), params_.max_message_bytes);
        std::vector<net::SseEvent> events;
        std::optional<std::string> endpoint;
        while (!endpoint) {
            if (!(co_await reader.read(events)))
                co_return false;
            for (const net::SseEvent& e : events) {
                if (e.event != "endpoint")
                    co_return false;  // the first event of the old transport names the endpoint
                endpoint = e.data;
                break;
            }
            events.clear();
        }
        endpoint_ = endpoint_url(*endpoint);
        legacy_ = true;
        log(LogLevel::info, "the " + name_ + " speaks the old HTTP+SSE transport (2024-11-05)");
        spawn(legacy_stream(shared_from_this(), std::move(reader)));
        net::HttpResponse accepted = co_await post(initialize);
        std::string body = co_await accepted.read_all(max_error_body_bytes);
        if (!accepted.ok())
            throw Error(errc::unavailable, status_text(accepted, body) + " to initialize at its endpoint");
        co_return true;
    }

    // The endpoint an `endpoint` event names: a path, or a URL of the server's own origin.
    std::string endpoint_url(const std::string& named) const
    {
        const net::Url base = net::parse_url(params_.url);
        if (named.starts_with("http://") || named.starts_with("https://")) {
            if (net::parse_url(named).origin() != base.origin())
                throw Error(errc::bad_response, "the " + name_ + " named an endpoint of another origin: " +
                                                    net::redact_url(named));
            return named;
        }
        std::string path = named;
        if (!path.starts_with("/")) {
            std::string dir = base.target.substr(0, base.target.find('?'));
            dir = dir.substr(0, dir.rfind('/') + 1);
            path = dir + path;
        }
        const std::string url = base.origin() + path;
        (void)net::parse_url(url);  // throws for what could split a request
        return url;
    }

    // The old transport's one stream: every message of the server's; its end ends the connection.
    static asio::awaitable<void> legacy_stream(std::shared_ptr<Impl> self, net::SseReader reader)
    {
        std::vector<net::SseEvent> events;
        std::string why = "the server ended its SSE stream";
        try {
            for (bool more = true; more;) {
                more = co_await reader.read(events);
                for (net::SseEvent& e : events)
                    if (e.event == "message" && !e.data.empty())
                        self->deliver(std::move(e.data));
                events.clear();
            }
        } catch (const std::exception& e) {
            why = "its SSE stream broke: " + reason(e);
        }
        if (!self->closed_)
            self->end(why);
    }

    static asio::awaitable<void> end_session(std::shared_ptr<Impl> self, std::string session)
    {
        net::HttpRequest req("DELETE", self->params_.url);
        for (const auto& [header, value] : self->params_.headers)
            req.set(header, value);
        req.set("mcp-session-id", session);
        if (!self->protocol_version_.empty())
            req.set("mcp-protocol-version", self->protocol_version_);
        net::HttpResponse res = co_await self->send(std::move(req));
        (void)co_await res.read_all(max_error_body_bytes);
        if (!res.ok() && res.status() != 405)
            log(LogLevel::debug, "the " + self->name_ + " answered DELETE of the session with HTTP " +
                                     std::to_string(res.status()));
    }

    asio::any_io_executor strand_;
    HttpServerParams params_;
    net::HttpClient client_;
    std::string name_;
    bool closed_ = false;
    std::string ended_;  // why the connection ended; empty while it has not
    std::string session_id_;
    std::string protocol_version_;
    std::string initialize_text_;   // sent again when the server forgets the session
    std::string initialized_text_;
    std::uint64_t generation_ = 0;  // sessions renewed
    Flight renewing_;
    std::optional<OAuthClient> oauth_;
    std::uint64_t auth_generation_ = 0;  // authorizations made
    Flight authorizing_;
    bool listening_ = false;
    bool legacy_ = false;
    std::string endpoint_;  // the old transport's POST endpoint
    std::deque<std::string> inbox_;
    std::shared_ptr<Wakeup> receiver_;
    std::uint64_t next_task_ = 0;
    std::map<std::uint64_t, std::shared_ptr<asio::cancellation_signal>> tasks_;
};

HttpTransport::HttpTransport(asio::any_io_executor executor, HttpServerParams params)
    : impl_(std::make_shared<Impl>(std::move(executor), std::move(params)))
{
}

HttpTransport::~HttpTransport()
{
    // Exchanges still under way hold the Impl and run on its strand: they are cancelled there. (A Connection
    // closes its transport before it lets go of it; this is for a transport dropped unclosed.)
    if (impl_.use_count() > 1)
        asio::post(impl_->executor(), [impl = impl_] { impl->abandon(); });
}

asio::awaitable<void> HttpTransport::open()
{
    co_await impl_->open();
}

asio::awaitable<void> HttpTransport::send(std::string message)
{
    co_await impl_->send(std::move(message));
}

asio::awaitable<std::optional<std::string>> HttpTransport::receive()
{
    co_return co_await impl_->receive();
}

asio::awaitable<void> HttpTransport::close()
{
    co_await impl_->close();
}

const std::string& HttpTransport::name() const
{
    return impl_->name();
}

std::string HttpTransport::diagnostics() const
{
    return impl_->diagnostics();
}

std::string HttpTransport::session_id() const
{
    return impl_->session_id();
}

bool HttpTransport::legacy() const
{
    return impl_->legacy();
}

}  // namespace adk::mcp
