#include <adk/memory/in_memory_memory_service.hpp>

#include <algorithm>
#include <set>

namespace adk {

namespace {

bool is_letter(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// The words of `text`, lower case: runs of ASCII letters.
void add_words(std::string_view text, std::set<std::string, std::less<>>& out)
{
    std::size_t i = 0;
    while (i < text.size()) {
        while (i < text.size() && !is_letter(text[i]))
            ++i;
        std::size_t start = i;
        while (i < text.size() && is_letter(text[i]))
            ++i;
        if (i > start) {
            std::string word(text.substr(start, i - start));
            std::transform(word.begin(), word.end(), word.begin(),
                           [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; });
            out.insert(std::move(word));
        }
    }
}

std::set<std::string, std::less<>> words_of(const Content& content)
{
    std::set<std::string, std::less<>> out;
    for (const auto& part : content.parts)
        if (part.text)
            add_words(*part.text, out);
    return out;
}

}  // namespace

std::string memory_text(const Content& content)
{
    std::string out;
    for (const auto& part : content.parts) {
        if (!part.text || part.text->empty())
            continue;
        if (!out.empty())
            out += ' ';
        out += *part.text;
    }
    return out;
}

MemoryEntry::MemoryEntry(Content content_, std::string author_, double timestamp_)
    : content(std::move(content_)), author(std::move(author_)), timestamp(timestamp_)
{
}

SearchMemoryRequest::SearchMemoryRequest(std::string app_name_, std::string user_id_, std::string query_)
    : app_name(std::move(app_name_)), user_id(std::move(user_id_)), query(std::move(query_))
{
}

asio::awaitable<void> InMemoryMemoryService::do_add_session(Session session)
{
    EventList kept;  // sharing the session's events
    for (std::size_t i = 0; i < session.events.size(); ++i)
        if (const Event& event = session.events[i]; event.content && !event.content->parts.empty())
            kept.push_back(session.events.shared(i));
    std::lock_guard lock(mutex_);
    sessions_[session.app_name][session.user_id][session.id] = std::move(kept);
    co_return;
}

asio::awaitable<SearchMemoryResponse> InMemoryMemoryService::do_search(SearchMemoryRequest request)
{
    std::set<std::string, std::less<>> query;
    add_words(request.query, query);
    SearchMemoryResponse response;
    std::lock_guard lock(mutex_);
    auto app = sessions_.find(request.app_name);
    if (query.empty() || app == sessions_.end())
        co_return response;
    auto user = app->second.find(request.user_id);
    if (user == app->second.end())
        co_return response;
    for (const auto& [id, events] : user->second) {
        for (const auto& event : events) {
            auto words = words_of(*event.content);
            bool matches = std::any_of(query.begin(), query.end(), [&](const std::string& w) { return words.count(w) > 0; });
            if (matches)
                response.memories.emplace_back(*event.content, event.author, event.timestamp);
        }
    }
    std::stable_sort(response.memories.begin(), response.memories.end(),
                     [](const MemoryEntry& a, const MemoryEntry& b) { return a.timestamp < b.timestamp; });
    co_return response;
}

}  // namespace adk
