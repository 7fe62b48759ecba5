#include "debug_traces.hpp"

#include <adk/core/error.hpp>
#include <adk/detail/json_writer.hpp>

#include <boost/json/parse.hpp>

#include <array>
#include <cstring>
#include <unordered_set>

namespace adk::server::detail {

namespace {

using adk::detail::JsonWriter;

// One attribute's value as JSON text.
void write_value(JsonWriter& w, std::string& out, const telemetry::AttributeValue& value)
{
    std::visit(
        [&](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::vector<std::string>>) {
                out += '[';
                for (std::size_t i = 0; i < v.size(); ++i) {
                    if (i)
                        out += ',';
                    w.string(v[i]);
                }
                out += ']';
            } else if constexpr (std::is_same_v<T, std::string>) {
                w.string(v);
            } else if constexpr (std::is_same_v<T, bool>) {
                w.boolean(v);
            } else if constexpr (std::is_same_v<T, std::int64_t>) {
                w.integer(v);
            } else {
                w.number(v);
            }
        },
        value);
}

// The span's attributes, then its error status, as one JSON object's text; a key set twice keeps its first place
// and its last value (as a JSON object built from them would).
std::string attributes_text(const telemetry::SpanData& data)
{
    std::vector<std::pair<std::string_view, const telemetry::AttributeValue*>> members;
    members.reserve(data.attributes.size() + 2);
    const telemetry::AttributeValue error(std::string("ERROR"));
    const telemetry::AttributeValue description(data.status_message);
    auto add = [&members](std::string_view key, const telemetry::AttributeValue& value) {
        for (auto& m : members)
            if (m.first == key) {
                m.second = &value;
                return;
            }
        members.emplace_back(key, &value);
    };
    for (const telemetry::Attribute& a : data.attributes)
        add(a.key, a.value);
    if (data.status == telemetry::StatusCode::error) {
        add("otel.status_code", error);
        add("otel.status_description", description);
    }
    std::string out;
    JsonWriter w(out);
    out += '{';
    for (std::size_t i = 0; i < members.size(); ++i) {
        if (i)
            out += ',';
        w.string(members[i].first);
        out += ':';
        write_value(w, out, *members[i].second);
    }
    out += '}';
    out.shrink_to_fit();  // kept as long as its session: at its size, not at the room it grew in
    return out;
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

// The attributes as JSON, in the order the span set them. A string that was not UTF-8 (an error's bytes, say) is
// read back as written, as the attributes themselves were served before they were kept as text.
json::object DebugTraces::Span::attributes_json() const
{
    json::parse_options options;
    options.allow_invalid_utf8 = true;
    return json::parse(attributes, {}, options).as_object();
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
    span->attributes = attributes_text(data);
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
