// The planner half of the A2A travel sample: a travel planner whose flights sub-agent is a remote A2A agent
// (adk::a2a::RemoteA2aAgent, by its card's URL). The planner hands the question to it; the remote's answer streams
// back as the flight agent's events. Offline by default (the planner's model is scripted: it transfers); with
// ADK_MODEL set a real model decides.
//
//   build/release/samples/a2a_flight_agent 8001 &
//   build/release/samples/a2a_travel_planner http://127.0.0.1:8001/a2a/flight_agent "A flight to Lisbon on the 18th?"
#include <adk/a2a/remote_agent.hpp>
#include <adk/adk.hpp>
#include <adk/providers/make_model.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/serialize.hpp>

#include <cstdlib>
#include <iostream>

namespace asio = boost::asio;
namespace json = boost::json;

asio::awaitable<void> plan(std::string flight_agent_url, std::string question)
{
    std::shared_ptr<adk::Model> model;
    if (const char* id = std::getenv("ADK_MODEL"); id && *id)
        model = adk::make_model(id);
    else
        model = std::make_shared<adk::testing::ScriptedModel>(std::vector<adk::testing::ScriptedModel::Turn>{
            adk::LlmResponse::function_call("transfer_to_agent", {{"agent_name", "flight_agent"}})});
    auto flights = adk::a2a::RemoteA2aAgent::create(
        {.name = "flight_agent", .description = "Finds flights (a remote agent, over A2A).", .card_url = flight_agent_url});
    auto planner = adk::LlmAgent::builder("travel_planner")
                       .description("Plans trips.")
                       .instruction("You plan trips. Hand questions about flights to flight_agent.")
                       .model(model)
                       .sub_agent(flights)
                       .build();

    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::Runner runner({.app_name = "travel", .agent = planner, .session_service = sessions});
    adk::CreateSessionRequest create("travel", "you");
    adk::Session session = co_await sessions->create_session(std::move(create));
    adk::RunConfig config;
    config.streaming_mode = adk::StreamingMode::sse;
    std::cout << "you: " << question << "\n";
    adk::RunRequest request("you", session.id, adk::Content::user(question));
    request.run_config = config;
    auto events = co_await runner.run(std::move(request));
    bool streaming = false;
    while (auto ev = co_await events.next()) {
        if (ev->partial) {
            std::cout << (streaming ? "" : ev->author + ": ") << ev->text() << std::flush;
            streaming = true;
            continue;
        }
        if (ev->actions.transfer_to_agent)
            std::cout << "(" << ev->author << " hands over to " << *ev->actions.transfer_to_agent << ")\n";
        if (ev->author == "flight_agent")
            for (const auto& call : ev->function_calls())
                std::cout << "[the remote calls " << call.name << json::serialize(call.args) << "]\n";
        if (ev->error_code)
            std::cout << "[the remote failed: " << ev->error_message.value_or(*ev->error_code) << "]\n";
        if (ev->is_final_response() && ev->content && !ev->partial && streaming) {
            const json::value* task = ev->custom_metadata.if_contains("a2a:task_id");
            std::cout << "\n[remote task " << (task ? json::serialize(*task) : "?") << "]\n";
            streaming = false;
        }
    }
}

int main(int argc, char** argv)
{
    if (argc < 2) {
        std::cerr << "usage: a2a_travel_planner FLIGHT_AGENT_URL [QUESTION]\n";
        return 2;
    }
    asio::io_context ioc;
    std::exception_ptr failure;
    asio::co_spawn(ioc, plan(argv[1], argc > 2 ? argv[2] : "A flight from Paris to Lisbon on 18 December?"),
                   [&](std::exception_ptr e) { failure = e; });
    ioc.run();
    try {
        if (failure)
            std::rethrow_exception(failure);
    } catch (const std::exception& e) {
        std::cerr << "travel_planner: " << e.what() << "\n";
        return 1;
    }
}
