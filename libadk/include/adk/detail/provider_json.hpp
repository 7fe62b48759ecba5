// What the providers (providers/) share when they read and write their wire formats. Not part of the API:
// a provider's own code uses it, as `provider::` (namespace provider = adk::detail::provider).
#pragma once

#include <adk/models/llm_request.hpp>
#include <adk/models/llm_response.hpp>

#include <boost/json/object.hpp>
#include <boost/json/storage_ptr.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace adk {

namespace detail::provider {

// An error status whose body is not the provider's JSON error (an HTML page from a proxy, say): error_code
// "HTTP_<status>" and the start of the body as the message.
LlmResponse http_error_response(unsigned status, std::string_view body);

// Parses JSON from `provider`; throws adk::Error (bad_response) naming the provider and `what` it was.
// `storage` holds the parsed value (the default heap unless given).
boost::json::value parse_json(std::string_view text, std::string_view provider, std::string_view what,
                              boost::json::storage_ptr storage = {});

// The body parsed when it is a JSON object holding "error"; nothing otherwise.
std::optional<boost::json::object> error_object(std::string_view body);

// The string at `key`, or "" when absent or not a string.
std::string string_at(const boost::json::object& o, std::string_view key);

// `v` as an object; adk::Error (bad_response) naming `provider` and `what` when it is not one.
const boost::json::object& object_of(const boost::json::value& v, std::string_view provider, std::string_view what);

// A count at `key` (tokens, an index): a non-negative integer that fits in 63 bits; nothing when the member
// is absent or is no such number.
std::optional<std::int64_t> count_at(const boost::json::object& o, std::string_view key);

// The environment variable's value, or "".
std::string environment(const char* name);

// Throws adk::Error (bad_response) when an answer from `provider` gathers more than `limit` bytes in
// `what` (ResponseLimits::max_answer_bytes).
void check_answer_size(std::size_t size, std::size_t limit, std::string_view provider, std::string_view what);

// A function call whose arguments arrived as JSON text (assembled from stream fragments): "" or blanks mean
// no arguments; anything but a JSON object throws adk::Error (bad_response) naming the function.
FunctionCall function_call(std::string id, std::string name, std::string_view arguments);

// A streamed chunk made of one part.
LlmResponse chunk(Part part);

// For providers that cannot run code themselves: when the request asks for it (LlmRequest::code_execution), or
// its contents carry executableCode or codeExecutionResult parts (which such providers leave out), logs a warning,
// once per process for each provider.
void warn_without_code_execution(const LlmRequest& request, std::string_view provider);

}  // namespace detail::provider

}  // namespace adk
