#include <adk/providers/openai/openai.hpp>

#include <adk/core/error.hpp>
#include <adk/detail/provider_json.hpp>
#include <adk/net/url.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>

#include <cstdlib>
#include <map>

namespace adk::openai {

namespace provider = detail::provider;
namespace {

namespace json = boost::json;

using provider::environment;
using provider::string_at;

json::value parse_or_throw(std::string_view text, std::string_view what)
{
    return provider::parse_json(text, "the OpenAI-compatible server", what);
}

// ---- requests ----

std::string plain_text(const Content& c)
{
    std::string out;
    for (const Part& p : c.parts)
        if (p.text && !p.thought)
            out += *p.text;
    return out;
}

std::string call_id(const std::string& id, const std::string& name)
{
    return id.empty() ? "call_" + name : id;
}

void add_messages(const Content& c, json::array& messages)
{
    if (c.role == "model") {
        json::object m{{"role", "assistant"}};
        const std::string text = plain_text(c);
        m["content"] = text.empty() ? json::value(nullptr) : json::value(text);
        json::array calls;
        for (const Part& p : c.parts)
            if (p.function_call)
                calls.push_back(json::object{
                    {"id", call_id(p.function_call->id, p.function_call->name)},
                    {"type", "function"},
                    {"function", {{"name", p.function_call->name}, {"arguments", json::serialize(p.function_call->args)}}}});
        if (!calls.empty())
            m["tool_calls"] = std::move(calls);
        if (!text.empty() || m.contains("tool_calls"))
            messages.push_back(std::move(m));
        return;
    }
    // A user turn: tool results become "tool" messages, the rest one user message.
    json::array content;
    for (const Part& p : c.parts) {
        if (p.function_response) {
            messages.push_back(json::object{{"role", "tool"},
                                            {"tool_call_id", call_id(p.function_response->id, p.function_response->name)},
                                            {"content", json::serialize(p.function_response->response)}});
        } else if (p.text && !p.thought) {
            content.push_back(json::object{{"type", "text"}, {"text", *p.text}});
        } else if (p.inline_data && p.inline_data->mime_type.rfind("image/", 0) == 0) {
            const json::value data = json::value_from(*p.inline_data);
            content.push_back(json::object{
                {"type", "image_url"},
                {"image_url", {{"url", "data:" + p.inline_data->mime_type + ";base64," +
                                           std::string(data.at("data").get_string())}}}});
        }
    }
    if (content.empty())
        return;
    if (content.size() == 1 && content[0].at("type") == "text")
        messages.push_back(json::object{{"role", "user"}, {"content", content[0].at("text")}});
    else
        messages.push_back(json::object{{"role", "user"}, {"content", std::move(content)}});
}

json::value tool_choice(const json::object& tool_config)
{
    const json::value* fc = tool_config.if_contains("functionCallingConfig");
    if (!fc || !fc->is_object())
        return nullptr;
    const std::string mode = string_at(fc->get_object(), "mode");
    const json::value* allowed = fc->get_object().if_contains("allowedFunctionNames");
    if (mode == "NONE")
        return "none";
    if (mode == "ANY") {
        if (allowed && allowed->is_array() && allowed->get_array().size() == 1)
            return json::object{{"type", "function"}, {"function", {{"name", allowed->get_array()[0]}}}};
        return "required";
    }
    if (mode == "AUTO")
        return "auto";
    return nullptr;
}

json::object encode_request(const LlmRequest& request, const std::string& model, bool stream)
{
    provider::warn_without_code_execution(request, "the OpenAI-compatible API");
    json::object body{{"model", model}};
    json::array messages;
    if (request.system_instruction) {
        const std::string system = plain_text(*request.system_instruction);
        if (!system.empty())
            messages.push_back(json::object{{"role", "system"}, {"content", system}});
    }
    for (const Content& c : request.contents)
        add_messages(c, messages);
    body["messages"] = std::move(messages);
    if (!request.tools.empty()) {
        json::array tools;
        for (const FunctionDeclaration& d : request.tools)
            tools.push_back(json::object{
                {"type", "function"},
                {"function", {{"name", d.name},
                              {"description", d.description},
                              {"parameters", d.parameters.is_null() ? json::value(json::object{{"type", "object"}, {"properties", json::object{}}})
                                                                    : d.parameters}}}});
        body["tools"] = std::move(tools);
        if (json::value choice = tool_choice(request.config.tool_config); !choice.is_null())
            body["tool_choice"] = std::move(choice);
    }
    const GenerateContentConfig& cfg = request.config;
    if (cfg.temperature)
        body["temperature"] = *cfg.temperature;
    if (cfg.top_p)
        body["top_p"] = *cfg.top_p;
    if (cfg.max_output_tokens)
        body["max_completion_tokens"] = *cfg.max_output_tokens;
    if (!cfg.stop_sequences.empty()) {
        json::array stops;
        for (const auto& s : cfg.stop_sequences)
            stops.emplace_back(s);
        body["stop"] = std::move(stops);
    }
    if (cfg.response_schema)
        body["response_format"] = json::object{
            {"type", "json_schema"}, {"json_schema", {{"name", "response"}, {"schema", *cfg.response_schema}}}};
    else if (cfg.response_mime_type == "application/json")
        body["response_format"] = json::object{{"type", "json_object"}};
    if (stream) {
        body["stream"] = true;
        body["stream_options"] = json::object{{"include_usage", true}};
    }
    return body;
}

// ---- responses ----

std::string finish_reason(std::string_view openai)
{
    if (openai == "length")
        return "MAX_TOKENS";
    if (openai == "content_filter")
        return "SAFETY";
    return "STOP";  // stop, tool_calls, function_call
}

constexpr std::string_view provider_name = "the OpenAI-compatible server";

UsageMetadata usage_of(const json::object& u)
{
    using provider::count_at;
    UsageMetadata m;
    m.prompt_token_count = count_at(u, "prompt_tokens");
    m.candidates_token_count = count_at(u, "completion_tokens");
    m.total_token_count = count_at(u, "total_tokens");
    if (const json::value* d = u.if_contains("completion_tokens_details"); d && d->is_object())
        m.thoughts_token_count = count_at(d->get_object(), "reasoning_tokens");
    if (const json::value* d = u.if_contains("prompt_tokens_details"); d && d->is_object())
        m.cached_content_token_count = count_at(d->get_object(), "cached_tokens");
    return m;
}

// The reasoning text of compatible servers: DeepSeek's reasoning_content, OpenRouter's, Groq's and
// Ollama's reasoning.
std::string reasoning_of(const json::object& o)
{
    std::string r = string_at(o, "reasoning_content");
    return r.empty() ? string_at(o, "reasoning") : r;
}

LlmResponse error_response(const json::value& error)
{
    if (error.is_string())
        return LlmResponse::error("ERROR", std::string(error.get_string()));
    const json::object* e = error.if_object();
    if (!e)
        return LlmResponse::error("ERROR", json::serialize(error));
    std::string code;
    if (const json::value* c = e->if_contains("code"); c && c->is_string())
        code = std::string(c->get_string());
    else if (auto n = provider::count_at(*e, "code"))
        code = std::to_string(*n);
    if (code.empty())
        code = string_at(*e, "type");
    if (code.empty())
        code = "ERROR";
    return LlmResponse::error(std::move(code), string_at(*e, "message"));
}

class ChunkDecoder final : public WireFormat::StreamDecoder {
public:
    explicit ChunkDecoder(const ResponseLimits& limits) : limits_(limits) {}

