// The A2A server the @a2a-js/sdk clients talk to (tests/interop/run_a2a.sh): an ApiServer with adk::a2a mounted,
// serving four apps whose models are scripted (ScriptedModel), so that every answer is known:
//   weather  a call to get_weather, then "It is sunny in Paris." in chunks, for every task
//   bank     a long-running call (ask_for_approval) that waits for its client; the answer: "Approved: sent."
//   gated    a tool that waits until the file GATE_FILE exists, then "Through the gate." (a stream dropped and
//            subscribed again while it waits)
//   broken   a model that fails: the task FAILS with the model's error
//
//   a2a_interop_server GATE_FILE
//
// Prints "listening on http://127.0.0.1:PORT" once it serves; stops on SIGTERM or SIGINT.
#include <adk/a2a/server.hpp>
#include <adk/adk.hpp>
#include <adk/server/api_server.hpp>
#include <adk/sessions/in_memory_session_service.hpp>
#include <adk/testing/scripted_model.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>

#include <filesystem>
#include <iostream>

namespace asio = boost::asio;
namespace json = boost::json;
using adk::testing::ScriptedModel;

namespace {

constexpr int tasks_per_app = 50;  // more than the clients send

std::shared_ptr<adk::Agent> weather()
{
    auto tool = adk::FunctionTool::create(
        "get_weather", "Returns the weather in a city.",
        json::parse(R"({"type":"object","properties":{"city":{"type":"string"}}})"),
        [](adk::ToolContext&, json::object args) -> asio::awaitable<json::value> {
            co_return json::object{{"city", args["city"]}, {"sky", "sunny"}};
        });
    std::vector<ScriptedModel::Turn> turns;
    for (int i = 0; i < tasks_per_app; ++i) {
        turns.push_back(adk::LlmResponse::function_call("get_weather", json::object{{"city", "Paris"}}));
        turns.push_back(ScriptedModel::chunks({"It is ", "sunny ", "in Paris."}));
    }
    return adk::LlmAgent::builder("weather_agent")
        .description("Answers questions about the weather.")
        .model(std::make_shared<ScriptedModel>(std::move(turns)))
        .tool(tool)
        .build();
}

std::shared_ptr<adk::Agent> bank()
{
    auto approval = adk::FunctionTool::create(
        "ask_for_approval", "Asks a manager to approve a transfer; the answer comes later.",
        json::parse(R"({"type":"object","properties":{}})"),
        [](adk::ToolContext&, json::object) -> asio::awaitable<json::value> { co_return nullptr; },
        /*is_long_running=*/true);
    std::vector<ScriptedModel::Turn> turns;
    for (int i = 0; i < tasks_per_app; ++i) {
        turns.push_back(adk::LlmResponse::function_call("ask_for_approval", {}));
        turns.push_back(ScriptedModel::chunks({"Approved: ", "sent."}));
    }
    return adk::LlmAgent::builder("bank_agent")
        .description("Sends money once a manager approves.")
        .model(std::make_shared<ScriptedModel>(std::move(turns)))
        .tool(approval)
        .build();
}

std::shared_ptr<adk::Agent> gated(std::filesystem::path gate)
{
    auto tool = adk::FunctionTool::create(
        "wait_for_gate", "Waits for the gate to open.", json::parse(R"({"type":"object","properties":{}})"),
        [gate](adk::ToolContext&, json::object) -> asio::awaitable<json::value> {
            asio::steady_timer timer(co_await asio::this_coro::executor);
            while (!std::filesystem::exists(gate)) {
                timer.expires_after(std::chrono::milliseconds(10));
                auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
                if (ec)
                    throw adk::Error(adk::errc::cancelled, "the wait for the gate was cancelled");
            }
            co_return json::object{{"opened", true}};
        });
    std::vector<ScriptedModel::Turn> turns;
    for (int i = 0; i < tasks_per_app; ++i) {
        turns.push_back(adk::LlmResponse::function_call("wait_for_gate", json::object{}));
        turns.push_back(ScriptedModel::chunks({"Through ", "the gate."}));
    }
    return adk::LlmAgent::builder("gated_agent")
        .description("Answers once a gate opens.")
        .model(std::make_shared<ScriptedModel>(std::move(turns)))
        .tool(tool)
        .build();
}

std::shared_ptr<adk::Agent> broken()
{
    std::vector<ScriptedModel::Turn> turns;
    for (int i = 0; i < tasks_per_app; ++i)
        turns.push_back(ScriptedModel::Turn::raise(adk::Error(adk::errc::unavailable, "the model is overloaded")));
    return adk::LlmAgent::builder("broken_agent")
        .description("Fails.")
        .model(std::make_shared<ScriptedModel>(std::move(turns)))
        .build();
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc != 2) {
        std::cerr << "usage: a2a_interop_server GATE_FILE\n";
        return 2;
    }
    asio::io_context ioc(1);
    adk::server::ApiServerOptions options;
    options.session_service = std::make_shared<adk::InMemorySessionService>();
    options.http.port = 0;
    adk::server::ApiServer server(ioc.get_executor(),
                                  {{"weather", weather()}, {"bank", bank()}, {"gated", gated(argv[1])},
                                   {"broken", broken()}},
                                  options);
    adk::a2a::Server a2a(server);
    a2a.mount();
    server.start();
    std::cout << "listening on " << server.base_url() << std::endl;
    asio::signal_set signals(ioc, SIGTERM, SIGINT);
    signals.async_wait([&](boost::system::error_code, int) {
        server.stop();
        ioc.stop();
    });
    ioc.run();
    return 0;
}
