// InMemorySessionService: sessions in this process's memory, safe for concurrent use from any thread.
// Everything is lost when the process exits.
#pragma once

#include <adk/sessions/session_service.hpp>

#include <map>
#include <mutex>
#include <string>

namespace adk {

class InMemorySessionService final : public SessionService {
protected:
    asio::awaitable<Session> do_create_session(CreateSessionRequest request) override;
    asio::awaitable<std::optional<Session>> do_get_session(GetSessionRequest request) override;
    asio::awaitable<std::vector<Session>> do_list_sessions(ListSessionsRequest request) override;
    asio::awaitable<void> do_delete_session(DeleteSessionRequest request) override;
    asio::awaitable<void> do_append_event(AppendEventRequest request) override;

private:
    // The stored session named by `key`, or null. Caller holds mutex_.
    Session* find(const SessionKey& key);
    // The stored copy of `s` with app: and user: state merged in. Caller holds mutex_.
    Session merged(const Session& s) const;
    // Applies a state delta (no temp: keys) to the shared stores and to `stored`. Caller holds mutex_.
    void apply_delta(Session& stored, const json::object& delta);

    mutable std::mutex mutex_;
    // app -> user -> session id -> session (state holds session-scoped keys only)
    std::map<std::string, std::map<std::string, std::map<std::string, Session>>> sessions_;
    std::map<std::string, json::object> app_state_;                          // app -> state (no prefix)
    std::map<std::string, std::map<std::string, json::object>> user_state_;  // app -> user -> state
};

}  // namespace adk
