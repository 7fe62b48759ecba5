#include <adk/agents/event_sink.hpp>
#include <adk/agents/invocation_context.hpp>
#include <adk/core/error.hpp>
#include <adk/core/ids.hpp>

#include <utility>

namespace adk {

EventSink::EventSink(Sink<Event> sink, std::shared_ptr<detail::Invocation> invocation)
    : sink_(std::move(sink)), invocation_(std::move(invocation))
{
}

asio::awaitable<void> EventSink::emit(Event event)
{
    if (event.author.empty())
        throw Error(errc::invalid_argument,
                    "an event was emitted without an author: build events with ctx.make_event(...)");
    if (event.id.empty())
        event.id = new_uuid();
    if (event.invocation_id.empty())
        event.invocation_id = invocation_->options.invocation_id;
    if (event.timestamp <= 0)
        event.timestamp = now_seconds();
    if (!event.partial)
        co_await invocation_->commit(event);
    escalated_ = escalated_ || event.actions.escalate;
    if (!sink_.try_emit(event))
        co_await sink_.emit(std::move(event));
}

asio::awaitable<void> EventSink::forward(Event event)
{
    escalated_ = escalated_ || event.actions.escalate;
    if (!sink_.try_emit(event))
        co_await sink_.emit(std::move(event));
}

}  // namespace adk
