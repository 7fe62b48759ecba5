#include "context_cache.hpp"

#include <adk/core/clock.hpp>
#include <adk/core/error.hpp>
#include <adk/core/log.hpp>
#include <adk/net/url.hpp>
#include <adk/providers/gemini/codec.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <functional>
#include <optional>

namespace adk::gemini {

namespace {

// A cache this close to the end of its life (a minute, or a quarter of its TTL when that is shorter) is made
// anew rather than used: a request that names an expired cache fails.
std::chrono::milliseconds expiry_margin(int ttl_seconds)
{
    return std::min<std::chrono::milliseconds>(std::chrono::seconds(60), std::chrono::milliseconds(ttl_seconds) * 250);
}

std::size_t combine(std::size_t seed, std::size_t value)
{
    return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

// A cache's name as Gemini gives it ("cachedContents/abc", or Vertex AI's "projects/.../cachedContents/abc"):
// it goes into URLs, so anything else is refused.
bool plausible_name(const std::string& name)
{
    if (name.empty() || name.size() > 512 || name.find("cachedContents/") == std::string::npos ||
        name.find("..") != std::string::npos || name.front() == '/')
        return false;
    for (char c : name)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '-' || c == '_' || c == '.'))
            return false;
    return true;
}

std::string ttl_text(int seconds)
{
    return std::to_string(seconds) + "s";
}

}  // namespace

ContextCaches::ContextCaches(GeminiOptions options, std::shared_ptr<net::HttpClient> http)
    : options_(std::move(options)), http_(std::move(http))
{
}

std::size_t ContextCaches::size() const
{
    std::lock_guard lock(mutex_);
    return entries_.size();
}

net::HttpRequest ContextCaches::call(std::string method, const std::string& path, std::string body) const
{
    net::HttpRequest r(std::move(method), "");
    if (options_.vertex) {
        r.url = net::join_url(options_.base_url, "/v1beta1/" + path);
        r.set("authorization", "Bearer " + options_.access_token);
    } else {
        r.url = net::join_url(options_.base_url, "/" + net::encode_path_segment(options_.api_version) + "/" + path);
        if (!options_.api_key.empty())
            r.set("x-goog-api-key", options_.api_key);
    }
    r.set("content-type", "application/json");
    for (const auto& [name, value] : options_.headers)
        r.set(name, value);
    r.body = std::move(body);
    return r;
}

asio::awaitable<std::optional<std::string>> ContextCaches::create(const LlmRequest& request, std::size_t contents,
                                                                  int ttl)
{
    const std::string model = request.model.empty() ? options_.model : request.model;
    LlmRequest start;
    start.model = model;
    start.system_instruction = request.system_instruction;
    start.tools = request.tools;
    start.code_execution = request.code_execution;
    start.config.tool_config = request.config.tool_config;
    start.contents.assign(request.contents.begin(), request.contents.begin() + static_cast<std::ptrdiff_t>(contents));
    json::object body = encode_request(start);
    body.erase("generationConfig");
    const std::string collection = options_.vertex ? "projects/" + net::encode_path_segment(options_.project) +
                                                         "/locations/" + net::encode_path_segment(options_.location)
                                                   : std::string();
    body["model"] = options_.vertex ? collection + "/publishers/google/models/" + model : "models/" + model;
    body["ttl"] = ttl_text(ttl);
    body["displayName"] = "adk-cpp";
    const std::string path = options_.vertex ? collection + "/cachedContents" : "cachedContents";
    std::optional<std::string> failure;
    try {
        net::HttpResponse response = co_await http_->send(call("POST", path, json::serialize(body)));
        const std::string answer = co_await response.read_all(std::size_t{1} << 20);
        boost::system::error_code ec;
        const json::value v = json::parse(answer, ec);
        const json::value* name = !ec && v.is_object() ? v.get_object().if_contains("name") : nullptr;
        if (response.ok() && name && name->is_string() && plausible_name(std::string(name->get_string())))
            co_return std::string(name->get_string());
        failure = "status " + std::to_string(response.status()) + ": " + answer.substr(0, 300);
    } catch (const Error& e) {
        if (e.code() == make_error_code(errc::cancelled))
            throw;
        failure = e.what();
    }
    log(LogLevel::warning, "Gemini did not make a context cache for model " + model + " (" + *failure +
                               "); the request goes uncached");
    co_return std::nullopt;
}

asio::awaitable<bool> ContextCaches::refresh(const std::string& name, int ttl)
{
    json::object body{{"ttl", ttl_text(ttl)}};
    try {
        net::HttpResponse response = co_await http_->send(call("PATCH", name + "?updateMask=ttl", json::serialize(body)));
        co_await response.read_all(std::size_t{1} << 20);
        co_return response.ok();
    } catch (const Error& e) {
        if (e.code() == make_error_code(errc::cancelled))
            throw;
    }
    co_return false;
}

