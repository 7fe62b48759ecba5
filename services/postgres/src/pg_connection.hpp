// One libpq connection driven by Asio: libpq's non-blocking API (PQconnectStart/PQconnectPoll,
// PQsendQueryParams, PQflush, PQconsumeInput), with the connection's socket awaited by the io_context, so that
// no thread blocks on the server. Parameters and results travel as text.
//
// Used by one coroutine at a time (the pool hands it out). Any failure below SQL (the socket, the protocol, an
// aborted wait) marks the connection broken; the pool then drops it. Every failure is an adk::Error
// (storage_failed); one the server reported is a QueryError that carries its SQLSTATE.
#pragma once

#include <adk/core/error.hpp>

#include <libpq-fe.h>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace adk::postgres {

namespace asio = boost::asio;

// An error the server reported for a statement, with its SQLSTATE ("40P01": a deadlock, "23505": a unique
// key already taken ...).
class QueryError : public Error {
public:
    QueryError(std::string sqlstate, std::string message)
        : Error(errc::storage_failed, std::move(message)), sqlstate_(std::move(sqlstate))
    {
    }
    const std::string& sqlstate() const noexcept { return sqlstate_; }

private:
    std::string sqlstate_;
};

// A statement's rows, in text.
class Result {
public:
    Result() noexcept : result_(nullptr) {}  // no rows (what asio's co_spawn makes for a failed statement)
    explicit Result(PGresult* result) noexcept : result_(result) {}
    Result(Result&& other) noexcept : result_(std::exchange(other.result_, nullptr)) {}
    Result& operator=(Result&& other) noexcept
    {
        std::swap(result_, other.result_);
        return *this;
    }
    ~Result()
    {
        if (result_)
            PQclear(result_);
    }

    int rows() const noexcept { return PQntuples(result_); }
    bool is_null(int row, int column) const noexcept { return PQgetisnull(result_, row, column) != 0; }
    std::string_view text(int row, int column) const noexcept
    {
        return {PQgetvalue(result_, row, column), static_cast<std::size_t>(PQgetlength(result_, row, column))};
    }

private:
    PGresult* result_;
};

class Connection {
public:
    // Connects with a libpq connection string or URI ("postgresql://user@host/db", "host=... dbname=...").
    static asio::awaitable<std::unique_ptr<Connection>> connect(asio::any_io_executor executor, std::string conninfo);

    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;
    ~Connection();

    // Runs one statement ($1, $2 ... are `params`, as text) and returns its rows. `sql` and `params` must
    // live until the coroutine ends.
    asio::awaitable<Result> query(std::string_view sql, const std::vector<std::string>& params);

    // Runs statements separated by semicolons, without parameters (the simple query protocol).
    asio::awaitable<void> execute(std::string_view sql);

    bool broken() const noexcept { return broken_; }

private:
    Connection(asio::any_io_executor executor, PGconn* conn);

    asio::awaitable<void> wait_connected();
    asio::awaitable<void> flush();
    asio::awaitable<Result> receive();
    void follow_socket();
    [[noreturn]] void fail(std::string_view what);

    PGconn* conn_;
    asio::posix::stream_descriptor socket_;  // libpq's socket, awaited here and never closed here
    bool broken_ = false;
};

}  // namespace adk::postgres
