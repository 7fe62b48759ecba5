#include "render.hpp"

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <charconv>
#include <memory>

namespace adk::mock_llm {
namespace {

struct Call {
    std::string name;
    json::object args;
    std::string id;
};

struct Turn {
    std::vector<std::string> chunks;
    std::size_t repeat = 1;
    std::vector<Call> calls;
    bool is_error = false;
    unsigned error_status = 0;
    std::string error_message;
    std::string retry_after;
    std::string stream_error;  // an error sent in the stream after the chunks
};

std::string str(const json::value* v, std::string fallback = {})
{
    return v && v->is_string() ? std::string(v->get_string()) : fallback;
}

// A turn of the script; throws std::invalid_argument naming the turn and the field that is wrong.
Turn parse_turn(const json::value& v, std::size_t index)
{
    const std::string where = "script turn " + std::to_string(index);
    auto bad = [&](const std::string& field, const std::string& expected) {
        throw std::invalid_argument(where + ": \"" + field + "\" must be " + expected + " (tools/mock_llm/README.md)");
    };
    auto text_of = [&](const json::value* x, const std::string& field) {
        if (!x->is_string())
            bad(field, "a string");
        return std::string(x->get_string());
    };
    Turn t;
    if (!v.is_object())
        throw std::invalid_argument(where + " is not an object");
    const auto& o = v.get_object();
    if (auto* c = o.if_contains("chunks")) {
        if (!c->is_array())
            bad("chunks", "an array of strings");
        for (const auto& piece : c->get_array())
            t.chunks.push_back(text_of(&piece, "chunks"));
    }
    if (auto* text = o.if_contains("text"))
        t.chunks.push_back(text_of(text, "text"));
    if (auto* r = o.if_contains("repeat")) {
        if (!r->is_int64() || r->get_int64() < 1 || r->get_int64() > 100'000'000)
            bad("repeat", "a whole number from 1 to 100000000");
        t.repeat = static_cast<std::size_t>(r->get_int64());
    }
    if (auto* calls = o.if_contains("function_calls")) {
        if (!calls->is_array())
            bad("function_calls", "an array of {\"name\", \"args\", \"id\"} objects");
        std::size_t n = 0;
        for (const auto& c : calls->get_array()) {
            if (!c.is_object())
                bad("function_calls", "an array of {\"name\", \"args\", \"id\"} objects");
            const auto& co = c.get_object();
            Call call;
            const json::value* name = co.if_contains("name");
            if (!name)
                bad("function_calls[" + std::to_string(n) + "].name", "given");
            call.name = text_of(name, "function_calls[" + std::to_string(n) + "].name");
            if (auto* a = co.if_contains("args")) {
                if (!a->is_object())
                    bad("function_calls[" + std::to_string(n) + "].args", "an object");
                call.args = a->get_object();
            }
            call.id = co.contains("id") ? text_of(co.if_contains("id"), "function_calls[" + std::to_string(n) + "].id")
                                        : "call_" + std::to_string(index) + "_" + std::to_string(n);
            t.calls.push_back(std::move(call));
            ++n;
        }
    }
    if (auto* e = o.if_contains("error")) {
        if (!e->is_object())
            bad("error", "an object such as {\"status\": 429, \"message\": \"...\"}");
        t.is_error = true;
        const auto& eo = e->get_object();
        t.error_status = 500;
        if (auto* status = eo.if_contains("status")) {
            if (!status->is_int64() || status->get_int64() < 400 || status->get_int64() > 599)
                bad("error.status", "an HTTP error status from 400 to 599");
            t.error_status = static_cast<unsigned>(status->get_int64());
        }
        t.error_message = eo.contains("message") ? text_of(eo.if_contains("message"), "error.message")
                                                 : std::string("scripted error");
        if (auto* ra = eo.if_contains("retry_after")) {
            if (!ra->is_string() && !ra->is_number())
                bad("error.retry_after", "seconds, as a number or a string");
            t.retry_after = ra->is_string() ? std::string(ra->get_string()) : json::serialize(*ra);
        }
    }
    if (auto* se = o.if_contains("stream_error"))
        t.stream_error = text_of(se, "stream_error");
    return t;
}

// ---- errors in each provider's shape ----

std::string gemini_status_name(unsigned status)
{
    switch (status) {
    case 400: return "INVALID_ARGUMENT";
    case 401: return "UNAUTHENTICATED";
    case 403: return "PERMISSION_DENIED";
    case 404: return "NOT_FOUND";
    case 429: return "RESOURCE_EXHAUSTED";
    case 503: return "UNAVAILABLE";
    default: return status >= 500 ? "INTERNAL" : "FAILED_PRECONDITION";
    }
}

std::string anthropic_error_type(unsigned status)
{
    switch (status) {
    case 400: return "invalid_request_error";
    case 401: return "authentication_error";
    case 403: return "permission_error";
    case 404: return "not_found_error";
    case 413: return "request_too_large";
    case 429: return "rate_limit_error";
    case 529: return "overloaded_error";
    default: return "api_error";
    }
}

std::string error_body(Format format, unsigned status, const std::string& message)
{
    switch (format) {
    case Format::gemini:
        return json::serialize(json::object{
            {"error", {{"code", status}, {"message", message}, {"status", gemini_status_name(status)}}}});
    case Format::openai:
        return json::serialize(json::object{
            {"error",
             {{"message", message},
              {"type", status == 429 ? "rate_limit_exceeded" : status >= 500 ? "server_error" : "invalid_request_error"},
              {"param", nullptr},
              {"code", status == 429 ? json::value("rate_limit_exceeded") : json::value(nullptr)}}}});
    case Format::anthropic:
        return json::serialize(json::object{{"type", "error"},
                                            {"error", {{"type", anthropic_error_type(status)}, {"message", message}}},
                                            {"request_id", "req_mock"}});
    }
    return {};
}

// ---- Gemini ----

json::object gemini_usage(std::size_t prompt, std::size_t completion, std::size_t cached)
{
    json::object usage{{"promptTokenCount", prompt},
                       {"candidatesTokenCount", completion},
                       {"totalTokenCount", prompt + completion}};
    if (cached > 0)
        usage["cachedContentTokenCount"] = cached;
    return usage;
}

std::string gemini_chunk(json::array parts, const std::string& model, std::size_t prompt, std::size_t completion,
                         bool last, std::size_t cached)
{
    json::object candidate{{"content", {{"parts", std::move(parts)}, {"role", "model"}}}, {"index", 0}};
    if (last)
        candidate["finishReason"] = "STOP";
    json::object o{{"candidates", json::array{std::move(candidate)}},
                   {"usageMetadata", gemini_usage(prompt, completion, cached)},
                   {"modelVersion", model},
                   {"responseId", "mock-response"}};
    return "data: " + json::serialize(o) + "\r\n\r\n";
}

// A streamed text chunk, written as gemini_chunk writes it but without building a JSON tree: a benchmark's
// mock-llm writes thousands of these a second and shares the machine with the runtime it measures. Only the
// text, the usage and the finish reason change from one chunk to the next.
class GeminiTextFrames {
public:
    GeminiTextFrames(const std::vector<std::string>& chunks, const std::string& model, std::size_t prompt,
                     std::size_t cached)
        : prompt_(prompt), cached_(cached)
    {
        for (const auto& c : chunks)
            texts_.push_back(json::serialize(json::string_view(c)));
        tail_ = R"(,"modelVersion":)" + json::serialize(json::string_view(model)) +
                R"(,"responseId":"mock-response"})" + "\r\n\r\n";
    }

