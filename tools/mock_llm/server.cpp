#include "server.hpp"

#include "cached_contents.hpp"
#include "render.hpp"

#include <adk/core/clock.hpp>
#include <adk/net/http_server.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>

#include <fstream>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <optional>

namespace adk::mock_llm {

namespace asio = boost::asio;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

// The body frames of a replayed recording: cut after each blank line, so that delays and splits apply per
// event as they do for scripted answers.
std::vector<std::string> replay_frames(const std::string& body)
{
    std::vector<std::string> frames;
    std::size_t start = 0;
    for (std::size_t i = 0; i < body.size(); ++i) {
        const bool lf_lf = body.compare(i, 2, "\n\n") == 0;
        const bool crlf_crlf = body.compare(i, 4, "\r\n\r\n") == 0;
        if (lf_lf || crlf_crlf) {
            const std::size_t end = i + (lf_lf ? 2 : 4);
            frames.push_back(body.substr(start, end - start));
            start = end;
            i = end - 1;
        }
    }
    if (start < body.size())
        frames.push_back(body.substr(start));
    return frames;
}

// The first time after now at which request `n`'s frames are written (ServerOptions::spread_chunks).
adk::Clock::time_point spread_slot(std::size_t n, std::chrono::milliseconds delay)
{
    using std::chrono::nanoseconds;
    const auto period = std::chrono::duration_cast<nanoseconds>(delay);
    const double golden = 0.6180339887498949;
    const double fraction = static_cast<double>(n) * golden - std::floor(static_cast<double>(n) * golden);
    const nanoseconds phase(static_cast<nanoseconds::rep>(fraction * static_cast<double>(period.count())));
    const nanoseconds now = adk::Clock::now().time_since_epoch();
    const auto slots = (now - phase) / period + 1;  // the next slot after now
    return adk::Clock::time_point(phase + slots * period);
}

// Replaces each "{t}" with the monotonic clock in nanoseconds: a benchmark that reads the clock when the
// chunk's event reaches it measures the time from this write to that delivery.
void stamp_frame(std::string& frame)
{
    const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::steady_clock::now().time_since_epoch())
                         .count();
    const std::string stamp = std::to_string(now);
    for (auto at = frame.find("{t}"); at != std::string::npos; at = frame.find("{t}", at + stamp.size()))
        frame.replace(at, 3, stamp);
}

// What the handler shares with the Server: the options, the replay's frames, what was received and the
// counts. The handler holds it, so a connection that outlives the Server still finds it.
class State {
public:
    explicit State(ServerOptions opts) : options(std::move(opts))
    {
        if (!options.replay_body.empty())
            frames = replay_frames(options.replay_body);
        if (options.script)
            validate_script(*options.script);  // a bad script is refused here, not while answering
    }

    asio::awaitable<void> handle(net::IncomingRequest& req, net::ResponseWriter& res)
    {
        std::size_t request_number = 0;
        {
            std::lock_guard lock(mutex);
            request_number = received_requests.size();
            received_requests.push_back(req);
            if (!options.trace_log.empty()) {
                // What a tracing client sent: the test of trace context end to end reads it.
                const std::string_view traceparent = req.header("traceparent");
                std::ofstream(options.trace_log, std::ios::app)
                    << (traceparent.empty() ? std::string_view("-") : traceparent) << '\n';
            }
        }
        Answer a = answer_for(req, request_number);
        if (!a.streamed) {
            co_await res.send(a.status, a.content_type, a.body, a.headers);
            co_return;
        }
        a.headers.emplace_back("cache-control", "no-cache");
        co_await res.begin_stream(a.status, a.content_type, a.headers);
        adk::Timer timer(co_await asio::this_coro::executor);  // the runtime's clock: a test's ManualClock moves it
        std::size_t written_frames = 0;
        std::size_t body_bytes = 0;
        std::optional<adk::Clock::time_point> slot;  // with spread_chunks: the last frame's time
        // Writes one frame (after the delay, stamped, in pieces); false once the connection was cut.
        auto write_frame = [&](std::string& frame) -> asio::awaitable<bool> {
            if (written_frames++ > 0 && options.chunk_delay.count() > 0) {
                if (options.spread_chunks) {
                    slot = slot ? *slot + options.chunk_delay : spread_slot(request_number, options.chunk_delay);
                    timer.expires_at(*slot);
                } else {
                    timer.expires_after(options.chunk_delay);
                }
                co_await timer.async_wait(use_tuple);
            }
            if (options.stamp)
                stamp_frame(frame);  // at the write, after the delay
            const std::size_t piece = options.split_bytes ? options.split_bytes : frame.size();
            for (std::size_t at = 0; at < frame.size(); at += piece) {
                std::size_t len = std::min(piece, frame.size() - at);
                bool cut = false;
                if (options.disconnect_after_bytes && body_bytes + len >= *options.disconnect_after_bytes) {
                    len = *options.disconnect_after_bytes - body_bytes;
                    cut = true;
                }
                if (len > 0) {
                    co_await res.write(std::string_view(frame).substr(at, len));
                    body_bytes += len;
                    written += len;
                }
                if (cut) {
                    res.close();
                    co_return false;
                }
            }
            co_return true;
        };
        for (auto& frame : a.plan.head)
            if (!co_await write_frame(frame))
                co_return;
        for (std::size_t i = 0; i < a.plan.text_count; ++i) {
            std::string frame = a.plan.text_frame(i);
            if (!co_await write_frame(frame))
                co_return;
        }
        for (auto& frame : a.plan.tail)
            if (!co_await write_frame(frame))
                co_return;
        co_await res.end_stream();
    }

