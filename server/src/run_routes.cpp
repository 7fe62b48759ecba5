// The run routes: POST /run (the events as one array), POST /run_sse (a run of the server's, followed over
// Server-Sent Events), and a session's runs: list, follow again, cancel.
#include "api_impl.hpp"

#include <adk/detail/json_writer.hpp>

#include <boost/asio/this_coro.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

namespace adk::server {

using detail::member;

namespace {

// How much of a run's log /run reads at a time (whole frames; one frame may be larger).
constexpr std::size_t max_read_bytes = std::size_t{64} << 10;

std::string required_string(const json::value& body, std::string_view name)
{
    const json::value* v = member(body, name, json::kind::string, "a string");
    if (!v || v->get_string().empty())
        throw Error(errc::invalid_argument, "\"" + std::string(name) + "\" is required (a non-empty string)");
    return std::string(v->get_string());
}

// The body of /run and /run_sse: {appName, userId, sessionId, newMessage, streaming, stateDelta,
// invocationId, functionCallEventId}, checked.
class RunBody {
public:
    RunBody(const IncomingRequest& req, std::size_t max_inline_bytes)
    {
        json::value body = detail::body_json(req);
        if (!body.is_object())
            throw Error(errc::invalid_argument, "the body must be a JSON object: {\"appName\", \"userId\", \"sessionId\", "
                                                "\"newMessage\", \"streaming\", \"stateDelta\"}");
        app = required_string(body, "appName");
        user = required_string(body, "userId");
        session = required_string(body, "sessionId");
        detail::check_id("userId", user);
        detail::check_id("sessionId", session);
        if (const json::value* m = member(body, "newMessage", json::kind::object, "a Content object")) {
            try {
                message = json::value_to<Content>(*m);
            } catch (const Error& e) {
                if (e.code() == errc::too_large)  // a file over the runtime's own bound: 413, as below
                    throw Error(errc::too_large, "newMessage: " + e.message());
                throw Error(errc::invalid_argument, "\"newMessage\" is not a Content: " + e.message());
            } catch (const std::exception& e) {
                throw Error(errc::invalid_argument, std::string("\"newMessage\" is not a Content: ") + e.what());
            }
            for (std::size_t i = 0; i < message->parts.size(); ++i) {
                const auto& blob = message->parts[i].inline_data;
                if (blob && blob->data.size() > max_inline_bytes)
                    throw Error(errc::too_large, "newMessage.parts[" + std::to_string(i) + "].inlineData holds " +
                                                       std::to_string(blob->data.size()) +
                                                       " bytes; this server takes files of at most " +
                                                       std::to_string(max_inline_bytes) + " bytes");
            }
        }
        if (const json::value* s = body.get_object().if_contains("streaming"); s && !s->is_null()) {
            if (!s->is_bool())
                throw Error(errc::invalid_argument, "\"streaming\" must be true or false");
            streaming = s->get_bool();
        }
        if (const json::value* d = member(body, "stateDelta", json::kind::object, "an object"))
            state_delta = d->get_object();
        if (const json::value* id = member(body, "invocationId", json::kind::string, "a string"))
            invocation_id = std::string(id->get_string());
        // The web UI names the event of the call its answer is for; the answer's own id says which call it is,
        // and the Runner checks it against the session.
        (void)member(body, "functionCallEventId", json::kind::string, "a string");
        // W3C trace context: the run's spans continue the caller's trace. A malformed header starts a new one.
        if (std::string_view parent = req.header("traceparent"); !parent.empty())
            if (auto context = telemetry::SpanContext::parse(parent, req.header("tracestate")))
                trace_parent = std::move(*context);
    }

    RunRequest request() const
    {
        RunRequest r(user, session, message);
        r.state_delta = state_delta;
        r.invocation_id = invocation_id;
        r.run_config.streaming_mode = streaming ? StreamingMode::sse : StreamingMode::none;
        r.trace_parent = trace_parent;
        return r;
    }