    void on_event(const net::SseEvent& event, std::vector<LlmResponse>& out) override
    {
        if (done_ || event.data.empty())
            return;
        if (event.data == "[DONE]") {
            flush(out);
            return;
        }
        json::value v = parse_or_throw(event.data, "a stream chunk");
        const json::object* o = v.if_object();
        if (!o)
            throw Error(errc::bad_response, "a stream chunk is not a JSON object: " + event.data.substr(0, 200));
        // Errors inside a 200 stream: Groq's "event: error", OpenRouter's "error" next to choices.
        if (const json::value* error = o->if_contains("error"); error && !error->is_null()) {
            LlmResponse r = error_response(*error);
            r.partial = true;
            out.push_back(std::move(r));
            done_ = true;
            return;
        }
        if (event.event == "error") {
            LlmResponse r = LlmResponse::error("ERROR", event.data);
            r.partial = true;
            out.push_back(std::move(r));
            done_ = true;
            return;
        }
        if (const json::value* u = o->if_contains("usage"); u && u->is_object())
            usage_ = usage_of(u->get_object());
        if (const json::value* m = o->if_contains("model"); m && m->is_string())
            model_ = std::string(m->get_string());
        const json::value* choices = o->if_contains("choices");
        if (!choices || !choices->is_array() || choices->get_array().empty())
            return;
        const json::object& choice = provider::object_of(choices->get_array()[0], provider_name, "a choice");
        if (const json::value* f = choice.if_contains("finish_reason"); f && f->is_string())
            finish_ = finish_reason(f->get_string());
        const json::value* delta = choice.if_contains("delta");
        if (!delta || !delta->is_object())
            return;
        const json::object& d = delta->get_object();
        if (const std::string thought = reasoning_of(d); !thought.empty())
            out.push_back(provider::chunk(Part::from_thought(thought)));
        if (const std::string text = string_at(d, "content"); !text.empty())
            out.push_back(provider::chunk(Part::from_text(text)));
        if (const json::value* calls = d.if_contains("tool_calls"); calls && calls->is_array()) {
            for (const json::value& c : calls->get_array()) {
                const json::object& call = provider::object_of(c, provider_name, "a tool call delta");
                const std::int64_t index = provider::count_at(call, "index").value_or(0);
                if (!pending_.count(index) && pending_.size() >= limits_.max_function_calls)
                    throw Error(errc::bad_response,
                                std::string(provider_name) + " sent more than " +
                                    std::to_string(limits_.max_function_calls) +
                                    " tool calls in one answer (ResponseLimits::max_function_calls)");
                Pending& p = pending_[index];
                if (std::string id = string_at(call, "id"); !id.empty())
                    p.id = std::move(id);
                if (const json::value* fn = call.if_contains("function"); fn && fn->is_object()) {
                    if (std::string name = string_at(fn->get_object(), "name"); !name.empty())
                        p.name = std::move(name);
                    const std::string fragment = string_at(fn->get_object(), "arguments");
                    argument_bytes_ += fragment.size();
                    provider::check_answer_size(argument_bytes_, limits_.max_answer_bytes, provider_name,
                                                "tool call arguments");
                    p.arguments += fragment;
                }
            }
        }
    }

