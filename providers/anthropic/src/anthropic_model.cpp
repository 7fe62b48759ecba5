#include <adk/providers/anthropic/anthropic.hpp>

#include <adk/core/error.hpp>
#include <adk/detail/provider_json.hpp>
#include <adk/net/url.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>

#include <cstdlib>

namespace adk::anthropic {

namespace provider = detail::provider;
namespace {

namespace json = boost::json;

using provider::environment;
using provider::string_at;

json::value parse_or_throw(std::string_view text, std::string_view what)
{
    return provider::parse_json(text, "Anthropic", what);
}

// ---- requests ----

json::value block_of(const Part& p)
{
    if (p.function_call)
        return json::object{{"type", "tool_use"},
                            {"id", p.function_call->id.empty() ? "toolu_" + p.function_call->name : p.function_call->id},
                            {"name", p.function_call->name},
                            {"input", p.function_call->args}};
    if (p.function_response) {
        json::object block{{"type", "tool_result"},
                           {"tool_use_id", p.function_response->id.empty() ? "toolu_" + p.function_response->name
                                                                           : p.function_response->id},
                           {"content", json::serialize(p.function_response->response)}};
        if (p.function_response->response.contains("error"))
            block["is_error"] = true;
        return block;
    }
    if (const json::value* redacted = p.extra.if_contains(redacted_thinking_key))
        return json::object{{"type", "redacted_thinking"}, {"data", *redacted}};
    if (p.thought && p.text) {
        // Thinking goes back only with its signature; summaries without one are dropped.
        if (!p.thought_signature)
            return nullptr;
        return json::object{{"type", "thinking"}, {"thinking", *p.text}, {"signature", *p.thought_signature}};
    }
    if (p.text)
        return p.text->empty() ? json::value(nullptr) : json::value(json::object{{"type", "text"}, {"text", *p.text}});
    if (p.inline_data && p.inline_data->mime_type.rfind("image/", 0) == 0) {
        const json::value data = json::value_from(*p.inline_data);
        return json::object{{"type", "image"},
                            {"source", {{"type", "base64"}, {"media_type", p.inline_data->mime_type},
                                        {"data", data.at("data")}}}};
    }
    return nullptr;
}

// Context caching (LlmRequest::cache_config): cache_control breakpoints after the system prompt, the tools and the
// history (the last block of the last message), three of the four Anthropic allows. Each caches everything before
// it; a later request with the same start reads it (usage's cache_read_input_tokens).
void mark_cache_breakpoints(json::object& body)
{
    const json::object ephemeral{{"type", "ephemeral"}};
    if (json::value* system = body.if_contains("system"); system && system->is_string())
        *system = json::array{json::object{{"type", "text"}, {"text", system->get_string()}, {"cache_control", ephemeral}}};
    if (json::value* tools = body.if_contains("tools"); tools && tools->is_array() && !tools->get_array().empty())
        tools->get_array().back().as_object()["cache_control"] = ephemeral;
    json::array& messages = body.at("messages").as_array();
    if (!messages.empty()) {
        json::array& blocks = messages.back().as_object().at("content").as_array();
        if (!blocks.empty())
            blocks.back().as_object()["cache_control"] = ephemeral;
    }
}

json::object encode_request(const LlmRequest& request, const std::string& model, int default_max_tokens, bool stream)
{
    provider::warn_without_code_execution(request, "Anthropic's Messages API");
    const GenerateContentConfig& cfg = request.config;
    json::object body{{"model", model}, {"max_tokens", cfg.max_output_tokens.value_or(default_max_tokens)}};
    if (request.system_instruction) {
        std::string system;
        for (const Part& p : request.system_instruction->parts)
            if (p.text && !p.thought)
                system += *p.text;
        if (!system.empty())
            body["system"] = system;
    }
    json::array messages;
    for (const Content& c : request.contents) {
        const std::string role = c.role == "model" ? "assistant" : "user";
        json::array blocks;
        for (const Part& p : c.parts)
            if (json::value b = block_of(p); !b.is_null())
                blocks.push_back(std::move(b));
        if (blocks.empty())
            continue;
        // Consecutive turns of one role are merged: the API wants user and assistant to alternate.
        if (!messages.empty() && messages.back().at("role").as_string() == role) {
            for (auto& b : blocks)
                messages.back().as_object()["content"].as_array().push_back(std::move(b));
        } else {
            messages.push_back(json::object{{"role", role}, {"content", std::move(blocks)}});
        }
    }
    body["messages"] = std::move(messages);
    if (!request.tools.empty()) {
        json::array tools;
        for (const FunctionDeclaration& d : request.tools)
            tools.push_back(json::object{
                {"name", d.name},
                {"description", d.description},
                {"input_schema", d.parameters.is_null() ? json::value(json::object{{"type", "object"}, {"properties", json::object{}}})
                                                        : d.parameters}});
        body["tools"] = std::move(tools);
        if (const json::value* fc = cfg.tool_config.if_contains("functionCallingConfig"); fc && fc->is_object()) {
            const std::string mode = string_at(fc->get_object(), "mode");
            const json::value* allowed = fc->get_object().if_contains("allowedFunctionNames");
            if (mode == "ANY" && allowed && allowed->is_array() && allowed->get_array().size() == 1)
                body["tool_choice"] = json::object{{"type", "tool"}, {"name", allowed->get_array()[0]}};
            else if (mode == "ANY")
                body["tool_choice"] = json::object{{"type", "any"}};
            else if (mode == "NONE")
                body["tool_choice"] = json::object{{"type", "none"}};
        }
    }
    if (cfg.temperature)
        body["temperature"] = *cfg.temperature;
    if (cfg.top_p)
        body["top_p"] = *cfg.top_p;
    if (cfg.top_k)
        body["top_k"] = *cfg.top_k;
    if (!cfg.stop_sequences.empty()) {
        json::array stops;
        for (const auto& s : cfg.stop_sequences)
            stops.emplace_back(s);
        body["stop_sequences"] = std::move(stops);
    }
    if (cfg.thinking_config && cfg.thinking_config->thinking_budget && *cfg.thinking_config->thinking_budget > 0)
        body["thinking"] = json::object{{"type", "enabled"}, {"budget_tokens", *cfg.thinking_config->thinking_budget}};
    if (cfg.response_schema)
        body["output_config"] = json::object{{"format", {{"type", "json_schema"}, {"schema", *cfg.response_schema}}}};
    if (request.cache_config)
        mark_cache_breakpoints(body);
    if (stream)
        body["stream"] = true;
    return body;
}

// ---- responses ----

std::string finish_reason(std::string_view stop)
{
    if (stop == "max_tokens" || stop == "model_context_window_exceeded")
        return "MAX_TOKENS";
    if (stop == "refusal")
        return "SAFETY";
    return "STOP";  // end_turn, stop_sequence, tool_use, pause_turn
}

constexpr std::string_view provider_name = "Anthropic";

void add_usage(const json::object& u, UsageMetadata& m)
{
    using provider::count_at;
    // Anthropic counts the input read from its cache, and the input written to it, apart from input_tokens; in
    // genai's terms the prompt is all three, and cachedContentTokenCount the part read from the cache.
    const auto read = count_at(u, "cache_read_input_tokens");
    const auto written = count_at(u, "cache_creation_input_tokens");
    if (auto v = count_at(u, "input_tokens")) {
        const std::int64_t cached = read.value_or(0), creation = written.value_or(0);
        std::int64_t prompt = *v > INT64_MAX - cached ? INT64_MAX : *v + cached;
        prompt = prompt > INT64_MAX - creation ? INT64_MAX : prompt + creation;
        m.prompt_token_count = prompt;
    }
    if (auto v = count_at(u, "output_tokens"))
        m.candidates_token_count = *v;  // cumulative in message_delta
    if (read)
        m.cached_content_token_count = *read;
    // Both are below 2^63 (count_at): their sum is taken without overflow, saturating at the largest count.
    const std::int64_t prompt = m.prompt_token_count.value_or(0), candidates = m.candidates_token_count.value_or(0);
    m.total_token_count = prompt > INT64_MAX - candidates ? INT64_MAX : prompt + candidates;
}

LlmResponse error_response(const json::object& body)
{
    const json::value* e = body.if_contains("error");
    if (!e || !e->is_object())
        return LlmResponse::error("api_error", json::serialize(body));
    return LlmResponse::error(string_at(e->get_object(), "type"), string_at(e->get_object(), "message"));
}

Part call_part(std::string id, std::string name, std::string_view input)
{
    Part p;
    p.function_call = provider::function_call(std::move(id), std::move(name), input);
    return p;
}

Part redacted_part(std::string data)
{
    Part p = Part::from_thought("");
    p.extra[redacted_thinking_key] = std::move(data);
    return p;
}

class EventDecoder final : public WireFormat::StreamDecoder {
public:
    explicit EventDecoder(const ResponseLimits& limits) : limits_(limits) {}

