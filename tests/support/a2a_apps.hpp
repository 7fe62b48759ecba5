// Apps whose models are scripted (ScriptedModel), so that every answer is known: what the A2A tests serve, in
// process (a2a_remote_agent_test) and to the official SDK (interop/a2a_interop_server).
//   weather  a call to get_weather, then "It is sunny in Paris." in chunks, for each task
//   bank     a long-running call (ask_for_approval) that waits for its client; the answer: "Approved: sent."
//   gated    a tool that waits for `gate` (a coroutine the test ends), then "Through the gate."
//   broken   a model that fails ("the model is overloaded"): the task fails
//   vault    a tool that needs the person's confirmation (open_vault), then "The vault is open."
#pragma once

#include <adk/adk.hpp>
#include <adk/testing/scripted_model.hpp>

#include <boost/json/parse.hpp>

#include <functional>

namespace adk::test::a2a_apps {

namespace json = boost::json;
using adk::testing::ScriptedModel;

inline std::shared_ptr<adk::Agent> weather(int tasks)
{
    auto tool = adk::FunctionTool::create(
        "get_weather", "Returns the weather in a city.",
        json::parse(R"({"type":"object","properties":{"city":{"type":"string"}}})"),
        [](adk::ToolContext&, json::object args) -> asio::awaitable<json::value> {
            co_return json::object{{"city", args["city"]}, {"sky", "sunny"}};
        });
    std::vector<ScriptedModel::Turn> turns;
    for (int i = 0; i < tasks; ++i) {
        turns.push_back(adk::LlmResponse::function_call("get_weather", json::object{{"city", "Paris"}}));
        turns.push_back(ScriptedModel::chunks({"It is ", "sunny ", "in Paris."}));
    }
    return adk::LlmAgent::builder("weather_agent")
        .description("Answers questions about the weather.")
        .model(std::make_shared<ScriptedModel>(std::move(turns)))
        .tool(tool)
        .build();
}

inline std::shared_ptr<adk::Agent> bank(int tasks)
{
    auto approval = adk::FunctionTool::create(
        "ask_for_approval", "Asks a manager to approve a transfer; the answer comes later.",
        json::parse(R"({"type":"object","properties":{}})"),
        [](adk::ToolContext&, json::object) -> asio::awaitable<json::value> { co_return nullptr; },
        /*is_long_running=*/true);
    std::vector<ScriptedModel::Turn> turns;
    for (int i = 0; i < tasks; ++i) {
        turns.push_back(adk::LlmResponse::function_call("ask_for_approval", {}));
        turns.push_back(ScriptedModel::chunks({"Approved: ", "sent."}));
    }
    return adk::LlmAgent::builder("bank_agent")
        .description("Sends money once a manager approves.")
        .model(std::make_shared<ScriptedModel>(std::move(turns)))
        .tool(approval)
        .build();
}

inline std::shared_ptr<adk::Agent> gated(int tasks, std::function<asio::awaitable<void>()> gate)
{
    auto tool = adk::FunctionTool::create(
        "wait_for_gate", "Waits for the gate to open.", json::parse(R"({"type":"object","properties":{}})"),
        [gate](adk::ToolContext&, json::object) -> asio::awaitable<json::value> {
            co_await gate();
            co_return json::object{{"opened", true}};
        });
    std::vector<ScriptedModel::Turn> turns;
    for (int i = 0; i < tasks; ++i) {
        turns.push_back(adk::LlmResponse::function_call("wait_for_gate", json::object{}));
        turns.push_back(ScriptedModel::chunks({"Through ", "the gate."}));
    }
    return adk::LlmAgent::builder("gated_agent")
        .description("Answers once a gate opens.")
        .model(std::make_shared<ScriptedModel>(std::move(turns)))
        .tool(tool)
        .build();
}

inline std::shared_ptr<adk::Agent> broken(int tasks)
{
    std::vector<ScriptedModel::Turn> turns;
    for (int i = 0; i < tasks; ++i)
        turns.push_back(ScriptedModel::Turn::raise(adk::Error(adk::errc::unavailable, "the model is overloaded")));
    return adk::LlmAgent::builder("broken_agent")
        .description("Fails.")
        .model(std::make_shared<ScriptedModel>(std::move(turns)))
        .build();
}

inline std::shared_ptr<adk::Agent> vault(int tasks)
{
    auto tool = adk::FunctionTool::create(
        "open_vault", "Opens the vault, once a person confirms.", json::parse(R"({"type":"object","properties":{}})"),
        [](adk::ToolContext&, json::object) -> asio::awaitable<json::value> { co_return json::object{{"open", true}}; });
    tool->set_require_confirmation(true);
    std::vector<ScriptedModel::Turn> turns;
    for (int i = 0; i < tasks; ++i) {
        turns.push_back(adk::LlmResponse::function_call("open_vault", json::object{}));
        turns.push_back(ScriptedModel::chunks({"The vault ", "is open."}));
    }
    return adk::LlmAgent::builder("vault_agent")
        .description("Opens the vault when a person confirms.")
        .model(std::make_shared<ScriptedModel>(std::move(turns)))
        .tool(tool)
        .build();
}

}  // namespace adk::test::a2a_apps
