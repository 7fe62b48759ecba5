#include <adk/core/error.hpp>
#include <adk/sessions/state.hpp>

#include <string>

namespace adk {

namespace {
std::string printable(std::string_view key)
{
    std::string out;
    for (char c : key.substr(0, 64)) {
        auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7f) {
            static constexpr char hex[] = "0123456789abcdef";
            out += "\\x";
            out += hex[u >> 4];
            out += hex[u & 15];
        } else {
            out += c;
        }
    }
    if (key.size() > 64)
        out += "...";
    return out;
}
}  // namespace

void validate_state_key(std::string_view key)
{
    auto refuse = [&](const std::string& why) {
        throw Error(errc::invalid_argument, "state key '" + printable(key) + "' is refused: " + why +
                                                ". Use a short name such as 'user:city' or 'draft_count'");
    };
    if (key.empty())
        refuse("it is empty");
    if (key.size() > max_state_key_bytes)
        refuse("it is " + std::to_string(key.size()) + " bytes long, over the limit of " +
               std::to_string(max_state_key_bytes));
    for (char c : key) {
        auto u = static_cast<unsigned char>(c);
        if (c == '\0')
            refuse("it contains a NUL character");
        if (u < 0x20 || u == 0x7f)
            refuse("it contains a control character");
        if (c == '/' || c == '\\')
            refuse("it contains a path separator");
    }
    if (key.find("..") != std::string_view::npos)
        refuse("it contains '..'");
}

}  // namespace adk
