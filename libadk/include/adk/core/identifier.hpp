// Identifiers: agent names, app names, the names of instruction templates' state keys. ASCII letters, digits
// and '_', not empty, not starting with a digit (ADK Python's rule for app and agent names).
#pragma once

#include <string_view>

namespace adk {

bool is_identifier(std::string_view name) noexcept;

}  // namespace adk
