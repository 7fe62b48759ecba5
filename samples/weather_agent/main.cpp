// A weather agent: an LlmAgent with a FunctionTool whose arguments are a described struct. By default it
// runs offline against adk::testing::ScriptedModel, which plays the model's part (a tool call, then a
// streamed answer). With ADK_MODEL set it asks a real model, chosen by id (adk::make_model):
//
//   build/release/samples/weather_agent "What is the weather in Paris?"
//   ADK_MODEL=gemini-2.5-flash GEMINI_API_KEY=... build/release/samples/weather_agent
//   ADK_MODEL=openai/gpt-4o-mini OPENAI_API_KEY=... build/release/samples/weather_agent
//   ADK_MODEL=gemini-2.5-flash GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:PORT ...   (tools/mock-llm)
//
// With --code the agent also runs the Python it writes, in a bubblewrap sandbox (adk::SandboxedCodeExecutor):
// the scripted model converts the temperature and writes a CSV, which is saved as an artifact.
//
//   build/release/samples/weather_agent --code "Paris in Fahrenheit, as a CSV?"
#include <adk/adk.hpp>
#include <adk/providers/make_model.hpp>
#include <adk/sandbox/sandboxed_code_executor.hpp>

#include "get_weather.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/serialize.hpp>

#include <cstdlib>
#include <iostream>

namespace asio = boost::asio;
namespace json = boost::json;

asio::awaitable<void> chat(std::string question, bool run_code)
{
    using adk::testing::ScriptedModel;
    std::shared_ptr<ScriptedModel> scripted;
    std::shared_ptr<adk::Model> model;
    if (const char* id = std::getenv("ADK_MODEL"); id && *id) {
        model = adk::make_model(id);
    } else {
        std::vector<ScriptedModel::Turn> turns{adk::LlmResponse::function_call("get_weather", {{"city", "Paris"}})};
        if (run_code)
            turns.emplace_back(adk::LlmResponse(adk::Content::model(
                "Converting:\n```python\n"
                "celsius = 22\n"
                "fahrenheit = celsius * 9 / 5 + 32\n"
                "with open('paris.csv', 'w') as f:\n"
                "    f.write('city,celsius,fahrenheit\\nParis,%d,%.1f\\n' % (celsius, fahrenheit))\n"
                "print(fahrenheit)\n"
                "```")));
        turns.push_back(run_code ? ScriptedModel::chunks({"It is ", "sunny and ", "71.6 degrees Fahrenheit ",
                                                          "in Paris; the table is in paris.csv."})
                                 : ScriptedModel::chunks({"It is ", "sunny and ", "22 degrees ", "in Paris."}));
        scripted = std::make_shared<ScriptedModel>(std::move(turns));
        model = scripted;
    }
    auto weather = samples::get_weather_tool();
    auto builder = adk::LlmAgent::builder("weather_agent");
    builder.description("Answers questions about the weather.")
        .model(model)
        .instruction("You answer questions about the weather. The user last asked about "
                     "{user:last_city?}. Use the get_weather tool.")
        .tool(weather)
        .output_key("last_answer");
    if (run_code)
        builder.code_executor(std::make_shared<adk::SandboxedCodeExecutor>());
    auto agent = builder.build();

    auto sessions = std::make_shared<adk::InMemorySessionService>();
    auto artifacts = std::make_shared<adk::InMemoryArtifactService>();
    adk::Runner runner(
        {.app_name = "weather", .agent = agent, .session_service = sessions, .artifact_service = artifacts});
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
        for (const auto& part : ev->content->parts) {
            if (part.executable_code)
                std::cout << "[runs code]\n" << part.executable_code->code << "\n";
            if (part.code_execution_result)
                std::cout << "[" << part.code_execution_result->outcome << "]\n"
                          << part.code_execution_result->output << "\n";
        }
        for (const auto& [name, version] : ev->actions.artifact_delta)
            std::cout << "[saved artifact " << name << ", version " << version << "]\n";
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
    const bool run_code = argc > 1 && std::string(argv[1]) == "--code";
    const int first = run_code ? 2 : 1;
    asio::co_spawn(ioc, chat(argc > first ? argv[first] : "What is the weather in Paris?", run_code),
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
