// A throwaway PostgreSQL server for this test process (tests/support/postgres_server.sh): started on first use,
// stopped when the process exits. Each new_database() is a fresh, empty database in it, so that tests never
// see each other's rows.
//
//   auto* server = adk::test::PostgresServer::get();
//   if (!server)
//       return adk::test::skip(adk::test::PostgresServer::skip_reason());
//   std::string url = server->new_database();
#pragma once

#include "support/paths.hpp"

#include <libpq-fe.h>

#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

#include <sys/wait.h>

namespace adk::test {

// Says why a test did not run; CTest counts a test that prints "SKIPPED:" as skipped (tests/CMakeLists.txt).
inline void skip(const std::string& reason)
{
    std::printf("SKIPPED: %s\n", reason.c_str());
    std::fflush(stdout);
}

class PostgresServer {
public:
    // The server, or nullptr when PostgreSQL is not installed (skip_reason() says so). Throws when it is
    // installed but does not start.
    static PostgresServer* get()
    {
        static std::unique_ptr<PostgresServer> server = start();
        return server.get();
    }

    static const std::string& skip_reason() { return reason(); }

    std::string new_database()
    {
        std::string name = "test" + std::to_string(++databases_);
        execute(url_, "CREATE DATABASE " + name);
        return url_.substr(0, url_.rfind('/') + 1) + name;
    }

    // Runs SQL statements on the database at `url`, as a test sets up what a service then finds.
    static void execute(const std::string& url, const std::string& sql)
    {
        PGconn* conn = PQconnectdb(url.c_str());
        std::string error;
        if (PQstatus(conn) != CONNECTION_OK) {
            error = PQerrorMessage(conn);
        } else {
            PGresult* r = PQexec(conn, sql.c_str());
            if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK)
                error = PQresultErrorMessage(r);
            PQclear(r);
        }
        PQfinish(conn);
        if (!error.empty())
            throw std::runtime_error("PostgreSQL refused '" + sql + "': " + error);
    }

    PostgresServer(const PostgresServer&) = delete;
    PostgresServer& operator=(const PostgresServer&) = delete;
    ~PostgresServer() { (void)std::system(("bash " + script() + " stop " + dir_ + " >/dev/null 2>&1").c_str()); }

private:
    PostgresServer(std::string dir, std::string url) : dir_(std::move(dir)), url_(std::move(url)) {}

    static std::string script() { return paths::postgres_server_script(); }
    static std::string& reason()
    {
        static std::string text;
        return text;
    }

    static std::unique_ptr<PostgresServer> start()
    {
        std::string output;
        FILE* pipe = ::popen(("bash " + script() + " start 2>&1").c_str(), "r");
        if (!pipe)
            throw std::runtime_error("cannot run " + script());
        char buffer[512];
        while (std::fgets(buffer, sizeof buffer, pipe))
            output += buffer;
        int status = ::pclose(pipe);
        while (!output.empty() && output.back() == '\n')
            output.pop_back();
        if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
            reason() = output.substr(output.find("SKIPPED: ") == 0 ? 9 : 0);
            return nullptr;
        }
        auto space = output.rfind(' ');
        if (status != 0 || space == std::string::npos)
            throw std::runtime_error("the test PostgreSQL server did not start: " + output);
        auto line_start = output.rfind('\n', space);
        std::string dir = output.substr(line_start == std::string::npos ? 0 : line_start + 1,
                                        space - (line_start == std::string::npos ? 0 : line_start + 1));
        return std::unique_ptr<PostgresServer>(new PostgresServer(dir, output.substr(space + 1)));
    }

    std::string dir_;
    std::string url_;  // of the database "postgres"
    int databases_ = 0;
};

}  // namespace adk::test
