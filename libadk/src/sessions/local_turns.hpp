// LocalTurns: the turns of a service's sessions among the invocations of this process (SessionTurn). One
// line per session that someone holds or waits for: a channel with room for one message, so that sending
// takes the turn (waiting while it is held, first come first served) and receiving gives it back. A line is
// removed when nobody holds it or waits for it.
#pragma once

#include <adk/sessions/session_service.hpp>

#include <boost/asio/experimental/concurrent_channel.hpp>

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace adk::detail {

class LocalTurns : public std::enable_shared_from_this<LocalTurns> {
public:
    asio::awaitable<SessionTurn> take(SessionKey key);

private:
    class Line {
    public:
        explicit Line(const asio::any_io_executor& ex) : channel(ex, 1) {}

        asio::experimental::concurrent_channel<void(boost::system::error_code)> channel;
        int users = 0;  // holders and waiters; guarded by LocalTurns::mutex_
    };
    class Held;

    // Gives the turn back (when `held`) and forgets the line once nobody uses it.
    void leave(const std::string& name, Line& line, bool held);

    std::mutex mutex_;
    std::unordered_map<std::string, std::unique_ptr<Line>> lines_;
};

}  // namespace adk::detail