    Answer answer_for(const net::IncomingRequest& req, std::size_t request_number)
    {
        if (std::optional<Answer> cache_route = caches.handle(req.method, req.target, req.body))
            return *std::move(cache_route);
        Format format = Format::openai;
        bool gemini_stream = false;
        std::string model;
        const bool known = format_of_path(req.target, format, gemini_stream, model);
        Answer a;
        if (options.status && (options.status_times == 0 || request_number < options.status_times)) {
            a.status = *options.status;
            a.content_type = "application/json";
            a.body = boost::json::serialize(boost::json::object{
                {"error", {{"code", a.status}, {"message", "mock-llm: status set by --status"}}}});
            if (!options.retry_after.empty())
                a.headers.emplace_back("retry-after", options.retry_after);
        } else if (!frames.empty()) {
            a.streamed = true;
            a.content_type = options.replay_content_type;
            a.plan.head = frames;
        } else if (!known || !options.script) {
            a.status = 404;
            a.content_type = "application/json";
            a.body = R"({"error":{"code":404,"message":"mock-llm serves POST .../models/M:streamGenerateContent, )"
                     R"(.../models/M:generateContent, .../chat/completions and .../messages"}})";
        } else if (format == Format::gemini) {
            auto expanded = caches.expand(req.body);
            if (auto* whole = std::get_if<CachedContents::Expanded>(&expanded))
                a = render(*options.script, format, gemini_stream, model, whole->body, whole->cached_tokens);
            else
                a = std::get<Answer>(std::move(expanded));
        } else {
            a = render(*options.script, format, gemini_stream, model, req.body);
        }
        return a;
    }

    ServerOptions options;
    std::vector<std::string> frames;
    std::atomic<std::size_t> written{0};
    CachedContents caches;
    mutable std::mutex mutex;
    std::vector<ReceivedRequest> received_requests;
};

net::HttpServerOptions http_options(const ServerOptions& options)
{
    net::HttpServerOptions http;
    http.host = options.host;
    http.port = options.port;
    if (options.tls) {
        http.cert_file = options.cert_file;
        http.key_file = options.key_file;
    }
    http.max_body_bytes = std::size_t{64} << 20;
    http.single_threaded = true;  // one thread runs mock-llm's io_context (see Server)
    return http;
}

}  // namespace

class Server::Impl {
public:
    Impl(asio::any_io_executor ex, ServerOptions options)
        : state(std::make_shared<State>(std::move(options))),
          http(std::move(ex), http_options(state->options),
               [state = state](net::IncomingRequest& req, net::ResponseWriter& res) { return state->handle(req, res); })
    {
    }

    std::shared_ptr<State> state;
    net::HttpServer http;
};

Server::Server(asio::any_io_executor ex, ServerOptions options)
    : impl_(std::make_shared<Impl>(std::move(ex), std::move(options)))
{
}

Server::~Server() = default;

void Server::start() { impl_->http.start(); }
void Server::stop() { impl_->http.stop(); }
unsigned short Server::port() const { return impl_->http.port(); }
std::string Server::base_url() const { return impl_->http.base_url(); }

std::vector<ReceivedRequest> Server::requests() const
{
    std::lock_guard lock(impl_->state->mutex);
    return impl_->state->received_requests;
}

std::size_t Server::connections_accepted() const { return impl_->http.connections_accepted(); }
std::size_t Server::open_connections() const { return impl_->http.open_connections(); }
std::size_t Server::body_bytes_written() const { return impl_->state->written; }
std::size_t Server::cached_contents() const { return impl_->state->caches.size(); }

}  // namespace adk::mock_llm
