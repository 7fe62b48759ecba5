#include "printable.hpp"

namespace adk::detail {

std::string printable(std::string_view text, std::size_t max)
{
    std::string out;
    for (char c : text.substr(0, max)) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7f) {
            static constexpr char hex[] = "0123456789abcdef";
            out += "\\x";
            out += hex[u >> 4];
            out += hex[u & 15];
        } else {
            out += c;
        }
    }
    if (text.size() > max)
        out += "...";
    return out;
}

}  // namespace adk::detail
