// StreamQueue<T>: what travels between a stream's producer and its consumer (Sink and Stream, adk/core/stream.hpp):
// a bounded queue of items, the end behind them, and the two waits, the consumer's for an item and the producer's
// for room, all under one mutex.
//
// DESIGN: in place of Asio's concurrent_channel, so that an item emitted while the consumer waits is handed over
// at once: the consumer's completion is dispatched on its executor, which runs it inside the emit when the
// producer's thread runs that executor. (Boost 1.81's channel posts it: the consumer read each item later, behind
// every other ready handler, from a cold cache; RESULTS.md 2026-12-05 (evening).) The waits live under the queue's
// mutex with the items, so a wait never begins while the queue holds what it waits for. Kept from the channel:
// a parked wait keeps its executor's context running (outstanding work; a consumer on the producer's context
// leaves that to the producer's coroutine, which keeps it running until it ends the stream); a wait's cancellation
// slot completes it with operation_aborted; shutting the execution context down destroys the waits still parked
// (a service of the context, as Asio's channel service does), so their coroutine frames are freed.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/execution_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/recycling_allocator.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>

namespace adk::detail {

namespace asio = boost::asio;

// True when `ex` is a plain io_context's executor and this thread is running that io_context (in stream.cpp, so
// that this header need not include io_context.hpp).
bool runs_io_context_here(const asio::any_io_executor& ex) noexcept;

// A completion handler kept until it is run or dropped: move-only, its type erased, on memory Asio recycles per
// thread. It keeps its executor's context from running out of work while it waits, unless that context is
// `kept_running` (one that something else keeps running meanwhile).
template <class... Args>
class ParkedHandler {
public:
    ParkedHandler() noexcept = default;

    // `fallback`: the executor to run it on when the handler has none of its own.
    template <class Handler>
    ParkedHandler(Handler handler, const asio::any_io_executor& fallback,
                  const asio::execution_context* kept_running = nullptr)
    {
        using Op = Operation<Handler>;
        asio::recycling_allocator<Op> alloc;
        Op* memory = alloc.allocate(1);
        try {
            op_ = new (memory) Op(std::move(handler), fallback, kept_running);
        } catch (...) {
            alloc.deallocate(memory, 1);
            throw;
        }
    }
    ParkedHandler(ParkedHandler&& other) noexcept : op_(std::exchange(other.op_, nullptr)) {}
    ParkedHandler& operator=(ParkedHandler&& other) noexcept
    {
        if (this != &other) {
            reset();
            op_ = std::exchange(other.op_, nullptr);
        }
        return *this;
    }
    ParkedHandler(const ParkedHandler&) = delete;
    ParkedHandler& operator=(const ParkedHandler&) = delete;
    ~ParkedHandler() { reset(); }

    explicit operator bool() const noexcept { return op_ != nullptr; }

    // Runs the handler with `args`: here and now when this thread runs its executor, otherwise queued to it.
    // What the handler throws is rethrown from its io_context's run(), as with asio::dispatch.
    void dispatch(Args... args) { std::exchange(op_, nullptr)->complete(true, std::move(args)...); }
    // Queues the handler with `args` to its executor.
    void post(Args... args) { std::exchange(op_, nullptr)->complete(false, std::move(args)...); }

private:
    class Base {
    public:
        virtual void complete(bool now, Args&&... args) = 0;
        virtual void destroy() noexcept = 0;

    protected:
        ~Base() = default;
    };

    template <class Handler>
    class Operation final : public Base {
    public:
        Operation(Handler handler, const asio::any_io_executor& fallback, const asio::execution_context* kept_running)
            : handler_(std::move(handler)), executor_(asio::get_associated_executor(handler_, fallback))
        {
            if (&asio::query(executor_, asio::execution::context) != kept_running)
                executor_ = asio::prefer(executor_, asio::execution::outstanding_work.tracked);
        }