    void on_event(const net::SseEvent& event, std::vector<LlmResponse>& out) override
    {
        if (done_ || event.data.empty())
            return;
        json::value v = parse_or_throw(event.data, "an event");
        const json::object* o = v.if_object();
        if (!o)
            throw Error(errc::bad_response, "an event is not a JSON object: " + event.data.substr(0, 200));
        const std::string type = string_at(*o, "type");
        if (type == "ping")
            return;
        if (type == "error" || event.event == "error") {
            LlmResponse r = error_response(*o);
            r.partial = true;
            out.push_back(std::move(r));
            done_ = true;
            return;
        }
        if (type == "message_start") {
            if (const json::value* m = o->if_contains("message"); m && m->is_object()) {
                model_ = string_at(m->get_object(), "model");
                if (const json::value* u = m->get_object().if_contains("usage"); u && u->is_object())
                    add_usage(u->get_object(), usage_);
            }
        } else if (type == "content_block_start") {
            const json::object& b = member_object(*o, "content_block");
            block_ = Block{string_at(b, "type"), string_at(b, "id"), string_at(b, "name"), {}, {}};
            if (block_.type == "redacted_thinking")
                out.push_back(provider::chunk(redacted_part(string_at(b, "data"))));
            else if (block_.type == "text" && !string_at(b, "text").empty())
                out.push_back(provider::chunk(Part::from_text(string_at(b, "text"))));
        } else if (type == "content_block_delta") {
            const json::object& d = member_object(*o, "delta");
            const std::string kind = string_at(d, "type");
            if (kind == "text_delta")
                out.push_back(provider::chunk(Part::from_text(string_at(d, "text"))));
            else if (kind == "thinking_delta")
                out.push_back(provider::chunk(Part::from_thought(string_at(d, "thinking"))));
            else if (kind == "signature_delta")
                append(block_.signature, string_at(d, "signature"), "a thinking signature");
            else if (kind == "input_json_delta")
                append(block_.input, string_at(d, "partial_json"), "tool input");
        } else if (type == "content_block_stop") {
            if (block_.type == "tool_use") {
                if (++calls_ > limits_.max_function_calls)
                    throw Error(errc::bad_response, "Anthropic sent more than " +
                                                        std::to_string(limits_.max_function_calls) +
                                                        " tool calls in one answer (ResponseLimits::max_function_calls)");
                out.push_back(provider::chunk(call_part(block_.id, block_.name, block_.input)));
            } else if (block_.type == "thinking" && !block_.signature.empty()) {
                // The signature closes the thinking block: an empty thought part carries it.
                Part p = Part::from_thought("");
                p.thought_signature = block_.signature;
                out.push_back(provider::chunk(std::move(p)));
            }
            block_ = {};
        } else if (type == "message_delta") {
            if (const json::value* d = o->if_contains("delta"); d && d->is_object())
                if (std::string stop = string_at(d->get_object(), "stop_reason"); !stop.empty())
                    finish_ = finish_reason(stop);
            if (const json::value* u = o->if_contains("usage"); u && u->is_object())
                add_usage(u->get_object(), usage_);
        } else if (type == "message_stop") {
            flush(out);
        }
    }

