// TraceRecorder: a plugin that keeps, in memory, the spans of each session's invocations in the shape ADK's
// web UI reads from /dev/apps/{app}/debug/trace/...: "invocation" > "invoke_agent <agent>" > "call_llm" and
// "execute_tool <tool>", with the model's request and answer and the tool's arguments and result. A call_llm
// span carries the id of the event the model's answer became, an execute_tool span that of the function
// response event, so that the UI finds the span of an event it shows.
//
// Bounded: at most max_spans spans per session (the oldest go first), max_sessions sessions and max_bytes of
// attributes in all (the session seen least recently goes first); a request, answer, arguments or result
// larger than 256 KiB is recorded as {"truncated": true, "bytes": N}; spans of invocations that never finish
// are forgotten past max_open.
#pragma once

#include <adk/plugins/plugin.hpp>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include <cstdint>
#include <deque>
#include <list>
#include <unordered_map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace adk::server::detail {

class TraceRecorder final : public Plugin {
public:
    explicit TraceRecorder(std::size_t max_spans = 2000, std::size_t max_sessions = 1000,
                           std::size_t max_bytes = std::size_t{64} << 20, std::size_t max_open = 10000);

    // The session's finished spans, oldest first (the UI's zod schema: name, span_id, trace_id,
    // parent_span_id, start_time and end_time in ns, attributes). Sessions are kept by app, user and id: an
    // empty `app` or no `user` matches any, and when sessions of several users (or apps) match, adk::Error
    // (invalid_argument) asks the caller to name the user. None: an empty array.
    json::array session_spans(std::string_view app, const std::optional<std::string>& user,
                              std::string_view session_id) const;
    // The attributes of the call_llm or execute_tool span of that event, with trace_id and span_id, when its
    // session is of `app` (any when empty) and `user` (any when none).
    std::optional<json::object> event_trace(std::string_view app, const std::optional<std::string>& user,
                                            const std::string& event_id) const;

    asio::awaitable<std::optional<Content>> before_run(InvocationContext& ctx) override;
    asio::awaitable<void> after_run(InvocationContext& ctx) override;
    asio::awaitable<std::optional<Event>> on_event(InvocationContext& ctx, const Event& event) override;
    bool sees_partial_events() const noexcept override { return false; }  // spans end on whole events
    asio::awaitable<std::optional<Content>> before_agent(Agent& agent, CallbackContext& ctx) override;
    asio::awaitable<std::optional<Content>> after_agent(Agent& agent, CallbackContext& ctx) override;
    asio::awaitable<std::optional<LlmResponse>> before_model(CallbackContext& ctx, LlmRequest& request) override;
    asio::awaitable<std::optional<LlmResponse>> after_model(CallbackContext& ctx, const LlmResponse& response) override;
    asio::awaitable<std::optional<LlmResponse>> on_model_error(CallbackContext& ctx, const LlmRequest& request,
                                                               const Error& error) override;
    asio::awaitable<std::optional<json::value>> before_tool(Tool& tool, json::object& args, ToolContext& ctx) override;
    asio::awaitable<std::optional<json::value>> after_tool(Tool& tool, const json::object& args, ToolContext& ctx,
                                                           const json::value& result) override;
    asio::awaitable<std::optional<json::value>> on_tool_error(Tool& tool, const json::object& args, ToolContext& ctx,
                                                              const Error& error) override;

private:
    class Span {
    public:
        std::string name;
        std::string span_id;
        std::string trace_id;
        std::string parent_span_id;  // empty for an invocation's root
        std::int64_t start_ns = 0;
        std::int64_t end_ns = 0;
        json::object attributes;
        std::string session_key;  // "app\nuser\nsession"
        std::string event_id;  // indexed once known
        std::size_t bytes = 0;  // of the attributes, counted when the span closes
    };
    using SpanPtr = std::shared_ptr<Span>;

    class Session {
    public:
        std::deque<SpanPtr> spans;
        std::list<std::string>::iterator lru;
    };

    // Under mutex_.
    SpanPtr open(const std::string& key, std::string name, const std::string& trace_key, const std::string& parent_key,
                 const InvocationContext& inv);
    // Adds `more` to the span's attributes and moves it to its session's finished list; null when not open.
    SpanPtr close(const std::string& key, json::object more = {});
    void forget_session(std::unordered_map<std::string, Session>::iterator session);
    void index_event(const SpanPtr& span, const std::string& event_id);
    std::string trace_id_of(const std::string& invocation_id);

    const std::size_t max_spans_;
    const std::size_t max_sessions_;
    const std::size_t max_bytes_;
    const std::size_t max_open_;
    std::size_t bytes_ = 0;  // of the finished spans' attributes

    mutable std::mutex mutex_;
    std::unordered_map<std::string, SpanPtr> open_;  // by key: "run|inv", "agent|inv|branch|name", "llm|...", "tool|inv|call id"
    std::deque<std::pair<std::string, std::weak_ptr<Span>>> open_order_;  // oldest first, to forget what never closes
    std::unordered_map<std::string, SpanPtr> awaiting_event_;  // a finished span whose event comes next, by the same keys
    std::unordered_map<std::string, Session> sessions_;
    std::list<std::string> session_lru_;  // most recent last
    std::unordered_map<std::string, SpanPtr> by_event_;
};

}  // namespace adk::server::detail
