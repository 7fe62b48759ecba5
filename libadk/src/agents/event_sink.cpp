#include <adk/agents/event_sink.hpp>
#include <adk/agents/invocation_context.hpp>
#include <adk/core/error.hpp>
#include <adk/core/ids.hpp>
#include <adk/plugins/plugin.hpp>

#include "invocation.hpp"
#include "../plugins/plugin_manager.hpp"

#include <utility>

namespace adk {

EventSink::EventSink(Sink<Event> sink, std::shared_ptr<detail::Invocation> invocation)
    : sink_(std::move(sink)), invocation_(std::move(invocation))
{
}

asio::awaitable<void> EventSink::emit(Event event)
{
    return emit(std::make_unique<Event>(std::move(event)));
}

// Not a coroutine itself (see Sink::emit): a partial event that no plugin needs to see goes straight to
// the channel when it has room; the rest goes through deliver(), whose frame holds a pointer.
asio::awaitable<void> EventSink::emit(std::unique_ptr<Event> event)
{
    if (try_emit(event))
        return detail::ready();
    return deliver(std::move(event));
}

bool EventSink::try_emit(std::unique_ptr<Event>& event)
{
    if (!event)
        throw Error(errc::invalid_argument,
                    "EventSink::emit / try_emit was given no event (a null pointer): build one with ctx.make_event(...)");
    if (event->author.empty())
        throw Error(errc::invalid_argument,
                    "an event was emitted without an author: build events with ctx.make_event(...)");
    if (event->id.empty())
        event->id = new_uuid();
    if (event->invocation_id.empty())
        event->invocation_id = invocation_->options.invocation_id;
    if (event->timestamp <= 0)
        event->timestamp = now_seconds();
    escalated_ = escalated_ || event->actions.escalate;
    return event->partial && !detail::PluginManager(invocation_->options.plugins).sees(*event) &&
           sink_.try_emit(event);
}

// A committed event goes to a receiver that keeps events (the server's run log) as the session holds it, one
// Event for both; unless a plugin saw it, which may have changed what the caller sees.
asio::awaitable<void> EventSink::deliver(std::unique_ptr<Event> event)
{
    std::shared_ptr<const Event> stored;
    if (!event->partial)
        stored = co_await invocation_->commit(*event);
    if (detail::PluginManager(invocation_->options.plugins).sees(*event)) {
        co_await apply_plugins(*event);
        stored = nullptr;
    }
    co_await sink_.emit(std::move(event), std::move(stored));
}

// Plugins' on_event: the first replacement is what the caller sees (the session keeps what was stored).
asio::awaitable<void> EventSink::apply_plugins(Event& event)
{
    InvocationContext ctx(invocation_, nullptr, event.branch);
    const detail::PluginManager plugins(invocation_->options.plugins);
    co_await plugins.on_event(ctx, event);
}

asio::awaitable<void> EventSink::forward(Event event)
{
    escalated_ = escalated_ || event.actions.escalate;
    return sink_.emit(std::move(event));
}

}  // namespace adk
