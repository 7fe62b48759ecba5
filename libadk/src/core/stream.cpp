#include <adk/core/stream.hpp>

#include <boost/asio/execution/context.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/query.hpp>

#include <mutex>

namespace adk::detail {

std::exception_ptr as_adk_error(std::exception_ptr failure)
{
    try {
        std::rethrow_exception(failure);
    } catch (const Error&) {
        return failure;
    } catch (const boost::system::system_error& e) {
        return std::make_exception_ptr(Error(e.code(), e.what()));
    } catch (const std::exception& e) {
        return std::make_exception_ptr(Error(errc::agent_failed, e.what()));
    } catch (...) {
        return std::make_exception_ptr(
            Error(errc::agent_failed, "the producer threw something that is not a std::exception; throw adk::Error"));
    }
}

bool runs_io_context_here(const asio::any_io_executor& ex) noexcept
{
    const auto* io = ex.target<asio::io_context::executor_type>();
    return io && io->running_in_this_thread();
}

// The queues of an execution context whose waits may be parked (see StreamQueue), for its shutdown: their
// handlers hold coroutine frames that nothing would free otherwise. Shared by the context's service and the
// queues, so that a queue destroyed after the services (in a handler the scheduler destroys last) finds it.
class ParkedWaitsList {
public:
    void add(ParkedWaits& waits)
    {
        std::lock_guard lock(mutex_);
        if (shut_down_)
            return;  // a queue made during the shutdown: its waits complete at once (drop_waits closes it)
        waits.next_ = first_;
        if (first_)
            first_->prev_ = &waits;
        first_ = &waits;
        waits.linked_ = true;
    }

    void remove(ParkedWaits& waits)
    {
        std::lock_guard lock(mutex_);
        unlink(waits);
    }

    // One queue at a time, out of the list first: dropping its waits may destroy other queues, which leave the
    // list (under the mutex) as they go.
    void shutdown()
    {
        for (;;) {
            ParkedWaits* waits = nullptr;
            {
                std::lock_guard lock(mutex_);
                shut_down_ = true;
                waits = first_;
                if (!waits)
                    return;
                unlink(*waits);
            }
            waits->drop_waits();
        }
    }

private:
    void unlink(ParkedWaits& waits) noexcept
    {
        if (!waits.linked_)
            return;
        (waits.prev_ ? waits.prev_->next_ : first_) = waits.next_;
        if (waits.next_)
            waits.next_->prev_ = waits.prev_;
        waits.prev_ = waits.next_ = nullptr;
        waits.linked_ = false;
    }

    std::mutex mutex_;
    ParkedWaits* first_ = nullptr;
    bool shut_down_ = false;
};

namespace {

class ParkedWaitsService final : public asio::execution_context::service {
public:
    static asio::execution_context::id id;

    explicit ParkedWaitsService(asio::execution_context& context) : asio::execution_context::service(context) {}

    const std::shared_ptr<ParkedWaitsList> list = std::make_shared<ParkedWaitsList>();

private:
    void shutdown() override { list->shutdown(); }
};

asio::execution_context::id ParkedWaitsService::id;

}  // namespace

ParkedWaits::ParkedWaits(const asio::any_io_executor& ex)
    : list_(asio::use_service<ParkedWaitsService>(asio::query(ex, asio::execution::context)).list)
{
    list_->add(*this);
}

ParkedWaits::~ParkedWaits()
{
    list_->remove(*this);
}

}  // namespace adk::detail
