// A user's query turned into an FTS5 MATCH expression (adk/sqlite/sqlite_memory_service.hpp): whatever the
// query holds, the expression is quoted words joined by OR, and SQLite's FTS5 runs it without an error.
#include <adk/sqlite/sqlite_memory_service.hpp>

#include "fuzz.hpp"

#include <sqlite3.h>

#include <algorithm>

namespace {

// One in-memory FTS5 table, tokenized as SqliteMemoryService's is, with a few rows to match.
sqlite3_stmt* match_statement()
{
    static sqlite3_stmt* statement = [] {
        sqlite3* db = nullptr;
        adk::fuzz::check(sqlite3_open(":memory:", &db) == SQLITE_OK, "an in-memory database opens");
        const char* setup = "CREATE VIRTUAL TABLE t USING fts5(text, tokenize = 'porter unicode61 remove_diacritics 2');"
                            "INSERT INTO t (text) VALUES ('flying to Lisbon in May'), ('Zürich 14th'), ('near and or not');";
        adk::fuzz::check(sqlite3_exec(db, setup, nullptr, nullptr, nullptr) == SQLITE_OK, "the FTS5 table is made");
        sqlite3_stmt* stmt = nullptr;
        adk::fuzz::check(sqlite3_prepare_v2(db, "SELECT rowid FROM t WHERE t MATCH ?1", -1, &stmt, nullptr) == SQLITE_OK,
                         "the MATCH statement prepares");
        return stmt;
    }();
    return statement;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size)
{
    std::string_view query = adk::fuzz::as_text(data, size);
    std::string match = adk::sqlite::fts5_match_query(query, 64);
    adk::fuzz::check(std::count(match.begin(), match.end(), '"') % 2 == 0, "every word is quoted");
    adk::fuzz::check(std::count(match.begin(), match.end(), '"') <= 2 * 64, "at most max_words words");
    if (match.empty())
        return 0;
    sqlite3_stmt* stmt = match_statement();
    sqlite3_bind_text(stmt, 1, match.data(), static_cast<int>(match.size()), SQLITE_TRANSIENT);
    int rc = SQLITE_ROW;
    while (rc == SQLITE_ROW)
        rc = sqlite3_step(stmt);
    adk::fuzz::check(rc == SQLITE_DONE, "FTS5 accepts the expression");
    sqlite3_reset(stmt);
    return 0;
}