    void finish(std::string_view, std::vector<LlmResponse>& out) override { flush(out); }

private:
    struct Pending {
        std::string id, name, arguments;
    };

    // The calls, assembled by index, with the finish reason and usage: one last chunk.
    void flush(std::vector<LlmResponse>& out)
    {
        if (done_)
            return;
        done_ = true;
        LlmResponse r;
        r.partial = true;
        if (!pending_.empty()) {
            std::vector<Part> parts;
            for (auto& [index, p] : pending_) {
                Part part;
                part.function_call = provider::function_call(p.id, p.name, p.arguments);
                parts.push_back(std::move(part));
            }
            r.content = Content("model", std::move(parts));
        }
        r.finish_reason = finish_;
        r.usage_metadata = usage_;
        r.model_version = model_;
        if (r.content || r.finish_reason || r.usage_metadata)
            out.push_back(std::move(r));
    }

    ResponseLimits limits_;
    std::map<std::int64_t, Pending> pending_;
    std::size_t argument_bytes_ = 0;  // over every pending call
    std::optional<std::string> finish_;
    std::optional<UsageMetadata> usage_;
    std::optional<std::string> model_;
    bool done_ = false;
};

class Format final : public WireFormat {
public:
    explicit Format(OpenAIOptions o) : options_(std::move(o)) {}

    net::HttpRequest encode(const LlmRequest& request, bool stream) const override
    {
        net::HttpRequest r("POST", net::join_url(options_.base_url, "/chat/completions"));
        r.set("content-type", "application/json");
        if (!options_.api_key.empty())
            r.set("authorization", "Bearer " + options_.api_key);
        if (!options_.organization.empty())
            r.set("openai-organization", options_.organization);
        if (!options_.project.empty())
            r.set("openai-project", options_.project);
        for (const auto& [name, value] : options_.headers)
            r.set(name, value);
        r.body = json::serialize(encode_request(request, request.model.empty() ? options_.model : request.model, stream));
        return r;
    }

