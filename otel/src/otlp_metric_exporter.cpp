#include <adk/otel/otlp_metric_exporter.hpp>

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

namespace adk::otel {

namespace {

net::HttpClientOptions metric_client_options(const OtlpOptions& o)
{
    return detail::otlp_client_options(o.metrics.ca_file, o.metrics.timeout, o.max_retries);
}

}  // namespace

class OtlpMetricExporter::Impl : public std::enable_shared_from_this<Impl> {
public:
    Impl(asio::any_io_executor executor, std::shared_ptr<telemetry::Meter> m, OtlpOptions o)
        : meter(std::move(m)), options(std::move(o)), strand(asio::make_strand(executor)), timer(strand),
          client(metric_client_options(options))
    {
    }

    // On the strand: an export every interval until stopped.
    asio::awaitable<void> loop()
    {
        while (!stopping) {
            timer.expires_after(options.metrics.interval);
            boost::system::error_code ec;
            // Named first: g++ 12 miscompiles class-type temporaries built inside a co_await expression.
            asio::awaitable<void> scheduled = timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
            co_await std::move(scheduled);
            if (stopping)
                break;
            co_await export_once();
        }
    }

    asio::awaitable<void> export_once()
    {
        net::HttpRequest request("POST", options.metrics.url);
        request.set("content-type", content_type(options.metrics.encoding));
        for (const auto& [name, value] : options.metrics.headers)
            request.set(name, value);
        request.body = encode_metrics(options.origin, meter->collect(), options.metrics.encoding);
        std::string failure;
        try {
            net::HttpResponse response = co_await client.send(std::move(request));
            const std::string body = co_await response.read_all(std::size_t{1} << 20);
            if (response.ok()) {
                ++exports;
                co_return;
            }
            failure = "the collector answered " + std::to_string(response.status());
        } catch (const Error& e) {
            failure = e.message();
        }
        ++failed;
        log(LogLevel::warning, "OTLP metrics export to " + net::redact_url(options.metrics.url) +
                                   " failed (the next export carries its counts): " + failure);
    }

    // On the strand.
    static asio::awaitable<void> shutdown(std::shared_ptr<Impl> impl, std::chrono::milliseconds deadline)
    {
        if (impl->stopping)
            co_return;
        impl->stopping = true;
        impl->timer.cancel();
        asio::awaitable<void> last = impl->export_once();
        if (!co_await detail::ended_within(std::move(last), deadline)) {
            ++impl->failed;
            log(LogLevel::warning, "OTLP metrics export: shutdown's deadline passed before the last export went");
        }
    }

    std::shared_ptr<telemetry::Meter> meter;
    OtlpOptions options;
    asio::strand<asio::any_io_executor> strand;
    adk::Timer timer;
    net::HttpClient client;
    asio::cancellation_signal stop_signal;
    bool stopping = false;  // on the strand
    std::atomic<std::uint64_t> exports{0};
    std::atomic<std::uint64_t> failed{0};
};

std::shared_ptr<OtlpMetricExporter> OtlpMetricExporter::create(asio::any_io_executor executor,
                                                               std::shared_ptr<telemetry::Meter> meter,
                                                               OtlpOptions options)
{
    if (!meter)
        throw Error(errc::invalid_argument, "OtlpMetricExporter needs a Meter");
    (void)net::parse_url(options.metrics.url);  // throws adk::Error for what is no http(s) URL
    if (options.metrics.interval.count() <= 0)
        throw Error(errc::invalid_argument, "OtlpOptions::metrics.interval must be above 0");
    auto impl = std::make_shared<Impl>(std::move(executor), std::move(meter), std::move(options));
    asio::co_spawn(impl->strand, impl->loop(),
                   asio::bind_cancellation_slot(impl->stop_signal.slot(), [](std::exception_ptr) {}));
    return std::shared_ptr<OtlpMetricExporter>(new OtlpMetricExporter(impl));
}

std::shared_ptr<OtlpMetricExporter> OtlpMetricExporter::from_env(asio::any_io_executor executor,
                                                                 std::shared_ptr<telemetry::Meter> meter)
{
    const auto set = [](const char* name) {
        const char* v = std::getenv(name);
        return v && *v;
    };
    if (!set("OTEL_EXPORTER_OTLP_ENDPOINT") && !set("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"))
        return nullptr;
    OtlpOptions options = OtlpOptions::from_env();
    if (!options.metrics.enabled)
        return nullptr;
    return create(std::move(executor), std::move(meter), std::move(options));
}

OtlpMetricExporter::~OtlpMetricExporter()
{
    // The loop holds the Impl: stop it where it runs, without a last export (shutdown() makes one).
    auto impl = impl_;
    asio::post(impl->strand, [impl] {
        impl->stopping = true;
        impl->timer.cancel();
        impl->stop_signal.emit(asio::cancellation_type::terminal);
    });
}

asio::awaitable<void> OtlpMetricExporter::flush()
{
    auto impl = impl_;
    asio::awaitable<void> on_strand = asio::co_spawn(
        impl->strand, [impl]() -> asio::awaitable<void> { co_await impl->export_once(); }, asio::use_awaitable);
    co_await std::move(on_strand);
}

asio::awaitable<void> OtlpMetricExporter::shutdown(std::chrono::milliseconds deadline)
{
    asio::awaitable<void> on_strand =
        asio::co_spawn(impl_->strand, Impl::shutdown(impl_, deadline), asio::use_awaitable);
    co_await std::move(on_strand);
}

OtlpMetricExporter::Stats OtlpMetricExporter::stats() const
{
    Stats s;
    s.exports = impl_->exports;
    s.failed = impl_->failed;
    return s;
}

}  // namespace adk::otel
