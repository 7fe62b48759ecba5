#include "pg_connection.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <climits>
#include <optional>

namespace adk::postgres {

namespace {

using wait_type = asio::posix::descriptor_base::wait_type;

// libpq's message, on one line, without control characters (it names the host and the user, never a
// password).
std::string printable(const char* message)
{
    std::string out;
    for (const char* p = message ? message : ""; *p; ++p)
        out.push_back(static_cast<unsigned char>(*p) < 0x20 ? ' ' : *p);
    while (!out.empty() && out.back() == ' ')
        out.pop_back();
    return out.empty() ? "no message from libpq" : out;
}

std::string field(const PGresult* result, int code)
{
    const char* value = PQresultErrorField(result, code);
    return value ? value : "";
}

}  // namespace

Connection::Connection(asio::any_io_executor executor, PGconn* conn) : conn_(conn), socket_(std::move(executor)) {}

Connection::~Connection()
{
    if (socket_.is_open())
        socket_.release();  // libpq owns the descriptor and closes it
    PQfinish(conn_);
}

void Connection::fail(std::string_view what)
{
    broken_ = true;
    throw Error(errc::storage_failed, std::string(what) + ": " + printable(PQerrorMessage(conn_)));
}

// libpq may move to another socket while it connects (another host or address of the list).
void Connection::follow_socket()
{
    int fd = PQsocket(conn_);
    if (socket_.is_open() && socket_.native_handle() == fd)
        return;
    if (socket_.is_open())
        socket_.release();
    if (fd >= 0)
        socket_.assign(fd);
}

asio::awaitable<std::unique_ptr<Connection>> Connection::connect(asio::any_io_executor executor, std::string conninfo)
{
    PGconn* conn = PQconnectStart(conninfo.c_str());
    if (!conn)
        throw Error(errc::storage_failed, "cannot connect to PostgreSQL: libpq is out of memory");
    std::unique_ptr<Connection> c(new Connection(std::move(executor), conn));
    // The server's notices ("relation ... already exists, skipping") are for people at a prompt; libpq
    // would print them on stderr.
    PQsetNoticeProcessor(conn, [](void*, const char*) {}, nullptr);
    if (PQstatus(conn) == CONNECTION_BAD)
        c->fail("cannot connect to PostgreSQL");
    co_await c->wait_connected();
    if (PQsetnonblocking(conn, 1) != 0)
        c->fail("cannot make the PostgreSQL connection non-blocking");
    co_return c;
}

asio::awaitable<void> Connection::wait_connected()
{
    PostgresPollingStatusType status = PGRES_POLLING_WRITING;  // where libpq's documentation says to begin
    for (;;) {
        follow_socket();
        if (status == PGRES_POLLING_OK)
            co_return;
        if (status == PGRES_POLLING_FAILED || !socket_.is_open())
            fail("cannot connect to PostgreSQL");
        wait_type wanted = status == PGRES_POLLING_READING ? wait_type::wait_read : wait_type::wait_write;
        try {
            co_await socket_.async_wait(wanted, asio::use_awaitable);
        } catch (const boost::system::system_error&) {
            fail("connecting to PostgreSQL was interrupted");
        }
        status = PQconnectPoll(conn_);
    }
}

asio::awaitable<Result> Connection::query(std::string_view sql, const std::vector<std::string>& params)
{
    if (broken_)
        throw Error(errc::storage_failed, "the PostgreSQL connection is broken");
    std::string statement(sql);
    std::vector<const char*> values;
    std::vector<int> lengths;
    for (const auto& p : params) {
        if (p.size() > INT_MAX)
            throw Error(errc::invalid_argument, "a value for PostgreSQL is larger than 2 GB");
        values.push_back(p.data());
        lengths.push_back(static_cast<int>(p.size()));
    }
    std::vector<int> formats(params.size(), 0);  // text; the lengths let a value hold any byte
    if (!PQsendQueryParams(conn_, statement.c_str(), static_cast<int>(params.size()), nullptr, values.data(),
                           lengths.data(), formats.data(), 0))
        fail("cannot send a statement to PostgreSQL");
    co_await flush();
    co_return co_await receive();
}

asio::awaitable<void> Connection::execute(std::string_view sql)
{
    if (broken_)
        throw Error(errc::storage_failed, "the PostgreSQL connection is broken");
    std::string statements(sql);
    if (!PQsendQuery(conn_, statements.c_str()))
        fail("cannot send statements to PostgreSQL");
    co_await flush();
    co_await receive();
}

// Non-blocking: what the socket did not take yet is sent as it drains. While waiting to write, read too, as
// libpq's documentation asks: the server may be sending (notices) and waiting for us to read.
asio::awaitable<void> Connection::flush()
{
    using namespace asio::experimental::awaitable_operators;
    for (;;) {
        int flushed = PQflush(conn_);
        if (flushed == 0)
            co_return;
        if (flushed < 0)
            fail("cannot send a statement to PostgreSQL");
        std::size_t ready = 0;
        try {
            auto readable = socket_.async_wait(wait_type::wait_read, asio::use_awaitable);
            auto writable = socket_.async_wait(wait_type::wait_write, asio::use_awaitable);
            auto either = std::move(readable) || std::move(writable);
            auto which = co_await std::move(either);
            ready = which.index();
        } catch (const boost::system::system_error&) {
            fail("sending a statement to PostgreSQL was interrupted");
        }
        if (ready == 0 && !PQconsumeInput(conn_))
            fail("the PostgreSQL connection failed");
    }
}

// Every result of the statement; the last one is returned, the first error is thrown once all are read
// (so that the connection is ready for the next statement).
asio::awaitable<Result> Connection::receive()
{
    std::optional<Result> last;
    std::optional<QueryError> error;
    for (;;) {
        while (PQisBusy(conn_)) {
            try {
                // Asio re-arms the descriptor for each wait: data already in the socket completes it at once.
                co_await socket_.async_wait(wait_type::wait_read, asio::use_awaitable);
            } catch (const boost::system::system_error&) {
                fail("waiting for PostgreSQL's answer was interrupted");
            }
            if (!PQconsumeInput(conn_))
                fail("the PostgreSQL connection failed");
        }
        PGresult* r = PQgetResult(conn_);
        if (!r)
            break;
        Result result(r);
        ExecStatusType status = PQresultStatus(r);
        if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY) {
            last.emplace(std::move(result));
        } else if (!error) {
            std::string message = field(r, PG_DIAG_MESSAGE_PRIMARY);
            if (message.empty())
                message = printable(PQresultErrorMessage(r));
            error.emplace(field(r, PG_DIAG_SQLSTATE), "PostgreSQL: " + printable(message.c_str()));
        }
    }
    if (PQstatus(conn_) != CONNECTION_OK)
        fail("the PostgreSQL connection failed");
    if (error)
        throw *error;
    if (!last)
        fail("PostgreSQL answered a statement with no result");
    co_return std::move(*last);
}

}  // namespace adk::postgres
