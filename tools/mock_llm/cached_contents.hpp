// Gemini's context caches, as mock-llm keeps them: the cachedContents routes (POST .../cachedContents makes one;
// GET, PATCH (its ttl) and DELETE .../cachedContents/ID), and generate requests that name one
// ("cachedContent"), answered as if the cache's system instruction, tools and contents had been sent with them,
// their usage counting its tokens as cachedContentTokenCount. As Gemini does, a request naming an unknown or
// expired cache gets 404, and one that names a cache and sets a system instruction, tools or a tool config
// gets 400.
#pragma once

#include "render.hpp"

#include <boost/json/object.hpp>

#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace adk::mock_llm {

class CachedContents {
public:
    // A generate request as if sent whole, and how many of its tokens the cache held.
    struct Expanded {
        std::string body;
        std::size_t cached_tokens = 0;
    };

    // The answer to a cachedContents route; nullopt when `target` is not one.
    std::optional<Answer> handle(std::string_view method, std::string_view target, std::string_view body);

    // A Gemini generate request: unchanged when it names no cache, else expanded; an error answer when the cache
    // cannot serve it.
    std::variant<Expanded, Answer> expand(std::string_view body);

    // Caches held now, expired ones included until a request finds them.
    std::size_t size() const;

private:
    struct Entry {
        boost::json::object resource;  // as GET answers it
        boost::json::object held;      // systemInstruction, tools, toolConfig, contents
        std::chrono::system_clock::time_point expires;
        std::size_t tokens = 0;
    };

    mutable std::mutex mutex_;
    std::map<std::string, Entry> entries_;
    std::size_t next_id_ = 1;
};

}  // namespace adk::mock_llm
