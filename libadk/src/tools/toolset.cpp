#include <adk/tools/toolset.hpp>

#include <adk/core/error.hpp>
#include <adk/core/log.hpp>
#include <adk/core/wakeup.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>

namespace adk {

namespace {

bool is_cancellation(const std::exception_ptr& error)
{
    try {
        std::rethrow_exception(error);
    } catch (const boost::system::system_error& e) {
        return e.code() == asio::error::operation_aborted || e.code() == make_error_code(errc::cancelled);
    } catch (...) {
        return false;
    }
}

}  // namespace

ToolFilter::ToolFilter(std::vector<std::string> names)
    : names_(std::make_shared<const std::vector<std::string>>(std::move(names)))
{
}

ToolFilter::ToolFilter(Predicate predicate) : predicate_(std::move(predicate)) {}

bool ToolFilter::allows(const Tool& tool, const ReadonlyContext& ctx) const
{
    if (names_)
        return std::find(names_->begin(), names_->end(), tool.name()) != names_->end();
    return !predicate_ || predicate_(tool, ctx);
}

// One open, listing or close under way, and who waits for it to end.
class Flight {
public:
    explicit Flight(bool closing_) : closing(closing_) {}
    const bool closing;
    std::exception_ptr error;  // how it ended, set before the waiters are woken
    bool retry = false;        // it was cancelled: its waiters try again rather than fail with it
    std::vector<std::shared_ptr<Wakeup>> waiters;
};

class Toolset::State {
public:
    std::mutex mutex;
    bool open = false;
    std::shared_ptr<Flight> flight;  // the one under way, if any
    std::optional<std::vector<std::shared_ptr<Tool>>> tools;
    std::uint64_t version = 0;  // tools_changed() calls

    // Under the mutex: a wake for the flight under way.
    std::shared_ptr<Wakeup> join(const asio::any_io_executor& executor)
    {
        auto wake = std::make_shared<Wakeup>(executor);
        flight->waiters.push_back(wake);
        return wake;
    }

