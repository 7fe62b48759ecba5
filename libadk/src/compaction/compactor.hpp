// The Runner's side of compaction: after each invocation, the compaction due is planned from the session the
// invocation holds, and made in the background (one at a time per session), so that nothing waits for it.
#pragma once

#include <adk/compaction/compaction.hpp>
#include <adk/sessions/session.hpp>

#include "plan.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <memory>
#include <mutex>
#include <set>
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
    // copied unless one is due) and starts it on `executor`, unless one runs for the session already.
    void after_invocation(const asio::any_io_executor& executor, const Session& session,
                          const std::string& invocation_id);

    // Returns once no compaction runs.
    asio::awaitable<void> idle();

    const EventsCompactionConfig& config() const noexcept { return config_; }

private:
    class Waiter;
    asio::awaitable<void> compact(SessionKey key, CompactionPlan plan);
    void finished(const std::string& session);

    EventsCompactionConfig config_;
    std::shared_ptr<SessionService> sessions_;
    std::mutex mutex_;
    std::set<std::string> running_;  // the sessions (by key) a compaction runs for
    std::vector<std::shared_ptr<Waiter>> idle_waiters_;
};

}  // namespace adk::detail
