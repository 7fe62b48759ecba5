// MeteredSessionService: a SessionService that times every operation of the one it wraps, for the session
// store's latency. The histogram is OpenTelemetry's database client metric:
//
//   db.client.operation.duration (s)   db.system.name = what the caller says ("sqlite", "postgresql", ...)
//                                      db.operation.name = create_session, get_session, list_sessions,
//                                        delete_session, append_event, take_turn (the wait for a session's turn)
//                                      error.type when the operation failed
//
//   auto sessions = std::make_shared<adk::telemetry::MeteredSessionService>(sqlite, meter, "sqlite");
//
// The wrapper makes the checks of SessionService's public functions once, with the wrapped service's
// state_limits() as they were when it was wrapped, then calls the wrapped service's operations directly.
#pragma once

#include <adk/sessions/session_service.hpp>
#include <adk/telemetry/metrics.hpp>

#include <memory>
#include <string>
#include <string_view>

namespace adk::telemetry {

class MeteredSessionService final : public SessionService {
public:
    MeteredSessionService(std::shared_ptr<SessionService> inner, const std::shared_ptr<Meter>& meter,
                          std::string system);

    const std::shared_ptr<SessionService>& inner() const noexcept { return inner_; }

protected:
    asio::awaitable<SessionTurn> do_take_turn(SessionKey key) override;
    asio::awaitable<Session> do_create_session(CreateSessionRequest request) override;
    asio::awaitable<std::optional<Session>> do_get_session(GetSessionRequest request) override;
    asio::awaitable<std::vector<Session>> do_list_sessions(ListSessionsRequest request) override;
    asio::awaitable<void> do_delete_session(DeleteSessionRequest request) override;
    asio::awaitable<void> do_append_event(AppendEventRequest request) override;

private:
    std::shared_ptr<SessionService> inner_;
    Histogram duration_;
    std::string system_;
};

}  // namespace adk::telemetry
