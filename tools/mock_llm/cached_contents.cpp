#include "cached_contents.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <cstdio>
#include <ctime>

namespace adk::mock_llm {

namespace json = boost::json;

namespace {

Answer json_answer(unsigned status, json::object body)
{
    Answer a;
    a.status = status;
    a.content_type = "application/json";
    a.body = json::serialize(body);
    return a;
}

Answer error(unsigned status, const char* state, std::string message)
{
    return json_answer(status, {{"error", {{"code", status}, {"message", std::move(message)}, {"status", state}}}});
}

std::string rfc3339(std::chrono::system_clock::time_point t)
{
    const std::time_t seconds = std::chrono::system_clock::to_time_t(t);
    std::tm utc{};
    ::gmtime_r(&seconds, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return text;
}

// "1800s" or "1.5s", as Gemini writes a Duration; nullopt otherwise.
std::optional<std::chrono::milliseconds> duration_of(const json::value* v)
{
    if (!v || !v->is_string())
        return std::nullopt;
    const std::string text(v->get_string());
    double seconds = 0;
    int consumed = 0;
    if (text.empty() || text.back() != 's' || std::sscanf(text.c_str(), "%lf%n", &seconds, &consumed) != 1 ||
        static_cast<std::size_t>(consumed) + 1 != text.size() || seconds < 0 || seconds > 1e7)
        return std::nullopt;
    return std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
}

// The path of a target without its query, from its API version on: "cachedContents/3" for
// "/v1beta/cachedContents/3?updateMask=ttl".
std::string_view route_of(std::string_view target)
{
    target = target.substr(0, target.find('?'));
    for (std::string_view version : {"/v1beta/", "/v1beta1/", "/v1/"})
        if (target.rfind(version, 0) == 0)
            return target.substr(version.size());
    return {};
}

}  // namespace

std::optional<Answer> CachedContents::handle(std::string_view method, std::string_view target, std::string_view body)
{
    const std::string_view route = route_of(target);
    const std::size_t at = route.find("cachedContents");
    if (at == std::string_view::npos || (at > 0 && route[at - 1] != '/'))
        return std::nullopt;
    const bool collection = route.size() == at + std::string_view("cachedContents").size();
    const auto now = std::chrono::system_clock::now();
    std::lock_guard lock(mutex_);
    if (collection) {
        if (method != "POST")
            return error(405, "INVALID_ARGUMENT", "mock-llm makes caches with POST .../cachedContents");
        boost::system::error_code ec;
        json::value request = json::parse(body, ec);
        if (ec || !request.is_object())
            return error(400, "INVALID_ARGUMENT", "the body is not a JSON object");
        json::object& o = request.get_object();
        const auto ttl = duration_of(o.if_contains("ttl"));
        const json::value* model = o.if_contains("model");
        if (!ttl || !model || !model->is_string())
            return error(400, "INVALID_ARGUMENT", "a cache needs a model and a ttl such as \"300s\"");
        Entry e;
        for (const char* key : {"systemInstruction", "tools", "toolConfig", "contents"})
            if (const json::value* v = o.if_contains(key))
                e.held[key] = *v;
        e.tokens = json::serialize(e.held).size() / 4 + 1;
        e.expires = now + *ttl;
        const std::string name = std::string(route) + "/" + std::to_string(next_id_++);
        e.resource = {{"name", name},
                      {"model", *model},
                      {"displayName", o.contains("displayName") ? o.at("displayName") : json::value("")},
                      {"createTime", rfc3339(now)},
                      {"updateTime", rfc3339(now)},
                      {"expireTime", rfc3339(e.expires)},
                      {"usageMetadata", {{"totalTokenCount", e.tokens}}}};
        json::object answer = e.resource;
        entries_[name] = std::move(e);
        return json_answer(200, std::move(answer));
    }
    const std::string name(route);
    auto found = entries_.find(name);
    if (found == entries_.end() || found->second.expires <= now) {
        if (found != entries_.end())
            entries_.erase(found);
        return error(404, "NOT_FOUND", "CachedContent not found (or permission denied)");
    }
    Entry& e = found->second;
    if (method == "GET")
        return json_answer(200, e.resource);
    if (method == "DELETE") {
        entries_.erase(found);
        return json_answer(200, {});
    }
    if (method == "PATCH") {
        boost::system::error_code ec;
        json::value request = json::parse(body, ec);
        const auto ttl = !ec && request.is_object() ? duration_of(request.get_object().if_contains("ttl")) : std::nullopt;
        if (!ttl)
            return error(400, "INVALID_ARGUMENT", "PATCH sets the ttl: {\"ttl\": \"300s\"}");
        e.expires = now + *ttl;
        e.resource["expireTime"] = rfc3339(e.expires);
        e.resource["updateTime"] = rfc3339(now);
        return json_answer(200, e.resource);
    }
    return error(405, "INVALID_ARGUMENT", "a cache takes GET, PATCH and DELETE");
}

std::variant<CachedContents::Expanded, Answer> CachedContents::expand(std::string_view body)
{
    boost::system::error_code ec;
    json::value request = json::parse(body, ec);
    const json::value* named = !ec && request.is_object() ? request.get_object().if_contains("cachedContent") : nullptr;
    if (!named)
        return Expanded{std::string(body), 0};
    if (!named->is_string())
        return error(400, "INVALID_ARGUMENT", "cachedContent must be a cache's name");
    json::object& o = request.get_object();
    for (const char* key : {"systemInstruction", "tools", "toolConfig"})
        if (o.contains(key))
            return error(400, "INVALID_ARGUMENT",
                         "CachedContent can not be used with GenerateContent request setting system_instruction, "
                         "tools or tool_config.");
    std::lock_guard lock(mutex_);
    auto found = entries_.find(std::string(named->get_string()));
    if (found == entries_.end() || found->second.expires <= std::chrono::system_clock::now()) {
        if (found != entries_.end())
            entries_.erase(found);
        return error(404, "NOT_FOUND", "CachedContent not found (or permission denied)");
    }
    const Entry& e = found->second;
    json::array contents;
    if (const json::value* held = e.held.if_contains("contents"); held && held->is_array())
        contents = held->get_array();
    if (const json::value* sent = o.if_contains("contents"); sent && sent->is_array())
        for (const auto& c : sent->get_array())
            contents.push_back(c);
    o.erase("cachedContent");
    for (const char* key : {"systemInstruction", "tools", "toolConfig"})
        if (const json::value* v = e.held.if_contains(key))
            o[key] = *v;
    o["contents"] = std::move(contents);
    return Expanded{json::serialize(o), e.tokens};
}

std::size_t CachedContents::size() const
{
    std::lock_guard lock(mutex_);
    return entries_.size();
}

}  // namespace adk::mock_llm
