#include <adk/net/retry.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <string>

namespace adk::net {
namespace {

std::string_view trim_ows(std::string_view s)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
        s.remove_suffix(1);
    return s;
}

std::optional<double> parse_number(std::string_view s)
{
    s = trim_ows(s);
    if (s.empty())
        return std::nullopt;
    double v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || end != s.data() + s.size() || !std::isfinite(v))
        return std::nullopt;
    return v;
}

std::optional<std::chrono::milliseconds> within(double ms, const RetryPolicy& policy)
{
    if (!(ms > 0) || ms > static_cast<double>(policy.max_server_hint.count()))
        return std::nullopt;
    return std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(ms)));
}

bool iequals(std::string_view a, std::string_view b)
{
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
}

// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const auto yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

}  // namespace

bool retryable_status(unsigned status, std::string_view x_should_retry)
{
    x_should_retry = trim_ows(x_should_retry);
    if (iequals(x_should_retry, "true"))
        return true;
    if (iequals(x_should_retry, "false"))
        return false;
    return status == 408 || status == 409 || status == 429 || status >= 500;
}

std::optional<std::chrono::milliseconds> retry_after_hint(std::string_view retry_after_ms,
                                                          std::string_view retry_after,
                                                          std::chrono::system_clock::time_point now,
                                                          const RetryPolicy& policy)
{
    if (auto ms = parse_number(retry_after_ms))
        return within(*ms, policy);
    if (auto seconds = parse_number(retry_after))
        return within(*seconds * 1000.0, policy);
    if (auto date = parse_http_date(retry_after)) {
        const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(*date - now).count();
        return within(static_cast<double>(ms), policy);
    }
    return std::nullopt;
}

std::optional<std::chrono::milliseconds> bounded_hint(std::optional<std::chrono::milliseconds> hint,
                                                      const RetryPolicy& policy)
{
    if (!hint || hint->count() <= 0 || *hint > policy.max_server_hint)
        return std::nullopt;
    return hint;
}

std::chrono::milliseconds backoff_delay(int retry, const RetryPolicy& policy, double unit_random)
{
    const double base = static_cast<double>(policy.initial_backoff.count()) * std::pow(2.0, std::max(0, retry - 1));
    const double capped = std::min(base, static_cast<double>(policy.max_backoff.count()));
    const double jitter = 1.0 - 0.25 * std::clamp(unit_random, 0.0, 1.0);
    return std::chrono::milliseconds(static_cast<std::int64_t>(capped * jitter));
}

std::optional<std::chrono::system_clock::time_point> parse_http_date(std::string_view text)
{
    // "Sun, 06 Nov 1994 08:49:37 GMT"
    text = trim_ows(text);
    if (text.size() != 29 || text[3] != ',' || text.substr(26) != "GMT")
        return std::nullopt;
    static constexpr std::array<std::string_view, 12> months = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                                "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    auto number = [&](std::size_t pos, std::size_t len) -> std::optional<int> {
        int v = 0;
        auto s = text.substr(pos, len);
        auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec != std::errc{} || end != s.data() + s.size())
            return std::nullopt;
        return v;
    };
    const auto month_it = std::find(months.begin(), months.end(), text.substr(8, 3));
    const auto day = number(5, 2), year = number(12, 4), hour = number(17, 2), minute = number(20, 2),
               second = number(23, 2);
    if (month_it == months.end() || !day || !year || !hour || !minute || !second || *day < 1 || *day > 31 ||
        *hour > 23 || *minute > 59 || *second > 60)
        return std::nullopt;
    const auto month = static_cast<unsigned>(month_it - months.begin() + 1);
    const std::int64_t days = days_from_civil(*year, month, static_cast<unsigned>(*day));
    const std::int64_t seconds = days * 86400 + *hour * 3600 + *minute * 60 + *second;
    return std::chrono::system_clock::time_point(std::chrono::seconds(seconds));
}

}  // namespace adk::net
