#include <adk/core/error.hpp>
#include <adk/core/log.hpp>
#include <adk/detail/provider_json.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>

namespace adk {

namespace detail::provider {

LlmResponse http_error_response(unsigned status, std::string_view body)
{
    constexpr std::size_t shown = 500;
    std::string text(body.substr(0, shown));
    if (body.size() > shown)
        text += "...";
    return LlmResponse::error("HTTP_" + std::to_string(status),
                              "the provider answered HTTP " + std::to_string(status) +
                                  (text.empty() ? std::string(" with no body") : ": " + text));
}

boost::json::value parse_json(std::string_view text, std::string_view provider, std::string_view what,
                              boost::json::storage_ptr storage)
{
    boost::system::error_code ec;
    boost::json::value v = boost::json::parse(text, ec, std::move(storage));
    if (ec)
        throw Error(errc::bad_response, std::string(provider) + " sent " + std::string(what) + " that is not JSON (" +
                                            ec.message() + "): " + std::string(text.substr(0, 200)));
    return v;
}

std::optional<boost::json::object> error_object(std::string_view body)
{
    boost::system::error_code ec;
    boost::json::value v = boost::json::parse(body, ec);
    if (ec || !v.is_object() || !v.get_object().contains("error"))
        return std::nullopt;
    return std::move(v.get_object());
}

std::string string_at(const boost::json::object& o, std::string_view key)
{
    const boost::json::value* v = o.if_contains(key);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

const boost::json::object& object_of(const boost::json::value& v, std::string_view provider, std::string_view what)
{
    if (!v.is_object())
        throw Error(errc::bad_response, std::string(provider) + " sent " + std::string(what) +
                                            " that is not a JSON object: " +
                                            boost::json::serialize(v).substr(0, 200));
    return v.get_object();
}

std::optional<std::int64_t> count_at(const boost::json::object& o, std::string_view key)
{
    const boost::json::value* v = o.if_contains(key);
    if (!v)
        return std::nullopt;
    if (v->is_int64() && v->get_int64() >= 0)
        return v->get_int64();
    if (v->is_uint64() && v->get_uint64() <= static_cast<std::uint64_t>(INT64_MAX))
        return static_cast<std::int64_t>(v->get_uint64());
    if (v->is_double() && v->get_double() >= 0 && v->get_double() < 9.0e18 &&
        std::trunc(v->get_double()) == v->get_double())
        return static_cast<std::int64_t>(v->get_double());
    return std::nullopt;
}

std::string environment(const char* name)
{
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
}

void check_answer_size(std::size_t size, std::size_t limit, std::string_view provider, std::string_view what)
{
    if (size > limit)
        throw Error(errc::bad_response, std::string(provider) + " sent " + std::string(what) + " over " +
                                            std::to_string(limit) +
                                            " bytes in one answer (ResponseLimits::max_answer_bytes): the stream is "
                                            "broken; raise the limit if it is right");
}

FunctionCall function_call(std::string id, std::string name, std::string_view arguments)
{
    boost::json::object args;
    if (arguments.find_first_not_of(" \t\r\n") != std::string_view::npos) {
        boost::system::error_code ec;
        boost::json::value v = boost::json::parse(arguments, ec);
        if (ec || !v.is_object())
            throw Error(errc::bad_response, "the arguments of the call to '" + name +
                                                "' are not a JSON object: " + std::string(arguments.substr(0, 200)));
        args = std::move(v.get_object());
    }
    return FunctionCall(std::move(id), std::move(name), std::move(args));
}

LlmResponse chunk(Part part)
{
    LlmResponse r(Content("model", {std::move(part)}));
    r.partial = true;
    return r;
}

void warn_without_code_execution(const LlmRequest& request, std::string_view provider)
{
    bool carries_code = request.code_execution;
    for (const Content& c : request.contents)
        for (const Part& p : c.parts)
            carries_code = carries_code || p.executable_code || p.code_execution_result;
    if (!carries_code)
        return;
    // One flag per provider name: a handful of providers, named by literals.
    static std::atomic<bool> warned_openai{false}, warned_anthropic{false}, warned_other{false};
    std::atomic<bool>& warned = provider.find("OpenAI") != std::string_view::npos      ? warned_openai
                                : provider.find("Anthropic") != std::string_view::npos ? warned_anthropic
                                                                                       : warned_other;
    if (warned.exchange(true))
        return;
    log(LogLevel::warning,
        std::string(provider) + " has no code execution of its own: the request's code execution tool "
                                "(BuiltInCodeExecutor) and its executableCode and codeExecutionResult parts are left "
                                "out. Give the agent a SandboxedCodeExecutor to run the model's code here instead");
}

}  // namespace detail::provider

}  // namespace adk
