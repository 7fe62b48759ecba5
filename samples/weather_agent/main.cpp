// A weather agent: an LlmAgent with a FunctionTool whose arguments are a described struct. By default it
// runs offline against adk::testing::ScriptedModel, which plays the model's part (a tool call, then a
// streamed answer). With ADK_MODEL set it asks a real model, chosen by id (adk::make_model):
//
//   build/release/samples/weather_agent "What is the weather in Paris?"
//   ADK_MODEL=gemini-2.5-flash GEMINI_API_KEY=... build/release/samples/weather_agent
//   ADK_MODEL=openai/gpt-4o-mini OPENAI_API_KEY=... build/release/samples/weather_agent
//   ADK_MODEL=gemini-2.5-flash GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:PORT ...   (tools/mock-llm)
#include <adk/adk.hpp>
#include <adk/providers/make_model.hpp>

#include "get_weather.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/serialize.hpp>

#include <cstdlib>
#include <iostream>

namespace asio = boost::asio;
namespace json = boost::json;

asio::awaitable<void> chat(std::string question)
{
    using adk::testing::ScriptedModel;
    std::shared_ptr<ScriptedModel> scripted;
    std::shared_ptr<adk::Model> model;
    if (const char* id = std::getenv("ADK_MODEL"); id && *id) {
        model = adk::make_model(id);
    } else {
        scripted = std::make_shared<ScriptedModel>(std::vector<ScriptedModel::Turn>{
            adk::LlmResponse::function_call("get_weather", {{"city", "Paris"}}),
            ScriptedModel::chunks({"It is ", "sunny and ", "22 degrees ", "in Paris."}),
        });
        model = scripted;
    }
    auto weather = samples::get_weather_tool();
    auto agent = adk::LlmAgent::builder("weather_agent")
                     .description("Answers questions about the weather.")
                     .model(model)
                     .instruction("You answer questions about the weather. The user last asked about "
                                  "{user:last_city?}. Use the get_weather tool.")
                     .tool(weather)
                     .output_key("last_answer")
                     .build();

    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::Runner runner({.app_name = "weather", .agent = agent, .session_service = sessions});
    adk::Session session = co_await sessions->create_session({"weather", "you"});
    adk::RunConfig config;
    config.streaming_mode = adk::StreamingMode::sse;

    std::cout << "you: " << question << "\n";
    auto events = co_await runner.run("you", session.id, adk::Content::user(question), config);
    bool streaming = false;
    while (auto ev = co_await events.next()) {
        if (ev->partial) {
            std::cout << (streaming ? "" : "weather_agent: ") << ev->text() << std::flush;
            streaming = true;
            continue;
        }
        for (const auto& call : ev->function_calls())
            std::cout << "[calls " << call.name << json::serialize(call.args) << "]\n";
        for (const auto& response : ev->function_responses())
            std::cout << "[" << response.name << " returned " << json::serialize(response.response) << "]\n";
        if (ev->is_final_response())
            std::cout << "\n";
    }
    auto stored = co_await sessions->get_session({"weather", "you", session.id});
    std::cout << "state: " << json::serialize(stored->state) << "\n";
    if (scripted)
        std::cout << "the model was asked " << scripted->requests().size()
                  << " times; its first system instruction:\n  " << scripted->requests().front().system_text() << "\n";
}

int main(int argc, char** argv)
{
    asio::io_context ioc;
    std::exception_ptr failure;
    asio::co_spawn(ioc, chat(argc > 1 ? argv[1] : "What is the weather in Paris?"),
                   [&](std::exception_ptr e) { failure = e; });
    ioc.run();
    try {
        if (failure)
            std::rethrow_exception(failure);
    } catch (const std::exception& e) {
        std::cerr << "weather_agent: " << e.what() << "\n";
        return 1;
    }
}
