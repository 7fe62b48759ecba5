#include "model_call.hpp"

#include "flow_errors.hpp"
#include "joined_text.hpp"

#include "../plugins/plugin_manager.hpp"
#include "../telemetry/genai_spans.hpp"
#include "../telemetry/span_errors.hpp"

#include <adk/core/ids.hpp>

namespace adk::detail {

namespace {

// Joins streamed chunks into the final response: text deltas joined, thoughts joined apart, other parts
// (function calls, ...) kept in order; the latest finish reason, usage and metadata win.
class Aggregator {
public:
    void add(const LlmResponse& r)
    {
        if (r.content) {
            for (const Part& p : r.content->parts) {
                if (p.text && p.thought) {
                    thought_.append(*p.text);
                    if (p.thought_signature)
                        thought_signature_ = p.thought_signature;
                } else if (p.text && !p.function_call) {
                    text_.append(*p.text);
                    has_text_ = true;
                    if (p.thought_signature)
                        text_signature_ = p.thought_signature;
                } else {
                    others_.push_back(p);
                }
            }
        }
        // Gemini repeats the model's version with every chunk, and its usage counts: what the last chunk had is
        // compared before it is copied, and the usage's (mostly empty) JSON members copied only when either holds
        // members (Boost.JSON's copy assignment is out of line and builds, swaps and destroys an object).
        auto keep = [](auto& into, const auto& from) {
            if (from && !(into && *into == *from))
                into = from;
        };
        keep(meta_.finish_reason, r.finish_reason);
        if (r.usage_metadata)
            keep_usage(r.usage_metadata.value());
        keep(meta_.error_code, r.error_code);
        keep(meta_.error_message, r.error_message);
        keep(meta_.model_version, r.model_version);
        meta_.turn_complete = meta_.turn_complete || r.turn_complete;
        meta_.interrupted = meta_.interrupted || r.interrupted;
        for (const auto& kv : r.custom_metadata)
            meta_.custom_metadata[kv.key()] = kv.value();
        for (const auto& kv : r.provider_metadata)
            meta_.provider_metadata[kv.key()] = kv.value();
    }

    // The text and thought text joined so far.
    std::size_t bytes() const noexcept { return text_.size() + thought_.size(); }

    LlmResponse finish()
    {
        LlmResponse out = std::move(meta_);
        std::vector<Part> parts;
        if (!thought_.empty()) {
            parts.push_back(Part::from_thought(thought_.take()));
            parts.back().thought_signature = thought_signature_;
        }
        if (has_text_) {
            parts.push_back(Part::from_text(text_.take()));
            parts.back().thought_signature = text_signature_;
        }
        for (auto& p : others_)
            parts.push_back(std::move(p));
        if (!parts.empty())
            out.content = Content("model", std::move(parts));
        out.partial = false;
        return out;
    }

private:
    // The latest usage counts, as `meta_.usage_metadata = from` would keep them.
    void keep_usage(const UsageMetadata& from)
    {
        UsageMetadata& into = meta_.usage_metadata ? *meta_.usage_metadata : meta_.usage_metadata.emplace();
        into.prompt_token_count = from.prompt_token_count;
        into.candidates_token_count = from.candidates_token_count;
        into.total_token_count = from.total_token_count;
        into.thoughts_token_count = from.thoughts_token_count;
        into.cached_content_token_count = from.cached_content_token_count;
        if (!from.extra.empty() || !into.extra.empty())
            into.extra = from.extra;
    }
    static_assert(sizeof(UsageMetadata) == 5 * sizeof(std::optional<std::int64_t>) + sizeof(json::object),
                  "keep_usage copies each member of UsageMetadata");

