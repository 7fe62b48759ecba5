// MemoryService: what an agent may recall from a user's past sessions. A session is added to memory when
// the application decides (after it ends, for instance); a search returns the events that match a query.
//
// DESIGN: as SessionService, public non-virtual functions over protected virtuals, with request objects.
#pragma once

#include <adk/core/content.hpp>
#include <adk/sessions/session.hpp>

#include <boost/asio/awaitable.hpp>

#include <string>
#include <type_traits>
#include <vector>

namespace adk {

namespace asio = boost::asio;

// One remembered piece: an event's content, who wrote it and when.
class MemoryEntry {
public:
    MemoryEntry() = default;
    MemoryEntry(Content content_, std::string author_, double timestamp_);

    Content content;
    std::string author;
    double timestamp = 0;  // seconds since the epoch

    friend bool operator==(const MemoryEntry&, const MemoryEntry&) = default;
};

// The text parts of a content, joined by spaces: what a memory is searched by, and what the memory tools
// show the model of it.
std::string memory_text(const Content& content);

class SearchMemoryRequest {
public:
    SearchMemoryRequest(std::string app_name_, std::string user_id_, std::string query_);

    std::string app_name;
    std::string user_id;
    std::string query;
};

class SearchMemoryResponse {
public:
    SearchMemoryResponse() = default;

    std::vector<MemoryEntry> memories;
};

static_assert(!std::is_aggregate_v<MemoryEntry> && !std::is_aggregate_v<SearchMemoryRequest> &&
              !std::is_aggregate_v<SearchMemoryResponse>);

class MemoryService {
public:
    virtual ~MemoryService() = default;

    // Remembers the session's events that have content (adding the same session again replaces it).
    asio::awaitable<void> add_session_to_memory(Session session) { return do_add_session(std::move(session)); }

    // What the user's remembered sessions in this app hold about `query`, oldest first.
    asio::awaitable<SearchMemoryResponse> search_memory(SearchMemoryRequest request)
    {
        return do_search(std::move(request));
    }

protected:
    virtual asio::awaitable<void> do_add_session(Session session) = 0;
    virtual asio::awaitable<SearchMemoryResponse> do_search(SearchMemoryRequest request) = 0;
};

}  // namespace adk
