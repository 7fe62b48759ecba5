#include <adk/core/error.hpp>
#include <adk/tools/tool_confirmation.hpp>
#include <adk/tools/json_schema.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

namespace adk {

void tag_invoke(const json::value_from_tag&, json::value& out, const ToolConfirmation& v)
{
    json::object o;
    if (!v.hint.empty())
        o.emplace("hint", v.hint);
    o.emplace("confirmed", v.confirmed);
    if (!v.payload.is_null())
        o.emplace("payload", v.payload);
    out = std::move(o);
}

ToolConfirmation tag_invoke(const json::value_to_tag<ToolConfirmation>&, const json::value& v)
{
    const json::object* o = v.if_object();
    if (!o)
        throw Error(errc::invalid_argument, "a tool confirmation must be a JSON object {\"confirmed\": true|false, "
                                            "\"payload\": ...}");
    ToolConfirmation c;
    const json::value* confirmed = o->if_contains("confirmed");
    if (!confirmed || !confirmed->is_bool())
        throw Error(errc::invalid_argument, "a tool confirmation needs \"confirmed\": true or false");
    c.confirmed = confirmed->get_bool();
    if (const json::value* hint = o->if_contains("hint"); hint && !hint->is_null()) {
        if (!hint->is_string())
            throw Error(errc::invalid_argument, "a tool confirmation's \"hint\" must be a string");
        c.hint = std::string(hint->get_string());
    }
    if (const json::value* payload = o->if_contains("payload"))
        c.payload = *payload;
    return c;
}

std::string asked_about(const FunctionCall& question)
{
    const json::value* v = question.args.if_contains("functionCallId");
    if (const json::value* original = question.args.if_contains("originalFunctionCall"); original && original->is_object())
        v = original->get_object().if_contains("id");
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

json::value read_input_answer(const json::object& response, const json::value* response_schema)
{
    const json::object* schema =
        response_schema && response_schema->is_object() ? &response_schema->get_object() : nullptr;
    const json::value* type = schema ? schema->if_contains("type") : nullptr;
    const bool wants_object = type && type->is_string() && type->get_string() == "object";
    json::value answer = response;
    if (!wants_object && response.size() == 1 && response.contains("result"))
        answer = response.at("result");
    if (schema)
        if (std::optional<std::string> mismatch = schema_mismatch(*response_schema, answer))
            throw Error(errc::invalid_argument, "the answer does not fit the response_schema the question gave (" +
                                                    *mismatch + "): answer with a value that fits it, or wrap a bare "
                                                    "value as {\"result\": value}");
    return answer;
}

bool is_progress_update(const json::object& response)
{
    const json::value* status = response.if_contains("status");
    return status && status->is_string() && status->get_string() == "pending";
}

ToolConfirmation read_confirmation_answer(const json::object& response)
{
    if (response.size() == 1 && response.contains("response")) {
        const json::value& text = response.at("response");
        if (!text.is_string())
            throw Error(errc::invalid_argument, "an answer to adk_request_confirmation given as {\"response\": ...} "
                                                "must hold a JSON string");
        boost::system::error_code ec;
        json::value parsed = json::parse(text.get_string(), ec);
        if (ec)
            throw Error(errc::invalid_argument, "an answer to adk_request_confirmation holds a \"response\" that is "
                                                "not JSON (" + ec.message() + ")");
        return json::value_to<ToolConfirmation>(parsed);
    }
    return json::value_to<ToolConfirmation>(json::value(response));
}

}  // namespace adk
