// A coordinator that hands questions to specialists with transfer_to_agent. The second message goes
// straight to the specialist that answered last, as ADK's Runner does. Offline: ScriptedModel plays
// each agent's model.
//
//   build/release/samples/coordinator
#include <adk/adk.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <iostream>

namespace asio = boost::asio;
using adk::LlmResponse;
using adk::testing::ScriptedModel;

asio::awaitable<void> chat()
{
    auto billing = adk::LlmAgent::builder("billing")
                       .description("Answers questions about invoices and payments.")
                       .model(std::make_shared<ScriptedModel>(std::vector<ScriptedModel::Turn>{
                           LlmResponse::text("Invoice 42 was paid on 3 November."),
                           LlmResponse::text("You are welcome. Anything else about billing?")}))
                       .build();
    auto tech = adk::LlmAgent::builder("tech_support")
                    .description("Fixes problems with the product.")
                    .model(std::make_shared<ScriptedModel>(std::vector<ScriptedModel::Turn>{}))
                    .build();
    auto coordinator = adk::LlmAgent::builder("coordinator")
                           .description("Sends each question to the right specialist.")
                           .model(std::make_shared<ScriptedModel>(std::vector<ScriptedModel::Turn>{
                               LlmResponse::function_call("transfer_to_agent", {{"agent_name", "billing"}})}))
                           .instruction("Route the user's question to a specialist.")
                           .sub_agent(billing)
                           .sub_agent(tech)
                           .build();

    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::Runner runner({.app_name = "helpdesk", .agent = coordinator, .session_service = sessions});
    adk::Session session = co_await sessions->create_session({"helpdesk", "you"});
    for (std::string question : {"Was invoice 42 paid?", "Thanks!"}) {
        std::cout << "you: " << question << "\n";
        auto events = co_await runner.run("you", session.id, adk::Content::user(question));
        while (auto ev = co_await events.next()) {
            if (ev->actions.transfer_to_agent)
                std::cout << "  (" << ev->author << " transfers to " << *ev->actions.transfer_to_agent << ")\n";
            else if (ev->is_final_response())
                std::cout << ev->author << ": " << ev->text() << "\n";
        }
    }
}

int main()
{
    asio::io_context ioc;
    // An error ends the program with its message (std::terminate prints what() of the exception).
    asio::co_spawn(ioc, chat(), [](std::exception_ptr e) {
        if (e)
            std::rethrow_exception(e);
    });
    ioc.run();
}
