// InMemorySessionService: sessions in this process's memory, safe for concurrent use from any thread.
// Everything is lost when the process exits; use the SQLite service to keep it.
#pragma once

#include <adk/sessions/session_service.hpp>

#include <map>
#include <mutex>
#include <string>

namespace adk {

class InMemorySessionService final : public SessionService {
protected:
    asio::awaitable<Session> do_create_session(std::string app_name, std::string user_id, std::string session_id,
                                               json::object state) override;
    asio::awaitable<std::optional<Session>> do_get_session(std::string app_name, std::string user_id,
                                                           std::string session_id, GetSessionConfig config) override;
    asio::awaitable<std::vector<Session>> do_list_sessions(std::string app_name, std::string user_id) override;
    asio::awaitable<void> do_delete_session(std::string app_name, std::string user_id,
                                            std::string session_id) override;
    asio::awaitable<void> do_append_event(const Session& session, Event& event) override;

private:
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
