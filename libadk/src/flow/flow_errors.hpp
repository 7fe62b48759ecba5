// How the flow tells a failure that stops the invocation from one that callbacks may answer.
#pragma once

#include <adk/core/error.hpp>
#include <adk/core/stream.hpp>

#include <boost/asio/error.hpp>
#include <boost/asio/experimental/channel_error.hpp>

#include <exception>

namespace adk::detail {

inline Error as_error(std::exception_ptr failure)
{
    try {
        std::rethrow_exception(as_adk_error(failure));
    } catch (const Error& e) {
        return e;
    }
}

// Cancellation and a departed consumer stop the invocation; they are never handed to error callbacks.
inline bool stops_invocation(const Error& e)
{
    return e.code() == errc::cancelled || e.code() == errc::stream_closed ||
           e.code() == boost::asio::error::operation_aborted ||
           e.code() == boost::asio::experimental::error::channel_cancelled;
}

}  // namespace adk::detail
