#include <adk/telemetry/metered_session_service.hpp>

#include <adk/core/error.hpp>

#include "span_errors.hpp"

#include <chrono>
#include <exception>
#include <span>
#include <type_traits>

namespace adk::telemetry {

namespace {

// Awaits `work` and records how long it took, with error.type when it threw. The attributes are views of the
// operation's name (a constant) and the service's system name: a series seen before allocates nothing.
template <class T>
asio::awaitable<T> timed(const Histogram& histogram, std::string_view operation, std::string_view system,
                         asio::awaitable<T> work)
{
    const auto start = std::chrono::steady_clock::now();
    auto record = [&](std::string_view error_type) {
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        MetricAttributeView attributes[] = {
            {"db.operation.name", operation}, {"db.system.name", system}, {"error.type", error_type}};
        histogram.record(seconds, std::span<MetricAttributeView>(attributes, error_type.empty() ? 2 : 3));
    };
    std::exception_ptr failure;
    try {
        if constexpr (std::is_void_v<T>) {
            co_await std::move(work);
            record({});
            co_return;
        } else {
            T out = co_await std::move(work);
            record({});
            co_return out;
        }
    } catch (...) {
        failure = std::current_exception();
    }
    record(adk::detail::error_type(failure));
    std::rethrow_exception(failure);
}

}  // namespace

MeteredSessionService::MeteredSessionService(std::shared_ptr<SessionService> inner, const std::shared_ptr<Meter>& meter,
                                             std::string system)
    : inner_(std::move(inner)), system_(std::move(system))
{
    if (!inner_ || !meter)
        throw Error(errc::invalid_argument, "MeteredSessionService needs the session service to wrap and a Meter");
    set_state_limits(inner_->state_limits());
    // OpenTelemetry's advice for db.client.operation.duration.
    duration_ = meter->histogram("db.client.operation.duration", "s", "Duration of database client operations.",
                                 {0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10});
}

asio::awaitable<SessionTurn> MeteredSessionService::do_take_turn(SessionKey key)
{
    return timed(duration_, "take_turn", system_,
                 take_turn_of(*inner_, std::move(key)));
}

asio::awaitable<Session> MeteredSessionService::do_create_session(CreateSessionRequest request)
{
    return timed(duration_, "create_session", system_,
                 create_session_of(*inner_, std::move(request)));
}

asio::awaitable<std::optional<Session>> MeteredSessionService::do_get_session(GetSessionRequest request)
{
    return timed(duration_, "get_session", system_,
                 get_session_of(*inner_, std::move(request)));
}

asio::awaitable<std::vector<Session>> MeteredSessionService::do_list_sessions(ListSessionsRequest request)
{
    return timed(duration_, "list_sessions", system_,
                 list_sessions_of(*inner_, std::move(request)));
}

asio::awaitable<void> MeteredSessionService::do_delete_session(DeleteSessionRequest request)
{
    return timed(duration_, "delete_session", system_,
                 delete_session_of(*inner_, std::move(request)));
}

asio::awaitable<void> MeteredSessionService::do_append_event(AppendEventRequest request)
{
    return timed(duration_, "append_event", system_,
                 append_event_of(*inner_, std::move(request)));
}

}  // namespace adk::telemetry
