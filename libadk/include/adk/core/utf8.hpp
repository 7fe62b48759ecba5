// Text cut at a byte bound without splitting a UTF-8 sequence: for what adk-cpp bounds and then writes (log lines,
// metric attributes, what a summarizer is given), so that the part kept stays text.
#pragma once

#include <cstddef>
#include <string_view>

namespace adk {

// The size of the longest prefix of `text` of at most `max_bytes` bytes that does not end inside a UTF-8 sequence
// (the whole text when it fits). Bytes that are not UTF-8 are counted as they are.
constexpr std::size_t utf8_prefix_size(std::string_view text, std::size_t max_bytes) noexcept
{
    if (text.size() <= max_bytes)
        return text.size();
    std::size_t end = max_bytes;
    while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80)
        --end;
    return end;
}

}  // namespace adk
