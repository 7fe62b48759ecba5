// LocalTurns: the turns of a service's sessions among the invocations of this process (SessionTurn). A line
// exists while a session's turn is held: taking a free turn only records the line, with no waiting
// machinery. Who comes while it is held waits on a channel of its own, first come first served; giving the
// turn back hands it to the first waiter, or forgets the line when nobody waits.
#pragma once

#include <adk/core/channel.hpp>
#include <adk/sessions/session_service.hpp>

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace adk::detail {

class LocalTurns : public std::enable_shared_from_this<LocalTurns> {
public:
    asio::awaitable<SessionTurn> take(SessionKey key);

private:
    class Waiter {
    public:
        explicit Waiter(const asio::any_io_executor& ex) : channel(ex, 1) {}

        ConcurrentChannel<void(boost::system::error_code)> channel;
        bool granted = false;  // guarded by LocalTurns::mutex_
    };
    class Held;

    // Hands the turn of the line to its first waiter, or forgets the line.
    void release(const std::string& name);

    std::mutex mutex_;
    std::unordered_map<std::string, std::vector<std::shared_ptr<Waiter>>> lines_;  // held turn -> its waiters
};

}  // namespace adk::detail
