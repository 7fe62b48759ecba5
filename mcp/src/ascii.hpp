// Small ASCII helpers of the MCP component's sources.
#pragma once

#include <string>
#include <string_view>

namespace adk::mcp {

// `text` with A-Z in lower case (header names, schemes, media types).
inline std::string lower(std::string_view text)
{
    std::string out(text);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z')
            c = static_cast<char>(c - 'A' + 'a');
    return out;
}

}  // namespace adk::mcp
