// A thin RAII layer over one SQLite connection (libsqlite3): open, run statements, prepared statements
// cached by their text. Used from one thread at a time: the service that owns it runs every call on its own
// worker thread. Every failure is an adk::Error (storage_failed) that names the database and the statement.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace adk::sqlite {

class Statement {
public:
    Statement(sqlite3* db, sqlite3_stmt* stmt, const std::string& sql) : db_(db), stmt_(stmt), sql_(&sql) {}
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;
    ~Statement() { reset(); }

    // Parameters count from 1, as in SQL's "?1".
    Statement& bind(int index, std::string_view text);
    Statement& bind(int index, std::int64_t number);
    Statement& bind(int index, double number);
    Statement& bind_null(int index);

    // Runs to the next row: true while there is one, false when done.
    bool step();
    // Runs a statement that returns no rows.
    void run();

    std::string_view text(int column) const;
    std::int64_t integer(int column) const;
    double real(int column) const;
    bool is_null(int column) const;

    void reset();

private:
    sqlite3* db_;
    sqlite3_stmt* stmt_;
    const std::string* sql_;
};

class Database {
public:
    // Opens (creating) the file; ":memory:" opens a private in-memory database.
    explicit Database(const std::string& path);
    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;
    ~Database();

    // Runs one or more statements with no parameters and no rows.
    void exec(std::string_view sql);
    // How adk-cpp's services share a file with other connections and processes: wait up to 10 s for another
    // writer, WAL journal (not for ":memory:"), synchronous=NORMAL.
    void use_shared_settings();
    // The cached prepared statement for `sql`, reset when the returned Statement goes.
    Statement prepare(const std::string& sql);

    const std::string& path() const noexcept { return path_; }
    sqlite3* handle() const noexcept { return db_; }

    // A write transaction (BEGIN IMMEDIATE: the write lock is taken first, so that two writers never
    // deadlock upgrading) or a read one (BEGIN: a consistent snapshot), rolled back unless committed.
    class Transaction {
    public:
        enum Mode { write, read };
        explicit Transaction(Database& db, Mode mode = write);
        Transaction(const Transaction&) = delete;
        Transaction& operator=(const Transaction&) = delete;
        ~Transaction();
        void commit();

    private:
        Database& db_;
        bool done_ = false;
    };

    [[noreturn]] void fail(int code, std::string_view doing) const;

private:
    std::string path_;
    sqlite3* db_ = nullptr;
    std::map<std::string, sqlite3_stmt*, std::less<>> statements_;
};

}  // namespace adk::sqlite
