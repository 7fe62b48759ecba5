// What the parts of adk::workflow share: START's name, how an output reads as a message, the checks of a node's
// input and output, and a node's questions to a person. Private to adk::workflow.
#pragma once

#include <adk/workflow/workflow.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace adk::workflow::detail {

inline constexpr std::string_view start_name = "__START__";

// What a node's output says as a message: text as it is, anything else as JSON.
Content content_of(const json::value& output, bool user);

// A number in [0, 1), for a retry's jitter.
double unit_random();

// Whether a failure is the invocation's cancellation, which no retry and no node error report.
bool is_cancellation(const std::exception& e, const InvocationContext& ctx);

// Throws adk::Error naming the node when `value` does not fit `schema` (none: nothing to check); `what` is
// "input" or "output".
void check_schema(const std::optional<json::value>& schema, const json::value& value, const Node& node,
                  std::string_view what);

// Thrown by NodeContext::request_input when the node waits for a person: the scheduler pauses the node. Not an
// std::exception, so that nothing takes it for a failure.
struct NodeInterrupted {};

// The answers to every question in `ids`, when all came: one answer as it is, several as a list.
std::optional<json::value> answers_to(const InvocationContext& ctx, const std::vector<std::string>& ids);

}  // namespace adk::workflow::detail
