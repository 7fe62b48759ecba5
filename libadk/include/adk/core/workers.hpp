// A pool of coroutines over one queue: what runs a bounded number of tasks at once (a model's tool calls, a
// ParallelWorker's items).
#pragma once

#include <boost/asio/awaitable.hpp>

#include <cstddef>
#include <functional>

namespace adk {

namespace asio = boost::asio;

// Runs `count` coroutines of `worker` at once on the calling coroutine's executor and waits until they all ended;
// then rethrows the first failure, in the workers' order. Each worker takes its next task from what they share
// until none is left: on one executor they run one step at a time, so a shared index needs no lock. Cancelling
// the caller cancels them all.
asio::awaitable<void> run_workers(std::size_t count, const std::function<asio::awaitable<void>()>& worker);

}  // namespace adk