    void finish(std::string_view, std::vector<LlmResponse>& out) override { flush(out); }

private:
    struct Block {
        std::string type, id, name, input, signature;
    };

    static const json::object& member_object(const json::object& o, std::string_view key)
    {
        const json::value* v = o.if_contains(key);
        if (!v)
            throw Error(errc::bad_response, "Anthropic sent a " + string_at(o, "type") + " event without its \"" +
                                                std::string(key) + "\"");
        return provider::object_of(*v, provider_name, "a " + std::string(key));
    }

    // What a block gathers from fragments, within ResponseLimits::max_answer_bytes over the whole answer.
    void append(std::string& into, const std::string& fragment, std::string_view what)
    {
        gathered_ += fragment.size();
        provider::check_answer_size(gathered_, limits_.max_answer_bytes, provider_name, what);
        into += fragment;
    }

    void flush(std::vector<LlmResponse>& out)
    {
        if (done_)
            return;
        done_ = true;
        LlmResponse r;
        r.partial = true;
        r.finish_reason = finish_;
        r.usage_metadata = usage_;
        if (!model_.empty())
            r.model_version = model_;
        out.push_back(std::move(r));
    }

    ResponseLimits limits_;
    std::size_t gathered_ = 0;
    std::size_t calls_ = 0;
    Block block_;
    UsageMetadata usage_;
    std::optional<std::string> finish_;
    std::string model_;
    bool done_ = false;
};

class Format final : public WireFormat {
public:
    explicit Format(AnthropicOptions o) : options_(std::move(o)) {}

