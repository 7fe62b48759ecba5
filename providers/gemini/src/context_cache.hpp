// Gemini's context caching (LlmRequest::cache_config): the start of a request (system instruction, tools, tool
// config and the earlier contents) is put into a cachedContents resource, and later requests whose start is the
// same name it instead of sending it. One cache per start of a request (the model and its static parts); it is
// used while its earlier contents are the request's first ones, for at most cache_intervals requests, and its
// TTL is refreshed once half of it has passed; a new one replaces it (the old one is deleted), and close()
// deletes them all. A cache that cannot be made (Gemini's minimum size, an error) is logged and the request
// goes uncached.
#pragma once

#include <adk/core/clock.hpp>
#include <adk/models/llm_request.hpp>
#include <adk/net/http_client.hpp>
#include <adk/providers/gemini/gemini.hpp>

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace adk::gemini {

class ContextCaches {
public:
    // `options` resolved (base URL, key or project and token).
    ContextCaches(GeminiOptions options, std::shared_ptr<net::HttpClient> http);

    // Names a cache in `request` (LlmRequest::cached_content) and takes from it what the cache holds; makes or
    // refreshes the cache first when needed. Nothing when the request has no cache_config.
    asio::awaitable<void> prepare(LlmRequest& request);

    // Deletes every cache made; failures are logged.
    asio::awaitable<void> close();

    // Caches held now (for tests).
    std::size_t size() const;

private:
    class Entry {
    public:
        std::string name;  // "cachedContents/..."
        std::size_t contents = 0;
        std::size_t prefix_hash = 0;
        adk::Clock::time_point expires;
        int uses = 0;
    };

    net::HttpRequest call(std::string method, const std::string& path, std::string body) const;
    asio::awaitable<std::optional<std::string>> create(const LlmRequest& request, std::size_t contents, int ttl);
    asio::awaitable<void> remove(std::string name);
    asio::awaitable<bool> refresh(const std::string& name, int ttl);

    GeminiOptions options_;
    std::shared_ptr<net::HttpClient> http_;
    mutable std::mutex mutex_;
    std::map<std::size_t, Entry> entries_;  // by the hash of the request's static start
};

}  // namespace adk::gemini
