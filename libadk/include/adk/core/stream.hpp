// Stream<T> and Sink<T>: a bounded, cancellable, single-consumer stream between a producer coroutine and
// its consumer, built on asio::experimental::concurrent_channel (ConcurrentChannel: adk/core/channel.hpp, whose
// buffer is made at its first waiting message). A Stream can also be pulled from a
// StreamSource: no producer coroutine and no channel, the consumer's next() reads the source itself.
//
// Contract:
//   * bounded: Sink::emit suspends while the channel is full, so a slow consumer slows the producer;
//   * end and failure travel in-band as the last message (Boost 1.81's channel::close() drops buffered
//     messages), and a failure reaches the consumer as the exception the producer threw (adk::Error);
//   * cancel on drop: Stream::cancel() or destroying the Stream stops the producer coroutine through its
//     cancellation slot, so everything it awaits (timers, sockets, nested streams) is aborted at once.
//
// DESIGN: the channel is a concurrent_channel, not a plain channel. The producer runs on its invocation's
// strand while the consumer runs wherever the caller's coroutine runs (often another thread of the
// io_context); a concurrent_channel makes that hand-over safe without forcing the caller onto our
// strand. The producer's cancellation_signal is not thread-safe, so it is only ever emitted from the
// producer's executor (asio::dispatch).
#pragma once

#include <adk/core/channel.hpp>
#include <adk/core/error.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/experimental/channel_error.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <atomic>
#include <cstddef>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace adk {

namespace asio = boost::asio;

// How many items a stream buffers before its producer waits.
inline constexpr std::size_t default_stream_capacity = 32;

namespace detail {

enum class StopReason : int { none = 0, consumer_left = 1, cancelled = 2 };

// What a Canceller stops: a channel stream's producer, or a pulled stream's source.
class Cancellable {
public:
    virtual ~Cancellable() = default;
    // Ends the stream from outside, from any thread: the consumer's next() throws adk::Error(errc::cancelled,
    // message).
    virtual void cancel_from_outside(std::string message) = 0;
};

// The part of a stream's shared state that does not depend on T: what Canceller needs.
class StreamControl : public Cancellable {
public:
    explicit StreamControl(asio::any_io_executor producer_executor)
        : producer_executor_(std::move(producer_executor))
    {
    }
    virtual ~StreamControl() = default;
    StreamControl(const StreamControl&) = delete;
    StreamControl& operator=(const StreamControl&) = delete;

    void cancel_from_outside(std::string message) override { stop(StopReason::cancelled, std::move(message)); }

    StopReason stop_reason() const noexcept { return static_cast<StopReason>(stop_.load()); }
    std::string stop_message() const
    {
        std::lock_guard lock(mutex_);
        return stop_message_;
    }
    asio::cancellation_slot producer_slot() noexcept { return producer_cancel_.slot(); }
    const asio::any_io_executor& producer_executor() const noexcept { return producer_executor_; }

    // First stop wins. Then, on the producer's executor: abort what the producer awaits and wake both
    // ends of the channel. Safe from any thread.
    void stop(StopReason reason, std::string message)
    {
        int expected = static_cast<int>(StopReason::none);
        {
            std::lock_guard lock(mutex_);
            if (!stop_.compare_exchange_strong(expected, static_cast<int>(reason)))
                return;
            stop_message_ = std::move(message);
        }
        auto self = shared_from_base();
        asio::dispatch(producer_executor_, [self] {
            self->producer_cancel_.emit(asio::cancellation_type::terminal);
            self->cancel_channel();
        });
    }

protected:
    virtual void cancel_channel() = 0;
    virtual std::shared_ptr<StreamControl> shared_from_base() = 0;

private:
    asio::any_io_executor producer_executor_;
    asio::cancellation_signal producer_cancel_;
    std::atomic<int> stop_{0};
    mutable std::mutex mutex_;
    std::string stop_message_;
};

}  // namespace detail

