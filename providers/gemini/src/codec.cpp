#include <adk/providers/gemini/codec.hpp>

#include <adk/core/error.hpp>
#include <adk/detail/json_writer.hpp>
#include <adk/detail/provider_json.hpp>
#include <adk/models/http_model.hpp>

#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <charconv>
#include <cmath>
#include <string>

namespace adk::gemini {

namespace provider = detail::provider;

namespace {

json::object content_json(const Content& content, std::string_view default_role, const json::storage_ptr& sp)
{
    json::object c = json::value_from(content, sp).as_object();
    if (content.role.empty())
        c["role"] = default_role;
    return c;
}

}  // namespace

json::object encode_request(const LlmRequest& request, json::storage_ptr sp)
{
    json::object body(sp);
    json::array contents(sp);
    contents.reserve(request.contents.size());
    for (const Content& c : request.contents)
        contents.push_back(content_json(c, "user", sp));
    body["contents"] = std::move(contents);
    if (request.system_instruction) {
        json::object si = json::value_from(*request.system_instruction, sp).as_object();
        si.erase("role");  // Gemini ignores a role here
        body["systemInstruction"] = std::move(si);
    }
    if (!request.tools.empty()) {
        json::array declarations(sp);
        for (const FunctionDeclaration& d : request.tools) {
            json::object decl({{"name", d.name}, {"description", d.description}}, sp);
            if (!d.parameters.is_null())
                decl["parametersJsonSchema"] = d.parameters;
            declarations.push_back(std::move(decl));
        }
        json::object tool({{"functionDeclarations", std::move(declarations)}}, sp);
        body["tools"] = json::array({std::move(tool)}, sp);
    }
    if (request.code_execution) {
        json::value& tools = body["tools"];
        if (!tools.is_array())
            tools = json::array(sp);
        tools.get_array().push_back(json::object({{"codeExecution", json::object(sp)}}, sp));
    }
    if (!request.cached_content.empty())
        body["cachedContent"] = request.cached_content;
    const GenerateContentConfig& cfg = request.config;
    if (!cfg.tool_config.empty())
        body["toolConfig"] = cfg.tool_config;
    json::object gen(sp);
    if (cfg.temperature)
        gen["temperature"] = *cfg.temperature;
    if (cfg.top_p)
        gen["topP"] = *cfg.top_p;
    if (cfg.top_k)
        gen["topK"] = *cfg.top_k;
    if (cfg.max_output_tokens)
        gen["maxOutputTokens"] = *cfg.max_output_tokens;
    if (!cfg.stop_sequences.empty()) {
        json::array stops(sp);
        for (const auto& s : cfg.stop_sequences)
            stops.emplace_back(s);
        gen["stopSequences"] = std::move(stops);
    }
    if (cfg.response_mime_type)
        gen["responseMimeType"] = *cfg.response_mime_type;
    if (cfg.response_schema)
        gen["responseJsonSchema"] = *cfg.response_schema;
    if (cfg.thinking_config) {
        json::object thinking(sp);
        if (cfg.thinking_config->include_thoughts)
            thinking["includeThoughts"] = *cfg.thinking_config->include_thoughts;
        if (cfg.thinking_config->thinking_budget)
            thinking["thinkingBudget"] = *cfg.thinking_config->thinking_budget;
        gen["thinkingConfig"] = std::move(thinking);
    }
    if (!gen.empty())
        body["generationConfig"] = std::move(gen);
    if (!cfg.safety_settings.empty())
        body["safetySettings"] = cfg.safety_settings;
    return body;
}

std::string encode_request_text(const LlmRequest& request)
{
    std::string out;
    out.reserve(1024);
    detail::JsonWriter w(out);
    w.begin_object();
    w.key("contents");
    w.begin_array();
    for (const Content& c : request.contents) {
        w.element();
        detail::write_content(w, c, "user");
    }
    w.end_array();
    if (const auto& si = request.system_instruction) {
        w.key("systemInstruction");
        if (si->extra.empty()) {
            detail::write_content(w, *si, {}, false);  // Gemini ignores a role here
        } else {
            // Erasing "role" from the tree moves its last member into its place: written from the tree.
            json::object tree = json::value_from(*si).as_object();
            tree.erase("role");
            w.value(tree);
        }
    }
    const bool tools = !request.tools.empty() || request.code_execution;
    if (tools) {
        w.key("tools");
        w.begin_array();
    }
    if (!request.tools.empty()) {
        w.element();
        w.begin_object();
        w.key("functionDeclarations");
        w.begin_array();
        for (const FunctionDeclaration& d : request.tools) {
            w.element();
            w.begin_object();
            w.key("name");
            w.string(d.name);
            w.key("description");
            w.string(d.description);
            if (!d.parameters.is_null()) {
                w.key("parametersJsonSchema");
                w.value(d.parameters);
            }
            w.end_object();
        }
        w.end_array();
        w.end_object();
    }
    if (request.code_execution) {
        w.element();
        w.begin_object();
        w.key("codeExecution");
        w.value(json::object());
        w.end_object();
    }
    if (tools)
        w.end_array();
    if (!request.cached_content.empty()) {
        w.key("cachedContent");
        w.string(request.cached_content);
    }
    const GenerateContentConfig& cfg = request.config;
    if (!cfg.tool_config.empty()) {
        w.key("toolConfig");
        w.value(cfg.tool_config);
    }
    const bool generation = cfg.temperature || cfg.top_p || cfg.top_k || cfg.max_output_tokens ||
                            !cfg.stop_sequences.empty() || cfg.response_mime_type || cfg.response_schema ||
                            cfg.thinking_config;
    if (generation) {
        w.key("generationConfig");
        w.begin_object();
        w.member("temperature", cfg.temperature);
        w.member("topP", cfg.top_p);
        w.member("topK", cfg.top_k);
        w.member("maxOutputTokens", cfg.max_output_tokens);
        if (!cfg.stop_sequences.empty()) {
            w.key("stopSequences");
            w.begin_array();
            for (const auto& stop : cfg.stop_sequences) {
                w.element();
                w.string(stop);
            }
            w.end_array();
        }
        w.member("responseMimeType", cfg.response_mime_type);
        w.member("responseJsonSchema", cfg.response_schema);
        if (const auto& thinking = cfg.thinking_config) {
            w.key("thinkingConfig");
            w.begin_object();
            w.member("includeThoughts", thinking->include_thoughts);
            w.member("thinkingBudget", thinking->thinking_budget);
            w.end_object();
        }
        w.end_object();
    }
    if (!cfg.safety_settings.empty()) {
        w.key("safetySettings");
        w.value(cfg.safety_settings);
    }
    w.end_object();
    return out;
}

namespace {

LlmResponse decode_fields(const json::value& body, bool partial)
{
    LlmResponse r;
    r.partial = partial;
    const json::object* obj = body.if_object();
    if (!obj) {
        r.error_code = "MALFORMED_RESPONSE";
        r.error_message = "Gemini sent something that is not a JSON object";
        return r;
    }
    // One pass over the members (a chunk arrives for every few tokens).
    const json::value *error = nullptr, *candidates = nullptr, *feedback = nullptr, *usage = nullptr,
                      *version = nullptr;
    for (const auto& kv : *obj) {
        const json::string_view key = kv.key();
        if (key == "candidates")
            candidates = &kv.value();
        else if (key == "usageMetadata")
            usage = &kv.value();
        else if (key == "modelVersion")
            version = &kv.value();
        else if (key == "error")
            error = &kv.value();
        else if (key == "promptFeedback")
            feedback = &kv.value();
    }
    if (error && error->is_object()) {
        const json::object& e = error->get_object();
        const json::value* status = e.if_contains("status");
        const json::value* message = e.if_contains("message");
        const auto number = provider::count_at(e, "code");
        r.error_code = status && status->is_string() ? std::string(status->get_string())
                       : number                      ? std::to_string(*number)
                                                     : std::string("UNKNOWN");
        r.error_message = message && message->is_string() ? std::string(message->get_string()) : std::string();
        return r;
    }
    if (candidates && candidates->is_array() && !candidates->get_array().empty()) {
        const json::object& cand = provider::object_of(candidates->get_array()[0], "Gemini", "a candidate");
        for (const auto& kv : cand) {
            const json::string_view key = kv.key();
            if (key == "content") {
                if (kv.value().is_object())
                    r.content = json::value_to<Content>(kv.value());
            } else if (key == "finishReason") {
                if (kv.value().is_string())
                    r.finish_reason = std::string(kv.value().get_string());
            } else if (key == "groundingMetadata" || key == "citationMetadata" || key == "safetyRatings") {
                r.provider_metadata[key] = kv.value();
            }
        }
    } else if (feedback && feedback->is_object()) {
        if (const json::value* reason = feedback->get_object().if_contains("blockReason"); reason && reason->is_string()) {
            r.error_code = std::string(reason->get_string());
            r.error_message = "Gemini blocked the prompt: " + r.error_code.value();
        }
    }
    if (usage && usage->is_object())
        r.usage_metadata = json::value_to<UsageMetadata>(*usage);
    if (version && version->is_string())
        r.model_version = std::string(version->get_string());
    if (r.finish_reason && !partial)
        r.turn_complete = true;
    return r;
}

}  // namespace

LlmResponse decode_response(const json::value& body, bool partial)
{
    try {
        return decode_fields(body, partial);
    } catch (const Error& e) {
        if (e.code() == errc::bad_response)
            throw;
        // A member of the wrong type (Content's reader names it): Gemini's answer does not fit its format.
        throw Error(errc::bad_response, "Gemini sent a response that does not fit its format: " + e.message());
    }
}

std::optional<std::chrono::milliseconds> retry_delay(const json::value& error_body)
{
    const json::value* error = error_body.is_object() ? error_body.get_object().if_contains("error") : nullptr;
    const json::value* details = error && error->is_object() ? error->get_object().if_contains("details") : nullptr;
    if (!details || !details->is_array())
        return std::nullopt;
    for (const json::value& d : details->get_array()) {
        if (!d.is_object())
            continue;
        const json::value* type = d.get_object().if_contains("@type");
        const json::value* delay = d.get_object().if_contains("retryDelay");
        if (!type || !type->is_string() || type->get_string() != "type.googleapis.com/google.rpc.RetryInfo" || !delay ||
            !delay->is_string())
            continue;
        // "34.4s": a duration in seconds. Anything that is not a finite, non-negative number of seconds below a
        // day is no hint (the client caps what it honours at RetryPolicy::max_server_hint anyway).
        const std::string_view text(delay->get_string());
        if (text.size() < 2 || text.back() != 's')
            return std::nullopt;
        double seconds = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size() - 1, seconds);
        if (ec != std::errc{} || end != text.data() + text.size() - 1 || !std::isfinite(seconds) || seconds < 0 ||
            seconds > 86400)
            return std::nullopt;
        return std::chrono::milliseconds(std::llround(seconds * 1000));
    }
    return std::nullopt;
}

}  // namespace adk::gemini
