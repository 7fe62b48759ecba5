// Strands for invocations and parallel branches.
#pragma once

#include <boost/asio/any_io_executor.hpp>

namespace adk {

// A new strand over the thread pool or io_context that `ex` runs on. When `ex` is itself a strand, the
// new strand wraps the strand's inner executor, so that work on the two strands runs in parallel.
boost::asio::any_io_executor new_strand(const boost::asio::any_io_executor& ex);

// The executor for a parallel branch of work running on `ex`: a new strand when `ex` is a strand (so the
// branches run in parallel), `ex` itself when it is not (one thread runs it: see
// RunnerOptions::single_threaded).
boost::asio::any_io_executor branch_executor(const boost::asio::any_io_executor& ex);

}  // namespace adk
