// Strands for invocations and parallel branches.
#pragma once

#include <boost/asio/any_io_executor.hpp>

namespace adk {

// A new strand over the thread pool or io_context that `ex` runs on. When `ex` is itself a strand, the
// new strand wraps the strand's inner executor, so that work on the two strands runs in parallel.
boost::asio::any_io_executor new_strand(const boost::asio::any_io_executor& ex);

}  // namespace adk
