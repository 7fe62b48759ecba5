// adk::Error and adk::errc: how adk-cpp reports infrastructure and usage errors.
//
// DESIGN: an Error is a boost::system::system_error, so code that already catches system_error keeps
// working. Errors raised by adk-cpp carry the adk category; an Error that wraps a failure from below (a
// socket, a TLS handshake) keeps that failure's original code so callers can still compare it with
// asio::error values. Every message says what went wrong and what to do about it.
#pragma once

#include <boost/system/error_category.hpp>
#include <boost/system/error_code.hpp>
#include <boost/system/system_error.hpp>

#include <string>
#include <utility>
#include <type_traits>

namespace adk {

enum class errc {
    invalid_argument = 1,      // the caller passed something unusable (bad name, bad key, bad JSON)
    not_found,                 // a session, agent or other named thing does not exist
    already_exists,            // creating something whose id is taken
    cancelled,                 // the invocation was cancelled (Runner::cancel, Stream::cancel, asio)
    llm_call_limit_exceeded,   // RunConfig::max_llm_calls reached
    agent_failed,              // an agent's code threw something that is not an adk::Error
    stream_closed,             // emitting into a stream whose consumer is gone
    bad_response,              // a provider sent something that is not its wire format
    storage_failed,            // a session, artifact or memory store failed (database error, disk full, bad file)
    too_large,                 // a value over a size limit (a state value, a file): the message names the limit
    timed_out,                 // a remote (an MCP server, a tool) did not answer in time: the message names it
    unavailable,               // a remote (an MCP server) cannot be reached or ended the connection: named, with why
    node_run_limit_exceeded,   // RunConfig::max_node_runs reached (a workflow's nodes)
};

const boost::system::error_category& error_category() noexcept;

inline boost::system::error_code make_error_code(errc e) noexcept
{
    return {static_cast<int>(e), error_category()};
}

class Error : public boost::system::system_error {
public:
    Error(errc code, std::string message) : Error(make_error_code(code), std::move(message)) {}
    Error(boost::system::error_code code, std::string message)
        : system_error(code, message), message_(std::move(message))
    {
    }

    // The message alone: what() appends the code's own text and location to it.
    const std::string& message() const noexcept { return message_; }

private:
    std::string message_;
};

}  // namespace adk

template <>
struct boost::system::is_error_code_enum<adk::errc> : std::true_type {};