        void complete(bool now, Args&&... args) override
        {
            // The memory goes back before the handler runs, so that the handler can use it again.
            asio::any_io_executor executor = std::move(executor_);
            Handler handler = std::move(handler_);
            destroy();
            // Running it here, as asio::dispatch would, without wrapping it in a function of Asio's: the common
            // case, a coroutine that waits on the io_context whose thread emits.
            if (now && runs_io_context_here(executor)) {
                try {
                    std::move(handler)(std::move(args)...);
                } catch (...) {  // where asio::dispatch's would go: out of the context's run()
                    asio::post(executor, [failure = std::current_exception()] { std::rethrow_exception(failure); });
                }
                return;
            }
            auto run = [handler = std::move(handler), ... args = std::move(args)]() mutable {
                std::move(handler)(std::move(args)...);
            };
            if (now)
                asio::dispatch(executor, std::move(run));
            else
                asio::post(executor, std::move(run));
        }

        void destroy() noexcept override
        {
            asio::recycling_allocator<Operation> alloc;
            this->~Operation();
            alloc.deallocate(this, 1);
        }

    private:
        Handler handler_;
        asio::any_io_executor executor_;  // tracking outstanding work, unless its context is kept running
    };

    void reset() noexcept
    {
        if (op_)
            std::exchange(op_, nullptr)->destroy();
    }

    Base* op_ = nullptr;
};

class ParkedWaitsList;

// What the execution context knows of a queue: how to drop its parked waits when it shuts down.
class ParkedWaits {
public:
    ParkedWaits(const ParkedWaits&) = delete;
    ParkedWaits& operator=(const ParkedWaits&) = delete;

    // Destroys the waits parked here without running them, and completes later ones at once with
    // operation_aborted. Called by the service when the context shuts down.
    virtual void drop_waits() noexcept = 0;

protected:
    explicit ParkedWaits(const asio::any_io_executor& ex);  // joins the list of ex's execution context
    ~ParkedWaits();                                         // and leaves it

private:
    friend class ParkedWaitsList;
    std::shared_ptr<ParkedWaitsList> list_;  // shared: a queue may outlive its context's services
    ParkedWaits* prev_ = nullptr;            // under the list's mutex
    ParkedWaits* next_ = nullptr;
    bool linked_ = false;
};

template <class T>
class StreamQueue final : public ParkedWaits {
public:
    using Item = std::unique_ptr<T>;
    using ReceiveHandler = ParkedHandler<boost::system::error_code, Item>;
    using SendHandler = ParkedHandler<boost::system::error_code>;

    // `capacity`: how many items wait before the producer does (0: each item waits for the consumer).
    StreamQueue(const asio::any_io_executor& ex, std::size_t capacity)
        : ParkedWaits(ex), executor_(ex), context_(asio::query(ex, asio::execution::context)), capacity_(capacity)
    {
    }
    ~StreamQueue() = default;

    // Takes `item` when the consumer waits (it gets the item at once, see ParkedHandler::dispatch) or there is
    // room; false, with `item` untouched, when the queue is full, ended or closed.
    bool try_send(Item& item)
    {
        std::unique_lock lock(mutex_);
        if (closed_ || ended_)
            return false;
        if (consumer_) {
            ReceiveHandler consumer = std::move(consumer_);
            lock.unlock();
            consumer.dispatch({}, std::move(item));
            return true;
        }
        if (size_ == capacity_)
            return false;
        push(std::move(item));
        return true;
    }

    // Sends `item`, waiting for room (void(error_code)). Fails with operation_aborted when the queue is closed,
    // or the wait's cancellation slot is emitted (the item is dropped then). `self` owns this queue.
    template <class Token>
    auto async_send(std::shared_ptr<StreamQueue> self, Item item, Token&& token)
    {
        return asio::async_initiate<Token, void(boost::system::error_code)>(SendInitiation{}, token, std::move(self),
                                                                           std::move(item));
    }

