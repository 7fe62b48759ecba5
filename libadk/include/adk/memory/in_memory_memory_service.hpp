// InMemoryMemoryService: memory by keyword, in this process's memory; safe for concurrent use from any
// thread. An event matches when one of the query's words (runs of ASCII letters, case ignored) is one of
// the words of its text, as ADK's InMemoryMemoryService matches; every match is returned, oldest first. For
// prototypes and tests: it keeps every event and scans them all at each search (adk::sqlite's
// SqliteMemoryService keeps them on disk and searches an index).
#pragma once

#include <adk/memory/memory_service.hpp>

#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace adk {

class InMemoryMemoryService final : public MemoryService {
protected:
    asio::awaitable<void> do_add_session(Session session) override;
    asio::awaitable<SearchMemoryResponse> do_search(SearchMemoryRequest request) override;

private:
    std::mutex mutex_;
    // app -> user -> session id -> its events with content
    std::map<std::string, std::map<std::string, std::map<std::string, EventList>>> sessions_;
};

}  // namespace adk
