// JSON-RPC 2.0 as MCP speaks it, without I/O: text in, messages out, and back. Transports (stdio lines, HTTP
// bodies, SSE events) hand decode() the text of one message (or of a batch, which MCP 2025-03-26 allowed), and
// write what encode() gives them.
//
// Whatever is read is checked: an object with "jsonrpc": "2.0"; a request has a method and an id that is a
// string or an integer (never null, a fraction or a boolean); params are an object or an array; a response has
// an id and exactly one of result and error; an error has an integer code and a string message. What does not
// fit is not guessed at: it becomes an Invalid item carrying the error to answer with (parse_error,
// invalid_request) and the id when one could be read. Errors keep the remote's code, message and data apart
// (RpcError), so that a caller can tell "method not found" from a tool's failure without reading prose.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <compare>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace adk::mcp::jsonrpc {

namespace json = boost::json;

// The codes JSON-RPC 2.0 reserves, and MCP's own.
namespace code {
inline constexpr std::int64_t parse_error = -32700;
inline constexpr std::int64_t invalid_request = -32600;
inline constexpr std::int64_t method_not_found = -32601;
inline constexpr std::int64_t invalid_params = -32602;
inline constexpr std::int64_t internal_error = -32603;
inline constexpr std::int64_t url_elicitation_required = -32042;  // MCP 2025-11-25
}  // namespace code

// A request's id: a string or an integer. Null only in an error response to a message whose id could not be read.
class Id {
public:
    Id() = default;  // null
    Id(std::int64_t n) : v_(n) {}  // NOLINT: implicit, as ids are written
    Id(std::string s) : v_(std::move(s)) {}  // NOLINT
    Id(const char* s) : v_(std::string(s)) {}  // NOLINT

    bool is_null() const noexcept { return std::holds_alternative<std::monostate>(v_); }
    json::value to_json() const;
    // For logs and errors: 7, "abc" (quoted), null.
    std::string to_string() const;

    friend bool operator==(const Id&, const Id&) = default;
    friend auto operator<=>(const Id&, const Id&) = default;

private:
    std::variant<std::monostate, std::int64_t, std::string> v_;
};

class RpcError {
public:
    RpcError(std::int64_t code_, std::string message_, std::optional<json::value> data_ = std::nullopt)
        : code(code_), message(std::move(message_)), data(std::move(data_))
    {
    }
    std::int64_t code;
    std::string message;
    std::optional<json::value> data;
    friend bool operator==(const RpcError&, const RpcError&) = default;
};

class Request {
public:
    Request(Id id_, std::string method_, std::optional<json::value> params_ = std::nullopt)
        : id(std::move(id_)), method(std::move(method_)), params(std::move(params_))
    {
    }
    Id id;
    std::string method;
    std::optional<json::value> params;  // an object or an array
    friend bool operator==(const Request&, const Request&) = default;
};

class Notification {
public:
    explicit Notification(std::string method_, std::optional<json::value> params_ = std::nullopt)
        : method(std::move(method_)), params(std::move(params_))
    {
    }
    std::string method;
    std::optional<json::value> params;
    friend bool operator==(const Notification&, const Notification&) = default;
};

class Response {
public:
    static Response success(Id id, json::value result);
    static Response failure(Id id, RpcError error);

    Id id;
    std::optional<json::value> result;  // exactly one of result and error is set
    std::optional<RpcError> error;
    bool ok() const noexcept { return result.has_value(); }
    friend bool operator==(const Response&, const Response&) = default;

private:
    Response() = default;
};

// A message that is not JSON-RPC: the error to answer it with, and its id when one could be read (else null).
class Invalid {
public:
    Invalid(Id id_, RpcError error_) : id(std::move(id_)), error(std::move(error_)) {}
    Id id;
    RpcError error;
    friend bool operator==(const Invalid&, const Invalid&) = default;
};

using Message = std::variant<Request, Notification, Response>;
using Item = std::variant<Request, Notification, Response, Invalid>;

class Decoded {
public:
    std::vector<Item> items;  // one, unless the text was a batch (then one per element, in order)
    bool batch = false;
};

// Reads one message or a batch. Never throws for bad input: text that is not JSON (or nests deeper than
// adk::max_read_json_depth, or holds a number no JSON can hold, as 1e400) is one Invalid item with parse_error;
// an empty batch, one with invalid_request.
Decoded decode(std::string_view text);
// The same for a value already parsed.
Item decode_value(const json::value& v);

json::value to_json(const Message& message);
json::value to_json(const Invalid& invalid);  // the error response that answers it
// Compact JSON text, one line (no newline in it: JSON escapes them), "jsonrpc" first.
std::string encode(const Message& message);

}  // namespace adk::mcp::jsonrpc