    // Ends `mine` (under the mutex) and returns its waiters, to be woken once the mutex is released.
    std::vector<std::shared_ptr<Wakeup>> end(const std::shared_ptr<Flight>& mine, std::exception_ptr error)
    {
        mine->error = error;
        mine->retry = error && is_cancellation(error);
        if (flight == mine)
            flight.reset();
        return std::move(mine->waiters);
    }
};

namespace {

// Ends a flight on every path out of the coroutine that runs it, even when its frame is destroyed unresumed
// (the io_context goes away): its waiters are never left waiting.
class FlightGuard {
public:
    FlightGuard(std::mutex& mutex, std::function<std::vector<std::shared_ptr<Wakeup>>(std::exception_ptr)> end)
        : mutex_(mutex), end_(std::move(end))
    {
    }
    FlightGuard(const FlightGuard&) = delete;
    FlightGuard& operator=(const FlightGuard&) = delete;
    ~FlightGuard()
    {
        if (end_)
            finish(std::make_exception_ptr(Error(errc::cancelled, "the toolset's open was abandoned")));
    }
    // Under no lock: takes the mutex, ends the flight, wakes its waiters.
    void finish(std::exception_ptr error)
    {
        std::vector<std::shared_ptr<Wakeup>> waiters;
        {
            std::lock_guard lock(mutex_);
            waiters = end_(error);
        }
        end_ = nullptr;
        for (const auto& w : waiters)
            w->notify();
    }

private:
    std::mutex& mutex_;
    std::function<std::vector<std::shared_ptr<Wakeup>>(std::exception_ptr)> end_;
};

std::vector<std::shared_ptr<Tool>> filtered(const std::vector<std::shared_ptr<Tool>>& tools, const ToolFilter& filter,
                                            const ReadonlyContext& ctx)
{
    if (filter.allows_all())
        return tools;
    std::vector<std::shared_ptr<Tool>> out;
    for (const auto& tool : tools)
        if (tool && filter.allows(*tool, ctx))
            out.push_back(tool);
    return out;
}

}  // namespace

Toolset::Toolset(std::string name, ToolFilter filter, ToolListing listing)
    : name_(std::move(name)), filter_(std::move(filter)), listing_(listing), state_(std::make_unique<State>())
{
    if (name_.empty())
        throw Error(errc::invalid_argument, "a toolset needs a name");
}

Toolset::~Toolset() = default;

asio::awaitable<void> Toolset::open()
{
    co_return;
}

asio::awaitable<void> Toolset::shutdown()
{
    co_return;
}

bool Toolset::is_open() const
{
    std::lock_guard lock(state_->mutex);
    return state_->open;
}

void Toolset::tools_changed()
{
    std::lock_guard lock(state_->mutex);
    ++state_->version;
    state_->tools.reset();
}

asio::awaitable<std::vector<std::shared_ptr<Tool>>> Toolset::get_tools(const ReadonlyContext& ctx)
{
    const asio::any_io_executor executor = co_await asio::this_coro::executor;
    State& st = *state_;
    for (;;) {
        std::shared_ptr<Wakeup> wake;
        std::shared_ptr<Flight> waited, mine;
        std::vector<std::shared_ptr<Tool>> kept;
        bool ready = false;
        bool must_open = false;
        std::uint64_t version = 0;
        {
            std::lock_guard lock(st.mutex);
            if (st.flight) {
                waited = st.flight;
                wake = st.join(executor);
            } else if (st.open && listing_ == ToolListing::per_invocation) {
                ready = true;
            } else if (st.open && st.tools) {
                kept = *st.tools;
                ready = true;
            } else {
                mine = st.flight = std::make_shared<Flight>(false);
                must_open = !st.open;
                version = st.version;
            }
        }
        if (waited) {
            co_await wake->async_wait(asio::use_awaitable);
            if (waited->error && !waited->closing && !waited->retry)
                std::rethrow_exception(waited->error);
            continue;
        }
        if (mine) {
            std::vector<std::shared_ptr<Tool>> listed;
            bool listed_here = false;
            FlightGuard guard(st.mutex, [&, mine](std::exception_ptr error) {
                if (!error && listed_here && version == st.version)
                    st.tools = listed;
                return st.end(mine, error);
            });
            std::exception_ptr error;
            try {
                if (must_open) {
                    co_await open();
                    std::lock_guard lock(st.mutex);
                    st.open = true;
                }
                if (listing_ == ToolListing::cached) {
                    listed = co_await list_tools(ctx);
                    listed_here = true;
                }
            } catch (...) {
                error = std::current_exception();
            }
            guard.finish(error);
            if (error)
                std::rethrow_exception(error);
            if (listed_here)
                co_return filtered(listed, filter_, ctx);
            ready = true;
        }
        if (ready && listing_ == ToolListing::per_invocation) {
            std::vector<std::shared_ptr<Tool>> listed = co_await list_tools(ctx);
            co_return filtered(listed, filter_, ctx);
        }
        co_return filtered(kept, filter_, ctx);
    }
}

asio::awaitable<void> Toolset::close()
{
    const asio::any_io_executor executor = co_await asio::this_coro::executor;
    State& st = *state_;
    for (;;) {
        std::shared_ptr<Wakeup> wake;
        std::shared_ptr<Flight> mine;
        {
            std::lock_guard lock(st.mutex);
            if (st.flight) {
                wake = st.join(executor);
            } else if (!st.open) {
                co_return;
            } else {
                mine = st.flight = std::make_shared<Flight>(true);
            }
        }
        if (wake) {
            co_await wake->async_wait(asio::use_awaitable);
            continue;
        }
        // Closed whatever shutdown() does: a toolset that fails to close is not left open for ever.
        FlightGuard guard(st.mutex, [&, mine](std::exception_ptr error) {
            st.open = false;
            st.tools.reset();
            return st.end(mine, error);
        });
        std::exception_ptr error;
        try {
            co_await shutdown();
        } catch (...) {
            error = std::current_exception();
        }
        guard.finish(error);
        if (error)
            std::rethrow_exception(error);
        co_return;
    }
}

asio::awaitable<void> close_toolsets(std::vector<std::shared_ptr<Toolset>> toolsets)
{
    std::sort(toolsets.begin(), toolsets.end());
    toolsets.erase(std::unique(toolsets.begin(), toolsets.end()), toolsets.end());
    toolsets.erase(std::remove(toolsets.begin(), toolsets.end(), nullptr), toolsets.end());
    if (toolsets.empty())
        co_return;
    const asio::any_io_executor executor = co_await asio::this_coro::executor;
    // One wake when the last close ends.
    auto done = std::make_shared<Wakeup>(executor);
    auto left = std::make_shared<std::atomic<std::size_t>>(toolsets.size());
    for (const auto& toolset : toolsets) {
        asio::co_spawn(
            executor, [toolset]() -> asio::awaitable<void> { co_await toolset->close(); },
            [toolset, done, left](std::exception_ptr error) {
                if (error) {
                    try {
                        std::rethrow_exception(error);
                    } catch (const std::exception& e) {
                        log(LogLevel::warning, "toolset " + toolset->name() + " did not close cleanly: " + e.what());
                    } catch (...) {
                        log(LogLevel::warning, "toolset " + toolset->name() + " did not close cleanly");
                    }
                }
                if (--*left == 0)
                    done->notify();
            });
    }
    co_await done->async_wait(asio::use_awaitable);
}

}  // namespace adk
