#include <adk/models/llm_request.hpp>
#include <adk/models/llm_response.hpp>
#include <adk/tools/tool.hpp>

#include <utility>

namespace adk {

FunctionDeclaration::FunctionDeclaration(std::string name_, std::string description_, json::value parameters_)
    : name(std::move(name_)), description(std::move(description_)), parameters(std::move(parameters_))
{
}

Tool* LlmRequest::find_tool(std::string_view name) const
{
    for (const auto& tool : callable_tools)
        if (tool && tool->name() == name)
            return tool.get();
    return nullptr;
}

void LlmRequest::append_instruction(const std::string& text)
{
    if (text.empty())
        return;
    if (!system_instruction)
        system_instruction.emplace("", std::vector<Part>{});
    system_instruction->parts.push_back(Part::from_text(text));
}

std::string LlmRequest::system_text() const
{
    std::string out;
    if (!system_instruction)
        return out;
    for (const Part& p : system_instruction->parts) {
        if (!p.text)
            continue;
        if (!out.empty())
            out += "\n\n";
        out += *p.text;
    }
    return out;
}

LlmResponse::LlmResponse(Content content_) : content(std::move(content_)) {}

LlmResponse LlmResponse::text(std::string text)
{
    return LlmResponse(Content::model(std::move(text)));
}

LlmResponse LlmResponse::function_call(std::string name, json::object args, std::string id)
{
    std::vector<FunctionCall> calls;
    calls.emplace_back(std::move(id), std::move(name), std::move(args));
    return function_calls(std::move(calls));
}

LlmResponse LlmResponse::function_calls(std::vector<FunctionCall> calls)
{
    Content c("model", {});
    for (auto& call : calls) {
        Part p;
        p.function_call = std::move(call);
        c.parts.push_back(std::move(p));
    }
    return LlmResponse(std::move(c));
}

LlmResponse LlmResponse::error(std::string code, std::string message)
{
    LlmResponse r;
    r.error_code = std::move(code);
    r.error_message = std::move(message);
    return r;
}

}  // namespace adk
