#include <adk/core/content.hpp>
#include <adk/core/error.hpp>
#include <adk/core/json_fields.hpp>

#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <utility>

namespace adk {

using json_fields::FieldReader;
using json_fields::put;
using json_fields::put_extra;
using json_fields::put_nonempty;
using json_fields::put_true;

Blob::Blob(std::string mime_type_, std::string data_) : mime_type(std::move(mime_type_)), data(std::move(data_)) {}
FileData::FileData(std::string mime_type_, std::string file_uri_)
    : mime_type(std::move(mime_type_)), file_uri(std::move(file_uri_))
{
}
FunctionCall::FunctionCall(std::string id_, std::string name_, json::object args_)
    : id(std::move(id_)), name(std::move(name_)), args(std::move(args_))
{
}
FunctionResponse::FunctionResponse(std::string id_, std::string name_, json::object response_)
    : id(std::move(id_)), name(std::move(name_)), response(std::move(response_))
{
}
ExecutableCode::ExecutableCode(std::string language_, std::string code_)
    : language(std::move(language_)), code(std::move(code_))
{
}
CodeExecutionResult::CodeExecutionResult(std::string outcome_, std::string output_)
    : outcome(std::move(outcome_)), output(std::move(output_))
{
}
Content::Content(std::string role_, std::vector<Part> parts_) : role(std::move(role_)), parts(std::move(parts_)) {}

void check_inline_data(const Content& content)
{
    for (const Part& p : content.parts)
        if (p.inline_data)
            check_inline_size(p.inline_data->data.size());
}

void check_inline_size(std::size_t n)
{
    if (n > max_inline_data_bytes)
        throw Error(errc::too_large,
                    "inlineData holds " + std::to_string(n) + " bytes, over the limit of " +
                        std::to_string(max_inline_data_bytes) +
                        ": save large files as artifacts and refer to them with fileData");
}

void check_part_count(std::size_t n, std::string_view what)
{
    if (n > max_content_parts)
        throw Error(errc::too_large, std::string(what) + " holds " + std::to_string(n) + " parts, over the limit of " +
                                         std::to_string(max_content_parts) +
                                         " (adk::max_content_parts): join text into fewer parts, or send several messages");
}

Part Part::from_text(std::string text)
{
    Part p;
    p.text = std::move(text);
    return p;
}

Part Part::from_thought(std::string text)
{
    Part p;
    p.text = std::move(text);
    p.thought = true;
    return p;
}

Part Part::from_bytes(std::string data, std::string mime_type)
{
    check_inline_size(data.size());
    Part p;
    p.inline_data.emplace(std::move(mime_type), std::move(data));
    return p;
}

Part Part::from_uri(std::string file_uri, std::string mime_type)
{
    Part p;
    p.file_data.emplace(std::move(mime_type), std::move(file_uri));
    return p;
}

Part Part::from_function_call(std::string name, json::object args, std::string id)
{
    Part p;
    p.function_call.emplace(std::move(id), std::move(name), std::move(args));
    return p;
}

Part Part::from_function_response(std::string name, json::object response, std::string id)
{
    Part p;
    p.function_response.emplace(std::move(id), std::move(name), std::move(response));
    return p;
}

Content Content::user(std::string text)
{
    std::vector<Part> parts;
    parts.push_back(Part::from_text(std::move(text)));
    return Content("user", std::move(parts));
}

Content Content::model(std::string text)
{
    std::vector<Part> parts;
    parts.push_back(Part::from_text(std::move(text)));
    return Content("model", std::move(parts));
}

std::string Content::text() const
{
    std::string out;
    for (const Part& p : parts)
        if (p.text && !p.thought)
            out += *p.text;
    return out;
}

// ---- JSON out ---------------------------------------------------------------------------------------
// Every value is built in the storage of `out` (json::value_from(x, storage)), so that a caller can build
// a whole document in one monotonic buffer.

void tag_invoke(const json::value_from_tag&, json::value& out, const Blob& v)
{
    check_inline_size(v.data.size());  // a Blob filled in place (inline_data.emplace) is checked here
    json::object o(out.storage());
    put_nonempty(o, "mimeType", v.mime_type);
    o.emplace("data", json_fields::base64_encode(v.data));
    put(o, "displayName", v.display_name);
    put_extra(o, v.extra);
    out = std::move(o);
}

void tag_invoke(const json::value_from_tag&, json::value& out, const FileData& v)
{
    json::object o(out.storage());
    put_nonempty(o, "mimeType", v.mime_type);
    o.emplace("fileUri", v.file_uri);
    put(o, "displayName", v.display_name);
    put_extra(o, v.extra);
    out = std::move(o);
}

void tag_invoke(const json::value_from_tag&, json::value& out, const FunctionCall& v)
{
    json::object o(out.storage());
    put_nonempty(o, "id", v.id);
    o.emplace("name", v.name);
    o.emplace("args", v.args);
    put_extra(o, v.extra);
    out = std::move(o);
}

void tag_invoke(const json::value_from_tag&, json::value& out, const FunctionResponse& v)
{
    json::object o(out.storage());
    put_nonempty(o, "id", v.id);
    o.emplace("name", v.name);
    o.emplace("response", v.response);
    put_extra(o, v.extra);
    out = std::move(o);
}

void tag_invoke(const json::value_from_tag&, json::value& out, const ExecutableCode& v)
{
    json::object o(out.storage());
    put_nonempty(o, "language", v.language);
    o.emplace("code", v.code);
    put_extra(o, v.extra);
    out = std::move(o);
}

void tag_invoke(const json::value_from_tag&, json::value& out, const CodeExecutionResult& v)
{
    json::object o(out.storage());
    put_nonempty(o, "outcome", v.outcome);
    put_nonempty(o, "output", v.output);
    put_extra(o, v.extra);
    out = std::move(o);
}

void tag_invoke(const json::value_from_tag&, json::value& out, const Part& v)
{
    json::object o(out.storage());
    put(o, "text", v.text);
    put_true(o, "thought", v.thought);
    if (v.thought_signature)
        o.emplace("thoughtSignature", json_fields::base64_encode(*v.thought_signature));
    if (v.inline_data)
        o.emplace("inlineData", json::value_from(*v.inline_data, o.storage()));
    if (v.file_data)
        o.emplace("fileData", json::value_from(*v.file_data, o.storage()));
    if (v.function_call)
        o.emplace("functionCall", json::value_from(*v.function_call, o.storage()));
    if (v.function_response)
        o.emplace("functionResponse", json::value_from(*v.function_response, o.storage()));
    if (v.executable_code)
        o.emplace("executableCode", json::value_from(*v.executable_code, o.storage()));
    if (v.code_execution_result)
        o.emplace("codeExecutionResult", json::value_from(*v.code_execution_result, o.storage()));
    put_extra(o, v.extra);
    out = std::move(o);
}

void tag_invoke(const json::value_from_tag&, json::value& out, const Content& v)
{
    json::object o(out.storage());
    json::array parts(o.storage());
    parts.reserve(v.parts.size());
    for (const Part& p : v.parts)
        parts.push_back(json::value_from(p, o.storage()));
    o.emplace("parts", std::move(parts));
    put_nonempty(o, "role", v.role);
    put_extra(o, v.extra);
    out = std::move(o);
}

// ---- JSON in ----------------------------------------------------------------------------------------

Blob tag_invoke(const json::value_to_tag<Blob>&, const json::value& v)
{
    FieldReader r(v, "inlineData");
    Blob b;
    b.mime_type = r.string("mimeType").value_or("");
    if (auto data = r.string("data")) {
        // Refuse oversized payloads before decoding them: 4 base64 characters carry 3 bytes, a last group of
        // n characters n - 1 bytes, and padding none.
        std::string_view text = *data;
        while (!text.empty() && text.back() == '=')
            text.remove_suffix(1);
        check_inline_size(text.size() / 4 * 3 + (text.size() % 4 > 1 ? text.size() % 4 - 1 : 0));
        b.data = json_fields::base64_decode(*data, "inlineData.data");
        check_inline_size(b.data.size());
    }
    b.display_name = r.string("displayName");
    b.extra = r.rest();
    return b;
}

FileData tag_invoke(const json::value_to_tag<FileData>&, const json::value& v)
{
    FieldReader r(v, "fileData");
    FileData f;
    f.mime_type = r.string("mimeType").value_or("");
    f.file_uri = r.string("fileUri").value_or("");
    f.display_name = r.string("displayName");
    f.extra = r.rest();
    return f;
}

FunctionCall tag_invoke(const json::value_to_tag<FunctionCall>&, const json::value& v)
{
    FieldReader r(v, "functionCall");
    FunctionCall c;
    c.id = r.string("id").value_or("");
    c.name = r.string("name").value_or("");
    c.args = r.object("args").value_or(json::object{});
    c.extra = r.rest();
    return c;
}

FunctionResponse tag_invoke(const json::value_to_tag<FunctionResponse>&, const json::value& v)
{
    FieldReader r(v, "functionResponse");
    FunctionResponse f;
    f.id = r.string("id").value_or("");
    f.name = r.string("name").value_or("");
    f.response = r.object("response").value_or(json::object{});
    f.extra = r.rest();
    return f;
}

ExecutableCode tag_invoke(const json::value_to_tag<ExecutableCode>&, const json::value& v)
{
    FieldReader r(v, "executableCode");
    ExecutableCode e;
    e.language = r.string("language").value_or("");
    e.code = r.string("code").value_or("");
    e.extra = r.rest();
    return e;
}

CodeExecutionResult tag_invoke(const json::value_to_tag<CodeExecutionResult>&, const json::value& v)
{
    FieldReader r(v, "codeExecutionResult");
    CodeExecutionResult c;
    c.outcome = r.string("outcome").value_or("");
    c.output = r.string("output").value_or("");
    c.extra = r.rest();
    return c;
}

Part tag_invoke(const json::value_to_tag<Part>&, const json::value& v)
{
    FieldReader r(v, "Part");
    Part p;
    p.text = r.string("text");
    p.thought = r.boolean("thought").value_or(false);
    if (auto sig = r.string("thoughtSignature"))
        p.thought_signature = json_fields::base64_decode(*sig, "Part.thoughtSignature");
    if (r.unread() == 0)
        return p;  // the usual text part: the rarer members below are absent
    if (auto* x = r.find("inlineData"))
        p.inline_data = json::value_to<Blob>(*x);
    if (auto* x = r.find("fileData"))
        p.file_data = json::value_to<FileData>(*x);
    if (auto* x = r.find("functionCall"))
        p.function_call = json::value_to<FunctionCall>(*x);
    if (auto* x = r.find("functionResponse"))
        p.function_response = json::value_to<FunctionResponse>(*x);
    if (auto* x = r.find("executableCode"))
        p.executable_code = json::value_to<ExecutableCode>(*x);
    if (auto* x = r.find("codeExecutionResult"))
        p.code_execution_result = json::value_to<CodeExecutionResult>(*x);
    p.extra = r.rest();
    return p;
}

Content tag_invoke(const json::value_to_tag<Content>&, const json::value& v)
{
    FieldReader r(v, "Content");
    Content c;
    c.role = r.string("role").value_or("");
    if (const json::array* parts = r.array("parts")) {
        check_part_count(parts->size(), "Content.parts");
        c.parts.reserve(parts->size());
        for (const json::value& p : *parts)
            c.parts.push_back(json::value_to<Part>(p));
    }
    c.extra = r.rest();
    return c;
}

}  // namespace adk
