// Shared by the libFuzzer targets: what a target asserts, and the one exception it lets through.
#pragma once

#include <adk/core/error.hpp>

#include <cstdio>
#include <cstdlib>
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

}  // namespace adk::fuzz