// What takes a stream's items where its producer emits them, in place of the channel (spawn_stream's
// `receiver`): for a consumer that keeps the items in a structure of its own (the server's run log), so that
// an item costs no hop between coroutines. receive() is called in the producer's coroutine, on its executor,
// in the order the items were emitted: it must not block or throw, must be safe from that thread, and must
// bound what it keeps (the producer never waits for it). The stream's consumer then reads only the end:
// next() returns std::nullopt, or throws the producer's failure or the cancellation; Stream::cancel and
// Canceller stop the producer as usual.
template <class T>
class StreamReceiver {
public:
    virtual ~StreamReceiver() = default;
    virtual void receive(std::unique_ptr<T> item) noexcept = 0;
    // An item that is also held elsewhere, immutable, and equal to `item` (an event its session holds): a
    // receiver that keeps items may keep `held` and drop `item`, so that one copy serves both. By default
    // `item` goes to receive().
    virtual void receive_held(std::unique_ptr<T> item, std::shared_ptr<const T> held) noexcept
    {
        (void)held;
        receive(std::move(item));
    }
};

namespace detail {

template <class T>
class StreamState final : public StreamControl, public std::enable_shared_from_this<StreamState<T>> {
public:
    // Items travel boxed: a message is moved about ten times between send and receive (channel buffer,
    // handler, tuple, coroutine result), and moving a pointer is cheaper than moving an Event.
    using channel_type = ConcurrentChannel<void(boost::system::error_code, std::unique_ptr<T>)>;

    StreamState(asio::any_io_executor ex, std::size_t capacity, std::shared_ptr<StreamReceiver<T>> receiver_ = nullptr)
        : StreamControl(ex), channel(ex, capacity), receiver(std::move(receiver_))
    {
    }

    channel_type channel;
    const std::shared_ptr<StreamReceiver<T>> receiver;  // set: items go to it, only the end through the channel
    std::exception_ptr failure;  // written by the producer before its terminal message

private:
    // Wakes a receive or send under way, and closes the channel so that one begun later (a consumer on
    // another thread, between its check of the stop reason and its wait) completes at once too.
    void cancel_channel() override
    {
        channel.cancel();
        channel.close();
    }
    std::shared_ptr<StreamControl> shared_from_base() override { return this->shared_from_this(); }
};

// An awaitable that completes at once: what a function that returns asio::awaitable without being a
// coroutine returns when it has nothing left to wait for.
inline asio::awaitable<void> ready()
{
    co_return;
}

// Turns whatever a producer threw into the adk::Error its consumer will see.
std::exception_ptr as_adk_error(std::exception_ptr failure);

inline const boost::system::error_code& failure_marker()
{
    static const boost::system::error_code code = make_error_code(errc::agent_failed);
    return code;
}

}  // namespace detail

// What a pulled stream reads from (pull_stream). Stream::next() awaits pull() in the consumer's own
// coroutine, so the source needs no executor of its own, waits only while its consumer does (a slow
// consumer reads nothing: backpressure without a buffer), and cancelling the consumer's coroutine aborts
// what pull() awaits. Destroying the source (Stream::cancel, or dropping the stream) releases what it holds.
//
// DESIGN: for producers that only read (a model's HTTP body), where a producer coroutine would hand every
// item through a channel and the scheduler to a consumer that is already waiting for it.
template <class T>
class StreamSource {
public:
    virtual ~StreamSource() = default;
    // Sets `item` to the next item, or leaves it empty at the end. What it throws ends the stream.
    virtual asio::awaitable<void> pull(std::unique_ptr<T>& item) = 0;
    // Makes a pull() under way end soon (it may throw). Called from any thread when the stream is cancelled
    // (Stream::cancel, a Canceller) while another coroutine is in pull(), possibly before pull() first waits,
    // so a source remembers it; never after pull() returned for the last time, and never at the same time as
    // the destructor. Must not block or touch what only the pulling coroutine may touch (an Asio socket):
    // post to its executor, or shut a descriptor down, instead.
    virtual void abort() noexcept = 0;
};

