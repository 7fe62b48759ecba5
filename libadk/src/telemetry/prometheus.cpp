#include <adk/telemetry/prometheus.hpp>

#include <array>
#include <charconv>
#include <cmath>

namespace adk::telemetry {

namespace {

bool name_char(char c, bool first) noexcept
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' || (!first && c >= '0' && c <= '9');
}

// [a-zA-Z_:][a-zA-Z0-9_:]*, runs of other characters as one '_'.
std::string sanitized(std::string_view name)
{
    std::string out;
    for (char c : name) {
        if (name_char(c, out.empty()))
            out += c;
        else if (out.empty() && c >= '0' && c <= '9')
            (out += '_') += c;
        else if (out.empty() || out.back() != '_')
            out += '_';
    }
    return out;
}

std::string unit_suffix(std::string_view unit)
{
    // Annotations in braces carry no unit.
    std::string bare;
    int depth = 0;
    for (char c : unit) {
        if (c == '{')
            ++depth;
        else if (c == '}')
            depth = depth > 0 ? depth - 1 : 0;
        else if (depth == 0)
            bare += c;
    }
    if (bare.empty() || bare == "1")
        return {};
    static constexpr std::array<std::pair<std::string_view, std::string_view>, 12> units{{
        {"s", "seconds"}, {"ms", "milliseconds"}, {"us", "microseconds"}, {"ns", "nanoseconds"},
        {"min", "minutes"}, {"h", "hours"}, {"d", "days"}, {"By", "bytes"}, {"KiBy", "kibibytes"},
        {"MiBy", "mebibytes"}, {"%", "percent"}, {"m", "meters"},
    }};
    for (const auto& [ucum, word] : units)
        if (bare == ucum)
            return std::string(word);
    return sanitized(bare);
}

std::string metric_name(const MetricData& m)
{
    std::string name = sanitized(m.name);
    const std::string suffix = unit_suffix(m.unit);
    if (!suffix.empty() && (name.size() < suffix.size() + 1 || name.compare(name.size() - suffix.size(), suffix.size(),
                                                                            suffix) != 0))
        (name += '_') += suffix;
    if (m.kind == InstrumentKind::counter && (name.size() < 6 || name.compare(name.size() - 6, 6, "_total") != 0))
        name += "_total";
    return name;
}

std::string label_name(std::string_view key)
{
    std::string out = sanitized(key);
    if (!out.empty() && out[0] == '_' && !key.empty() && key[0] >= '0' && key[0] <= '9')
        out = "key" + out;
    return out.empty() ? std::string("_") : out;
}

void append_escaped(std::string& out, std::string_view text, bool quotes)
{
    for (char c : text) {
        if (c == '\\')
            out += "\\\\";
        else if (c == '\n')
            out += "\\n";
        else if (c == '"' && quotes)
            out += "\\\"";
        else
            out += c;
    }
}

void append_number(std::string& out, double v)
{
    if (std::isnan(v)) {
        out += "NaN";
        return;
    }
    if (std::isinf(v)) {
        out += v > 0 ? "+Inf" : "-Inf";
        return;
    }
    std::array<char, 32> buf{};
    const auto result = std::to_chars(buf.data(), buf.data() + buf.size(), v);
    out.append(buf.data(), result.ptr);
}

void append_labels(std::string& out, const MetricAttributes& attributes, std::string_view scope,
                   std::string_view le = {})
{
    out += "{otel_scope_name=\"";
    append_escaped(out, scope, true);
    out += '"';
    for (const auto& [key, value] : attributes) {
        out += ',';
        out += label_name(key);
        out += "=\"";
        append_escaped(out, value, true);
        out += '"';
    }
    if (!le.empty()) {
        out += ",le=\"";
        out += le;
        out += '"';
    }
    out += '}';
}

}  // namespace

std::string prometheus_text(const MetricsSnapshot& snapshot)
{
    std::string out;
    for (const MetricData& m : snapshot.metrics) {
        if (m.points.empty())
            continue;
        const std::string name = metric_name(m);
        out += "# HELP ";
        out += name;
        out += ' ';
        append_escaped(out, m.description, false);
        out += "\n# TYPE ";
        out += name;
        switch (m.kind) {
        case InstrumentKind::counter: out += " counter\n"; break;
        case InstrumentKind::histogram: out += " histogram\n"; break;
        case InstrumentKind::up_down_counter:
        case InstrumentKind::gauge: out += " gauge\n"; break;
        }
        for (const MetricPoint& p : m.points) {
            if (m.kind != InstrumentKind::histogram) {
                out += name;
                append_labels(out, p.attributes, snapshot.scope);
                out += ' ';
                append_number(out, p.value);
                out += '\n';
                continue;
            }
            std::uint64_t cumulative = 0;
            for (std::size_t i = 0; i <= m.bounds.size() && i < p.bucket_counts.size(); ++i) {
                cumulative += p.bucket_counts[i];
                std::string le;
                if (i < m.bounds.size())
                    append_number(le, m.bounds[i]);
                else
                    le = "+Inf";
                out += name;
                out += "_bucket";
                append_labels(out, p.attributes, snapshot.scope, le);
                out += ' ';
                out += std::to_string(cumulative);
                out += '\n';
            }
            out += name;
            out += "_sum";
            append_labels(out, p.attributes, snapshot.scope);
            out += ' ';
            append_number(out, p.sum);
            out += '\n';
            out += name;
            out += "_count";
            append_labels(out, p.attributes, snapshot.scope);
            out += ' ';
            out += std::to_string(p.count);
            out += '\n';
        }
    }
    return out;
}

}  // namespace adk::telemetry
