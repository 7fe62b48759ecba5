// EventSink: where an agent emits its events. EventStream: where the caller reads them.
#pragma once

#include <adk/core/event.hpp>
#include <adk/core/stream.hpp>

#include <memory>

namespace adk {

using EventStream = Stream<Event>;

namespace detail {
class Invocation;
}

// Invariant 1, commit before continue: when `co_await out.emit(ev)` returns, a non-partial event is in
// the session and its stateDelta is visible to every agent of the invocation.
class EventSink {
public:
    EventSink(Sink<Event> sink, std::shared_ptr<detail::Invocation> invocation);

    // Fills what the event lacks (id, invocation id, timestamp), commits it unless it is partial, then
    // hands it to the consumer, waiting while the consumer is behind. Throws adk::Error for an event
    // without author, when the commit fails, or when the stream was cancelled.
    asio::awaitable<void> emit(Event event);
    // The same for an event built on the heap (what a model's partial events are): the Event is not moved.
    asio::awaitable<void> emit(std::unique_ptr<Event> event);
    // Hands a partial event over at once when no plugin needs to see it and the consumer's channel has
    // room: true, and `event` is gone. Otherwise false and `event` stays: `co_await emit(std::move(event))`.
    // What a producer of many small deltas calls first, to save a coroutine per delta.
    bool try_emit(std::unique_ptr<Event>& event);

    // Hands on an event that was already committed (one read from a sub-agent's EventStream).
    asio::awaitable<void> forward(Event event);

    // Whether an event with actions.escalate passed through since the last clear: how a LoopAgent
    // learns that a child asked to leave the loop.
    bool escalated() const noexcept { return escalated_; }
    void clear_escalation() noexcept { escalated_ = false; }

private:
    asio::awaitable<void> deliver(std::unique_ptr<Event> event);
    asio::awaitable<void> apply_plugins(Event& event);

    Sink<Event> sink_;
    std::shared_ptr<detail::Invocation> invocation_;
    bool escalated_ = false;
};

}  // namespace adk
