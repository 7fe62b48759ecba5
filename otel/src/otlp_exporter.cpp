#include <adk/otel/otlp_exporter.hpp>

#include <adk/core/clock.hpp>
#include <adk/core/error.hpp>
#include <adk/core/log.hpp>
#include <adk/net/http_client.hpp>
#include <adk/net/url.hpp>

#include "otlp_http.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <atomic>
#include <cstdlib>
#include <deque>
#include <mutex>

namespace adk::otel {

namespace {

net::HttpClientOptions trace_client_options(const OtlpOptions& o)
{
    return detail::otlp_client_options(o.ca_file, o.timeout, o.max_retries);
}

}  // namespace

class OtlpSpanExporter::Impl : public std::enable_shared_from_this<Impl> {
public:
    Impl(asio::any_io_executor executor, OtlpOptions o)
        : options(std::move(o)), strand(asio::make_strand(executor)), timer(strand), done(strand),
          client(trace_client_options(options))
    {
        done.expires_at(adk::Clock::time_point::max());
    }

    // Under the strand: a batch when one is due, the rest waits for the schedule.
    asio::awaitable<void> loop()
    {
        while (true) {
            bool wait = false;
            {
                std::lock_guard lock(mutex);
                wait = !stopping && !flush_asked && queue.size() < options.max_batch_spans;
            }
            if (wait) {
                timer.expires_after(options.schedule_delay);
                boost::system::error_code ec;
                // Named first: g++ 12 miscompiles class-type temporaries built inside a co_await expression.
                asio::awaitable<void> scheduled = timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
                co_await std::move(scheduled);
            }
            std::vector<std::string> batch;
            bool stop = false;
            {
                std::lock_guard lock(mutex);
                const std::size_t n = std::min(queue.size(), options.max_batch_spans);
                batch.reserve(n);
                for (std::size_t i = 0; i < n; ++i) {
                    queued_bytes -= queue.front().size();
                    batch.push_back(std::move(queue.front()));
                    queue.pop_front();
                }
                if (queue.empty())
                    flush_asked = false;
                stop = stopping && queue.empty();
            }
            if (!batch.empty())
                co_await send(batch);
            flushed.cancel();  // whoever waits for a flush looks again
            if (stop && batch.empty())
                break;
        }
        {
            std::lock_guard lock(mutex);
            loop_ended = true;
        }
        done.cancel();
    }

    asio::awaitable<void> send(const std::vector<std::string>& batch)
    {
        net::HttpRequest request("POST", options.traces_url);
        request.set("content-type", content_type(options.encoding));
        for (const auto& [name, value] : options.headers)
            request.set(name, value);
        request.body = join_spans(options.origin, batch, options.encoding);
        std::string failure;
        try {
            net::HttpResponse response = co_await client.send(std::move(request));
            const std::string body = co_await response.read_all(std::size_t{1} << 20);
            if (response.ok()) {
                exported += batch.size();
                co_return;
            }
            failure = "the collector answered " + std::to_string(response.status());
        } catch (const Error& e) {
            failure = e.message();
        }
        dropped += batch.size();
        ++failed_batches;
        // One line per failed batch, however many spans it held; the URL without its query or credentials.
        log(LogLevel::warning, "OTLP export to " + net::redact_url(options.traces_url) + " failed, " +
                                   std::to_string(batch.size()) + " spans dropped: " + failure);
    }

    // On the strand.
    static asio::awaitable<void> flush(std::shared_ptr<Impl> impl)
    {
        while (true) {
            {
                std::lock_guard lock(impl->mutex);
                if (impl->queue.empty() || impl->loop_ended)
                    co_return;
                impl->flush_asked = true;
            }
            impl->timer.cancel();
            impl->flushed.expires_at(adk::Clock::time_point::max());
            boost::system::error_code ec;
            asio::awaitable<void> sent = impl->flushed.async_wait(asio::redirect_error(asio::use_awaitable, ec));
            co_await std::move(sent);
        }
    }

    // On the strand.
    static asio::awaitable<void> shutdown(std::shared_ptr<Impl> impl, std::chrono::milliseconds deadline)
    {
        {
            std::lock_guard lock(impl->mutex);
            impl->stopping = true;
            if (impl->loop_ended)
                co_return;
        }
        impl->timer.cancel();
        boost::system::error_code ec;
        asio::awaitable<void> ended = impl->done.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        if (!co_await detail::ended_within(std::move(ended), deadline)) {
            // the deadline: what is under way is cut short, what waits is dropped
            {
                std::lock_guard lock(impl->mutex);
                impl->dropped += impl->queue.size();
                impl->queue.clear();
                impl->queued_bytes = 0;
            }
            impl->stop_signal.emit(asio::cancellation_type::terminal);
            log(LogLevel::warning, "OTLP export: shutdown's deadline passed; the spans still waiting were dropped");
        }
    }

    // From any thread: the loop looks at the queue now.
    void wake()
    {
        if (wake_posted.exchange(true))
            return;
        asio::post(strand, [self = shared_from_this()] {
            self->wake_posted = false;
            self->timer.cancel();
        });
    }

