#include "local_turns.hpp"

#include <adk/core/error.hpp>

namespace adk::detail {

class LocalTurns::Held final : public SessionTurn::Holder {
public:
    Held(std::shared_ptr<LocalTurns> turns, std::string name, std::shared_ptr<AsyncMutex> line)
        : turns_(std::move(turns)), name_(std::move(name)), line_(std::move(line))
    {
    }
    ~Held() override
    {
        line_->unlock();
        line_.reset();
        turns_->forget(name_);
    }

private:
    std::shared_ptr<LocalTurns> turns_;
    std::string name_;
    std::shared_ptr<AsyncMutex> line_;
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
    std::shared_ptr<AsyncMutex> held = line(name);
    if (!held->try_lock()) {
        bool cancelled = false;
        try {
            co_await held->lock();
        } catch (const boost::system::system_error&) {
            cancelled = true;
        }
        if (cancelled) {
            held.reset();
            forget(name);
            throw Error(errc::cancelled, "waiting for the turn of " + key.describe() +
                                             " (another invocation of it was running) was cancelled");
        }
    }
    SessionTurn turn(std::make_unique<Held>(shared_from_this(), std::move(name), std::move(held)));
    co_return turn;
}

std::shared_ptr<AsyncMutex> LocalTurns::line(const std::string& name)
{
    std::lock_guard lock(mutex_);
    std::weak_ptr<AsyncMutex>& entry = lines_[name];
    std::shared_ptr<AsyncMutex> existing = entry.lock();
    if (existing)
        return existing;
    auto made = std::make_shared<AsyncMutex>();
    entry = made;
    return made;
}

void LocalTurns::forget(const std::string& name)
{
    std::lock_guard lock(mutex_);
    auto it = lines_.find(name);
    if (it != lines_.end() && it->second.expired())
        lines_.erase(it);
}

}  // namespace adk::detail
