#include "debug_traces.hpp"

#include <adk/core/error.hpp>

#include <array>
#include <unordered_set>

namespace adk::server::detail {

namespace {

json::value to_json(const telemetry::AttributeValue& value)
{
    return std::visit(
        [](const auto& v) -> json::value {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::vector<std::string>>) {
                json::array out;
                for (const auto& s : v)
                    out.emplace_back(s);
                return out;
            } else {
                return json::value(v);
            }
        },
        value);
}

// About what an attribute takes as JSON text: its key and strings, and a few bytes for everything else. The bound
// on the bytes kept counts with it, so it must not cost a serialization of each span.
std::size_t approximate_bytes(const telemetry::Attribute& a)
{
    std::size_t value = 20;
    if (const auto* s = std::get_if<std::string>(&a.value)) {
        value = s->size() + 2;
    } else if (const auto* list = std::get_if<std::vector<std::string>>(&a.value)) {
        value = 2;
        for (const auto& item : *list)
            value += item.size() + 3;
    }
    return a.key.size() + 4 + value;
}

// "app\nuser\nsession" split (no id holds a line feed: the server refuses control characters in paths).
std::array<std::string_view, 3> key_parts(std::string_view key)
{
    const auto first = key.find('\n');
    const auto second = key.find('\n', first + 1);
    return {key.substr(0, first), key.substr(first + 1, second - first - 1), key.substr(second + 1)};
}

bool owned_by(std::string_view key, std::string_view app, const std::optional<std::string>& user)
{
    const auto parts = key_parts(key);
    return (app.empty() || parts[0] == app) && (!user || parts[1] == *user);
}

// The spans the UI looks up by event: the model call's (with its request and answer) and the tool's.
bool indexed_by_event(std::string_view name)
{
    return name == "call_llm" || name.substr(0, 13) == "execute_tool ";
}

}  // namespace

// The attributes as JSON, in the order the span set them.
json::object DebugTraces::Span::attributes_json() const
{
    json::object out;
    out.reserve(attributes.size());
    for (const telemetry::Attribute& a : attributes)
        out[a.key] = to_json(a.value);
    return out;
}

DebugTraces::DebugTraces(std::size_t max_spans, std::size_t max_sessions, std::size_t max_bytes)
    : max_spans_(max_spans), max_sessions_(max_sessions), max_bytes_(max_bytes)
{
}

void DebugTraces::on_end(const telemetry::SpanData& data)
{
    if (!data.owner)
        return;  // not an invocation's: no session to show it in
    auto span = std::make_shared<Span>();
    span->name = data.name;
    span->span_id = telemetry::to_hex(data.context.span_id);
    span->trace_id = telemetry::to_hex(data.context.trace_id);
    if (data.has_parent())
        span->parent_span_id = telemetry::to_hex(data.parent_span_id);
    span->start_ns = data.start_ns;
    span->end_ns = data.end_ns;
    span->attributes.reserve(data.attributes.size() + 2);
    span->attributes = data.attributes;
    if (data.status == telemetry::StatusCode::error) {
        span->attributes.push_back({"otel.status_code", std::string("ERROR")});
        span->attributes.push_back({"otel.status_description", data.status_message});
    }
    if (indexed_by_event(data.name))
        if (const auto* id = data.find("gcp.vertex.agent.event_id"); id && std::holds_alternative<std::string>(*id))
            span->event_id = std::get<std::string>(*id);
    span->session_key = data.owner->app_name + "\n" + data.owner->user_id + "\n" + data.owner->session_id;
    span->bytes = 200;  // the span's own fields
    for (const telemetry::Attribute& a : span->attributes)
        span->bytes += approximate_bytes(a);

    std::lock_guard lock(mutex_);
    bytes_ += span->bytes;
    auto [s, added] = sessions_.try_emplace(span->session_key);
    if (added)
        s->second.lru = session_lru_.insert(session_lru_.end(), span->session_key);
    else
        session_lru_.splice(session_lru_.end(), session_lru_, s->second.lru);
    if (!span->event_id.empty())
        by_event_[span->event_id] = span;
    s->second.spans.push_back(std::move(span));
    if (s->second.spans.size() > max_spans_) {
        const SpanPtr& old = s->second.spans.front();
        if (auto e = by_event_.find(old->event_id); e != by_event_.end() && e->second == old)
            by_event_.erase(e);
        bytes_ -= old->bytes;
        s->second.spans.pop_front();
    }
    // The least recent sessions go while there are too many, or too many bytes (but never the newest).
    while (sessions_.size() > 1 && (sessions_.size() > max_sessions_ || bytes_ > max_bytes_))
        forget_session(sessions_.find(session_lru_.front()));
}

void DebugTraces::forget_session(std::unordered_map<std::string, Session>::iterator session)
{
    for (const auto& old : session->second.spans) {
        if (auto e = by_event_.find(old->event_id); e != by_event_.end() && e->second == old)
            by_event_.erase(e);
        bytes_ -= old->bytes;
    }
    session_lru_.erase(session->second.lru);
    sessions_.erase(session);
}

json::array DebugTraces::session_spans(std::string_view app, const std::optional<std::string>& user,
                                       std::string_view session_id) const
{
    json::array out;
    std::lock_guard lock(mutex_);
    const Session* found = nullptr;
    for (const auto& [key, session] : sessions_) {
        if (key_parts(key)[2] != session_id || !owned_by(key, app, user))
            continue;
        if (found)
            throw Error(errc::invalid_argument,
                        "several users have a session " + std::string(session_id) +
                            (app.empty() ? std::string() : " in the app " + std::string(app)) +
                            ": name yours, ?user_id=USER (and use /dev/apps/{app}/debug/trace/...)");
        found = &session;
    }
    if (!found)
        return out;
    std::unordered_set<std::string_view> ids;
    for (const auto& span : found->spans)
        ids.insert(span->span_id);
    out.reserve(found->spans.size());
    for (const auto& span : found->spans) {
        const bool parent_here = !span->parent_span_id.empty() && ids.contains(span->parent_span_id);
        out.push_back(json::object{{"name", span->name},
                                   {"span_id", span->span_id},
                                   {"trace_id", span->trace_id},
                                   {"parent_span_id", parent_here ? json::value(span->parent_span_id) : nullptr},
                                   {"start_time", span->start_ns},
                                   {"end_time", span->end_ns},
                                   {"attributes", span->attributes_json()}});
    }
    return out;
}

std::optional<json::object> DebugTraces::event_trace(std::string_view app, const std::optional<std::string>& user,
                                                     const std::string& event_id) const
{
    std::lock_guard lock(mutex_);
    auto it = by_event_.find(event_id);
    if (it == by_event_.end() || !owned_by(it->second->session_key, app, user))
        return std::nullopt;
    json::object out = it->second->attributes_json();
    out["trace_id"] = it->second->trace_id;
    out["span_id"] = it->second->span_id;
    return out;
}

}  // namespace adk::server::detail
