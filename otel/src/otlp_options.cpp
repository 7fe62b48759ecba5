// OtlpOptions::from_env: OpenTelemetry's environment variables
// (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/ and the OTLP exporter's).
#include <adk/otel/otlp_exporter.hpp>

#include <adk/core/error.hpp>
#include <adk/net/url.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>

namespace adk::otel {

namespace {

std::string trimmed(std::string_view s)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
        s.remove_suffix(1);
    return std::string(s);
}

std::string lower(std::string s)
{
    for (char& c : s)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// "key1=value1,key2=value2": what OTEL_EXPORTER_OTLP_HEADERS and OTEL_RESOURCE_ATTRIBUTES hold. The values are not
// printed in errors: headers hold credentials.
std::vector<std::pair<std::string, std::string>> key_values(std::string_view text, std::string_view variable)
{
    std::vector<std::pair<std::string, std::string>> out;
    while (!text.empty()) {
        const auto comma = text.find(',');
        const std::string_view item = text.substr(0, comma);
        text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
        if (trimmed(item).empty())
            continue;
        const auto eq = item.find('=');
        if (eq == std::string_view::npos || trimmed(item.substr(0, eq)).empty())
            throw Error(errc::invalid_argument, std::string(variable) + " must be key=value pairs separated by commas "
                                                "(item " + std::to_string(out.size() + 1) + " is not)");
        // W3C Baggage's form: percent-encoded (an escape that is not one stays as written).
        out.emplace_back(net::percent_decode(trimmed(item.substr(0, eq))),
                         net::percent_decode(trimmed(item.substr(eq + 1))));
    }
    return out;
}

std::size_t number(const std::string& text, std::string_view variable, std::size_t max)
{
    std::size_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || value > max)
        throw Error(errc::invalid_argument, std::string(variable) + " must be a whole number up to " +
                                                std::to_string(max) + ", not '" + text + "'");
    return value;
}

std::string checked_url(std::string url, std::string_view variable)
{
    try {
        (void)net::parse_url(url);
    } catch (const Error& e) {
        throw Error(errc::invalid_argument, std::string(variable) + " is not a URL (" + net::redact_url(url) +
                                                "): " + e.message());
    }
    return url;
}

}  // namespace

