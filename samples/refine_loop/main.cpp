// A loop that refines a draft until a critic is satisfied: a LoopAgent runs the writer, then the critic;
// the critic calls exit_loop when the draft is good, which ends the loop. Offline: ScriptedModel plays
// each agent's model.
//
//   build/release/samples/refine_loop
#include <adk/adk.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <iostream>

namespace asio = boost::asio;
using adk::LlmResponse;
using adk::testing::ScriptedModel;

asio::awaitable<void> refine()
{
    auto writer = adk::LlmAgent::builder("writer")
                      .model(std::make_shared<ScriptedModel>(std::vector<ScriptedModel::Turn>{
                          LlmResponse::text("Autumn leaves fall."),
                          LlmResponse::text("Red leaves drift and fall, / the cold wind hums a slow tune, / "
                                            "the year breathes out.")}))
                      .instruction("Write a haiku about autumn. Critique so far: {critique?}")
                      .output_key("draft")
                      .build();
    auto critic = adk::LlmAgent::builder("critic")
                      .model(std::make_shared<ScriptedModel>(std::vector<ScriptedModel::Turn>{
                          LlmResponse::text("Too short: a haiku has three lines."),
                          LlmResponse::function_call("exit_loop", {})}))
                      .instruction("Review this haiku: {draft}. If it is good, call exit_loop.")
                      .tool(adk::exit_loop_tool())
                      .output_key("critique")
                      .build();
    auto loop = std::make_shared<adk::LoopAgent>("refiner", "Writes until the critic is happy.",
                                                 std::vector<std::shared_ptr<adk::Agent>>{writer, critic},
                                                 /*max_iterations=*/5);

    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::Runner runner({.app_name = "poems", .agent = loop, .session_service = sessions});
    adk::Session session = co_await sessions->create_session({"poems", "you"});
    auto events = co_await runner.run("you", session.id, adk::Content::user("A haiku about autumn, please."));
    while (auto ev = co_await events.next()) {
        if (!ev->function_calls().empty())
            std::cout << ev->author << " calls " << ev->function_calls()[0].name << "\n";
        else if (ev->actions.escalate)
            std::cout << "(the loop ends)\n";
        else
            std::cout << ev->author << ": " << ev->text() << "\n";
    }
    auto stored = co_await sessions->get_session({"poems", "you", session.id});
    std::cout << "final draft: " << stored->state["draft"].as_string().c_str() << "\n";
}

int main()
{
    asio::io_context ioc;
    // An error ends the program with its message (std::terminate prints what() of the exception).
    asio::co_spawn(ioc, refine(), [](std::exception_ptr e) {
        if (e)
            std::rethrow_exception(e);
    });
    ioc.run();
}