    LlmResponse decode(std::string_view body) const override
    {
        json::value v = parse_or_throw(body, "a response");
        const json::object* o = v.if_object();
        if (!o)
            throw Error(errc::bad_response, "the response is not a JSON object: " + std::string(body.substr(0, 200)));
        if (const json::value* error = o->if_contains("error"); error && !error->is_null())
            return error_response(*error);
        LlmResponse r;
        const json::value* choices = o->if_contains("choices");
        if (choices && choices->is_array() && !choices->get_array().empty()) {
            const json::object& choice = provider::object_of(choices->get_array()[0], provider_name, "a choice");
            std::vector<Part> parts;
            if (const json::value* m = choice.if_contains("message"); m && m->is_object()) {
                const json::object& message = m->get_object();
                if (std::string thought = reasoning_of(message); !thought.empty())
                    parts.push_back(Part::from_thought(std::move(thought)));
                if (std::string text = string_at(message, "content"); !text.empty())
                    parts.push_back(Part::from_text(std::move(text)));
                if (const json::value* calls = message.if_contains("tool_calls"); calls && calls->is_array())
                    for (const json::value& c : calls->get_array()) {
                        const json::object& call = provider::object_of(c, provider_name, "a tool call");
                        const json::value* function = call.if_contains("function");
                        if (!function)
                            throw Error(errc::bad_response, std::string(provider_name) +
                                                                " sent a tool call without its \"function\"");
                        const json::object& fn = provider::object_of(*function, provider_name, "a tool call's function");
                        Part part;
                        part.function_call = provider::function_call(string_at(call, "id"), string_at(fn, "name"),
                                                       fn.contains("arguments") && fn.at("arguments").is_string()
                                                           ? std::string_view(fn.at("arguments").get_string())
                                                           : std::string_view("{}"));
                        parts.push_back(std::move(part));
                    }
            }
            r.content = Content("model", std::move(parts));
            if (const json::value* f = choice.if_contains("finish_reason"); f && f->is_string())
                r.finish_reason = finish_reason(f->get_string());
        }
        if (const json::value* u = o->if_contains("usage"); u && u->is_object())
            r.usage_metadata = usage_of(u->get_object());
        if (const json::value* m = o->if_contains("model"); m && m->is_string())
            r.model_version = std::string(m->get_string());
        r.turn_complete = true;
        return r;
    }

    LlmResponse decode_error(unsigned status, std::string_view body) const override
    {
        auto error = provider::error_object(body);
        return error ? error_response(error->at("error")) : provider::http_error_response(status, body);
    }

    std::unique_ptr<WireFormat::StreamDecoder> stream_decoder(const ResponseLimits& limits) const override
    {
        return std::make_unique<ChunkDecoder>(limits);
    }

private:
    OpenAIOptions options_;
};

OpenAIOptions resolved(OpenAIOptions o)
{
    if (o.api_key.empty())
        o.api_key = environment("OPENAI_API_KEY");
    if (o.base_url.empty())
        o.base_url = environment("OPENAI_BASE_URL");
    if (o.base_url.empty())
        o.base_url = "https://api.openai.com/v1";
    if (o.organization.empty())
        o.organization = environment("OPENAI_ORG_ID");
    if (o.project.empty())
        o.project = environment("OPENAI_PROJECT_ID");
    if (o.require_key && o.api_key.empty())
        throw Error(errc::invalid_argument, "OpenAI needs an API key: set OPENAI_API_KEY or OpenAIOptions::api_key "
                                            "(for a local server that takes none, set OpenAIOptions::require_key = "
                                            "false, or use the id \"ollama/<model>\")");
    net::parse_url(o.base_url);
    return o;
}

}  // namespace

std::shared_ptr<const WireFormat> wire_format(OpenAIOptions options)
{
    return std::make_shared<Format>(resolved(std::move(options)));
}

std::shared_ptr<Model> make_model(OpenAIOptions options)
{
    auto http = options.http;
    std::string name = options.model;
    const ResponseLimits limits = options.limits;
    return std::make_shared<HttpModel>(std::move(name), wire_format(std::move(options)), std::move(http), limits);
}

}  // namespace adk::openai