    // Takes what the consumer gets now: an item, or (`item` empty) the end's code, or operation_aborted once
    // closed. False when there is nothing yet. Wakes a producer that waits for room.
    bool try_receive(Item& item, boost::system::error_code& ec)
    {
        SendHandler producer;
        {
            std::lock_guard lock(mutex_);
            if (!take(item, ec, producer))
                return false;
        }
        if (producer)
            producer.post({});
        return true;
    }

    // Receives the next item, or the end's code with no item (void(error_code, Item)), waiting while there is
    // nothing. `self` owns this queue.
    template <class Token>
    auto async_receive(std::shared_ptr<StreamQueue> self, Token&& token)
    {
        return asio::async_initiate<Token, void(boost::system::error_code, Item)>(ReceiveInitiation{}, token,
                                                                                  std::move(self));
    }

    // The end of the stream, after the items that wait: the consumer receives `code`. Once only; nothing is
    // sent after it.
    void send_end(boost::system::error_code code)
    {
        std::unique_lock lock(mutex_);
        if (closed_ || ended_)
            return;
        ended_ = true;
        end_ = code;
        if (!consumer_)
            return;
        ReceiveHandler consumer = std::move(consumer_);
        lock.unlock();
        consumer.dispatch(code, nullptr);
    }

    // Drops what waits in the queue and completes both waits with operation_aborted, now and from now on.
    void close()
    {
        Contents taken = take_all();
        if (taken.consumer)
            taken.consumer.post(asio::error::operation_aborted, nullptr);
        if (taken.producer)
            taken.producer.post(asio::error::operation_aborted);
    }

    void drop_waits() noexcept override
    {
        // Destroyed here, unrun; they may hold the last owner of this queue, so nothing of it is touched after.
        take_all();
    }

private:
    struct SendInitiation {
        template <class Handler>
        void operator()(Handler&& handler, std::shared_ptr<StreamQueue> self, Item item) const
        {
            self->start_send(std::forward<Handler>(handler), self, std::move(item));
        }
    };
    struct ReceiveInitiation {
        template <class Handler>
        void operator()(Handler&& handler, std::shared_ptr<StreamQueue> self) const
        {
            self->start_receive(std::forward<Handler>(handler), self);
        }
    };

    // In a wait's cancellation slot: completes the wait with operation_aborted if it is still parked.
    struct CancelWait {
        std::weak_ptr<StreamQueue> queue;
        void (StreamQueue::*cancel)(std::uint64_t);
        std::uint64_t wait;
        void operator()(asio::cancellation_type type) const
        {
            if (type == asio::cancellation_type::none)
                return;
            if (auto q = queue.lock())
                (q.get()->*cancel)(wait);
        }
    };

    template <class Handler>
    void start_send(Handler&& handler, const std::shared_ptr<StreamQueue>& self, Item item)
    {
        std::unique_lock lock(mutex_);
        if (!closed_ && !ended_ && !consumer_ && size_ == capacity_) {
            // The slot before the handler is parked: once the lock is released another thread may run it.
            auto slot = asio::get_associated_cancellation_slot(handler);
            producer_ = SendHandler(std::forward<Handler>(handler), executor_);
            producer_item_ = std::move(item);
            ++producer_wait_;
            if (slot.is_connected())
                slot.template emplace<CancelWait>(CancelWait{self, &StreamQueue::cancel_send, producer_wait_});
            return;
        }
        boost::system::error_code ec;
        ReceiveHandler consumer;
        if (closed_ || ended_)
            ec = asio::error::operation_aborted;
        else if (consumer_)
            consumer = std::move(consumer_);
        else
            push(std::move(item));
        lock.unlock();
        if (consumer)
            consumer.dispatch({}, std::move(item));
        SendHandler(std::forward<Handler>(handler), executor_).post(ec);
    }