    JoinedText text_;
    JoinedText thought_;
    bool has_text_ = false;
    std::optional<std::string> text_signature_;
    std::optional<std::string> thought_signature_;
    std::vector<Part> others_;
    LlmResponse meta_;
};

// A JSON object moved only when either side holds members: Boost.JSON's move assignment is out of line and
// builds, swaps and destroys an object, which a streamed chunk (whose objects are empty) would pay twice.
void take(json::object& into, json::object& from)
{
    if (!from.empty() || !into.empty())
        into = std::move(from);
}

void fill_event(Event& event, LlmResponse&& response)
{
    event.content = std::move(response.content);
    if (event.content && event.content->role.empty())
        event.content->role = "model";
    event.partial = response.partial;
    event.turn_complete = response.turn_complete;
    event.interrupted = response.interrupted;
    event.finish_reason = std::move(response.finish_reason);
    event.usage_metadata = std::move(response.usage_metadata);
    event.error_code = std::move(response.error_code);
    event.error_message = std::move(response.error_message);
    take(event.custom_metadata, response.custom_metadata);
    event.model_version = std::move(response.model_version);
    take(event.extra, response.provider_metadata);
}

// Whether a streamed chunk has text (or thought text) to show. Chunks with only function calls or only
// metadata (finish reason, usage) are not shown as partial events: the final event carries them.
bool carries_text(const LlmResponse& r)
{
    if (!r.content)
        return false;
    for (const Part& p : r.content->parts)
        if (p.text && !p.text->empty())
            return true;
    return false;
}

// What the partial events of a streamed answer share with its final event: the final event's id (as ADK does,
// so that a UI replaces the deltas by the whole) and the time the model call began. The final event is made
// when the answer is whole: an Event kept while the model streams would hold its room (over 700 bytes) for
// nothing.
class AnswerIdentity {
public:
    AnswerIdentity() : id(new_uuid()), timestamp(now_seconds()) {}
    std::string id;
    double timestamp;
};

// Calls the model. In SSE mode every chunk with text is emitted as a partial event with the answer's identity
// (its id and time; the invocation, author and branch of `ctx`); `response` gets the whole answer.
asio::awaitable<void> stream_model(const LlmAgent& agent, const InvocationContext& ctx, EventSink& out,
                                   const LlmRequest& request, const AnswerIdentity& answer,
                                   std::optional<LlmResponse>& response)
{
    const LlmAgentConfig& cfg = agent.config();
    const bool sse = ctx.run_config().streaming_mode == StreamingMode::sse;
    Stream<LlmResponse> stream = co_await cfg.model->generate(request, sse);
    Aggregator aggregate;
    while (std::unique_ptr<LlmResponse> chunk = co_await stream.next_boxed()) {
        if (!sse) {
            response = std::move(*chunk);
            continue;
        }
        const bool shown = chunk->partial && carries_text(*chunk);
        aggregate.add(*chunk);
        if (aggregate.bytes() > ctx.run_config().max_answer_bytes)
            throw Error(errc::bad_response, "model '" + std::string(cfg.model->name()) + "' streamed an answer over " +
                                                std::to_string(ctx.run_config().max_answer_bytes) +
                                                " bytes of text (RunConfig::max_answer_bytes)");
        if (shown) {
            auto partial = std::make_unique<Event>();
            partial->id = answer.id;
            partial->invocation_id = ctx.invocation_id();
            partial->author = ctx.agent().name();
            partial->branch = ctx.branch();
            partial->timestamp = answer.timestamp;
            fill_event(*partial, std::move(*chunk));
            partial->partial = true;
            if (!out.try_emit(partial))
                co_await out.emit(std::move(partial));
        }
    }
    if (sse)
        response = aggregate.finish();
    if (!response)
        throw Error(errc::agent_failed, "model '" + std::string(cfg.model->name()) +
                                            "' ended its answer without a response");
}

// A failed model call goes to on-model-error plugins, then callbacks; the first answer stands in for the
// model. Rethrows the failure when nobody answers, or when it stops the invocation.
asio::awaitable<void> recover(const LlmAgentConfig& cfg, const InvocationContext& ctx, CallbackContext& cb,
                              LlmRequest& request, std::exception_ptr failure, std::optional<LlmResponse>& response)
{
    Error error = as_error(failure);
    if (stops_invocation(error))
        std::rethrow_exception(failure);
    const PluginManager plugins(ctx.plugins());
    co_await plugins.on_model_error(cb, request, error, cfg.on_model_error_callbacks, response);
    if (!response)
        std::rethrow_exception(failure);
}

// After-model plugins, then callbacks: the first replacement wins.
asio::awaitable<void> after_model(const LlmAgentConfig& cfg, const InvocationContext& ctx, CallbackContext& cb,
                                  LlmResponse& response)
{
    std::optional<LlmResponse> replaced;
    const PluginManager plugins(ctx.plugins());
    co_await plugins.after_model(cb, response, cfg.after_model_callbacks, replaced);
    if (replaced)
        response = std::move(*replaced);
}

// The agent's response processors, in order, on the whole answer.
asio::awaitable<void> process_response(const LlmAgentConfig& cfg, InvocationContext& ctx, EventSink& out,
                                       LlmResponse& response)
{
    for (const auto& processor : cfg.response_processors)
        co_await processor->process_response(ctx, response, out);
}

// The model itself, in its generate_content span (the GenAI convention's inference span), with recovery from its
// failure.
asio::awaitable<void> generate(const LlmAgent& agent, const InvocationContext& ctx, EventSink& out, LlmRequest& request,
                               CallbackContext& cb, const telemetry::Span& call_span, const AnswerIdentity& answer,
                               std::optional<LlmResponse>& response)
{
    const LlmAgentConfig& cfg = agent.config();
    telemetry::Span span = has_own_context(call_span, ctx.span_context())
                               ? ctx.with_span(call_span.context()).start_span("generate_content " + request.model,
                                                                               telemetry::SpanKind::client)
                               : telemetry::Span(ctx.span_context());
    trace_generate_content(span, ctx, request, answer.id);
    request.span_context = span.context();
    std::exception_ptr failure;
    try {
        co_await stream_model(agent, ctx, out, request, answer, response);
    } catch (...) {
        failure = std::current_exception();
    }
    if (failure) {
        record_failure(span, failure);
        span.end();
        co_await recover(cfg, ctx, cb, request, failure, response);
        co_return;
    }
    trace_llm_response(span, *response, false);
}

}  // namespace

asio::awaitable<std::unique_ptr<Event>> call_model(const LlmAgent& agent, InvocationContext& ctx, EventSink& out,
                                                   LlmRequest& request)
{
    const LlmAgentConfig& cfg = agent.config();
    const AnswerIdentity answer;
    std::unique_ptr<Event> event;
    // ADK's call_llm span covers the callbacks too; it ends however the call ends.
    telemetry::Span span = ctx.start_span("call_llm");
    bool request_untraced = false;  // final, its JSON not yet on the span (trace_llm_request)
    std::exception_ptr failure;
    try {
        CallbackContext cb(ctx);
        std::optional<LlmResponse> response;  // a before-model plugin or callback may answer in the model's place
        const PluginManager plugins(ctx.plugins());
        co_await plugins.before_model(cb, request, cfg.before_model_callbacks, response);
        trace_call_llm(span, ctx, request, answer.id);
        request_untraced = true;
        if (!response) {
            if (ctx.cancelled())
                throw Error(errc::cancelled, "invocation " + ctx.invocation_id() + " was cancelled");
            ctx.check_and_inc_llm_call();
            co_await generate(agent, ctx, out, request, cb, span, answer, response);
        }
        if (response->usage_metadata)
            ctx.add_tokens(*response->usage_metadata);
        co_await after_model(cfg, ctx, cb, *response);
        if (!cfg.response_processors.empty())
            co_await process_response(cfg, ctx, out, *response);
        trace_llm_request(span, request);
        request_untraced = false;
        trace_llm_response(span, *response, true);
        event = std::make_unique<Event>(ctx.make_event());
        event->id = answer.id;
        fill_event(*event, std::move(*response));
        if (ctx.run_config().max_invocation_tokens > 0 || ctx.run_config().max_session_tokens > 0)
            event->custom_metadata["adk_token_budget"] =
                json::object{{"invocationTokens", ctx.invocation_tokens()}, {"sessionTokens", ctx.session_tokens()}};
        event->partial = false;
        event->actions = std::move(cb.actions());
    } catch (...) {
        failure = std::current_exception();
    }
    if (failure) {
        if (request_untraced)
            trace_llm_request(span, request);
        record_failure(span, failure);
        std::rethrow_exception(failure);
    }
    co_return event;
}

}  // namespace adk::detail
