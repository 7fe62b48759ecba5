// Several processes on one session database, and a process killed in the middle of a run
// (tests/support/session_worker.cpp is the process).
#include <adk/adk.hpp>
#include <adk/services/service_url.hpp>

#include "support/child_process.hpp"
#include "support/postgres_server.hpp"
#include "support/run.hpp"
#include "support/session_at.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace asio = boost::asio;
using adk::test::ChildProcess;
using adk::test::read_session;

const std::string worker = adk::test::paths::session_worker();

std::int64_t int_at(const adk::Session& s, std::string_view key)
{
    const auto* v = s.state.if_contains(key);
    return v ? v->as_int64() : -1;
}

// Each event added one to "counter" as its invocation read it: in the order the session reads them, the
// k-th event sets it to k, and the state holds the last value, for both scopes.
void check_counted(const adk::Session& s, std::size_t expected)
{
    REQUIRE(s.events.size() == expected);
    std::size_t in_order = 0;
    for (std::size_t k = 0; k < s.events.size(); ++k) {
        const auto& delta = s.events[k].actions.state_delta;
        if (delta.at("counter") == static_cast<std::int64_t>(k + 1) &&
            delta.at("user:counter") == static_cast<std::int64_t>(k + 1))
            ++in_order;
    }
    CHECK(in_order == expected);
    CHECK(int_at(s, "counter") == static_cast<std::int64_t>(expected));
    CHECK(int_at(s, "user:counter") == static_cast<std::int64_t>(expected));
}

// 8 processes x 100 invocations, each adding one to "counter" and "user:counter" as it read them. (Each invocation
// reads the whole session, so the work grows with the square of the invocations: 8 x 200 took 225 s of the 300 s
// a test may take on 2 cores under ASan, and timed out beside the PostgreSQL run.)
void many_processes(const std::string& url)
{
    {
        ChildProcess create({worker, "create", url, "s"});
        REQUIRE(create.wait() == 0);
    }
    constexpr int processes = 8;
    constexpr int invocations = 100;
    std::vector<std::unique_ptr<ChildProcess>> children;
    for (int p = 0; p < processes; ++p)
        children.push_back(std::make_unique<ChildProcess>(
            std::vector<std::string>{worker, "count", url, "s", std::to_string(invocations)}));
    std::size_t committed = 0;
    for (auto& child : children) {
        while (auto line = child->read_line())
            committed += line->starts_with("committed ");
        CHECK(child->wait() == 0);
    }
    CHECK(committed == processes * invocations);
    check_counted(read_session(url, "s"), processes * invocations);
}

// A process killed in the middle of invocations of 5 events, 2 ms apart: the kill falls inside an
// invocation, between commits or in one.
void killed_process(const std::string& url)
{
    {
        ChildProcess create({worker, "create", url, "s"});
        REQUIRE(create.wait() == 0);
    }
    std::set<std::string> committed;
    {
        ChildProcess child({worker, "count", url, "s", "1000", "5", "2"});
        while (committed.size() < 37) {
            auto line = child.read_line();
            REQUIRE(line);
            committed.insert(line->substr(std::string_view("committed ").size()));
        }
        child.kill_now();
        while (auto line = child.read_line())  // what it printed before the signal landed
            committed.insert(line->substr(std::string_view("committed ").size()));
        CHECK(child.wait() == 128 + SIGKILL);
    }
    adk::Session after = read_session(url, "s");
    std::set<std::string> stored;
    for (const auto& e : after.events)
        stored.insert(e.id);
    for (const auto& id : committed)
        CHECK(stored.count(id) == 1);
    CHECK(stored.size() >= committed.size());
    CHECK(stored.size() <= committed.size() + 1);  // at most the one committed as the signal landed
    check_counted(after, after.events.size());     // each event with its state change, none half-written

    // The dead process's turn was released (by the kernel, or by the server with the dead connection):
    // another process runs the session at once.
    ChildProcess next({worker, "count", url, "s", "3"});
    while (next.read_line()) {
    }
    CHECK(next.wait() == 0);
    check_counted(read_session(url, "s"), after.events.size() + 3);
}

