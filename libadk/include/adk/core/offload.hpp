// offload: runs blocking work (a database call, a file write) on another executor, typically a thread pool
// of the service that owns the work, and resumes the awaiting coroutine on its own executor with the result
// or the exception. The io_context's threads never block on it.
//
//   asio::thread_pool pool(1);
//   int rows = co_await adk::offload(pool.get_executor(), [&] { return db.count(); });
//
// The work runs to its end even when the awaiting coroutine is cancelled (a blocking call cannot be
// interrupted); its result is then dropped. Whatever `fn` refers to must live until it has run. The awaiting
// coroutine's execution context must outlive the work too: the worker posts the result to it, then lets go
// of it. A caller that runs on an asio::thread_pool joins the pool before destroying it (~thread_pool stops
// without waiting for that).
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

namespace adk {

namespace asio = boost::asio;

namespace detail {

struct Unit {};

// Keeps the awaiting side's execution context from running out of work while the worker holds the result.
// On an io_context it counts the work on the io_context itself, whose executor holds no reference: a strand's
// executor does, and a worker that let go of one after the io_context's run() returned (main destroying the
// io_context) would touch the freed strand service.
class ContextWork {
public:
    explicit ContextWork(const asio::any_io_executor& ex)
    {
        using IoExecutor = asio::io_context::executor_type;
        if (const auto* strand = ex.target<asio::strand<IoExecutor>>())
            io_.emplace(strand->get_inner_executor());
        else if (const auto* io = ex.target<IoExecutor>())
            io_.emplace(*io);
        else
            other_.emplace(ex);
    }
    void reset()
    {
        io_.reset();
        other_.reset();
    }

private:
    std::optional<asio::executor_work_guard<asio::io_context::executor_type>> io_;
    std::optional<asio::executor_work_guard<asio::any_io_executor>> other_;
};

// Posts `fn` to `pool`; its result (or exception) completes the handler on the handler's executor.
struct OffloadInitiation {
    asio::any_io_executor pool;

    template <class Handler, class F>
    void operator()(Handler handler, F fn) const
    {
        using R = std::invoke_result_t<F&>;
        using Value = std::conditional_t<std::is_void_v<R>, Unit, R>;
        ContextWork work(asio::get_associated_executor(handler));
        asio::post(pool, [handler = std::move(handler), fn = std::move(fn), work = std::move(work)]() mutable {
            std::exception_ptr error;
            std::optional<Value> value;
            try {
                if constexpr (std::is_void_v<R>) {
                    fn();
                    value.emplace();
                } else {
                    value.emplace(fn());
                }
            } catch (...) {
                error = std::current_exception();
            }
            // Everything moves to the caller's side: this thread keeps no reference to the exception, whose
            // count libstdc++ keeps in code ThreadSanitizer does not see. The copy of the caller's executor
            // goes before the work is let go.
            {
                auto ex = asio::get_associated_executor(handler);
                asio::dispatch(ex, [handler = std::move(handler), error = std::move(error),
                                    value = std::move(value)]() mutable {
                    handler(std::move(error), std::move(value));
                });
            }
            work.reset();
        });
    }
};

}  // namespace detail

template <class F>
asio::awaitable<std::invoke_result_t<F&>> offload(asio::any_io_executor pool, F fn)
{
    using R = std::invoke_result_t<F&>;
    using Value = std::conditional_t<std::is_void_v<R>, detail::Unit, R>;
    detail::OffloadInitiation initiation{std::move(pool)};
    std::optional<Value> value =
        co_await asio::async_initiate<const asio::use_awaitable_t<>&, void(std::exception_ptr, std::optional<Value>)>(
            initiation, asio::use_awaitable, std::move(fn));
    if constexpr (!std::is_void_v<R>)
        co_return std::move(*value);
}

}  // namespace adk