    net::HttpRequest encode(const LlmRequest& request, bool stream) const override
    {
        net::HttpRequest r("POST", net::join_url(options_.base_url, "/v1/messages"));
        r.set("content-type", "application/json");
        r.set("anthropic-version", options_.version);
        if (!options_.api_key.empty())
            r.set("x-api-key", options_.api_key);
        for (const auto& [name, value] : options_.headers)
            r.set(name, value);
        r.body = json::serialize(encode_request(request, request.model.empty() ? options_.model : request.model,
                                                options_.default_max_tokens, stream));
        return r;
    }

    LlmResponse decode(std::string_view body) const override
    {
        json::value v = parse_or_throw(body, "a response");
        const json::object* o = v.if_object();
        if (!o)
            throw Error(errc::bad_response, "the response is not a JSON object: " + std::string(body.substr(0, 200)));
        if (string_at(*o, "type") == "error")
            return error_response(*o);
        std::vector<Part> parts;
        if (const json::value* content = o->if_contains("content"); content && content->is_array())
            for (const json::value& bv : content->get_array()) {
                const json::object& b = provider::object_of(bv, provider_name, "a content block");
                const std::string type = string_at(b, "type");
                if (type == "text") {
                    parts.push_back(Part::from_text(string_at(b, "text")));
                } else if (type == "thinking") {
                    Part p = Part::from_thought(string_at(b, "thinking"));
                    if (std::string sig = string_at(b, "signature"); !sig.empty())
                        p.thought_signature = std::move(sig);
                    parts.push_back(std::move(p));
                } else if (type == "redacted_thinking") {
                    parts.push_back(redacted_part(string_at(b, "data")));
                } else if (type == "tool_use") {
                    const json::value* input = b.if_contains("input");
                    parts.push_back(call_part(string_at(b, "id"), string_at(b, "name"),
                                              input ? json::serialize(*input) : std::string("{}")));
                }
            }
        LlmResponse r(Content("model", std::move(parts)));
        if (std::string stop = string_at(*o, "stop_reason"); !stop.empty())
            r.finish_reason = finish_reason(stop);
        if (const json::value* u = o->if_contains("usage"); u && u->is_object()) {
            UsageMetadata m;
            add_usage(u->get_object(), m);
            r.usage_metadata = m;
        }
        if (std::string model = string_at(*o, "model"); !model.empty())
            r.model_version = std::move(model);
        r.turn_complete = true;
        return r;
    }

    LlmResponse decode_error(unsigned status, std::string_view body) const override
    {
        auto error = provider::error_object(body);
        return error ? error_response(*error) : provider::http_error_response(status, body);
    }

    std::unique_ptr<WireFormat::StreamDecoder> stream_decoder(const ResponseLimits& limits) const override
    {
        return std::make_unique<EventDecoder>(limits);
    }

private:
    AnthropicOptions options_;
};

AnthropicOptions resolved(AnthropicOptions o)
{
    if (o.api_key.empty())
        o.api_key = environment("ANTHROPIC_API_KEY");
    const bool custom_url = !o.base_url.empty() || !environment("ANTHROPIC_BASE_URL").empty();
    if (o.base_url.empty())
        o.base_url = environment("ANTHROPIC_BASE_URL");
    if (o.base_url.empty())
        o.base_url = "https://api.anthropic.com";
    if (o.api_key.empty() && !custom_url)
        throw Error(errc::invalid_argument,
                    "Anthropic needs an API key: set ANTHROPIC_API_KEY or AnthropicOptions::api_key");
    net::parse_url(o.base_url);
    return o;
}

}  // namespace

std::shared_ptr<const WireFormat> wire_format(AnthropicOptions options)
{
    return std::make_shared<Format>(resolved(std::move(options)));
}

std::shared_ptr<Model> make_model(AnthropicOptions options)
{
    auto http = options.http;
    std::string name = options.model;
    const ResponseLimits limits = options.limits;
    return std::make_shared<HttpModel>(std::move(name), wire_format(std::move(options)), std::move(http), limits);
}

}  // namespace adk::anthropic
