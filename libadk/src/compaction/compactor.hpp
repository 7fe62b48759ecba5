// The Runner's side of compaction: after each invocation, the compaction due is planned from the session the
// invocation holds, and made in the background (one at a time per session), so that nothing waits for it. An
// invocation that ends while one runs is planned for again after it, from the session as it is then.
#pragma once

#include <adk/compaction/compaction.hpp>
#include <adk/sessions/session.hpp>

#include "plan.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <memory>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace adk {
class SessionService;
}

namespace adk::detail {

class Compactor : public std::enable_shared_from_this<Compactor> {
public:
    Compactor(EventsCompactionConfig config, std::shared_ptr<SessionService> sessions);

    // Plans the compaction due after `invocation_id` from `session` (read under the caller's lock, nothing
    // copied unless one is due) and starts it on `executor`. When one runs for the session already, the session
    // is read again and planned for after it (for the latest invocation that asked meanwhile).
    void after_invocation(const asio::any_io_executor& executor, const Session& session,
                          const std::string& invocation_id);

    // Returns once no compaction runs.
    asio::awaitable<void> idle();

    const EventsCompactionConfig& config() const noexcept { return config_; }

private:
    class Waiter;
    asio::awaitable<void> run(SessionKey key, std::string session, CompactionPlan plan);
    asio::awaitable<void> compact(const SessionKey& key, const CompactionPlan& plan);
    asio::awaitable<std::optional<CompactionPlan>> plan_again(const SessionKey& key, const std::string& invocation_id);
    // Ends the session's compactions, unless `unless_asked` and an invocation ended meanwhile: then that one's id,
    // the session kept, for run() to plan again.
    std::string finished(const std::string& session, bool unless_asked);

    EventsCompactionConfig config_;
    std::shared_ptr<SessionService> sessions_;
    std::mutex mutex_;
    // The sessions (by key) a compaction runs for, each with the latest invocation that ended while it ran
    // (empty when none did).
    std::map<std::string, std::string> running_;
    std::vector<std::shared_ptr<Waiter>> idle_waiters_;
};

}  // namespace adk::detail