asio::awaitable<void> ContextCaches::remove(std::string name)
{
    std::optional<std::string> failure;
    try {
        net::HttpResponse response = co_await http_->send(call("DELETE", name, ""));
        const std::string answer = co_await response.read_all(std::size_t{1} << 20);
        if (!response.ok() && response.status() != 404)
            failure = "status " + std::to_string(response.status()) + ": " + answer.substr(0, 300);
    } catch (const Error& e) {
        failure = e.what();
    }
    if (failure)
        log(LogLevel::warning, "Gemini's context cache " + name + " was not deleted (" + *failure +
                                   "); it ends with its TTL");
}

asio::awaitable<void> ContextCaches::prepare(LlmRequest& request)
{
    if (!request.cache_config || !request.cached_content.empty())
        co_return;
    const ContextCacheConfig& config = *request.cache_config;
    if (config.cache_intervals < 1 || config.ttl_seconds < 1)
        co_return;
    const json::object body = encode_request(request);
    // The static start: the model, the system instruction, the tools and the tool config.
    json::object statics{{"model", request.model.empty() ? options_.model : request.model}};
    for (const char* key : {"systemInstruction", "tools", "toolConfig"})
        if (const json::value* v = body.if_contains(key))
            statics[key] = *v;
    const std::size_t key = std::hash<std::string>{}(json::serialize(statics));
    const json::array& contents = body.at("contents").get_array();
    std::vector<std::size_t> prefix(contents.size() + 1, 0);  // prefix[k]: the hash of the first k contents
    for (std::size_t i = 0; i < contents.size(); ++i)
        prefix[i + 1] = combine(prefix[i], std::hash<std::string>{}(json::serialize(contents[i])));

    auto apply = [&request](const std::string& name, std::size_t cached) {
        request.cached_content = name;
        request.system_instruction.reset();
        request.tools.clear();
        request.code_execution = false;
        request.config.tool_config = {};
        request.contents.erase(request.contents.begin(), request.contents.begin() + static_cast<std::ptrdiff_t>(cached));
    };
    const auto now = adk::Clock::now();
    std::optional<std::string> replaced;
    std::optional<Entry> reuse;
    {
        std::lock_guard lock(mutex_);
        if (auto at = entries_.find(key); at != entries_.end()) {
            Entry& e = at->second;
            const bool fits = e.contents < contents.size() && prefix[e.contents] == e.prefix_hash;
            if (fits && now + expiry_margin(config.ttl_seconds) < e.expires && e.uses < config.cache_intervals) {
                ++e.uses;
                reuse = e;
            } else {
                replaced = e.name;
                entries_.erase(at);
            }
        }
    }
    if (reuse) {
        const auto ttl = std::chrono::seconds(config.ttl_seconds);
        if (reuse->expires - now < ttl / 2 && co_await refresh(reuse->name, config.ttl_seconds)) {
            std::lock_guard lock(mutex_);
            if (auto at = entries_.find(key); at != entries_.end() && at->second.name == reuse->name)
                at->second.expires = now + ttl;
        }
        apply(reuse->name, reuse->contents);
        co_return;
    }
    if (replaced)
        co_await remove(*replaced);
    // Everything but the latest turn; a request of one turn caches its static start alone.
    const std::size_t cached = contents.empty() ? 0 : contents.size() - 1;
    const bool has_statics = statics.size() > 1;
    const std::size_t estimate = json::serialize(body).size() / 4;
    if ((cached == 0 && !has_statics) || estimate < static_cast<std::size_t>(std::max(0, config.min_tokens)))
        co_return;
    std::optional<std::string> name = co_await create(request, cached, config.ttl_seconds);
    if (!name)
        co_return;
    Entry e;
    e.name = *name;
    e.contents = cached;
    e.prefix_hash = prefix[cached];
    e.expires = now + std::chrono::seconds(config.ttl_seconds);
    e.uses = 1;
    std::optional<std::string> lost;  // another request made one for the same start meanwhile
    {
        std::lock_guard lock(mutex_);
        auto [at, fresh] = entries_.try_emplace(key, e);
        if (!fresh) {
            lost = at->second.name;
            at->second = e;
        }
    }
    if (lost)
        co_await remove(*lost);
    apply(*name, cached);
}

asio::awaitable<void> ContextCaches::close()
{
    std::map<std::size_t, Entry> all;
    {
        std::lock_guard lock(mutex_);
        all.swap(entries_);
    }
    for (auto& [key, e] : all)
        co_await remove(e.name);
}

}  // namespace adk::gemini
