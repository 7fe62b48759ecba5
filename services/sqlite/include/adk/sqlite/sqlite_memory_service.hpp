// SqliteMemoryService: what an agent may recall from a user's past sessions, kept in an SQLite file and
// searched with SQLite's full-text index (FTS5). It may share the file of a SqliteSessionService.
//
//   auto memory = std::make_shared<adk::sqlite::SqliteMemoryService>("agents.db");
//   adk::Runner runner({..., .memory_service = memory});
//   co_await memory->add_session_to_memory(finished_session);   // when the application decides
//
// DESIGN
// - Storage: table adk_memory_events (one row per remembered event: app, user, session, event id, author,
//   time, its content as JSON and its text) and the FTS5 index adk_memory_text over the text, kept in step
//   by triggers. Adding a session replaces what was remembered of it, in one transaction.
// - Search: the query's words, each one quoted, joined by OR (an event matches when it holds one of them,
//   as InMemoryMemoryService matches), so nothing in a query is read as FTS5 syntax. Words are runs of ASCII
//   letters and digits and of non-ASCII characters; matching ignores case and diacritics and is by stem
//   (Porter, English): "flights" finds "flight". The best `max_results` matches by BM25 rank are returned,
//   oldest first. An event whose content holds no text is not remembered: no query can find it.
// - Threads: as SqliteSessionService, one worker thread and one connection; the io_context's threads never
//   wait for the disk.
#pragma once

#include <adk/memory/memory_service.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>

namespace adk::sqlite {

class SqliteMemoryOptions {
public:
    SqliteMemoryOptions() = default;

    std::size_t max_results = 50;     // the most memories one search returns
    std::size_t max_query_words = 64;  // words of a query past this many are ignored
};

static_assert(!std::is_aggregate_v<SqliteMemoryOptions>);

class SqliteMemoryService final : public MemoryService {
public:
    // `path` is a file (created when missing) or ":memory:". Throws adk::Error (storage_failed) when the
    // file cannot be opened or its SQLite has no FTS5.
    explicit SqliteMemoryService(std::string path, SqliteMemoryOptions options = {});
    ~SqliteMemoryService() override;

protected:
    asio::awaitable<void> do_add_session(Session session) override;
    asio::awaitable<SearchMemoryResponse> do_search(SearchMemoryRequest request) override;

private:
    class Impl;
    std::shared_ptr<Impl> impl_;
};

// The FTS5 MATCH expression for a user's query: its words (at most `max_words`), each quoted, joined by OR;
// empty when the query holds no word. Whatever the query holds, FTS5 accepts the expression.
std::string fts5_match_query(std::string_view query, std::size_t max_words = 64);

}  // namespace adk::sqlite
