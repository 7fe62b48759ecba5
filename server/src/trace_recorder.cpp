#include "trace_recorder.hpp"

#include <adk/agents/agent.hpp>
#include <adk/agents/invocation_context.hpp>
#include <adk/core/error.hpp>
#include <adk/core/ids.hpp>
#include <adk/models/llm_request.hpp>
#include <adk/models/llm_response.hpp>
#include <adk/tools/tool.hpp>

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>

#include <array>

#include <chrono>

namespace adk::server::detail {

namespace json = boost::json;

namespace {

std::int64_t now_ns()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// Random lower-case hex, 32 digits at most.
std::string random_hex(std::size_t digits)
{
    std::string out;
    for (char c : new_uuid())
        if (c != '-')
            out += c;
    out.resize(digits);
    return out;
}

std::string agent_key(const CallbackContext& ctx)
{
    const InvocationContext& inv = ctx.invocation_context();
    return inv.invocation_id() + "|" + inv.branch() + "|" + ctx.agent_name();
}

// The request and the answer as the UI shows them. Their JSON trees live only while they are serialized, so
// they are built in one scratch buffer (on the stack while it fits): no allocation per node.
std::string request_json(const LlmRequest& request)
{
    unsigned char scratch[8192];
    json::monotonic_resource buffer(scratch, sizeof scratch);
    json::storage_ptr sp(&buffer);
    json::object config(sp);
    if (request.system_instruction)
        config["systemInstruction"] = json::value_from(*request.system_instruction, sp);
    if (!request.tools.empty()) {
        json::array declarations(sp);
        for (const auto& d : request.tools)
            declarations.push_back(
                json::object({{"name", d.name}, {"description", d.description}, {"parameters", d.parameters}}, sp));
        config["tools"] = json::array({json::object({{"functionDeclarations", std::move(declarations)}}, sp)}, sp);
    }
    json::array contents(sp);
    contents.reserve(request.contents.size());
    for (const auto& c : request.contents)
        contents.push_back(json::value_from(c, sp));
    json::object v({{"model", request.model}, {"contents", std::move(contents)}, {"config", std::move(config)}}, sp);
    return json::serialize(v);
}

std::string response_json(const LlmResponse& response)
{
    unsigned char scratch[4096];
    json::monotonic_resource buffer(scratch, sizeof scratch);
    json::object out(&buffer);
    if (response.content)
        out["content"] = json::value_from(*response.content, out.storage());
    if (response.finish_reason)
        out["finishReason"] = *response.finish_reason;
    if (response.usage_metadata)
        out["usageMetadata"] = json::value_from(*response.usage_metadata, out.storage());
    if (response.error_code)
        out["errorCode"] = *response.error_code;
    if (response.error_message)
        out["errorMessage"] = *response.error_message;
    return json::serialize(out);
}

// About what a value takes as JSON text: its strings and keys, and a few bytes for everything else. The
// bound on a recorder's bytes counts with it, so it must not cost a serialization of each span.
std::size_t approximate_bytes(const json::value& v)
{
    switch (v.kind()) {
    case json::kind::string: return v.get_string().size() + 2;
    case json::kind::array: {
        std::size_t n = 2;
        for (const auto& item : v.get_array())
            n += approximate_bytes(item) + 1;
        return n;
    }
    case json::kind::object: {
        std::size_t n = 2;
        for (const auto& kv : v.get_object())
            n += kv.key().size() + 4 + approximate_bytes(kv.value());
        return n;
    }
    default: return 20;
    }
}

// A request, answer, arguments or result as the trace keeps it: the JSON text, or a note of its size past 256 KiB.
std::string capped(std::string text)
{
    constexpr std::size_t max_attribute_bytes = std::size_t{256} << 10;
    if (text.size() <= max_attribute_bytes)
        return text;
    json::value note = json::object{{"truncated", true}, {"bytes", text.size()}};
    return json::serialize(note);
}

}  // namespace

TraceRecorder::TraceRecorder(std::size_t max_spans, std::size_t max_sessions, std::size_t max_bytes,
                             std::size_t max_open)
    : Plugin("adk_trace_recorder"), max_spans_(max_spans), max_sessions_(max_sessions), max_bytes_(max_bytes),
      max_open_(max_open)
{
}

std::string TraceRecorder::trace_id_of(const std::string& invocation_id)
{
    auto it = open_.find("run|" + invocation_id);
    return it != open_.end() ? it->second->trace_id : random_hex(32);
}

TraceRecorder::SpanPtr TraceRecorder::open(const std::string& key, std::string name, const std::string& trace_key,
                                           const std::string& parent_key, const InvocationContext& inv)
{
    auto span = std::make_shared<Span>();
    span->name = std::move(name);
    span->span_id = random_hex(16);
    span->trace_id = trace_id_of(trace_key);
    if (auto parent = open_.find(parent_key); parent != open_.end())
        span->parent_span_id = parent->second->span_id;
    span->start_ns = now_ns();
    // Session ids are chosen by clients and unique per app and user only: the key holds all three (no id holds
    // a line feed: the server refuses control characters in paths).
    span->session_key = inv.app_name() + "\n" + inv.user_id() + "\n" + inv.session_id();
    open_[key] = span;
    open_order_.emplace_back(key, span);
    while (open_order_.size() > max_open_) {  // spans long closed, or never closed
        const auto& [old_key, old] = open_order_.front();
        if (auto it = open_.find(old_key); it != open_.end() && it->second == old.lock())
            open_.erase(it);
        open_order_.pop_front();
    }
    return span;
}

TraceRecorder::SpanPtr TraceRecorder::close(const std::string& key, json::object more)
{
    auto it = open_.find(key);
    if (it == open_.end())
        return nullptr;
    SpanPtr span = std::move(it->second);
    open_.erase(it);
    span->end_ns = now_ns();
    for (auto& [name, value] : more)
        span->attributes[name] = std::move(value);
    span->bytes = approximate_bytes(span->attributes) + 200;  // and the span's own fields
    bytes_ += span->bytes;
    auto [s, added] = sessions_.try_emplace(span->session_key);
    if (added)
        s->second.lru = session_lru_.insert(session_lru_.end(), span->session_key);
    else
        session_lru_.splice(session_lru_.end(), session_lru_, s->second.lru);
    s->second.spans.push_back(span);
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
    return span;
}

void TraceRecorder::forget_session(std::unordered_map<std::string, Session>::iterator session)
{
    for (const auto& old : session->second.spans) {
        if (auto e = by_event_.find(old->event_id); e != by_event_.end() && e->second == old)
            by_event_.erase(e);
        bytes_ -= old->bytes;
    }
    session_lru_.erase(session->second.lru);
    sessions_.erase(session);
}

void TraceRecorder::index_event(const SpanPtr& span, const std::string& event_id)
{
    span->event_id = event_id;
    span->attributes["gcp.vertex.agent.event_id"] = event_id;
    by_event_[event_id] = span;
}

namespace {

// "app\nuser\nsession" split.
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

}  // namespace

json::array TraceRecorder::session_spans(std::string_view app, const std::optional<std::string>& user,
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
    for (const auto& span : found->spans) {
        json::value parent = span->parent_span_id.empty() ? json::value(nullptr) : json::value(span->parent_span_id);
        out.push_back(json::object{{"name", span->name},
                                   {"span_id", span->span_id},
                                   {"trace_id", span->trace_id},
                                   {"parent_span_id", parent},
                                   {"start_time", span->start_ns},
                                   {"end_time", span->end_ns},
                                   {"attributes", span->attributes}});
    }
    return out;
}

std::optional<json::object> TraceRecorder::event_trace(std::string_view app, const std::optional<std::string>& user,
                                                       const std::string& event_id) const
{
    std::lock_guard lock(mutex_);
    auto it = by_event_.find(event_id);
    if (it == by_event_.end() || !owned_by(it->second->session_key, app, user))
        return std::nullopt;
    json::object out = it->second->attributes;
    out["trace_id"] = it->second->trace_id;
    out["span_id"] = it->second->span_id;
    return out;
}

asio::awaitable<std::optional<Content>> TraceRecorder::before_run(InvocationContext& ctx)
{
    {
        std::lock_guard lock(mutex_);
        open("run|" + ctx.invocation_id(), "invocation", ctx.invocation_id(), "", ctx);
    }
    co_return std::nullopt;
}

asio::awaitable<void> TraceRecorder::after_run(InvocationContext& ctx)
{
    std::lock_guard lock(mutex_);
    close("run|" + ctx.invocation_id());
    co_return;
}

asio::awaitable<std::optional<Content>> TraceRecorder::before_agent(Agent& agent, CallbackContext& ctx)
{
    {
        const InvocationContext& inv = ctx.invocation_context();
        std::lock_guard lock(mutex_);
        SpanPtr span = open("agent|" + agent_key(ctx), "invoke_agent " + agent.name(), inv.invocation_id(),
                            "run|" + inv.invocation_id(), inv);
        span->attributes = json::object{{"gen_ai.operation.name", "invoke_agent"},
                                        {"gen_ai.agent.name", agent.name()},
                                        {"gen_ai.agent.description", agent.description()},
                                        {"gen_ai.conversation.id", inv.session_id()}};
    }
    co_return std::nullopt;
}

asio::awaitable<std::optional<Content>> TraceRecorder::after_agent(Agent&, CallbackContext& ctx)
{
    {
        std::lock_guard lock(mutex_);
        close("agent|" + agent_key(ctx));
    }
    co_return std::nullopt;
}

asio::awaitable<std::optional<LlmResponse>> TraceRecorder::before_model(CallbackContext& ctx, LlmRequest& request)
{
    {
        const InvocationContext& inv = ctx.invocation_context();
        const std::string key = agent_key(ctx);
        std::lock_guard lock(mutex_);
        SpanPtr span = open("llm|" + key, "call_llm", inv.invocation_id(), "agent|" + key, inv);
        span->attributes = json::object{{"gen_ai.system", "gcp.vertex.agent"},
                                        {"gen_ai.request.model", request.model},
                                        {"gen_ai.agent.name", ctx.agent_name()},
                                        {"gcp.vertex.agent.invocation_id", inv.invocation_id()},
                                        {"gcp.vertex.agent.session_id", inv.session_id()},
                                        {"gcp.vertex.agent.llm_request", capped(request_json(request))}};
    }
    co_return std::nullopt;
}

asio::awaitable<std::optional<LlmResponse>> TraceRecorder::after_model(CallbackContext& ctx, const LlmResponse& response)
{
    {
        const std::string key = "llm|" + agent_key(ctx);
        json::object more{{"gcp.vertex.agent.llm_response", capped(response_json(response))}};
        if (response.usage_metadata) {
            if (response.usage_metadata->prompt_token_count)
                more["gen_ai.usage.input_tokens"] = *response.usage_metadata->prompt_token_count;
            if (response.usage_metadata->candidates_token_count)
                more["gen_ai.usage.output_tokens"] = *response.usage_metadata->candidates_token_count;
        }
        if (response.finish_reason)
            more["gen_ai.response.finish_reasons"] = json::array{*response.finish_reason};
        std::lock_guard lock(mutex_);
        if (SpanPtr span = close(key, std::move(more)))
            awaiting_event_[key] = span;  // the event the answer becomes is the agent's next whole event
    }
    co_return std::nullopt;
}

asio::awaitable<std::optional<LlmResponse>> TraceRecorder::on_model_error(CallbackContext& ctx, const LlmRequest&,
                                                                          const Error& error)
{
    {
        json::object more{{"error.message", error.message()}};
        std::lock_guard lock(mutex_);
        close("llm|" + agent_key(ctx), std::move(more));
    }
    co_return std::nullopt;
}

asio::awaitable<std::optional<json::value>> TraceRecorder::before_tool(Tool& tool, json::object& args, ToolContext& ctx)
{
    {
        const InvocationContext& inv = ctx.invocation_context();
        std::lock_guard lock(mutex_);
        SpanPtr span = open("tool|" + inv.invocation_id() + "|" + ctx.function_call_id(), "execute_tool " + tool.name(),
                            inv.invocation_id(), "agent|" + agent_key(ctx), inv);
        span->attributes = json::object{{"gen_ai.operation.name", "execute_tool"},
                                        {"gen_ai.tool.name", tool.name()},
                                        {"gen_ai.tool.description", tool.description()},
                                        {"gen_ai.tool.type", "FunctionTool"},
                                        {"gen_ai.tool.call.id", ctx.function_call_id()},
                                        {"gcp.vertex.agent.tool_call_args", capped(json::serialize(args))}};
    }
    co_return std::nullopt;
}

asio::awaitable<std::optional<json::value>> TraceRecorder::after_tool(Tool&, const json::object&, ToolContext& ctx,
                                                                      const json::value& result)
{
    {
        const std::string key = "tool|" + ctx.invocation_id() + "|" + ctx.function_call_id();
        json::object more{{"gcp.vertex.agent.tool_response", capped(json::serialize(result))}};
        std::lock_guard lock(mutex_);
        if (SpanPtr span = close(key, std::move(more)))
            awaiting_event_[key] = span;  // the function response event holds the result
    }
    co_return std::nullopt;
}

asio::awaitable<std::optional<json::value>> TraceRecorder::on_tool_error(Tool&, const json::object&, ToolContext& ctx,
                                                                         const Error& error)
{
    {
        const std::string key = "tool|" + ctx.invocation_id() + "|" + ctx.function_call_id();
        json::object more{{"error.message", error.message()}};
        std::lock_guard lock(mutex_);
        if (SpanPtr span = close(key, std::move(more)))
            awaiting_event_[key] = span;
    }
    co_return std::nullopt;
}

asio::awaitable<std::optional<Event>> TraceRecorder::on_event(InvocationContext&, const Event& event)
{
    if (!event.partial) {
        std::lock_guard lock(mutex_);
        const auto take = [&](const std::string& key) {
            if (auto it = awaiting_event_.find(key); it != awaiting_event_.end()) {
                index_event(it->second, event.id);
                awaiting_event_.erase(it);
            }
        };
        take("llm|" + event.invocation_id + "|" + event.branch + "|" + event.author);
        if (event.content)
            for (const Part& part : event.content->parts)
                if (part.function_response)
                    take("tool|" + event.invocation_id + "|" + part.function_response->id);
        while (awaiting_event_.size() > max_open_)  // answers whose event never came (a callback replaced it)
            awaiting_event_.erase(awaiting_event_.begin());
    }
    co_return std::nullopt;
}

}  // namespace adk::server::detail
