#include <adk/core/workers.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <vector>

namespace adk {

asio::awaitable<void> run_workers(std::size_t count, const std::function<asio::awaitable<void>()>& worker)
{
    if (count == 0)
        co_return;
    auto ex = co_await asio::this_coro::executor;
    using op_type = decltype(asio::co_spawn(ex, worker, asio::deferred));
    std::vector<op_type> ops;
    for (std::size_t w = 0; w < count; ++w)
        ops.push_back(asio::co_spawn(ex, worker, asio::deferred));
    auto group = asio::experimental::make_parallel_group(std::move(ops));
    auto [order, failures] = co_await group.async_wait(asio::experimental::wait_for_all(), asio::use_awaitable);
    (void)order;
    for (const std::exception_ptr& failure : failures)
        if (failure)
            std::rethrow_exception(failure);
}

}  // namespace adk
