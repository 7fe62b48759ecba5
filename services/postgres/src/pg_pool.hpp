// A few connections to one database, handed to one coroutine at a time. Connections are opened when needed,
// up to a maximum; a coroutine that finds them all in use waits for one, first come first served. A broken
// connection is dropped when it comes back, and the next one asked for is opened anew.
//
// Used from one thread only (the service's io_context runs on one thread). Owned by shared_ptr, and by each
// lease too: a coroutine that never ended (its io_context was stopped) gives its connection back when the
// io_context destroys it, and the pool is still there to take it.
#pragma once

#include "pg_connection.hpp"

#include <boost/asio/steady_timer.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace adk::postgres {

class Pool : public std::enable_shared_from_this<Pool> {
public:
    // A connection while it is held; it goes back to the pool when the lease goes.
    class Lease {
    public:
        Lease(std::shared_ptr<Pool> pool, std::unique_ptr<Connection> connection)
            : pool_(std::move(pool)), connection_(std::move(connection))
        {
        }
        Lease(Lease&& other) noexcept = default;
        Lease& operator=(Lease&&) = delete;
        ~Lease()
        {
            if (connection_)
                pool_->give_back(std::move(connection_));
        }
        Connection* operator->() const noexcept { return connection_.get(); }

    private:
        std::shared_ptr<Pool> pool_;
        std::unique_ptr<Connection> connection_;
    };

    Pool(asio::any_io_executor executor, std::string conninfo, std::size_t max_connections);

    asio::awaitable<Lease> acquire();

    // Closes the connections not in use, and from now on each one given back (before the io_context goes).
    void close()
    {
        closed_ = true;
        idle_.clear();
    }

private:
    void give_back(std::unique_ptr<Connection> connection);

    asio::any_io_executor executor_;
    std::string conninfo_;
    std::size_t max_;
    std::size_t open_ = 0;  // in use or idle
    bool closed_ = false;
    std::vector<std::unique_ptr<Connection>> idle_;
    asio::steady_timer freed_;  // never expires; cancel_one() wakes the longest waiter
};

}  // namespace adk::postgres
