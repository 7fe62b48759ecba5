// adk-cpp's side of the server benchmark (tools/bench/server.sh): the adk command line (adk::cli) serving one
// app, the agent of agent_bench's workload (a): an LlmAgent with get_weather, on Gemini's wire format (point
// GOOGLE_GEMINI_BASE_URL at mock-llm). As agent_bench does, its HTTP client keeps a connection per concurrent
// model call.
//   bench_server api_server --port P --session_service_uri memory://
#include <adk/adk.hpp>
#include <adk/cli/cli.hpp>
#include <adk/providers/gemini/gemini.hpp>

namespace asio = boost::asio;
namespace json = boost::json;

int main(int argc, char** argv)
{
    adk::gemini::GeminiOptions gemini;
    gemini.api_key = "bench";
    adk::net::HttpClientOptions http;
    http.max_idle_per_origin = 20000;
    gemini.http = std::make_shared<adk::net::HttpClient>(http);
    auto tool = adk::FunctionTool::create(
        "get_weather", "Returns the weather for a city.",
        json::object{{"type", "object"}, {"properties", {{"city", {{"type", "string"}}}}}, {"required", {"city"}}},
        [](adk::ToolContext&, json::object args) -> asio::awaitable<json::value> {
            co_return json::object{{"city", args["city"]}, {"sky", "sunny"}};
        });
    auto agent = adk::LlmAgent::builder("weather")
                     .model(adk::gemini::make_model(gemini))
                     .instruction("You answer questions about the weather. Use the get_weather tool.")
                     .tool(tool)
                     .build();
    return adk::cli::main(argc, argv, {{"weather", agent}});
}