namespace detail {

// A pulled stream's source and who may touch it. The consumer's next() pulls without a lock (two atomic
// exchanges per item); stopping takes a mutex so that abort() and the source's destruction never overlap.
template <class T>
class PullState final : public Cancellable {
public:
    enum Phase : int { idle, pulling, stopped };

    explicit PullState(std::unique_ptr<StreamSource<T>> source) : source_(std::move(source)) {}

    void cancel_from_outside(std::string message) override { stop(true, std::move(message)); }

    // The consumer stopped reading (Stream::cancel), or someone cancelled the stream from outside. A pull
    // under way is aborted; its end releases the source. Otherwise the source is released here.
    void stop(bool from_outside, std::string message)
    {
        std::lock_guard lock(mutex_);
        for (int expected = phase_.load();;) {
            if (expected == stopped)
                return;  // ended already: the first stop wins
            if (phase_.compare_exchange_weak(expected, stopped)) {
                cancelled_ = from_outside;
                message_ = std::move(message);
                if (expected == pulling)
                    source_->abort();  // the pull's end releases it
                else
                    source_.reset();
                return;
            }
        }
    }

    // The source to pull from, or null when the stream was stopped or has ended.
    StreamSource<T>* begin_pull() noexcept
    {
        int expected = idle;
        return phase_.compare_exchange_strong(expected, pulling) ? source_.get() : nullptr;
    }

    // After a pull: true when it counts; false when the stream was stopped meanwhile (the source is released
    // then). `last` (the end of the stream or a failure) releases the source.
    bool end_pull(bool last)
    {
        int expected = pulling;
        if (phase_.compare_exchange_strong(expected, last ? stopped : idle)) {
            if (last)
                source_.reset();
            return true;
        }
        std::lock_guard lock(mutex_);  // waits for a stop() that is calling abort()
        source_.reset();
        return false;
    }

    // Why the stream is over, once begin_pull() or end_pull() said so: throws adk::Error(errc::cancelled)
    // when it was cancelled from outside, returns when it ended or its consumer stopped it.
    void throw_if_cancelled()
    {
        std::lock_guard lock(mutex_);
        if (cancelled_)
            throw Error(errc::cancelled, message_);
    }

private:
    std::atomic<int> phase_{idle};
    std::mutex mutex_;
    std::unique_ptr<StreamSource<T>> source_;
    bool cancelled_ = false;  // under mutex_
    std::string message_;
};

}  // namespace detail

// Stops a stream from outside (Runner::cancel): a channel stream's producer, or a pulled stream's source
// (aborting a pull under way). Copyable; safe from any thread; does nothing once the stream is gone. The
// consumer's next() then throws adk::Error(errc::cancelled, message).
class Canceller {
public:
    Canceller() = default;
    explicit Canceller(std::weak_ptr<detail::Cancellable> target) : target_(std::move(target)) {}
    void cancel(std::string message) const
    {
        if (auto t = target_.lock())
            t->cancel_from_outside(std::move(message));
    }

private:
    std::weak_ptr<detail::Cancellable> target_;
};

// The sending end, given to a producer coroutine. Cheap to copy.
template <class T>
class Sink {
public:
    explicit Sink(std::shared_ptr<detail::StreamState<T>> state) noexcept : state_(std::move(state)) {}

    // Suspends while the channel is full (backpressure). Throws once the stream was cancelled or its
    // consumer left: that is how a producer learns to stop.
    //
    // DESIGN: not a coroutine itself. When the channel has room (the usual case) the item is handed over
    // here and an empty coroutine is returned; only a full channel starts a coroutine that waits, and
    // that one holds a pointer, not a T. A coroutine frame holding a T (an Event is over 800 bytes) is too
    // large for Asio's per-thread frame cache, so every emit used to call malloc.
    asio::awaitable<void> emit(T value) { return emit(std::make_unique<T>(std::move(value))); }