    OtlpOptions options;
    asio::strand<asio::any_io_executor> strand;
    adk::Timer timer;    // the schedule
    adk::Timer done;     // cancelled when the loop ends
    adk::Timer flushed{strand};  // cancelled after each batch went
    net::HttpClient client;
    asio::cancellation_signal stop_signal;  // cuts an export short at shutdown's deadline

    mutable std::mutex mutex;
    std::deque<std::string> queue;  // each span encoded when it ended
    std::size_t queued_bytes = 0;
    bool stopping = false;
    bool flush_asked = false;
    bool loop_ended = false;

    std::atomic<bool> wake_posted{false};
    std::atomic<std::uint64_t> exported{0};
    std::atomic<std::uint64_t> dropped{0};
    std::atomic<std::uint64_t> failed_batches{0};
};

std::shared_ptr<OtlpSpanExporter> OtlpSpanExporter::create(asio::any_io_executor executor, OtlpOptions options)
{
    if (options.max_batch_spans == 0 || options.max_queue_spans == 0)
        throw Error(errc::invalid_argument, "OtlpOptions: max_batch_spans and max_queue_spans must be above 0");
    (void)net::parse_url(options.traces_url);  // throws adk::Error for what is no http(s) URL
    auto impl = std::make_shared<Impl>(std::move(executor), std::move(options));
    auto exporter = std::shared_ptr<OtlpSpanExporter>(new OtlpSpanExporter(impl));
    asio::co_spawn(impl->strand, impl->loop(),
                   asio::bind_cancellation_slot(impl->stop_signal.slot(), [impl](std::exception_ptr failure) {
                       if (!failure)
                           return;
                       {  // stopped by the destructor or shutdown's deadline: what waits is lost
                           std::lock_guard lock(impl->mutex);
                           impl->dropped += impl->queue.size();
                           impl->queue.clear();
                           impl->queued_bytes = 0;
                           impl->loop_ended = true;
                       }
                       impl->done.cancel();
                       impl->flushed.cancel();
                   }));
    return exporter;
}

std::shared_ptr<OtlpSpanExporter> OtlpSpanExporter::from_env(asio::any_io_executor executor)
{
    const auto set = [](const char* name) {
        const char* v = std::getenv(name);
        return v && *v;
    };
    if (!set("OTEL_EXPORTER_OTLP_ENDPOINT") && !set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
        return nullptr;
    OtlpOptions options = OtlpOptions::from_env();
    if (!options.enabled)
        return nullptr;
    return create(std::move(executor), std::move(options));
}

OtlpSpanExporter::OtlpSpanExporter(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

OtlpSpanExporter::~OtlpSpanExporter()
{
    // The loop holds the Impl; stop it without waiting (shutdown() is the way to send what waits).
    {
        std::lock_guard lock(impl_->mutex);
        impl_->stopping = true;
        impl_->dropped += impl_->queue.size();
        impl_->queue.clear();
        impl_->queued_bytes = 0;
    }
    auto impl = impl_;
    asio::post(impl->strand, [impl] {
        impl->timer.cancel();
        impl->stop_signal.emit(asio::cancellation_type::terminal);
    });
}

void OtlpSpanExporter::on_end(const telemetry::SpanData& span)
{
    // Encoded here, once, outside the lock: the queue holds what will be sent (content left out unless asked), and
    // its bytes are counted exactly.
    std::string encoded = encode_span(span, impl_->options.encoding, impl_->options.capture_content);
    bool batch_ready = false;
    {
        std::lock_guard lock(impl_->mutex);
        if (impl_->stopping || impl_->queue.size() >= impl_->options.max_queue_spans ||
            impl_->queued_bytes + encoded.size() > impl_->options.max_queue_bytes) {
            ++impl_->dropped;
            return;
        }
        impl_->queued_bytes += encoded.size();
        impl_->queue.push_back(std::move(encoded));
        batch_ready = impl_->queue.size() == impl_->options.max_batch_spans;
    }
    if (batch_ready)
        impl_->wake();
}

bool OtlpSpanExporter::wants_content() const noexcept
{
    return impl_->options.capture_content;
}

asio::awaitable<void> OtlpSpanExporter::flush()
{
    // On the loop's strand, whichever executor the caller runs on.
    asio::awaitable<void> on_strand = asio::co_spawn(impl_->strand, Impl::flush(impl_), asio::use_awaitable);
    co_await std::move(on_strand);
}

asio::awaitable<void> OtlpSpanExporter::shutdown(std::chrono::milliseconds deadline)
{
    asio::awaitable<void> on_strand = asio::co_spawn(impl_->strand, Impl::shutdown(impl_, deadline), asio::use_awaitable);
    co_await std::move(on_strand);
}

OtlpSpanExporter::Stats OtlpSpanExporter::stats() const
{
    Stats s;
    s.exported = impl_->exported;
    s.dropped = impl_->dropped;
    s.failed_batches = impl_->failed_batches;
    std::lock_guard lock(impl_->mutex);
    s.queued = impl_->queue.size();
    s.queued_bytes = impl_->queued_bytes;
    return s;
}

const OtlpOptions& OtlpSpanExporter::options() const noexcept
{
    return impl_->options;
}

}  // namespace adk::otel
