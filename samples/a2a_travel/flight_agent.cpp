// The flight half of the A2A travel sample: a flight agent (an LlmAgent with a find_flights tool) served over A2A
// by its own process. Offline by default (adk::testing::ScriptedModel plays the model: a call, then a streamed
// answer, for each request); with ADK_MODEL set it asks a real model (adk::make_model).
//
//   build/release/samples/a2a_flight_agent 8001
//   # serves http://127.0.0.1:8001/a2a/flight_agent (card at .../.well-known/agent-card.json)
//
// The other half, a2a_travel_planner, hands flights to it. Stops on Ctrl-C.
#include <adk/a2a/server.hpp>
#include <adk/adk.hpp>
#include <adk/providers/make_model.hpp>
#include <adk/server/api_server.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/json/parse.hpp>

#include <cstdlib>
#include <iostream>

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

std::shared_ptr<adk::Model> model()
{
    if (const char* id = std::getenv("ADK_MODEL"); id && *id)
        return adk::make_model(id);
    using adk::testing::ScriptedModel;
    std::vector<ScriptedModel::Turn> turns;
    for (int i = 0; i < 100; ++i) {
        turns.push_back(adk::LlmResponse::function_call(
            "find_flights", {{"from", "Paris"}, {"to", "Lisbon"}, {"date", "2026-12-18"}}));
        turns.push_back(ScriptedModel::chunks({"TP441 leaves Paris ", "at 9:05 and lands in Lisbon ", "at 10:50, ",
                                               "for 129 euros."}));
    }
    return std::make_shared<ScriptedModel>(std::move(turns));
}

std::shared_ptr<adk::Agent> flight_agent()
{
    auto find_flights = adk::FunctionTool::create(
        "find_flights", "Finds flights between two cities on a date.",
        json::parse(R"({"type": "object",
                        "properties": {"from": {"type": "string"}, "to": {"type": "string"},
                                       "date": {"type": "string", "description": "YYYY-MM-DD"}},
                        "required": ["from", "to", "date"]})"),
        [](adk::ToolContext&, json::object args) -> asio::awaitable<json::value> {
            co_return json::object{{"flights", json::array{json::object{{"number", "TP441"},
                                                                        {"from", args["from"]},
                                                                        {"to", args["to"]},
                                                                        {"date", args["date"]},
                                                                        {"departs", "09:05"},
                                                                        {"arrives", "10:50"},
                                                                        {"price_eur", 129}}}}};
        });
    return adk::LlmAgent::builder("flight_agent")
        .description("Finds flights between cities and says what they cost.")
        .instruction("You find flights with find_flights and answer with the best one.")
        .model(model())
        .tool(find_flights)
        .build();
}

}  // namespace

int main(int argc, char** argv)
{
    try {
        asio::io_context ioc(1);
        adk::server::ApiServerOptions options;
        options.http.port = static_cast<unsigned short>(argc > 1 ? std::atoi(argv[1]) : 8001);
        options.session_service = std::make_shared<adk::InMemorySessionService>();
        adk::server::ApiServer server(ioc.get_executor(), {{"flight_agent", flight_agent()}}, options);
        adk::a2a::Server a2a(server);
        a2a.mount();
        server.start();
        std::cout << "flight_agent: serving over A2A at " << server.base_url() << "/a2a/flight_agent" << std::endl;
        asio::signal_set signals(ioc, SIGINT, SIGTERM);
        signals.async_wait([&](boost::system::error_code, int) {
            server.stop();
            ioc.stop();
        });
        ioc.run();
    } catch (const std::exception& e) {
        std::cerr << "flight_agent: " << e.what() << "\n";
        return 1;
    }
}