    // The same for an item already on the heap: nothing is moved but the pointer.
    asio::awaitable<void> emit(std::unique_ptr<T> item)
    {
        if (try_emit(item))
            return detail::ready();
        return send(state_, std::move(item));
    }

    // The same for an item that is also held elsewhere, immutable and equal to it (`held`, an event the session
    // holds; may be null): a receiver (StreamReceiver::receive_held) may keep `held` instead; the channel
    // carries `item`.
    asio::awaitable<void> emit(std::unique_ptr<T> item, std::shared_ptr<const T> held)
    {
        if (held && state_->receiver) {
            throw_if_stopped(*state_);
            state_->receiver->receive_held(std::move(item), std::move(held));
            return detail::ready();
        }
        return emit(std::move(item));
    }

    // Hands `item` over without waiting when the channel has room; false (and `item` untouched) when
    // it is full. Throws like emit() once the stream was stopped.
    bool try_emit(std::unique_ptr<T>& item)
    {
        throw_if_stopped(*state_);
        if (state_->receiver) {
            state_->receiver->receive(std::move(item));
            return true;
        }
        return state_->channel.try_send(boost::system::error_code{}, std::move(item));  // moves only on success
    }

    bool stopped() const noexcept { return state_->stop_reason() != detail::StopReason::none; }

private:
    static void throw_if_stopped(const detail::StreamState<T>& state)
    {
        switch (state.stop_reason()) {
        case detail::StopReason::none: return;
        case detail::StopReason::consumer_left:
            throw Error(errc::stream_closed, "the consumer of this stream stopped reading; stop producing");
        case detail::StopReason::cancelled: throw Error(errc::cancelled, state.stop_message());
        }
    }

    static asio::awaitable<void> send(std::shared_ptr<detail::StreamState<T>> state, std::unique_ptr<T> item)
    {
        const boost::system::error_code none;  // named: no temporary in a co_await expression (g++ 12)
        auto [ec] = co_await state->channel.async_send(none, std::move(item), asio::as_tuple(asio::use_awaitable));
        if (ec) {
            throw_if_stopped(*state);
            // The awaiting coroutine was cancelled: the channel says channel_cancelled, Asio's operations say this.
            if (ec == asio::experimental::error::channel_cancelled)
                ec = asio::error::operation_aborted;
            throw boost::system::system_error(ec, "Sink::emit");
        }
    }

    std::shared_ptr<detail::StreamState<T>> state_;
};

// The receiving end. Move-only; destroying it stops the producer.
template <class T>
class Stream {
public:
    Stream() = default;
    explicit Stream(std::shared_ptr<detail::StreamState<T>> state) noexcept : state_(std::move(state)) {}
    explicit Stream(std::unique_ptr<StreamSource<T>> source)
        : pull_(std::make_shared<detail::PullState<T>>(std::move(source)))
    {
    }
    Stream(Stream&& other) noexcept
        : state_(std::move(other.state_)), pull_(std::move(other.pull_)), finished_(std::exchange(other.finished_, true))
    {
    }
    Stream& operator=(Stream&& other) noexcept
    {
        if (this != &other) {
            cancel();
            state_ = std::move(other.state_);
            pull_ = std::move(other.pull_);
            finished_ = std::exchange(other.finished_, true);
        }
        return *this;
    }
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    ~Stream() { cancel(); }

    // The next item; std::nullopt at the end. Throws adk::Error when the producer failed or the stream was
    // cancelled from outside. When the awaiting coroutine is cancelled (asio cancellation), the producer
    // is stopped too and adk::Error(errc::cancelled) is thrown; a pulled stream's source is aborted
    // instead, and next() throws what it throws (as adk::Error, e.g. with asio's operation_aborted).
    asio::awaitable<std::optional<T>> next() { return unbox(next_boxed()); }

