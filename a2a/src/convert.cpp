#include <adk/a2a/convert.hpp>

#include <adk/core/error.hpp>

#include <boost/json/serialize.hpp>

namespace adk::a2a {

namespace {

constexpr std::string_view type_key = "adk_type";

Part data_part(json::object data, std::string_view type)
{
    Part p = Part::data_part(std::move(data));
    p.metadata[type_key] = type;
    return p;
}

std::string string_of(const json::object& o, std::string_view key, std::string_view what)
{
    const json::value* v = o.if_contains(key);
    if (!v || v->is_null())
        return {};
    if (!v->is_string())
        throw Error(errc::invalid_argument, std::string(what) + "." + std::string(key) + " must be a string");
    return std::string(v->get_string());
}

json::object object_of(const json::object& o, std::string_view key, std::string_view what)
{
    const json::value* v = o.if_contains(key);
    if (!v || v->is_null())
        return {};
    if (!v->is_object())
        throw Error(errc::invalid_argument, std::string(what) + "." + std::string(key) + " must be an object");
    return v->get_object();
}

}  // namespace

std::string adk_metadata_key(std::string_view name)
{
    return "adk_" + std::string(name);
}

Part to_a2a(const adk::Part& part)
{
    if (part.function_call) {
        const FunctionCall& c = *part.function_call;
        json::object data{{"name", c.name}, {"args", c.args}};
        if (!c.id.empty())
            data["id"] = c.id;
        return data_part(std::move(data), "function_call");
    }
    if (part.function_response) {
        const FunctionResponse& r = *part.function_response;
        json::object data{{"name", r.name}, {"response", r.response}};
        if (!r.id.empty())
            data["id"] = r.id;
        return data_part(std::move(data), "function_response");
    }
    if (part.executable_code)
        return data_part(json::object{{"language", part.executable_code->language}, {"code", part.executable_code->code}},
                         "executable_code");
    if (part.code_execution_result)
        return data_part(json::object{{"outcome", part.code_execution_result->outcome},
                                      {"output", part.code_execution_result->output}},
                         "code_execution_result");
    if (part.inline_data) {
        Part p = Part::raw_part(part.inline_data->data, part.inline_data->mime_type);
        p.filename = part.inline_data->display_name.value_or("");
        return p;
    }
    if (part.file_data) {
        Part p = Part::url_part(part.file_data->file_uri, part.file_data->mime_type);
        p.filename = part.file_data->display_name.value_or("");
        return p;
    }
    Part p = Part::text_part(part.text.value_or(""));
    if (part.thought)
        p.metadata["adk_thought"] = true;
    return p;
}

adk::Part from_a2a(const Part& part)
{
    adk::Part out;
    if (const std::string* text = part.text()) {
        out.text = *text;
        if (const json::value* thought = part.metadata.if_contains("adk_thought"); thought && thought->is_bool())
            out.thought = thought->get_bool();
        return out;
    }
    if (const auto* raw = std::get_if<Part::Raw>(&part.content)) {
        if (raw->bytes.size() > max_inline_data_bytes)
            throw Error(errc::invalid_argument, "a file part holds " + std::to_string(raw->bytes.size()) +
                                                    " bytes; ADK takes files of at most " +
                                                    std::to_string(max_inline_data_bytes) + " inline");
        out.inline_data.emplace(part.media_type, raw->bytes);
        if (!part.filename.empty())
            out.inline_data->display_name = part.filename;
        return out;
    }
    if (const auto* url = std::get_if<Part::Url>(&part.content)) {
        out.file_data.emplace(part.media_type, url->url);
        if (!part.filename.empty())
            out.file_data->display_name = part.filename;
        return out;
    }
    const json::value& data = std::get<Part::Data>(part.content).value;
    const json::value* type = part.metadata.if_contains(type_key);
    const std::string_view kind = type && type->is_string() ? std::string_view(type->get_string()) : std::string_view();
    if (data.is_object() && !kind.empty()) {
        const json::object& o = data.get_object();
        if (kind == "function_call" || kind == "function_response") {
            const std::string name = string_of(o, "name", "a function part's data");
            if (name.empty())
                throw Error(errc::invalid_argument, "a " + std::string(kind) + " part's data must name the function");
            if (kind == "function_call")
                out.function_call.emplace(string_of(o, "id", "function_call"), name, object_of(o, "args", "function_call"));
            else
                out.function_response.emplace(string_of(o, "id", "function_response"), name,
                                              object_of(o, "response", "function_response"));
            return out;
        }
        if (kind == "executable_code") {
            out.executable_code.emplace(string_of(o, "language", "executable_code"), string_of(o, "code", "executable_code"));
            return out;
        }
        if (kind == "code_execution_result") {
            out.code_execution_result.emplace(string_of(o, "outcome", "code_execution_result"),
                                              string_of(o, "output", "code_execution_result"));
            return out;
        }
    }
    out.text = json::serialize(data);  // structured input an agent reads as text
    return out;
}

Message to_message(const adk::Content& content, Role role, std::string message_id)
{
    Message m;
    m.message_id = std::move(message_id);
    m.role = role;
    m.parts.reserve(content.parts.size());
    for (const adk::Part& p : content.parts)
        m.parts.push_back(to_a2a(p));
    return m;
}

adk::Content to_content(const Message& message)
{
    adk::Content c;
    c.role = message.role == Role::agent ? "model" : "user";
    c.parts.reserve(message.parts.size());
    for (const Part& p : message.parts)
        c.parts.push_back(from_a2a(p));
    return c;
}

}  // namespace adk::a2a
