#include "compactor.hpp"

#include <adk/core/log.hpp>
#include <adk/core/wakeup.hpp>
#include <adk/sessions/session_service.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace adk::detail {

class Compactor::Waiter {
public:
    explicit Waiter(const asio::any_io_executor& executor) : wake(executor) {}
    Wakeup wake;
};

namespace {

std::string key_text(const SessionKey& key)
{
    std::string out = key.app_name;
    out += '\0';
    out += key.user_id;
    out += '\0';
    out += key.session_id;
    return out;
}

}  // namespace

Compactor::Compactor(EventsCompactionConfig config, std::shared_ptr<SessionService> sessions)
    : config_(std::move(config)), sessions_(std::move(sessions))
{
}

void Compactor::after_invocation(const asio::any_io_executor& executor, const Session& session,
                                 const std::string& invocation_id)
{
    SessionKey key(session.app_name, session.user_id, session.id);
    std::string session_text = key_text(key);
    {
        std::lock_guard lock(mutex_);
        if (auto it = running_.find(session_text); it != running_.end()) {
            it->second = invocation_id;  // planned for when the running one ends
            return;
        }
    }
    std::optional<CompactionPlan> plan = plan_compaction(session.events, config_, invocation_id);
    if (!plan)
        return;
    {
        std::lock_guard lock(mutex_);
        if (auto [it, added] = running_.try_emplace(session_text); !added) {
            it->second = invocation_id;  // one started meanwhile (another thread's invocation)
            return;
        }
    }
    auto self = shared_from_this();
    asio::co_spawn(executor, run(std::move(key), session_text, std::move(*plan)),
                   [self, session_text](std::exception_ptr failure) {
                       if (failure)  // only what the loop cannot go on from (no memory): the session is let go
                           self->finished(session_text, false);
                   });
}

asio::awaitable<void> Compactor::run(SessionKey key, std::string session, CompactionPlan plan)
{
    std::optional<CompactionPlan> next = std::move(plan);
    while (true) {
        try {
            if (next)
                co_await compact(key, *next);  // both outlive the call, in this frame
        } catch (const std::exception& e) {
            log(LogLevel::warning, std::string("a compaction of a session failed and changed nothing: ") + e.what());
        }
        next.reset();
        const std::string asked = finished(session, true);
        if (asked.empty())
            co_return;  // nothing asked while it ran
        try {
            next = co_await plan_again(key, asked);
        } catch (const std::exception& e) {
            log(LogLevel::warning, std::string("a session could not be read to plan its compaction: ") + e.what());
        }
    }
}

asio::awaitable<void> Compactor::compact(const SessionKey& key, const CompactionPlan& plan)
{
    std::optional<Summary> summary = co_await config_.summarizer->summarize(plan.input);
    if (!summary || summary->content.parts.empty())
        co_return;
    Event event = compaction_event(plan, std::move(*summary));
    Session session(key.session_id, key.app_name, key.user_id);
    co_await sessions_->append_event(session, event);
}

asio::awaitable<std::optional<CompactionPlan>> Compactor::plan_again(const SessionKey& key,
                                                                     const std::string& invocation_id)
{
    GetSessionRequest request(key);
    std::optional<Session> session = co_await sessions_->get_session(std::move(request));
    if (!session)
        co_return std::nullopt;  // deleted meanwhile
    co_return plan_compaction(session->events, config_, invocation_id);
}

std::string Compactor::finished(const std::string& session, bool unless_asked)
{
    std::vector<std::shared_ptr<Waiter>> waiters;
    {
        std::lock_guard lock(mutex_);
        auto it = running_.find(session);
        if (unless_asked && it != running_.end() && !it->second.empty())
            return std::exchange(it->second, std::string());
        if (it != running_.end())
            running_.erase(it);
        if (running_.empty())
            waiters = std::move(idle_waiters_);
    }
    for (const auto& w : waiters)
        w->wake.notify();
    return {};
}

asio::awaitable<void> Compactor::idle()
{
    auto waiter = std::make_shared<Waiter>(co_await asio::this_coro::executor);
    {
        std::lock_guard lock(mutex_);
        if (running_.empty())
            co_return;
        idle_waiters_.push_back(waiter);
    }
    co_await waiter->wake.async_wait(asio::use_awaitable);
}

}  // namespace adk::detail
