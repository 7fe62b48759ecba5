#include "debug_traces.hpp"

#include <adk/core/error.hpp>

#include <array>
#include <cstring>
#include <unordered_set>

namespace adk::server::detail {

namespace {

// A finished span's attributes packed into one string as they came, read back only when the UI asks: each a type
// byte, its key and its value, a length before each string (a size_t, in this process's byte order). Writing it
// copies the bytes; the JSON text the UI reads escapes them all, the model's request and answer (JSON text
// themselves) most of all, and is written for the few spans a person looks at.
enum class Packed : char { no, yes, integer, number, string, list };

void pack_bytes(std::string& out, std::string_view bytes)
{
    const std::size_t size = bytes.size();
    out.append(reinterpret_cast<const char*>(&size), sizeof size);
    out.append(bytes);
}

void pack(std::string& out, std::string_view key, const telemetry::AttributeValue& value)
{
    std::visit(
        [&](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, bool>) {
                out += static_cast<char>(v ? Packed::yes : Packed::no);
                pack_bytes(out, key);
            } else if constexpr (std::is_same_v<T, std::int64_t> || std::is_same_v<T, double>) {
                out += static_cast<char>(std::is_same_v<T, double> ? Packed::number : Packed::integer);
                pack_bytes(out, key);
                out.append(reinterpret_cast<const char*>(&v), sizeof v);
            } else if constexpr (std::is_same_v<T, std::string>) {
                out += static_cast<char>(Packed::string);
                pack_bytes(out, key);
                pack_bytes(out, v);
            } else {
                out += static_cast<char>(Packed::list);
                pack_bytes(out, key);
                const std::size_t count = v.size();
                out.append(reinterpret_cast<const char*>(&count), sizeof count);
                for (const std::string& item : v)
                    pack_bytes(out, item);
            }
        },
        value);
}

std::size_t packed_size(std::string_view key, const telemetry::AttributeValue& value)
{
    std::size_t size = 1 + sizeof(std::size_t) + key.size();
    if (const auto* text = std::get_if<std::string>(&value))
        return size + sizeof(std::size_t) + text->size();
    if (const auto* list = std::get_if<std::vector<std::string>>(&value)) {
        size += sizeof(std::size_t);
        for (const std::string& item : *list)
            size += sizeof(std::size_t) + item.size();
        return size;
    }
    return std::holds_alternative<bool>(value) ? size : size + 8;  // a bool is in its type byte
}

// The span's attributes, then its error status as otel.status_code and otel.status_description.
std::string pack_attributes(const telemetry::SpanData& data)
{
    const telemetry::AttributeValue error(std::string("ERROR"));
    const telemetry::AttributeValue description(data.status_message);
    const bool failed = data.status == telemetry::StatusCode::error;
    std::size_t size = 0;
    for (const telemetry::Attribute& a : data.attributes)
        size += packed_size(a.key, a.value);
    if (failed)
        size += packed_size("otel.status_code", error) + packed_size("otel.status_description", description);
    std::string out;
    out.reserve(size);  // kept as long as its session: at its size
    for (const telemetry::Attribute& a : data.attributes)
        pack(out, a.key, a.value);
    if (failed) {
        pack(out, "otel.status_code", error);
        pack(out, "otel.status_description", description);
    }
    return out;
}

// Reads what pack_bytes wrote at `at`, and moves past it.
std::string_view unpack_bytes(std::string_view packed, std::size_t& at)
{
    std::size_t size;
    std::memcpy(&size, packed.data() + at, sizeof size);
    at += sizeof size;
    const std::string_view bytes = packed.substr(at, size);
    at += size;
    return bytes;
}

std::uint64_t id_bits(const telemetry::SpanId& id)
{
    std::uint64_t v;
    std::memcpy(&v, id.data(), sizeof v);
    return v;
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

// The attributes as JSON, in the order the span set them; a key set twice keeps its first place and its last value.
// A string that was not UTF-8 (an error's bytes, say) is served as the bytes it held.
json::object DebugTraces::Span::attributes_json() const
{
    json::object out;
    std::size_t at = 0;
    while (at < attributes.size()) {
        const auto type = static_cast<Packed>(attributes[at++]);
        const std::string_view key = unpack_bytes(attributes, at);
        json::value& value = out[key];
        switch (type) {
        case Packed::no:
        case Packed::yes:
            value = type == Packed::yes;
            break;
        case Packed::integer:
        case Packed::number: {
            std::int64_t integer;
            double number;
            if (type == Packed::integer) {
                std::memcpy(&integer, attributes.data() + at, sizeof integer);
                value = integer;
            } else {
                std::memcpy(&number, attributes.data() + at, sizeof number);
                value = number;
            }
            at += 8;
            break;
        }
        case Packed::string:
            value = unpack_bytes(attributes, at);
            break;
        case Packed::list: {
            std::size_t count;
            std::memcpy(&count, attributes.data() + at, sizeof count);
            at += sizeof count;
            json::array& items = value.emplace_array();
            items.reserve(count);
            for (std::size_t i = 0; i < count; ++i)
                items.emplace_back(unpack_bytes(attributes, at));
            break;
        }
        }
    }
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
    span->trace_id = data.context.trace_id;
    span->span_id = data.context.span_id;
    if (data.has_parent())
        span->parent_span_id = data.parent_span_id;
    span->start_ns = data.start_ns;
    span->end_ns = data.end_ns;
    span->attributes = pack_attributes(data);
    if (indexed_by_event(data.name))
        if (const auto* id = data.find("gcp.vertex.agent.event_id"); id && std::holds_alternative<std::string>(*id))
            span->event_id = std::get<std::string>(*id);
    std::string key = data.owner->app_name + "\n" + data.owner->user_id + "\n" + data.owner->session_id;
    span->bytes = 200 + span->name.size() + span->attributes.size() + span->event_id.size();  // 200: its own fields

    std::lock_guard lock(mutex_);
    bytes_ += span->bytes;
    auto [s, added] = sessions_.try_emplace(std::move(key));
    if (added)
        s->second.lru = session_lru_.insert(session_lru_.end(), s->first);
    else
        session_lru_.splice(session_lru_.end(), session_lru_, s->second.lru);
    span->session_key = &s->first;
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
    std::unordered_set<std::uint64_t> ids;
    for (const auto& span : found->spans)
        ids.insert(id_bits(span->span_id));
    out.reserve(found->spans.size());
    for (const auto& span : found->spans) {
        const bool has_parent = span->parent_span_id != telemetry::SpanId{};
        const bool parent_here = has_parent && ids.contains(id_bits(span->parent_span_id));
        out.push_back(json::object{{"name", span->name},
                                   {"span_id", telemetry::to_hex(span->span_id)},
                                   {"trace_id", telemetry::to_hex(span->trace_id)},
                                   {"parent_span_id", parent_here ? json::value(telemetry::to_hex(span->parent_span_id))
                                                                  : json::value(nullptr)},
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
    if (it == by_event_.end() || !owned_by(*it->second->session_key, app, user))
        return std::nullopt;
    json::object out = it->second->attributes_json();
    out["trace_id"] = telemetry::to_hex(it->second->trace_id);
    out["span_id"] = telemetry::to_hex(it->second->span_id);
    return out;
}

}  // namespace adk::server::detail