    template <class Handler>
    void start_receive(Handler&& handler, const std::shared_ptr<StreamQueue>& self)
    {
        Item item;
        boost::system::error_code ec;
        SendHandler producer;
        std::unique_lock lock(mutex_);
        if (!take(item, ec, producer)) {
            auto slot = asio::get_associated_cancellation_slot(handler);
            // A consumer on the producer's context needs no work of its own: the producer's coroutine keeps that
            // context running (co_spawn's work) until it ends the stream, which completes this wait.
            consumer_ = ReceiveHandler(std::forward<Handler>(handler), executor_, &context_);
            ++consumer_wait_;
            if (slot.is_connected())
                slot.template emplace<CancelWait>(CancelWait{self, &StreamQueue::cancel_receive, consumer_wait_});
            return;
        }
        lock.unlock();
        if (producer)
            producer.post({});
        ReceiveHandler(std::forward<Handler>(handler), executor_).post(ec, std::move(item));
    }

    // Everything the queue holds, taken out of it when it closes.
    struct Contents {
        ReceiveHandler consumer;
        SendHandler producer;
        Item producer_item;
        std::unique_ptr<Item[]> ring;
    };

    Contents take_all()
    {
        std::lock_guard lock(mutex_);
        closed_ = true;
        size_ = 0;
        return Contents{std::move(consumer_), std::move(producer_), std::move(producer_item_), std::move(ring_)};
    }

    // Under the lock: what the consumer gets now, and the producer to wake; false when it must wait.
    bool take(Item& item, boost::system::error_code& ec, SendHandler& producer)
    {
        if (closed_) {
            ec = asio::error::operation_aborted;
            return true;
        }
        if (size_ > 0) {
            item = std::move(ring_[head_]);
            head_ = (head_ + 1) % capacity_;
            --size_;
            if (producer_) {
                push(std::move(producer_item_));
                producer = std::move(producer_);
            }
            return true;
        }
        if (producer_) {  // a queue of no capacity: the item is handed over from the waiting producer
            item = std::move(producer_item_);
            producer = std::move(producer_);
            return true;
        }
        if (ended_) {
            ec = end_;
            return true;
        }
        return false;
    }

    // Under the lock, with room: the buffer is made at the first item that waits.
    void push(Item item)
    {
        if (!ring_)
            ring_ = std::make_unique<Item[]>(capacity_);
        ring_[(head_ + size_) % capacity_] = std::move(item);
        ++size_;
    }

    void cancel_receive(std::uint64_t wait)
    {
        std::unique_lock lock(mutex_);
        if (!consumer_ || consumer_wait_ != wait)
            return;
        ReceiveHandler consumer = std::move(consumer_);
        lock.unlock();
        consumer.post(asio::error::operation_aborted, nullptr);
    }

    void cancel_send(std::uint64_t wait)
    {
        std::unique_lock lock(mutex_);
        if (!producer_ || producer_wait_ != wait)
            return;
        SendHandler producer = std::move(producer_);
        Item dropped = std::move(producer_item_);
        lock.unlock();
        producer.post(asio::error::operation_aborted);
    }

    const asio::any_io_executor executor_;  // the producer's; runs a handler that has no executor of its own
    const asio::execution_context& context_;  // executor_'s
    const std::size_t capacity_;
    std::mutex mutex_;
    std::unique_ptr<Item[]> ring_;  // capacity_ items from head_, size_ of them used
    std::size_t head_ = 0;
    std::size_t size_ = 0;
    bool ended_ = false;
    bool closed_ = false;
    boost::system::error_code end_;
    ReceiveHandler consumer_;  // the consumer, waiting for an item
    SendHandler producer_;     // the producer, waiting for room for producer_item_
    Item producer_item_;
    std::uint64_t consumer_wait_ = 0;  // which wait is parked, for its cancellation slot
    std::uint64_t producer_wait_ = 0;
};

}  // namespace adk::detail
