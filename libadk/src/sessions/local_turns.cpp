#include "local_turns.hpp"

#include <adk/core/error.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace adk::detail {

class LocalTurns::Held final : public SessionTurn::Holder {
public:
    Held(std::shared_ptr<LocalTurns> turns, std::string name, Line& line)
        : turns_(std::move(turns)), name_(std::move(name)), line_(line)
    {
    }
    ~Held() override { turns_->leave(name_, line_, true); }

private:
    std::shared_ptr<LocalTurns> turns_;
    std::string name_;
    Line& line_;
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
    auto ex = co_await asio::this_coro::executor;
    Line* line = nullptr;
    {
        std::lock_guard lock(mutex_);
        auto& slot = lines_[name];
        if (!slot)
            slot = std::make_unique<Line>(ex);
        ++slot->users;
        line = slot.get();
    }
    if (!line->channel.try_send(boost::system::error_code{})) {
        auto [ec] = co_await line->channel.async_send(boost::system::error_code{},
                                                        asio::as_tuple(asio::use_awaitable));
        if (ec) {
            leave(name, *line, false);
            throw Error(errc::cancelled, "waiting for the turn of session '" + key.session_id +
                                             "' (another invocation of it was running) was cancelled");
        }
    }
    SessionTurn turn(std::make_unique<Held>(shared_from_this(), std::move(name), *line));
    co_return turn;
}

void LocalTurns::leave(const std::string& name, Line& line, bool held)
{
    if (held)
        line.channel.try_receive([](boost::system::error_code) {});
    std::lock_guard lock(mutex_);
    if (--line.users == 0)
        lines_.erase(name);
}

}  // namespace adk::detail