// Processes that open the database (and so check its schema) again and again while others append to it: none
// fails. Before, each start ran the schema's DDL, which locks the events and sessions tables even when it
// changes nothing; an append between those two locks deadlocked with it ("deadlock detected"), and the
// starting process died.
void starts_while_others_run(const std::string& url)
{
    constexpr int invocations = 150;
    std::vector<std::unique_ptr<ChildProcess>> counters;
    for (int i = 0; i < 4; ++i) {
        const std::string session = "s" + std::to_string(i);
        ChildProcess create({worker, "create", url, session});
        REQUIRE(create.wait() == 0);
        counters.push_back(std::make_unique<ChildProcess>(
            std::vector<std::string>{worker, "count", url, session, std::to_string(invocations)}));
    }
    std::size_t lines = 0;
    int starts = 0;
    for (; starts < 40 && lines < invocations; ++starts) {
        ChildProcess opener({worker, "create", url, "opened-" + std::to_string(starts)});
        CHECK(opener.wait() == 0);
        if (counters[0]->read_line())
            ++lines;
    }
    CHECK(starts >= 10);  // the starts fell among the appends
    for (auto& counter : counters) {
        std::size_t committed = counter.get() == counters[0].get() ? lines : 0;
        while (counter->read_line())
            ++committed;
        CHECK(counter->wait() == 0);
        CHECK(committed == invocations);
    }
    for (int i = 0; i < 4; ++i)  // (the four sessions share user:counter; each its own counter)
        CHECK(int_at(read_session(url, "s" + std::to_string(i)), "counter") == invocations);
}

// The deadlock's first half, held still: a transaction holds what an append holds on the way (row-exclusive
// locks on sessions and events) while a process starts. The start must not wait for any lock: before, its
// `ALTER TABLE events ADD COLUMN IF NOT EXISTS` queued behind the append (and, holding events, made the
// append's next step wait for it in turn: the deadlock). Whether the start waits is read from pg_locks, so
// the test does not depend on timing.
void start_beside_an_open_append(const std::string& url)
{
    {
        ChildProcess create({worker, "create", url, "s"});
        REQUIRE(create.wait() == 0);
    }
    PGconn* holder = PQconnectdb(url.c_str());
    REQUIRE(PQstatus(holder) == CONNECTION_OK);
    auto exec = [&](const char* sql) {
        PGresult* r = PQexec(holder, sql);
        const bool ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;
        std::string first = ok && PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0 ? PQgetvalue(r, 0, 0) : "";
        PQclear(r);
        if (!ok)
            FAIL("PostgreSQL refused " << sql << ": " << PQerrorMessage(holder));
        return first;
    };
    exec("BEGIN");
    exec("LOCK TABLE sessions IN ROW EXCLUSIVE MODE");
    exec("LOCK TABLE events IN ROW EXCLUSIVE MODE");
    ChildProcess opener({worker, "create", url, "opened"});
    std::optional<int> status;
    bool waited = false;
    while (!(status = opener.try_wait()) && !waited) {
        // A lock not granted, asked for by another backend: the start queued behind the open append.
        waited = exec("SELECT count(*) FROM pg_locks WHERE NOT granted AND pid <> pg_backend_pid()") != "0";
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    exec("COMMIT");
    PQfinish(holder);
    CHECK_FALSE(waited);
    if (!status)
        status = opener.wait();
    CHECK(*status == 0);
}

}  // namespace

TEST_CASE("a process that starts beside an append under way takes no lock the append holds", "[postgres][processes]")
{
    auto* server = adk::test::PostgresServer::get();
    if (!server)
        return adk::test::skip(adk::test::PostgresServer::skip_reason());
    start_beside_an_open_append(server->new_database());
}

TEST_CASE("8 processes x 100 invocations on one SQLite session lose no event and no increment", "[sqlite][processes]")
{
    adk::test::TempDir dir("sqlite-processes");
    many_processes("sqlite:///" + dir.file("shared.db"));
}

TEST_CASE("a process killed by SIGKILL in the middle of runs leaves every committed event and nothing half-written",
          "[sqlite][processes]")
{
    adk::test::TempDir dir("sqlite-kill");
    killed_process("sqlite:///" + dir.file("killed.db"));
}

TEST_CASE("8 processes x 100 invocations on one PostgreSQL session lose no event and no increment",
          "[postgres][processes]")
{
    auto* server = adk::test::PostgresServer::get();
    if (!server)
        return adk::test::skip(adk::test::PostgresServer::skip_reason());
    many_processes(server->new_database());
}

TEST_CASE("a process killed by SIGKILL in the middle of runs on PostgreSQL leaves every committed event and "
          "nothing half-written",
          "[postgres][processes]")
{
    auto* server = adk::test::PostgresServer::get();
    if (!server)
        return adk::test::skip(adk::test::PostgresServer::skip_reason());
    killed_process(server->new_database());
}

TEST_CASE("processes that start while others append to PostgreSQL never deadlock with them", "[postgres][processes]")
{
    auto* server = adk::test::PostgresServer::get();
    if (!server)
        return adk::test::skip(adk::test::PostgresServer::skip_reason());
    starts_while_others_run(server->new_database());
}