    // The same, the item as it travels: on the heap, nullptr at the end. What a consumer of many items (the
    // server's run, the model call's loop) awaits: its coroutine frame holds a pointer, where next() moves the
    // item out of its box into a frame of its own (one more frame and one more move a call; an Event is 744
    // bytes).
    //
    // DESIGN: not a coroutine: it returns the coroutine of the stream's kind, so that a pulled stream costs
    // no channel frame and a channel's frame holds nothing of pulling.
    asio::awaitable<std::unique_ptr<T>> next_boxed() { return pull_ ? pull_next(pull_) : receive_next(); }

    // Stops the producer (a pulled stream's source is released; a pull under way is aborted first, and its
    // next() returns std::nullopt); next() returns std::nullopt from now on. Safe to call twice, and while
    // another coroutine of the same thread or strand awaits next() (from other threads, use canceller()).
    void cancel() noexcept
    {
        if (pull_)
            pull_->stop(false, "the consumer stopped reading");
        if (state_ && !finished_)
            state_->stop(detail::StopReason::consumer_left, "the consumer stopped reading");
        finished_ = true;
    }

    // A handle that stops the stream from outside, from any thread: a channel stream's producer, or a pulled
    // stream's source (a pull under way is aborted).
    Canceller canceller() const
    {
        if (pull_)
            return Canceller(std::weak_ptr<detail::Cancellable>(pull_));
        return Canceller(std::weak_ptr<detail::Cancellable>(state_));
    }

private:
    static asio::awaitable<std::optional<T>> unbox(asio::awaitable<std::unique_ptr<T>> boxed)
    {
        std::unique_ptr<T> item = co_await std::move(boxed);
        if (!item)
            co_return std::nullopt;
        co_return std::move(*item);  // Asio builds the optional<T> result from it in place: one move
    }

    // Waiting and the end of the stream are in functions of their own, so that this frame stays small.
    asio::awaitable<std::unique_ptr<T>> receive_next()
    {
        if (!state_ || finished_)
            co_return nullptr;
        throw_if_cancelled();
        std::unique_ptr<T> item;
        boost::system::error_code ec;
        if (!state_->channel.try_receive([&](boost::system::error_code e, std::unique_ptr<T>&& v) {
                ec = e;
                item = std::move(v);
            }))
            ec = co_await receive(*state_, item);
        if (!ec && item)
            co_return item;
        end(ec);
        co_return nullptr;
    }

    // A failure of the source ends the stream; the consumer sees it as adk::Error, as from a producer. The
    // frame holds the state, so that a pull under way outlives a Stream cancelled or dropped meanwhile.
    static asio::awaitable<std::unique_ptr<T>> pull_next(std::shared_ptr<detail::PullState<T>> pull)
    {
        StreamSource<T>* source = pull->begin_pull();
        if (!source) {
            pull->throw_if_cancelled();
            co_return nullptr;
        }
        std::unique_ptr<T> item;
        std::exception_ptr failure;
        try {
            co_await source->pull(item);
        } catch (...) {
            failure = std::current_exception();
        }
        if (!pull->end_pull(failure || !item)) {
            pull->throw_if_cancelled();
            co_return nullptr;  // stopped while it pulled: what it got is dropped
        }
        if (failure)
            std::rethrow_exception(detail::as_adk_error(failure));
        co_return item;
    }

    static asio::awaitable<boost::system::error_code> receive(detail::StreamState<T>& state, std::unique_ptr<T>& item)
    {
        auto [ec, v] = co_await state.channel.async_receive(asio::as_tuple(asio::use_awaitable));
        item = std::move(v);
        co_return ec;
    }

