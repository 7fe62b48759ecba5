#include "compactor.hpp"

#include <adk/core/channel.hpp>
#include <adk/core/log.hpp>
#include <adk/sessions/session_service.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace adk::detail {

class Compactor::Waiter {
public:
    explicit Waiter(const asio::any_io_executor& executor) : wake(executor, 1) {}
    ConcurrentChannel<void(boost::system::error_code)> wake;
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
    std::optional<CompactionPlan> plan = plan_compaction(session.events, config_, invocation_id);
    if (!plan)
        return;
    SessionKey key(session.app_name, session.user_id, session.id);
    std::string session_text = key_text(key);
    {
        std::lock_guard lock(mutex_);
        if (!running_.insert(session_text).second)
            return;  // one runs for this session: the next invocation asks again
    }
    auto self = shared_from_this();
    asio::co_spawn(executor, compact(std::move(key), std::move(*plan)),
                   [self, session_text = std::move(session_text)](std::exception_ptr failure) {
                       if (failure) {
                           try {
                               std::rethrow_exception(failure);
                           } catch (const std::exception& e) {
                               log(LogLevel::warning, std::string("a compaction of a session failed and changed "
                                                                  "nothing: ") + e.what());
                           }
                       }
                       self->finished(session_text);
                   });
}

asio::awaitable<void> Compactor::compact(SessionKey key, CompactionPlan plan)
{
    std::optional<Summary> summary = co_await config_.summarizer->summarize(plan.input);
    if (!summary || summary->content.parts.empty())
        co_return;
    Event event = compaction_event(plan, std::move(*summary));
    Session session(key.session_id, key.app_name, key.user_id);
    co_await sessions_->append_event(session, event);
}

void Compactor::finished(const std::string& session)
{
    std::vector<std::shared_ptr<Waiter>> waiters;
    {
        std::lock_guard lock(mutex_);
        running_.erase(session);
        if (running_.empty())
            waiters = std::move(idle_waiters_);
    }
    for (const auto& w : waiters)
        w->wake.try_send(boost::system::error_code{});
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
    co_await waiter->wake.async_receive(asio::use_awaitable);
}

}  // namespace adk::detail
