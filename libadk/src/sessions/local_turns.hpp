// LocalTurns: the turns of a service's sessions among the invocations of this process (SessionTurn). A session's
// line is an AsyncMutex that exists while its turn is held or awaited (the map keeps it weakly); who comes while
// it is held waits in it, first come first served.
#pragma once

#include <adk/core/async_mutex.hpp>
#include <adk/sessions/session_service.hpp>

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace adk::detail {

class LocalTurns : public std::enable_shared_from_this<LocalTurns> {
public:
    asio::awaitable<SessionTurn> take(SessionKey key);

private:
    class Held;

    // The line of `name`: the one in use, or a new one.
    std::shared_ptr<AsyncMutex> line(const std::string& name);
    // Forgets the line of `name` once nobody holds or awaits it.
    void forget(const std::string& name);

    std::mutex mutex_;
    std::unordered_map<std::string, std::weak_ptr<AsyncMutex>> lines_;
};

}  // namespace adk::detail