    // The stream ended with `ec` (or an empty item): returns when that is a normal end, throws otherwise.
    void end(const boost::system::error_code& ec)
    {
        finished_ = true;
        throw_if_cancelled();
        if (ec == asio::error::eof || state_->stop_reason() == detail::StopReason::consumer_left)
            return;
        if (ec == detail::failure_marker() && state_->failure)
            std::rethrow_exception(state_->failure);
        // Nothing else cancels the channel while nobody asked the stream to stop: the coroutine awaiting
        // next() was cancelled (per-operation cancellation completes a receive with channel_cancelled).
        if (ec == asio::experimental::error::channel_cancelled || ec == asio::error::operation_aborted) {
            state_->stop(detail::StopReason::consumer_left, "the consumer was cancelled");
            throw Error(errc::cancelled, "the coroutine awaiting Stream::next() was cancelled; its producer was "
                                         "stopped");
        }
        throw Error(ec, "the stream ended unexpectedly");
    }

    void throw_if_cancelled()
    {
        if (state_->stop_reason() == detail::StopReason::cancelled) {
            finished_ = true;
            throw Error(errc::cancelled, state_->stop_message());
        }
    }

    std::shared_ptr<detail::StreamState<T>> state_;
    std::shared_ptr<detail::PullState<T>> pull_;  // set for a pulled stream
    bool finished_ = false;
};

namespace detail {

template <class T>
asio::awaitable<void> finish(StreamState<T>& state, std::exception_ptr failure)
{
    if (state.stop_reason() != StopReason::none)
        co_return;  // nobody reads the end; stop() closed the channel, which woke the consumer
    boost::system::error_code code = asio::error::eof;
    if (failure) {
        state.failure = as_adk_error(failure);
        code = failure_marker();
    }
    if (state.channel.try_send(code, std::unique_ptr<T>()))
        co_return;
    std::unique_ptr<T> end;  // named: no temporary in a co_await expression (g++ 12)
    auto [ec] = co_await state.channel.async_send(code, std::move(end), asio::as_tuple(asio::use_awaitable));
    (void)ec;  // the consumer left meanwhile: nothing to deliver
}

}  // namespace detail

// A stream whose consumer pulls its items from `source` (see StreamSource).
template <class T>
Stream<T> pull_stream(std::unique_ptr<StreamSource<T>> source)
{
    return Stream<T>(std::move(source));
}

// Runs `fn(Sink<T>)` as a producer coroutine on `ex` and returns the consumer's end. What fn throws
// becomes the stream's failure; its normal return becomes the end of the stream. With a `receiver`, the items
// go to it as they are emitted and the stream carries only the end (see StreamReceiver).
template <class T, class Fn>
Stream<T> spawn_stream(asio::any_io_executor ex, Fn fn, std::size_t capacity = default_stream_capacity,
                       std::shared_ptr<StreamReceiver<T>> receiver = nullptr)
{
    auto state = std::make_shared<detail::StreamState<T>>(ex, capacity, std::move(receiver));
    // A named lambda moved into co_spawn: g++ 12 double-frees capturing-lambda temporaries in co_await
    // expressions.
    auto body = [state, fn = std::move(fn)]() mutable -> asio::awaitable<void> {
        std::exception_ptr failure;
        try {
            // co_spawn starts a coroutine inline when the caller's thread runs the io_context. Post first,
            // so that the producer starts on its own executor and never runs inside its spawner (a
            // ParallelAgent spawning its branches would otherwise run them one after the other).
            co_await asio::post(co_await asio::this_coro::executor, asio::use_awaitable);
            Sink<T> sink(state);
            co_await fn(std::move(sink));
        } catch (...) {
            failure = std::current_exception();
        }
        // After a cancellation every later co_await throws unless the state is reset (Asio 1.26).
        co_await asio::this_coro::reset_cancellation_state();
        co_await detail::finish(*state, failure);
    };
    asio::co_spawn(ex, std::move(body), asio::bind_cancellation_slot(state->producer_slot(), asio::detached));
    return Stream<T>(std::move(state));
}

}  // namespace adk
