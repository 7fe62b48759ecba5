#include "sqlite_db.hpp"

#include <adk/core/error.hpp>

namespace adk::sqlite {

Database::Database(const std::string& path) : path_(path)
{
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
    int rc = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
    if (rc != SQLITE_OK) {
        std::string why = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
        sqlite3_close(db_);
        db_ = nullptr;
        throw Error(errc::storage_failed, "cannot open the SQLite database '" + path + "': " + why +
                                              ". Check that the folder exists and is writable");
    }
    sqlite3_extended_result_codes(db_, 1);
}

Database::~Database()
{
    for (auto& [sql, stmt] : statements_)
        sqlite3_finalize(stmt);
    sqlite3_close(db_);
}

void Database::fail(int code, std::string_view doing) const
{
    std::string why = sqlite3_errmsg(db_);
    if (why.empty() || why == "not an error")
        why = sqlite3_errstr(code);
    throw Error(errc::storage_failed, "SQLite database '" + path_ + "': " + std::string(doing) + " failed: " + why);
}

void Database::exec(std::string_view sql)
{
    std::string text(sql);
    char* message = nullptr;
    int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &message);
    if (rc != SQLITE_OK) {
        std::string why = message ? message : sqlite3_errstr(rc);
        sqlite3_free(message);
        throw Error(errc::storage_failed,
                    "SQLite database '" + path_ + "': '" + text.substr(0, 60) + "' failed: " + why);
    }
}

void Database::use_shared_settings()
{
    exec("PRAGMA busy_timeout = 10000");  // another connection's or process's write: wait for it, up to 10 s
    if (path_ != ":memory:")
        exec("PRAGMA journal_mode = WAL");
    exec("PRAGMA synchronous = NORMAL");
}

Statement Database::prepare(const std::string& sql)
{
    auto it = statements_.find(sql);
    if (it == statements_.end()) {
        sqlite3_stmt* stmt = nullptr;
        int rc = sqlite3_prepare_v3(db_, sql.c_str(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                                    &stmt, nullptr);
        if (rc != SQLITE_OK)
            fail(rc, "preparing '" + sql.substr(0, 60) + "'");
        it = statements_.emplace(sql, stmt).first;
    }
    return Statement(db_, it->second, it->first);
}

Statement& Statement::bind(int index, std::string_view text)
{
    int rc = sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
    if (rc != SQLITE_OK)
        throw Error(errc::storage_failed, "SQLite: binding parameter " + std::to_string(index) + " of '" +
                                              sql_->substr(0, 60) + "' failed: " + sqlite3_errstr(rc));
    return *this;
}

Statement& Statement::bind(int index, std::int64_t number)
{
    sqlite3_bind_int64(stmt_, index, number);
    return *this;
}

Statement& Statement::bind(int index, double number)
{
    sqlite3_bind_double(stmt_, index, number);
    return *this;
}

Statement& Statement::bind_null(int index)
{
    sqlite3_bind_null(stmt_, index);
    return *this;
}

bool Statement::step()
{
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW)
        return true;
    if (rc == SQLITE_DONE)
        return false;
    std::string why = sqlite3_errmsg(db_);
    sqlite3_reset(stmt_);
    throw Error(errc::storage_failed, "SQLite: '" + sql_->substr(0, 60) + "' failed: " + why);
}

void Statement::run()
{
    while (step()) {
    }
}

std::string_view Statement::text(int column) const
{
    const auto* data = sqlite3_column_text(stmt_, column);
    auto size = static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column));
    return data ? std::string_view(reinterpret_cast<const char*>(data), size) : std::string_view();
}

std::int64_t Statement::integer(int column) const
{
    return sqlite3_column_int64(stmt_, column);
}

double Statement::real(int column) const
{
    return sqlite3_column_double(stmt_, column);
}

bool Statement::is_null(int column) const
{
    return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

void Statement::reset()
{
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
}

Database::Transaction::Transaction(Database& db, Mode mode) : db_(db)
{
    db_.exec(mode == write ? "BEGIN IMMEDIATE" : "BEGIN");
}

Database::Transaction::~Transaction()
{
    if (!done_)
        sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Database::Transaction::commit()
{
    db_.exec("COMMIT");
    done_ = true;
}

}  // namespace adk::sqlite
