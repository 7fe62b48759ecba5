// A research pipeline: two researchers run at once (a ParallelAgent, each in its own branch), each
// storing its notes in state with output_key; then a writer (the next step of a SequentialAgent) reads
// both notes through its instruction template. Offline: ScriptedModel plays each agent's model.
//
//   build/release/samples/research_pipeline
#include <adk/adk.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <iostream>
#include <thread>

namespace asio = boost::asio;
using adk::LlmResponse;
using adk::testing::ScriptedModel;

std::shared_ptr<adk::LlmAgent> researcher(std::string name, std::string topic, std::string notes)
{
    return adk::LlmAgent::builder(std::move(name))
        .description("Researches " + topic + ".")
        .model(std::make_shared<ScriptedModel>(std::vector<ScriptedModel::Turn>{LlmResponse::text(notes)}))
        .instruction("Research " + topic + " for the user's trip.")
        .output_key(topic + "_notes")
        .build();
}

asio::awaitable<void> plan()
{
    auto research = std::make_shared<adk::ParallelAgent>(
        "research", "Researches weather and events at once.",
        std::vector<std::shared_ptr<adk::Agent>>{
            researcher("weather_researcher", "weather", "Sunny, 24C all week."),
            researcher("events_researcher", "events", "Jazz festival on Saturday.")});
    auto writer_model = std::make_shared<ScriptedModel>(std::vector<ScriptedModel::Turn>{
        LlmResponse::text("Pack light: it will be sunny, and catch the jazz festival on Saturday.")});
    auto writer = adk::LlmAgent::builder("writer")
                      .model(writer_model)
                      .instruction("Write a short trip brief from these notes.\nWeather: {weather_notes}\n"
                                   "Events: {events_notes}")
                      .build();
    auto pipeline = std::make_shared<adk::SequentialAgent>(
        "trip_planner", "Researches, then writes.", std::vector<std::shared_ptr<adk::Agent>>{research, writer});

    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::Runner runner({.app_name = "trips", .agent = pipeline, .session_service = sessions});
    adk::Session session = co_await sessions->create_session({"trips", "you"});
    auto events = co_await runner.run("you", session.id, adk::Content::user("Plan my weekend in Montreal."));
    while (auto ev = co_await events.next())
        std::cout << ev->author << (ev->branch.empty() ? "" : " [" + ev->branch + "]") << ": " << ev->text() << "\n";
    std::cout << "the writer was told:\n" << writer_model->requests().at(0).system_text().substr(0, 90) << "\n";
}

int main()
{
    asio::io_context ioc;
    // An error ends the program with its message (std::terminate prints what() of the exception).
    asio::co_spawn(ioc, plan(), [](std::exception_ptr e) {
        if (e)
            std::rethrow_exception(e);
    });
    std::thread helper([&] { ioc.run(); });  // two threads: the research branches really run at once
    ioc.run();
    helper.join();
}
