// The one thread an SQLite service runs its connection's calls on (adk::offload), so that the io_context's
// threads never wait for the disk. A service declares it after its connection: it is destroyed (joined)
// first, while the connection is still open.
#pragma once

#include <adk/core/offload.hpp>

#include <boost/asio/thread_pool.hpp>

#include <type_traits>
#include <utility>

namespace adk::sqlite {

class Worker {
public:
    Worker() = default;
    Worker(const Worker&) = delete;
    Worker& operator=(const Worker&) = delete;
    ~Worker() { pool_.join(); }

    // Runs `work` on the worker thread for a caller that awaits it. Not a coroutine: the executor is made
    // here, not inside the caller's co_await expression.
    template <class F>
    asio::awaitable<std::invoke_result_t<F&>> run(F work)
    {
        return offload(pool_.get_executor(), std::move(work));
    }

private:
    asio::thread_pool pool_{1};
};

}  // namespace adk::sqlite
