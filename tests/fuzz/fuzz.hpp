// Shared by the libFuzzer targets: what a target asserts, and the one exception it lets through.
#pragma once

#include <adk/core/error.hpp>

#include <boost/json/value.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string_view>

namespace adk::fuzz {

// A property that must hold for every input: a violation is a crash, which libFuzzer records.
inline void check(bool holds, const char* what)
{
    if (!holds) {
        std::fprintf(stderr, "fuzz property violated: %s\n", what);
        std::abort();
    }
}

// Runs f(); adk::Error is the only failure allowed (anything else escapes and crashes the target). Returns
// whether f() finished without one.
template <class F>
bool only_adk_errors(F&& f)
{
    try {
        f();
        return true;
    } catch (const adk::Error&) {
        return false;
    }
}

inline std::string_view as_text(const unsigned char* data, std::size_t size)
{
    return {reinterpret_cast<const char*>(data), size};
}

// JSON equality, with doubles equal within a few units in the last place: Boost.JSON 1.81's parser is not
// correctly rounded for every number (3.0000000000000002E82, written exactly, reads back as
// 2.9999999999999999E82; 444444444044444444440, too large for an integer, reads back one unit off), and
// nothing adk-cpp does changes that.
inline bool json_close(const boost::json::value& a, const boost::json::value& b)
{
    if (a.is_double() && b.is_double()) {
        const double x = a.get_double(), y = b.get_double();
        return x == y || std::abs(x - y) <= 4 * std::numeric_limits<double>::epsilon() * std::max(std::abs(x), std::abs(y));
    }
    if (a.kind() != b.kind())
        return false;
    if (a.is_object()) {
        const auto &x = a.get_object(), &y = b.get_object();
        if (x.size() != y.size())
            return false;
        for (const auto& kv : x) {
            const boost::json::value* other = y.if_contains(kv.key());
            if (!other || !json_close(kv.value(), *other))
                return false;
        }
        return true;
    }
    if (a.is_array()) {
        const auto &x = a.get_array(), &y = b.get_array();
        if (x.size() != y.size())
            return false;
        for (std::size_t i = 0; i < x.size(); ++i)
            if (!json_close(x[i], y[i]))
                return false;
        return true;
    }
    return a == b;
}

}  // namespace adk::fuzz