    std::string frame(std::size_t i, std::size_t completion, bool last) const
    {
        const std::string& text = texts_[i % texts_.size()];
        std::string out;
        out.reserve(200 + text.size() + tail_.size());
        out += R"(data: {"candidates":[{"content":{"parts":[{"text":)";
        out += text;
        out += R"(}],"role":"model"},"index":0)";
        if (last)
            out += R"(,"finishReason":"STOP")";
        out += R"(}],"usageMetadata":{"promptTokenCount":)";
        append_number(out, prompt_);
        out += R"(,"candidatesTokenCount":)";
        append_number(out, completion);
        out += R"(,"totalTokenCount":)";
        append_number(out, prompt_ + completion);
        if (cached_ > 0) {
            out += R"(,"cachedContentTokenCount":)";
            append_number(out, cached_);
        }
        out += '}';
        out += tail_;
        return out;
    }

private:
    static void append_number(std::string& out, std::size_t n)
    {
        char digits[24];
        const auto end = std::to_chars(digits, digits + sizeof digits, n).ptr;
        out.append(digits, end);
    }

    std::vector<std::string> texts_;
    std::string tail_;
    std::size_t prompt_;
    std::size_t cached_;
};

json::array gemini_call_parts(const Turn& t)
{
    json::array parts;
    for (const auto& c : t.calls)
        parts.push_back(json::object{{"functionCall", {{"name", c.name}, {"args", c.args}, {"id", c.id}}}});
    return parts;
}

// ---- OpenAI ----

std::string openai_chunk(const std::string& model, json::object delta, json::value finish)
{
    json::object o{{"id", "chatcmpl-mock"},
                   {"object", "chat.completion.chunk"},
                   {"created", 1700000000},
                   {"model", model},
                   {"choices", json::array{json::object{{"index", 0},
                                                        {"delta", std::move(delta)},
                                                        {"logprobs", nullptr},
                                                        {"finish_reason", std::move(finish)}}}}};
    return "data: " + json::serialize(o) + "\n\n";
}

json::object openai_usage(std::size_t prompt, std::size_t completion)
{
    return {{"prompt_tokens", prompt}, {"completion_tokens", completion}, {"total_tokens", prompt + completion}};
}

// ---- Anthropic ----

std::string anthropic_event(const json::object& data)
{
    return "event: " + std::string(data.at("type").get_string()) + "\ndata: " + json::serialize(data) + "\n\n";
}

}  // namespace

bool format_of_path(std::string_view target, Format& format, bool& stream, std::string& model)
{
    const auto query = target.find('?');
    const std::string_view path = target.substr(0, query);
    if (const auto colon = path.rfind(':'); colon != std::string_view::npos) {
        const std::string_view method = path.substr(colon + 1);
        if (method == "streamGenerateContent" || method == "generateContent") {
            format = Format::gemini;
            stream = method == "streamGenerateContent";
            const auto slash = path.rfind('/', colon);
            model = std::string(path.substr(slash + 1, colon - slash - 1));
            return true;
        }
    }
    if (path.ends_with("/chat/completions")) {
        format = Format::openai;
        return true;
    }
    if (path.ends_with("/messages")) {
        format = Format::anthropic;
        return true;
    }
    return false;
}

std::size_t model_turns_in(const json::value& request, Format format)
{
    const char* list = format == Format::gemini ? "contents" : "messages";
    const char* role = format == Format::gemini ? "model" : "assistant";
    std::size_t n = 0;
    if (!request.is_object())
        return 0;
    if (auto* items = request.get_object().if_contains(list); items && items->is_array())
        for (const auto& item : items->get_array())
            if (item.is_object())
                if (auto* r = item.get_object().if_contains("role"); r && r->is_string() && r->get_string() == role)
                    ++n;
    return n;
}

namespace {

std::string system_text_of(const json::value& request, Format format)
{
    const auto& o = request.get_object();
    std::string text;
    auto add_parts = [&](const json::value* parts, const char* key) {
        if (parts && parts->is_array())
            for (const auto& part : parts->get_array())
                if (part.is_object())
                    text += str(part.get_object().if_contains(key));
    };
    switch (format) {
    case Format::gemini:
        if (auto* si = o.if_contains("systemInstruction"); si && si->is_object())
            add_parts(si->get_object().if_contains("parts"), "text");
        break;
    case Format::openai:
        if (auto* messages = o.if_contains("messages"); messages && messages->is_array())
            for (const auto& m : messages->get_array())
                if (m.is_object() && str(m.get_object().if_contains("role")) == "system") {
                    const json::value* content = m.get_object().if_contains("content");
                    text += str(content);
                    add_parts(content, "text");
                }
        break;
    case Format::anthropic:
        text = str(o.if_contains("system"));
        add_parts(o.if_contains("system"), "text");
        break;
    }
    return text;
}

// The turns for this request: the agent's own when the script has them and the system instruction names
// the agent as ADK does ("Your internal name is \"NAME\"."), else the script's "turns".
const json::array* turns_for(const json::value& script, const json::value& request, Format format)
{
    const auto& o = script.get_object();
    if (auto* agents = o.if_contains("agents"); agents && agents->is_object() && !agents->get_object().empty()) {
        const std::string system = system_text_of(request, format);
        const std::string_view marker = "internal name is \"";
        if (auto at = system.find(marker); at != std::string::npos) {
            const auto start = at + marker.size();
            const std::string name = system.substr(start, system.find('"', start) - start);
            if (auto* own = agents->get_object().if_contains(name))
                return &own->get_object().at("turns").get_array();
        }
    }
    return &o.at("turns").get_array();
}

void validate_turns(const json::value* turns, const std::string& where)
{
    if (!turns || !turns->is_array() || turns->get_array().empty())
        throw std::invalid_argument(where + " must be an object with a non-empty \"turns\" array "
                                    "(tools/mock_llm/README.md)");
    for (std::size_t i = 0; i < turns->get_array().size(); ++i)
        (void)parse_turn(turns->get_array()[i], i);
}

}  // namespace

void validate_script(const json::value& script)
{
    validate_turns(script.is_object() ? script.get_object().if_contains("turns") : nullptr, "the script");
    const auto* agents = script.get_object().if_contains("agents");
    if (!agents)
        return;
    if (!agents->is_object())
        throw std::invalid_argument("the script's \"agents\" must be an object: agent name to {\"turns\": [...]}");
    for (const auto& [name, own] : agents->get_object()) {
        const std::string where = "the script of the agent '" + std::string(name) + "'";
        validate_turns(own.is_object() ? own.get_object().if_contains("turns") : nullptr, where);
    }
}

Answer render(const json::value& script, Format format, bool stream, const std::string& model_in,
              std::string_view request_body, std::size_t cached_tokens)
{
    Answer answer;
    boost::system::error_code ec;
    unsigned char scratch[16384];  // the request is read once, for its turns: parsed without the heap
    json::monotonic_resource parse_memory(scratch, sizeof scratch);
    const json::value request = json::parse(request_body, ec, &parse_memory);
    if (ec || !request.is_object()) {
        answer.status = 400;
        answer.content_type = "application/json";
        answer.body = error_body(format, 400, "the request body is not a JSON object");
        return answer;
    }
    std::string model = model_in;
    if (format != Format::gemini) {
        auto* s = request.get_object().if_contains("stream");
        stream = s && s->is_bool() && s->get_bool();
        model = str(request.get_object().if_contains("model"), "mock-model");
    }
    const json::array& list = *turns_for(script, request, format);
    const std::size_t index = std::min(model_turns_in(request, format), list.size() - 1);
    auto turn = std::make_shared<Turn>(parse_turn(list[index], index));
    const std::size_t prompt = request_body.size() / 4 + 1;
    const std::size_t text_frames = turn->chunks.size() * turn->repeat;
    const std::size_t completion = text_frames + turn->calls.size();

    if (turn->is_error) {
        answer.status = turn->error_status;
        answer.content_type = "application/json";
        answer.body = error_body(format, turn->error_status, turn->error_message);
        if (!turn->retry_after.empty())
            answer.headers.emplace_back("retry-after", turn->retry_after);
        return answer;
    }

    std::string full_text;
    for (std::size_t i = 0; i < text_frames; ++i)
        if (!stream)
            full_text += turn->chunks[i % turn->chunks.size()];

    switch (format) {
    case Format::gemini: {
        if (!stream) {
            json::array parts;
            if (!full_text.empty())
                parts.push_back(json::object{{"text", full_text}});
            for (auto& p : gemini_call_parts(*turn))
                parts.push_back(p);
            std::string frame = gemini_chunk(std::move(parts), model, prompt, completion, true, cached_tokens);
            answer.body = frame.substr(6, frame.size() - 10);  // drop "data: " and "\r\n\r\n"
            break;
        }
        answer.plan.text_count = text_frames;
        const bool text_is_last = turn->calls.empty() && turn->stream_error.empty();
        auto frames = std::make_shared<GeminiTextFrames>(turn->chunks, model, prompt, cached_tokens);
        answer.plan.text_frame = [frames, text_frames, text_is_last](std::size_t i) {
            return frames->frame(i, i + 1, text_is_last && i + 1 == text_frames);
        };
        if (!turn->stream_error.empty())
            answer.plan.tail.push_back(
                "data: " + error_body(format, 503, turn->stream_error) + "\r\n\r\n");
        else if (!turn->calls.empty() || text_frames == 0)
            answer.plan.tail.push_back(
                gemini_chunk(gemini_call_parts(*turn), model, prompt, completion, true, cached_tokens));
        break;
    }
    case Format::openai: {
        const char* finish = turn->calls.empty() ? "stop" : "tool_calls";
        if (!stream) {
            json::object message{{"role", "assistant"}, {"content", full_text.empty() ? json::value(nullptr) : json::value(full_text)}};
            if (!turn->calls.empty()) {
                json::array calls;
                for (const auto& c : turn->calls)
                    calls.push_back(json::object{{"id", c.id},
                                                 {"type", "function"},
                                                 {"function", {{"name", c.name}, {"arguments", json::serialize(c.args)}}}});
                message["tool_calls"] = std::move(calls);
            }
            answer.body = json::serialize(json::object{
                {"id", "chatcmpl-mock"},
                {"object", "chat.completion"},
                {"created", 1700000000},
                {"model", model},
                {"choices", json::array{json::object{{"index", 0}, {"message", std::move(message)},
                                                     {"logprobs", nullptr}, {"finish_reason", finish}}}},
                {"usage", openai_usage(prompt, completion)}});
            break;
        }
        answer.plan.head.push_back(openai_chunk(model, {{"role", "assistant"}, {"content", ""}, {"refusal", nullptr}}, nullptr));
        answer.plan.text_count = text_frames;
        answer.plan.text_frame = [turn, model](std::size_t i) {
            return openai_chunk(model, {{"content", turn->chunks[i % turn->chunks.size()]}}, nullptr);
        };
        std::size_t call_index = 0;
        for (const auto& c : turn->calls) {
            answer.plan.tail.push_back(openai_chunk(
                model,
                {{"tool_calls", json::array{json::object{{"index", call_index}, {"id", c.id}, {"type", "function"},
                                                         {"function", {{"name", c.name}, {"arguments", ""}}}}}}},
                nullptr));
            // The arguments in two fragments split inside the JSON, as OpenAI streams them.
            const std::string args = json::serialize(c.args);
            const std::size_t half = args.size() / 2;
            for (const std::string& piece : {args.substr(0, half), args.substr(half)})
                answer.plan.tail.push_back(openai_chunk(
                    model, {{"tool_calls", json::array{json::object{{"index", call_index}, {"function", {{"arguments", piece}}}}}}},
                    nullptr));
            ++call_index;
        }
        if (!turn->stream_error.empty()) {
            answer.plan.tail.push_back("event: error\ndata: " + error_body(format, 500, turn->stream_error) + "\n\n");
            break;
        }
        answer.plan.tail.push_back(openai_chunk(model, {}, finish));
        const auto* opts = request.get_object().if_contains("stream_options");
        if (opts && opts->is_object())
            if (auto* u = opts->get_object().if_contains("include_usage"); u && u->is_bool() && u->get_bool())
                answer.plan.tail.push_back(
                    "data: " +
                    json::serialize(json::object{{"id", "chatcmpl-mock"}, {"object", "chat.completion.chunk"},
                                                 {"created", 1700000000}, {"model", model}, {"choices", json::array{}},
                                                 {"usage", openai_usage(prompt, completion)}}) +
                    "\n\n");
        answer.plan.tail.push_back("data: [DONE]\n\n");
        break;
    }
    case Format::anthropic: {
        const char* stop = turn->calls.empty() ? "end_turn" : "tool_use";
        json::object usage_start{{"input_tokens", prompt}, {"output_tokens", 1}};
        if (!stream) {
            json::array content;
            if (!full_text.empty())
                content.push_back(json::object{{"type", "text"}, {"text", full_text}});
            for (const auto& c : turn->calls)
                content.push_back(json::object{{"type", "tool_use"}, {"id", c.id}, {"name", c.name}, {"input", c.args}});
            answer.body = json::serialize(json::object{{"id", "msg_mock"},
                                                       {"type", "message"},
                                                       {"role", "assistant"},
                                                       {"model", model},
                                                       {"content", std::move(content)},
                                                       {"stop_reason", stop},
                                                       {"stop_sequence", nullptr},
                                                       {"usage", {{"input_tokens", prompt}, {"output_tokens", completion}}}});
            break;
        }
        answer.plan.head.push_back(anthropic_event(
            {{"type", "message_start"},
             {"message", {{"id", "msg_mock"}, {"type", "message"}, {"role", "assistant"}, {"model", model},
                          {"content", json::array{}}, {"stop_reason", nullptr}, {"stop_sequence", nullptr},
                          {"usage", std::move(usage_start)}}}}));
        std::size_t block = 0;
        if (text_frames > 0) {
            answer.plan.head.push_back(anthropic_event(
                {{"type", "content_block_start"}, {"index", 0}, {"content_block", {{"type", "text"}, {"text", ""}}}}));
            answer.plan.head.push_back(anthropic_event({{"type", "ping"}}));
            answer.plan.text_count = text_frames;
            answer.plan.text_frame = [turn](std::size_t i) {
                return anthropic_event({{"type", "content_block_delta"},
                                        {"index", 0},
                                        {"delta", {{"type", "text_delta"}, {"text", turn->chunks[i % turn->chunks.size()]}}}});
            };
            answer.plan.tail.push_back(anthropic_event({{"type", "content_block_stop"}, {"index", 0}}));
            block = 1;
        }
        for (const auto& c : turn->calls) {
            answer.plan.tail.push_back(anthropic_event(
                {{"type", "content_block_start"},
                 {"index", block},
                 {"content_block", {{"type", "tool_use"}, {"id", c.id}, {"name", c.name}, {"input", json::object{}}}}}));
            const std::string args = json::serialize(c.args);
            const std::size_t half = args.size() / 2;
            // The first fragment is empty, as Anthropic sends it.
            for (const std::string& piece : {std::string(), args.substr(0, half), args.substr(half)})
                answer.plan.tail.push_back(anthropic_event(
                    {{"type", "content_block_delta"},
                     {"index", block},
                     {"delta", {{"type", "input_json_delta"}, {"partial_json", piece}}}}));
            answer.plan.tail.push_back(anthropic_event({{"type", "content_block_stop"}, {"index", block}}));
            ++block;
        }
        if (!turn->stream_error.empty()) {
            answer.plan.tail.push_back(anthropic_event(
                {{"type", "error"}, {"error", {{"type", "overloaded_error"}, {"message", turn->stream_error}}}}));
            break;
        }
        answer.plan.tail.push_back(anthropic_event({{"type", "message_delta"},
                                                    {"delta", {{"stop_reason", stop}, {"stop_sequence", nullptr}}},
                                                    {"usage", {{"output_tokens", completion}}}}));
        answer.plan.tail.push_back(anthropic_event({{"type", "message_stop"}}));
        break;
    }
    }
    answer.streamed = stream;
    answer.content_type = stream ? "text/event-stream" : "application/json";
    return answer;
}

}  // namespace adk::mock_llm
