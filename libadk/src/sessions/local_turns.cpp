#include "local_turns.hpp"

#include <adk/core/error.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace adk::detail {

class LocalTurns::Held final : public SessionTurn::Holder {
public:
    Held(std::shared_ptr<LocalTurns> turns, std::string name) : turns_(std::move(turns)), name_(std::move(name)) {}
    ~Held() override { turns_->release(name_); }

private:
    std::shared_ptr<LocalTurns> turns_;
    std::string name_;
};

namespace {

std::string line_name(const SessionKey& key)
{
    std::string name;
    name.reserve(key.app_name.size() + key.user_id.size() + key.session_id.size() + 2);
    name.append(key.app_name).push_back('\0');
    name.append(key.user_id).push_back('\0');
    name.append(key.session_id);
    return name;
}

}  // namespace

asio::awaitable<SessionTurn> LocalTurns::take(SessionKey key)
{
    std::string name = line_name(key);
    auto ex = co_await asio::this_coro::executor;  // does not suspend
    std::shared_ptr<Waiter> waiter;
    {
        std::lock_guard lock(mutex_);
        auto [line, free] = lines_.try_emplace(name);
        if (!free) {
            waiter = std::make_shared<Waiter>(ex);
            line->second.push_back(waiter);
        }
    }
    if (waiter) {
        auto [ec] = co_await waiter->channel.async_receive(asio::as_tuple(asio::use_awaitable));
        if (ec) {
            bool granted = false;
            {
                std::lock_guard lock(mutex_);
                granted = waiter->granted;
                if (!granted)
                    std::erase(lines_[name], waiter);
            }
            if (granted)  // handed over as the wait was given up: pass it on
                release(name);
            throw Error(errc::cancelled, "waiting for the turn of " + key.describe() +
                                             " (another invocation of it was running) was cancelled");
        }
    }
    SessionTurn turn(std::make_unique<Held>(shared_from_this(), std::move(name)));
    co_return turn;
}

void LocalTurns::release(const std::string& name)
{
    std::shared_ptr<Waiter> next;
    {
        std::lock_guard lock(mutex_);
        auto line = lines_.find(name);
        if (line->second.empty()) {
            lines_.erase(line);
            return;
        }
        next = std::move(line->second.front());
        line->second.erase(line->second.begin());
        next->granted = true;
    }
    next->channel.try_send(boost::system::error_code{});
}

}  // namespace adk::detail
