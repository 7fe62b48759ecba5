#include <adk/sqlite/sqlite_memory_service.hpp>

#include <adk/core/error.hpp>
#include <adk/core/json_limits.hpp>

#include "sqlite_db.hpp"
#include "worker.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <algorithm>
#include <cstdint>

namespace adk::sqlite {

namespace {

// A stored content as JSON; throws what value_to's caller reports.
json::value parse_row(std::string_view text)
{
    boost::system::error_code ec;
    json::value v = parse_json(text, ec);
    if (ec)
        throw boost::system::system_error(ec, "not JSON");
    return v;
}

constexpr std::string_view create_memory_tables = R"sql(
CREATE TABLE IF NOT EXISTS adk_memory_events (
  id INTEGER PRIMARY KEY,
  app_name TEXT NOT NULL,
  user_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  author TEXT NOT NULL,
  timestamp REAL NOT NULL,
  content JSON NOT NULL,
  text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS adk_memory_by_session ON adk_memory_events (app_name, user_id, session_id);
CREATE VIRTUAL TABLE IF NOT EXISTS adk_memory_text USING fts5(
  text, content = 'adk_memory_events', content_rowid = 'id', tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS adk_memory_inserted AFTER INSERT ON adk_memory_events BEGIN
  INSERT INTO adk_memory_text (rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER IF NOT EXISTS adk_memory_deleted AFTER DELETE ON adk_memory_events BEGIN
  INSERT INTO adk_memory_text (adk_memory_text, rowid, text) VALUES ('delete', old.id, old.text);
END;
)sql";

bool in_word(char c)
{
    auto u = static_cast<unsigned char>(c);
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || u >= 0x80;
}

}  // namespace

std::string fts5_match_query(std::string_view query, std::size_t max_words)
{
    std::string out;
    std::size_t words = 0;
    std::size_t i = 0;
    while (i < query.size() && words < max_words) {
        while (i < query.size() && !in_word(query[i]))
            ++i;
        std::size_t start = i;
        while (i < query.size() && in_word(query[i]))
            ++i;
        if (i == start)
            break;
        if (!out.empty())
            out += " OR ";
        out += '"';
        out += query.substr(start, i - start);  // no '"' inside: a word holds letters, digits, non-ASCII
        out += '"';
        ++words;
    }
    return out;
}

class SqliteMemoryService::Impl {
public:
    Impl(const std::string& path, SqliteMemoryOptions options_) : db(path), options(options_)
    {
        db.use_shared_settings();
        Database::Transaction tx(db);
        try {
            db.exec(create_memory_tables);
        } catch (const Error& e) {
            if (std::string_view(e.what()).find("fts5") == std::string_view::npos)
                throw;
            throw Error(errc::storage_failed, std::string(e.what()) +
                                                  ". SqliteMemoryService needs an SQLite built with FTS5 "
                                                  "(Debian's libsqlite3 is)");
        }
        tx.commit();
    }

    void add(const Session& session)
    {
        Database::Transaction tx(db);
        db.prepare("DELETE FROM adk_memory_events WHERE app_name = ?1 AND user_id = ?2 AND session_id = ?3")
            .bind(1, session.app_name)
            .bind(2, session.user_id)
            .bind(3, session.id)
            .run();
        for (const auto& event : session.events) {
            if (!event.content)
                continue;
            std::string text = memory_text(*event.content);
            if (text.empty())
                continue;
            db.prepare("INSERT INTO adk_memory_events (app_name, user_id, session_id, event_id, author, timestamp, "
                       "content, text) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)")
                .bind(1, session.app_name)
                .bind(2, session.user_id)
                .bind(3, session.id)
                .bind(4, event.id)
                .bind(5, event.author)
                .bind(6, event.timestamp)
                .bind(7, json::serialize(json::value_from(*event.content)))
                .bind(8, text)
                .run();
        }
        tx.commit();
    }

    SearchMemoryResponse search(const SearchMemoryRequest& request)
    {
        SearchMemoryResponse response;
        std::string match = fts5_match_query(request.query, options.max_query_words);
        if (match.empty() || options.max_results == 0)
            return response;
        auto rows = db.prepare(
            "SELECT e.content, e.author, e.timestamp, e.id FROM adk_memory_text JOIN adk_memory_events e "
            "ON e.id = adk_memory_text.rowid WHERE adk_memory_text MATCH ?1 AND e.app_name = ?2 AND e.user_id = ?3 "
            "ORDER BY adk_memory_text.rank LIMIT ?4");
        rows.bind(1, match)
            .bind(2, request.app_name)
            .bind(3, request.user_id)
            .bind(4, static_cast<std::int64_t>(std::min<std::size_t>(options.max_results, INT64_MAX)));
        std::vector<std::pair<std::int64_t, MemoryEntry>> found;
        while (rows.step()) {
            Content content;
            try {
                content = json::value_to<Content>(parse_row(rows.text(0)));
            } catch (const std::exception& e) {
                throw Error(errc::storage_failed, "SQLite database '" + db.path() + "': remembered event " +
                                                      std::to_string(rows.integer(3)) +
                                                      " holds no content it can read: " + e.what());
            }
            found.emplace_back(rows.integer(3), MemoryEntry(std::move(content), std::string(rows.text(1)), rows.real(2)));
        }
        // Oldest first; events of one time in the order they were remembered.
        std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
            return a.second.timestamp != b.second.timestamp ? a.second.timestamp < b.second.timestamp
                                                            : a.first < b.first;
        });
        for (auto& [id, entry] : found)
            response.memories.push_back(std::move(entry));
        return response;
    }

    Database db;
    SqliteMemoryOptions options;
    Worker worker;  // last: joined first, while the connection is still open
};

SqliteMemoryService::SqliteMemoryService(std::string path, SqliteMemoryOptions options)
    : impl_(std::make_shared<Impl>(std::move(path), options))
{
}

SqliteMemoryService::~SqliteMemoryService() = default;

asio::awaitable<void> SqliteMemoryService::do_add_session(Session session)
{
    auto work = [impl = impl_.get(), session = std::move(session)] { impl->add(session); };
    auto running = impl_->worker.run(std::move(work));  // made before the co_await, not inside it
    co_await std::move(running);
}

asio::awaitable<SearchMemoryResponse> SqliteMemoryService::do_search(SearchMemoryRequest request)
{
    auto work = [impl = impl_.get(), request = std::move(request)] { return impl->search(request); };
    auto running = impl_->worker.run(std::move(work));  // made before the co_await, not inside it
    co_return co_await std::move(running);
}

}  // namespace adk::sqlite