OtlpOptions OtlpOptions::from_env(std::function<std::optional<std::string>(std::string_view)> get)
{
    if (!get)
        get = [](std::string_view name) -> std::optional<std::string> {
            const char* v = std::getenv(std::string(name).c_str());
            if (!v)
                return std::nullopt;
            return std::string(v);
        };
    // The traces' own variable, else the general one; empty counts as unset.
    auto either = [&](std::string_view traces_name, std::string_view general_name)
        -> std::optional<std::pair<std::string, std::string_view>> {
        if (auto v = get(traces_name); v && !trimmed(*v).empty())
            return std::make_pair(trimmed(*v), traces_name);
        if (auto v = get(general_name); v && !trimmed(*v).empty())
            return std::make_pair(trimmed(*v), general_name);
        return std::nullopt;
    };
    auto value = [&](std::string_view name) -> std::optional<std::string> {
        if (auto v = get(name); v && !trimmed(*v).empty())
            return trimmed(*v);
        return std::nullopt;
    };

    OtlpOptions o;
    const bool sdk_disabled = [&] {
        auto v = value("OTEL_SDK_DISABLED");
        return v && lower(*v) == "true";
    }();
    if (sdk_disabled)
        o.enabled = false;
    if (auto v = value("OTEL_TRACES_EXPORTER")) {
        const std::string exporter = lower(*v);
        if (exporter == "none")
            o.enabled = false;
        else if (exporter != "otlp")
            throw Error(errc::invalid_argument, "OTEL_TRACES_EXPORTER is '" + *v +
                                                    "': adk-cpp exports traces over OTLP only (otlp, or none)");
    }
    // One signal's endpoint: its own variables (OTEL_EXPORTER_OTLP_TRACES_*, _METRICS_*), else the general ones.
    auto read_signal = [&](std::string_view signal, std::string_view path, std::string& url,
                           std::vector<std::pair<std::string, std::string>>& headers, Encoding& encoding,
                           std::chrono::milliseconds& timeout, std::string& ca_file) {
        const std::string prefix = "OTEL_EXPORTER_OTLP_" + std::string(signal) + "_";
        const std::string endpoint_name = prefix + "ENDPOINT";
        if (auto v = value(endpoint_name)) {
            url = checked_url(*v, endpoint_name);  // used as it is
        } else if (auto base = value("OTEL_EXPORTER_OTLP_ENDPOINT")) {
            std::string joined = *base;
            if (joined.back() != '/')
                joined += '/';
            url = checked_url(joined + std::string(path), "OTEL_EXPORTER_OTLP_ENDPOINT");
        }
        const std::string protocol_name = prefix + "PROTOCOL";
        if (auto v = either(protocol_name, "OTEL_EXPORTER_OTLP_PROTOCOL")) {
            if (v->first == "http/protobuf")
                encoding = Encoding::protobuf;
            else if (v->first == "http/json")
                encoding = Encoding::json;
            else
                throw Error(errc::invalid_argument, std::string(v->second) + " is '" + v->first +
                                                        "': adk-cpp speaks OTLP over HTTP, http/protobuf or http/json "
                                                        "(grpc is not supported: point it at the collector's HTTP port, "
                                                        "4318)");
        }
        const std::string headers_name = prefix + "HEADERS";
        if (auto v = either(headers_name, "OTEL_EXPORTER_OTLP_HEADERS")) {
            headers = key_values(v->first, v->second);
            for (const auto& [name, header_value] : headers) {
                try {
                    net::validate_header(name, header_value);
                } catch (const Error&) {
                    throw Error(errc::invalid_argument, std::string(v->second) + ": the header '" + name +
                                                            "' has a name or value HTTP forbids (control characters?)");
                }
            }
        }
        const std::string timeout_name = prefix + "TIMEOUT";
        if (auto v = either(timeout_name, "OTEL_EXPORTER_OTLP_TIMEOUT"))
            timeout = std::chrono::milliseconds(number(v->first, v->second, 3'600'000));
        const std::string certificate_name = prefix + "CERTIFICATE";
        if (auto v = either(certificate_name, "OTEL_EXPORTER_OTLP_CERTIFICATE"))
            ca_file = v->first;
    };
    read_signal("TRACES", "v1/traces", o.traces_url, o.headers, o.encoding, o.timeout, o.ca_file);
    read_signal("METRICS", "v1/metrics", o.metrics.url, o.metrics.headers, o.metrics.encoding, o.metrics.timeout,
                o.metrics.ca_file);
    if (auto v = value("OTEL_METRICS_EXPORTER")) {
        const std::string exporter = lower(*v);
        if (exporter == "none")
            o.metrics.enabled = false;
        else if (exporter != "otlp" && exporter != "prometheus")
            throw Error(errc::invalid_argument, "OTEL_METRICS_EXPORTER is '" + *v +
                                                    "': adk-cpp exports metrics over OTLP (otlp), serves them to "
                                                    "Prometheus at the API server's /metrics, or neither (none)");
        if (exporter == "prometheus")
            o.metrics.enabled = false;  // scraped, not pushed
    }
    if (auto v = value("OTEL_METRIC_EXPORT_INTERVAL"))
        o.metrics.interval = std::chrono::milliseconds(number(*v, "OTEL_METRIC_EXPORT_INTERVAL", 86'400'000));
    if (sdk_disabled)
        o.metrics.enabled = false;
    if (o.metrics.interval.count() == 0)
        throw Error(errc::invalid_argument, "OTEL_METRIC_EXPORT_INTERVAL must be above 0 (milliseconds)");
    if (auto v = value("OTEL_METRIC_EXPORT_TIMEOUT"))
        o.metrics.timeout = std::chrono::milliseconds(number(*v, "OTEL_METRIC_EXPORT_TIMEOUT", 3'600'000));

    // The resource: OTEL_RESOURCE_ATTRIBUTES, then OTEL_SERVICE_NAME over its service.name, and the SDK's own.
    std::string service_name = "unknown_service";
    std::vector<std::pair<std::string, std::string>> attributes;
    if (auto v = value("OTEL_RESOURCE_ATTRIBUTES"))
        attributes = key_values(*v, "OTEL_RESOURCE_ATTRIBUTES");
    for (const auto& [k, val] : attributes)
        if (k == "service.name")
            service_name = val;
    if (auto v = value("OTEL_SERVICE_NAME"))
        service_name = *v;
    o.origin.resource.push_back({"service.name", service_name});
    for (const auto& [k, val] : attributes)
        if (k != "service.name")
            o.origin.resource.push_back({k, val});
    o.origin.resource.push_back({"telemetry.sdk.name", std::string("adk-cpp")});
    o.origin.resource.push_back({"telemetry.sdk.language", std::string("cpp")});

    if (auto v = value("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"))
        o.capture_content = lower(*v) == "true";

    if (auto v = value("OTEL_TRACES_SAMPLER")) {
        static const std::pair<const char*, telemetry::Sampler> samplers[] = {
            {"always_on", telemetry::Sampler::always_on},
            {"always_off", telemetry::Sampler::always_off},
            {"traceidratio", telemetry::Sampler::trace_id_ratio},
            {"parentbased_always_on", telemetry::Sampler::parent_based_always_on},
            {"parentbased_always_off", telemetry::Sampler::parent_based_always_off},
            {"parentbased_traceidratio", telemetry::Sampler::parent_based_trace_id_ratio},
        };
        const auto found = std::find_if(std::begin(samplers), std::end(samplers),
                                        [&](const auto& s) { return lower(*v) == s.first; });
        if (found == std::end(samplers))
            throw Error(errc::invalid_argument, "OTEL_TRACES_SAMPLER is '" + *v +
                                                    "': use always_on, always_off, traceidratio, parentbased_always_on, "
                                                    "parentbased_always_off or parentbased_traceidratio");
        o.tracer.sampler = found->second;
    }
    if (auto v = value("OTEL_TRACES_SAMPLER_ARG")) {
        char* end = nullptr;
        const double ratio = std::strtod(v->c_str(), &end);
        if (end != v->c_str() + v->size() || !(ratio >= 0.0 && ratio <= 1.0))
            throw Error(errc::invalid_argument, "OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1, not '" + *v + "'");
        o.tracer.ratio = ratio;
    }

    if (auto v = value("OTEL_BSP_SCHEDULE_DELAY"))
        o.schedule_delay = std::chrono::milliseconds(number(*v, "OTEL_BSP_SCHEDULE_DELAY", 3'600'000));
    if (auto v = value("OTEL_BSP_MAX_QUEUE_SIZE"))
        o.max_queue_spans = number(*v, "OTEL_BSP_MAX_QUEUE_SIZE", 1'000'000);
    if (auto v = value("OTEL_BSP_MAX_EXPORT_BATCH_SIZE"))
        o.max_batch_spans = number(*v, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 1'000'000);
    if (o.max_batch_spans == 0 || o.max_queue_spans == 0)
        throw Error(errc::invalid_argument, "OTEL_BSP_MAX_QUEUE_SIZE and OTEL_BSP_MAX_EXPORT_BATCH_SIZE must be above 0");
    o.max_batch_spans = std::min(o.max_batch_spans, o.max_queue_spans);  // as the specification says
    return o;
}

}  // namespace adk::otel
