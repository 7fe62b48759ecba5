// DebugTraces: a span sink (adk/telemetry/tracer.hpp) that keeps, in memory, the finished spans of each session's
// invocations in the shape ADK's web UI reads from /dev/apps/{app}/debug/trace/...: "invocation" > "invoke_agent
// <agent>" > "call_llm" (> "generate_content <model>") and "execute_tool <tool>", with the model's request and answer
// and the tool's arguments and result. A call_llm or execute_tool span names the event its answer became
// (gcp.vertex.agent.event_id), so that the UI finds the span of an event it shows.
//
// Bounded: at most max_spans spans per session (the oldest go first), max_sessions sessions and max_bytes of
// attributes in all (the session seen least recently goes first). Spans reach it only when they end, so nothing of an
// invocation that never ends is kept.
#pragma once

#include <adk/telemetry/tracer.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <cstdint>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace adk::server::detail {

namespace json = boost::json;

class DebugTraces final : public telemetry::SpanSink {
public:
    explicit DebugTraces(std::size_t max_spans = 2000, std::size_t max_sessions = 1000,
                         std::size_t max_bytes = std::size_t{64} << 20);

    void on_end(const telemetry::SpanData& span) override;
    bool wants_content() const noexcept override { return true; }  // the UI shows requests and answers

    // The session's finished spans, oldest first (the UI's zod schema: name, span_id, trace_id, parent_span_id (null
    // for a root, and for a span whose parent is not of this session: a caller's), start_time and end_time in ns,
    // attributes). Sessions are kept by app, user and id: an empty `app` or no `user` matches any, and when sessions of
    // several users (or apps) match, adk::Error (invalid_argument) asks the caller to name the user. None: an empty
    // array.
    json::array session_spans(std::string_view app, const std::optional<std::string>& user,
                              std::string_view session_id) const;
    // The attributes of the call_llm or execute_tool span of that event, with trace_id and span_id, when its session
    // is of `app` (any when empty) and `user` (any when none).
    std::optional<json::object> event_trace(std::string_view app, const std::optional<std::string>& user,
                                            const std::string& event_id) const;

private:
    // A finished span as kept: its attributes packed as they came (their bytes copied once as the span ends, the
    // JSON the UI reads made only when it asks: writing every span's attributes as JSON text at its end cost a
    // served invocation a tenth of its instructions, and keeping them as the span held them, a vector of variants,
    // their strings and the ids in hex, half as much memory again), its ids as they came.
    class Span {
    public:
        std::string name;
        telemetry::TraceId trace_id{};
        telemetry::SpanId span_id{};
        telemetry::SpanId parent_span_id{};  // all zero for a root
        std::int64_t start_ns = 0;
        std::int64_t end_ns = 0;
        // The attributes in the order the span set them, then its error status as otel.status_code and
        // otel.status_description (debug_traces.cpp: pack_attributes).
        std::string attributes;
        const std::string* session_key = nullptr;  // its session's key in sessions_ ("app\nuser\nsession")
        std::string event_id;                      // indexed
        std::size_t bytes = 0;                     // what it holds, about

        json::object attributes_json() const;
    };
    using SpanPtr = std::shared_ptr<const Span>;

    class Session {
    public:
        std::deque<SpanPtr> spans;
        std::list<std::string>::iterator lru;
    };

    // Under mutex_.
    void forget_session(std::unordered_map<std::string, Session>::iterator session);

    const std::size_t max_spans_;
    const std::size_t max_sessions_;
    const std::size_t max_bytes_;

    mutable std::mutex mutex_;
    std::size_t bytes_ = 0;  // of the kept spans' attributes
    std::unordered_map<std::string, Session> sessions_;
    std::list<std::string> session_lru_;  // most recent last
    std::unordered_map<std::string, SpanPtr> by_event_;
};

}  // namespace adk::server::detail
