#include "pg_pool.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace adk::postgres {

Pool::Pool(asio::any_io_executor executor, std::string conninfo, std::size_t max_connections)
    : executor_(executor), conninfo_(std::move(conninfo)), max_(max_connections ? max_connections : 1), freed_(executor)
{
    freed_.expires_at(asio::steady_timer::time_point::max());
}

asio::awaitable<Pool::Lease> Pool::acquire()
{
    for (;;) {
        if (!idle_.empty()) {
            std::unique_ptr<Connection> c = std::move(idle_.back());
            idle_.pop_back();
            co_return Lease(shared_from_this(), std::move(c));
        }
        if (open_ < max_) {
            ++open_;
            std::unique_ptr<Connection> c;
            try {
                asio::any_io_executor executor = executor_;
                std::string conninfo = conninfo_;
                // The awaitable is made in its own statement: no argument is built inside the co_await.
                auto connecting = Connection::connect(std::move(executor), std::move(conninfo));
                c = co_await std::move(connecting);
            } catch (...) {
                --open_;
                freed_.cancel_one();  // a waiter may try in its turn
                throw;
            }
            co_return Lease(shared_from_this(), std::move(c));
        }
        co_await freed_.async_wait(asio::as_tuple(asio::use_awaitable));
    }
}

void Pool::give_back(std::unique_ptr<Connection> connection)
{
    if (connection->broken() || closed_)
        --open_;
    else
        idle_.push_back(std::move(connection));
    freed_.cancel_one();
}

}  // namespace adk::postgres
