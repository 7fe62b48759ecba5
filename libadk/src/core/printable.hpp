// Text from outside made safe to quote in an error message or a log line. Private to libadk.
#pragma once

#include <string>
#include <string_view>

namespace adk::detail {

// `text` with control characters written as \xNN (so that a quoted value cannot add a line to a log), cut
// after `max` bytes with "...".
std::string printable(std::string_view text, std::size_t max = 200);

}  // namespace adk::detail