    std::string app;
    std::string user;
    std::string session;
    std::optional<Content> message;
    bool streaming = false;
    json::object state_delta;
    std::optional<std::string> invocation_id;
    telemetry::SpanContext trace_parent;
};

// ADK's frames: "id: <run id>:<n>\ndata: <the event's JSON>\n\n"; a failed run's last frame's data is
// {"error": "..."}, as is (without an id) the frame that tells a client what it missed.
std::string error_json(const std::string& message)
{
    json::value body = json::object{{"error", message}};
    return json::serialize(body);
}

void append_error_frame(std::string& out, const std::string& message)
{
    out.append("data: ").append(error_json(message)).append("\n\n");
}

// "id: <run id>:<n>" and the start of the frame's data.
void begin_adk_frame(std::string& out, const Run& run, std::uint64_t n)
{
    out.append("id: ").append(run.id).append(":").append(std::to_string(n)).append("\ndata: ");
}

void append_adk_frame(std::string& out, const Run& run, const Run::Frame& frame, Run::EventScratch& scratch)
{
    begin_adk_frame(out, run, frame.n);
    if (const Event* event = frame.event(scratch))
        append_json_text(out, *event);
    else
        out.append(error_json(frame.failure));
    out.append("\n\n");
}

std::string adk_frame(const Run& run, const Run::Frame& frame)
{
    std::string out;
    Run::EventScratch scratch;
    append_adk_frame(out, run, frame, scratch);
    return out;
}

class AdkSseWriter final : public RunWriter {
public:
    // A delta kept as a Delta is written from its answer's pieces (detail::DeltaJson), made once per answer.
    void frame(std::string& out, const Run& run, const Run::Frame& f) override
    {
        const Run::Delta* delta = f.delta();
        if (!delta)
            return append_adk_frame(out, run, f, scratch_);
        if (pieces_of_ != f.delta_base()) {
            pieces_.emplace(*f.delta_base());
            pieces_of_ = f.delta_base();
        }
        if (!pieces_->usable())
            return append_adk_frame(out, run, f, scratch_);
        begin_adk_frame(out, run, f.n);
        pieces_->append(out, delta->text, delta->usage.get(),
                        delta->finish_reason ? &*delta->finish_reason : nullptr);
        out.append("\n\n");
    }
    void missed(std::string& out, const Run& run, std::uint64_t first, std::uint64_t last) override
    {
        append_error_frame(out, run.missed_message(first, last));
    }
    void missed_deltas(std::string& out, const Run& run, std::uint64_t count) override
    {
        append_error_frame(out, run.missed_deltas_message(count));
    }
    Run::Follower::Render shared() const override { return &adk_frame; }

private:
    Run::EventScratch scratch_;
    std::shared_ptr<const Event> pieces_of_;  // the base pieces_ were made from (held)
    std::optional<adk::detail::DeltaJson> pieces_;
};

// Writes the run's frames after `cursor` to the client as ADK's SSE frames as they come, until the run ends or
// the client leaves. The run goes on without it. A cursor past the run's last frame was never sent: refused.
asio::awaitable<void> follow(ResponseWriter& res, std::shared_ptr<Run> run, std::uint64_t cursor)
{
    if (const std::uint64_t last = run->last_frame(); cursor > last)
        throw Error(errc::invalid_argument, "Last-Event-ID names frame " + std::to_string(cursor) + " of run " +
                                                run->id + ", which has sent " + std::to_string(last) +
                                                " frames: send the id of the last frame you read");
    const net::HeaderList headers{{"cache-control", "no-cache"}, {"x-adk-run-id", run->id}};
    co_await res.begin_stream(200, "text/event-stream", headers);
    AdkSseWriter writer;
    co_await write_run(res, std::move(run), cursor, writer);  // ends the stream with the run's end
}

// The invocation started: the user's message stored, the stream returned with the invocation's id. A session
// that is not there is answered as ADK's servers answer it.
asio::awaitable<Runner::Started> start_run(Runner& runner, const RunBody& body, const std::shared_ptr<Run>& run)
{
    RunRequest request = body.request();
    request.receiver = run;  // the run appends the events as the invocation emits them
    auto start = runner.start(std::move(request));
    std::optional<Runner::Started> started;
    std::optional<Error> failure;
    try {
        started.emplace(co_await std::move(start));
    } catch (const Error& e) {
        failure = e;
    }
    if (failure && failure->code() == errc::not_found)
        throw detail::session_not_found(body.session);
    if (failure)
        throw *failure;
    co_return std::move(*started);
}

Error run_not_found(const std::string& id)
{
    return Error(errc::not_found, "Run not found: " + id +
                                      " (it finished longer ago than the server keeps runs, or it is another "
                                      "session's): GET the session for its events");
}

}  // namespace

// /run is a run of the server's like /run_sse's (counted against max_runs, listed, cancelled by the cancel
// route, and by the grace period when its client leaves); its events are gathered and answered as one array.
asio::awaitable<void> ApiServer::Impl::run(const IncomingRequest& req, ResponseWriter& res)
{
    RunBody body(req, options.max_inline_data_bytes);
    Runner& runner = *app(body.app).runner;
    if (runs->full())
        throw Error(errc::unavailable, "the server holds " + std::to_string(options.max_runs) +
                                           " runs already (ApiServerOptions::max_runs): try again later");
    std::shared_ptr<Run> run = runs->prepare(RunOwner(body.app, body.user, body.session));
    Runner::Started started = co_await start_run(runner, body, run);
    runs->start(run, std::move(started.events), started.invocation_id);
    auto executor = co_await asio::this_coro::executor;
    auto follower = std::make_shared<Run::Follower>(run, executor);
    res.watch_client();
    res.on_client_gone([weak = std::weak_ptr<Run::Follower>(follower)] {
        if (auto f = weak.lock())
            f->stop();
    });
    std::string events = "[";
    std::uint64_t cursor = 0;
    Run::Read read;
    Run::EventScratch scratch;
    while (true) {
        follower->read(cursor, max_read_bytes, read);
        if (read.missed_last != 0)  // the run outgrew what the server holds of it
            throw Error(errc::agent_failed, run->missed_message(read.missed_first, read.missed_last));
        for (const Run::Frame& frame : read.frames) {
            const Event* event = frame.event(scratch);
            if (!event)
                throw Error(errc::agent_failed, frame.failure);
            if (events.size() > 1)
                events += ',';
            append_json_text(events, *event);
        }
        if (read.finished)
            break;
        if (read.empty()) {
            co_await follower->wait();
            if (res.client_gone())
                co_return;  // the run goes on for run_grace, for the client to follow it with /run_sse
            asio::cancellation_state state = co_await asio::this_coro::cancellation_state;
            if (state.cancelled() != asio::cancellation_type::none)
                co_return;
        }
    }
    events += ']';
    const net::HeaderList headers{{"x-adk-run-id", run->id}};
    co_await res.send(200, "application/json", events, headers);
}

asio::awaitable<void> ApiServer::Impl::run_sse(const IncomingRequest& req, ResponseWriter& res)
{
    RunBody body(req, options.max_inline_data_bytes);
    Runner& runner = *app(body.app).runner;
    RunOwner owner(body.app, body.user, body.session);
    // A client that comes back (the same request, with the id of the last frame it read) follows its run
    // again; it never starts a second one.
    if (std::string_view last = req.header("last-event-id"); !last.empty()) {
        auto frame = parse_frame_id(last);
        if (!frame)
            throw Error(errc::invalid_argument, "Last-Event-ID must be an id this server sent (\"<run id>:<n>\")");
        std::shared_ptr<Run> run = runs->find(frame->first, owner);
        if (!run)
            throw run_not_found(frame->first);
        co_await follow(res, std::move(run), frame->second);
        co_return;
    }
    if (runs->full())
        throw Error(errc::unavailable, "the server holds " + std::to_string(options.max_runs) +
                                           " runs already (ApiServerOptions::max_runs): try again later");
    std::shared_ptr<Run> run = runs->prepare(std::move(owner));
    Runner::Started started = co_await start_run(runner, body, run);
    runs->start(run, std::move(started.events), started.invocation_id);
    co_await follow(res, std::move(run), 0);
}

asio::awaitable<void> ApiServer::Impl::list_runs(ResponseWriter& res, const RunOwner& owner)
{
    app(owner.app);
    json::array out;
    for (const auto& run : runs->of_session(owner)) {
        const std::uint64_t last = run->last_frame();
        out.push_back(json::object{{"runId", run->id},
                                   {"invocationId", run->invocation_id()},
                                   {"finished", run->finished()},
                                   {"followers", run->followers()},
                                   {"lastEventId", run->id + ":" + std::to_string(last)}});
    }
    json::value v = std::move(out);
    co_await detail::reply_json(res, 200, v);
}

asio::awaitable<void> ApiServer::Impl::follow_run(const IncomingRequest& req, ResponseWriter& res,
                                                  const RunOwner& owner, const std::string& run_id)
{
    app(owner.app);
    std::shared_ptr<Run> run = runs->find(run_id, owner);
    if (!run)
        throw run_not_found(run_id);
    std::uint64_t cursor = 0;
    if (std::string_view last = req.header("last-event-id"); !last.empty()) {
        auto frame = parse_frame_id(last);
        if (!frame || frame->first != run_id)
            throw Error(errc::invalid_argument, "Last-Event-ID must be an id of this run's frames (\"" + run_id +
                                                    ":<n>\")");
        cursor = frame->second;
    }
    co_await follow(res, std::move(run), cursor);
}

asio::awaitable<void> ApiServer::Impl::cancel_run(ResponseWriter& res, const RunOwner& owner,
                                                  const std::string& run_id)
{
    app(owner.app);
    std::shared_ptr<Run> run = runs->find(run_id, owner);
    if (!run)
        throw run_not_found(run_id);
    const bool cancelled = run->cancel("the run was cancelled by a client (POST .../runs/" + run_id + "/cancel)");
    json::value v = json::object{{"runId", run_id}, {"cancelled", cancelled}};
    co_await detail::reply_json(res, 200, v);
}

}  // namespace adk::server
