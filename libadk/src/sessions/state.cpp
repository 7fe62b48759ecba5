#include <adk/core/error.hpp>
#include <adk/sessions/state.hpp>

#include "../core/printable.hpp"

#include <string>

namespace adk {

void validate_state_key(std::string_view key)
{
    auto refuse = [&](const std::string& why) {
        throw Error(errc::invalid_argument, "state key '" + detail::printable(key, 64) + "' is refused: " + why +
                                                ". Use a short name such as 'user:city' or 'draft_count'");
    };
    if (key.empty())
        refuse("it is empty");
    for (std::string_view scope : {app_state_prefix, user_state_prefix, temp_state_prefix})
        if (key == scope)
            refuse("it names the scope '" + std::string(scope) + "' but no key in it");
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
