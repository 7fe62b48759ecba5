#include <adk/providers/make_model.hpp>

#include <adk/core/error.hpp>
#include <adk/detail/provider_json.hpp>
#include <adk/providers/anthropic/anthropic.hpp>
#include <adk/providers/gemini/gemini.hpp>
#include <adk/providers/openai/openai.hpp>

#include <cstdlib>
#include <string>

namespace adk {

namespace provider = detail::provider;
namespace {

using provider::environment;

std::shared_ptr<Model> openai_compatible(std::string model, std::string base_url, const char* key_variable,
                                         std::shared_ptr<net::HttpClient> http)
{
    openai::OpenAIOptions o;
    o.model = std::move(model);
    o.base_url = std::move(base_url);
    o.http = std::move(http);
    if (key_variable) {
        o.api_key = environment(key_variable);
        if (o.api_key.empty())
            throw Error(errc::invalid_argument, std::string("set ") + key_variable + " to use " + o.base_url);
    } else {
        o.require_key = false;
    }
    return openai::make_model(std::move(o));
}

std::string ollama_base_url()
{
    std::string host = environment("OLLAMA_HOST");
    if (host.empty())
        host = "http://localhost:11434";
    if (host.find("://") == std::string::npos)
        host = "http://" + host;
    if (host.rfind("http://0.0.0.0", 0) == 0)  // the server's listen address; clients use loopback
        host.replace(7, 7, "127.0.0.1");
    return host + "/v1";
}

}  // namespace

std::shared_ptr<Model> make_model(std::string_view id, std::shared_ptr<net::HttpClient> http)
{
    const auto slash = id.find('/');
    const std::string prefix(slash == std::string_view::npos ? std::string_view{} : id.substr(0, slash));
    const std::string rest(slash == std::string_view::npos ? id : id.substr(slash + 1));
    if (!rest.empty()) {
        if (prefix == "gemini" || prefix == "google" || (prefix.empty() && rest.rfind("gemini", 0) == 0) ||
            (prefix == "models" && rest.rfind("gemini", 0) == 0)) {
            gemini::GeminiOptions o;
            o.model = rest;
            o.http = std::move(http);
            return gemini::make_model(std::move(o));
        }
        if (prefix == "openai" || (prefix.empty() && (rest.rfind("gpt-", 0) == 0 || rest.rfind("o1", 0) == 0 ||
                                                      rest.rfind("o3", 0) == 0 || rest.rfind("o4", 0) == 0))) {
            openai::OpenAIOptions o;
            o.model = rest;
            o.http = std::move(http);
            return openai::make_model(std::move(o));
        }
        if (prefix == "anthropic" || (prefix.empty() && rest.rfind("claude", 0) == 0)) {
            anthropic::AnthropicOptions o;
            o.model = rest;
            o.http = std::move(http);
            return anthropic::make_model(std::move(o));
        }
        if (prefix == "ollama" || prefix == "ollama_chat")
            return openai_compatible(rest, ollama_base_url(), nullptr, std::move(http));
        if (prefix == "openrouter")
            return openai_compatible(rest, "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", std::move(http));
        if (prefix == "groq")
            return openai_compatible(rest, "https://api.groq.com/openai/v1", "GROQ_API_KEY", std::move(http));
        if (prefix == "deepseek")
            return openai_compatible(rest, "https://api.deepseek.com", "DEEPSEEK_API_KEY", std::move(http));
    }
    throw Error(errc::invalid_argument,
                "no provider for the model id '" + std::string(id) +
                    "': write gemini-<model>, openai/<model>, anthropic/<model>, ollama/<model>, "
                    "openrouter/<model>, groq/<model> or deepseek/<model>");
}

}  // namespace adk
