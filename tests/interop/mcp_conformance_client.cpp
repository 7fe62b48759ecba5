// The client that the official MCP conformance suite (@modelcontextprotocol/conformance) drives: an LlmAgent whose
// only tools are an McpToolset on the scenario's server (Streamable HTTP), run through the Runner as a user's
// agent is. The scripted model calls the tool the scenario expects; what the tool answered is printed.
//
//   mcp_conformance_client URL         (the suite appends the URL; MCP_CONFORMANCE_SCENARIO names the scenario)
//
// Exits 0 when the agent ran to its end and its tool call (if the scenario has one) got a result, 1 otherwise.
#include <adk/adk.hpp>
#include <adk/mcp/mcp_toolset.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/serialize.hpp>

#include <cstdlib>
#include <iostream>

namespace asio = boost::asio;
namespace json = boost::json;
namespace mcp = adk::mcp;

namespace {

// The tool a scenario's server offers and the arguments to call it with; none for the handshake alone.
std::optional<std::pair<std::string, json::object>> scenario_call(const std::string& scenario)
{
    using Call = std::pair<std::string, json::object>;
    if (scenario == "tools_call")
        return Call("add_numbers", json::object{{"a", 5}, {"b", 3}});
    if (scenario == "elicitation-sep1034-client-defaults")
        return Call("test_client_elicitation_defaults", json::object{});
    if (scenario == "sse-retry")
        return Call("test_reconnection", json::object{});
    return std::nullopt;
}

asio::awaitable<json::value> accept_with_defaults(const mcp::jsonrpc::Request&)
{
    // The defaults of the requested schema fill what is left out (McpToolsetOptions::on_elicitation).
    co_return json::object{{"action", "accept"}, {"content", json::object{}}};
}

asio::awaitable<int> run(std::string url, std::string scenario)
{
    const auto call = scenario_call(scenario);
    std::vector<adk::testing::ScriptedModel::Turn> turns;
    if (call)
        turns.emplace_back(adk::LlmResponse::function_call(call->first, call->second));
    turns.emplace_back(adk::LlmResponse::text("done"));

    mcp::McpToolsetOptions options{mcp::HttpServerParams(url)};
    options.timeout = std::chrono::seconds(20);
    options.on_elicitation = accept_with_defaults;
    auto toolset = mcp::McpToolset::create(options);
    auto model = std::make_shared<adk::testing::ScriptedModel>(std::move(turns));
    auto agent = adk::LlmAgent::builder("conformance").model(model).toolset(toolset).build();
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::Runner runner({.app_name = "conformance", .agent = agent, .session_service = sessions});
    co_await sessions->create_session({"conformance", "user", "s"});

    int status = 0;
    bool answered = !call;
    try {
        auto stream = co_await runner.run("user", "s", adk::Content::user("run the scenario " + scenario));
        while (auto event = co_await stream.next()) {
            if (event->error_message)
                std::cout << "error: " << *event->error_message << "\n";
            if (!event->content)
                continue;
            for (const adk::Part& p : event->content->parts) {
                if (p.function_response) {
                    const std::string response = json::serialize(p.function_response->response);
                    std::cout << "tool " << p.function_response->name << ": " << response << "\n";
                    answered = !p.function_response->response.contains("error");
                }
                if (p.text)
                    std::cout << "model: " << *p.text << "\n";
            }
        }
    } catch (const std::exception& e) {
        std::cout << "the run failed: " << e.what() << "\n";
        status = 1;
    }
    const std::size_t tools_seen = model->requests().empty() ? 0 : model->requests().front().tools.size();
    std::cout << "tools offered to the model: " << tools_seen << "\n";
    co_await runner.close();
    co_return status == 0 && answered ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc < 2) {
        std::cerr << "usage: mcp_conformance_client URL (MCP_CONFORMANCE_SCENARIO names the scenario)\n";
        return 2;
    }
    const char* scenario = std::getenv("MCP_CONFORMANCE_SCENARIO");
    asio::io_context ioc;
    int status = 1;
    asio::co_spawn(ioc, run(argv[argc - 1], scenario ? scenario : "initialize"), [&](std::exception_ptr e, int s) {
        status = e ? 1 : s;
        ioc.stop();  // whatever the transport left (nothing, once closed) does not hold the program
    });
    ioc.run();
    return status;
}
