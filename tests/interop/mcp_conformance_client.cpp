// The client that the official MCP conformance suite (@modelcontextprotocol/conformance) drives: an LlmAgent whose
// only tools are an McpToolset on the scenario's server (Streamable HTTP), run through the Runner as a user's
// agent is. The scripted model calls the tool the scenario expects; what the tool answered is printed.
//
//   mcp_conformance_client URL         (the suite appends the URL; MCP_CONFORMANCE_SCENARIO names the scenario)
//
// Exits 0 when the agent ran to its end and its tool call (if the scenario has one) got a result, 1 otherwise.
//
// OAuth (the auth/ scenarios): the person's step is a program's here, as OAuthOptions::authorize allows: the
// authorization URL is fetched, and the redirect it answers with is where the browser would have gone. A client
// the scenario registered beforehand comes in MCP_CONFORMANCE_CONTEXT ({"client_id", "client_secret"}).
#include <adk/adk.hpp>
#include <adk/mcp/mcp_toolset.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
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
    if (scenario.starts_with("auth/"))
        return Call("test-tool", json::object{});
    return std::nullopt;
}

asio::awaitable<json::value> accept_with_defaults(const mcp::jsonrpc::Request&)
{
    // The defaults of the requested schema fill what is left out (McpToolsetOptions::on_elicitation).
    co_return json::object{{"action", "accept"}, {"content", json::object{}}};
}

// Follows the authorization URL as a browser would, to the redirect it answers with.
asio::awaitable<std::string> follow_authorization(std::string url)
{
    static adk::net::HttpClient http;
    adk::net::HttpRequest req("GET", url);
    adk::net::HttpResponse res = co_await http.send(std::move(req));
    const std::string location(res.header("location"));
    (void)co_await res.read_all();
    if (res.status() / 100 != 3 || location.empty())
        throw adk::Error(adk::errc::bad_response, "the authorization endpoint answered HTTP " +
                                                      std::to_string(res.status()) + " without a redirect");
    std::cout << "authorized: redirected to " << location.substr(0, location.find('?')) << "\n";
    co_return location;
}

mcp::OAuthOptions oauth_options()
{
    mcp::OAuthOptions oauth;
    oauth.authorize = follow_authorization;
    oauth.client_metadata_url = "https://conformance-test.local/client-metadata.json";
    oauth.redirect_uri = "http://localhost:3000/callback";
    if (const char* context = std::getenv("MCP_CONFORMANCE_CONTEXT")) {
        boost::system::error_code ec;
        json::value v = json::parse(context, ec);
        if (!ec && v.is_object()) {
            if (const json::value* id = v.get_object().if_contains("client_id"); id && id->is_string())
                oauth.client_id = std::string(id->get_string());
            if (const json::value* secret = v.get_object().if_contains("client_secret"); secret && secret->is_string())
                oauth.client_secret = std::string(secret->get_string());
        }
    }
    return oauth;
}

asio::awaitable<int> run(std::string url, std::string scenario)
{
    const auto call = scenario_call(scenario);
    std::vector<adk::testing::ScriptedModel::Turn> turns;
    if (call)
        turns.emplace_back(adk::LlmResponse::function_call(call->first, call->second));
    turns.emplace_back(adk::LlmResponse::text("done"));

    mcp::HttpServerParams http(url);
    http.oauth = oauth_options();
    mcp::McpToolsetOptions options{http};
    options.timeout = std::chrono::seconds(20);
    options.on_elicitation = accept_with_defaults;
    auto toolset = mcp::McpToolset::create(options);
    auto model = std::make_shared<adk::testing::ScriptedModel>(std::move(turns));
    auto agent = adk::LlmAgent::builder("conformance").model(model).toolset(toolset).build();
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::Runner runner({.app_name = "conformance", .agent = agent, .session_service = sessions});
    adk::CreateSessionRequest create{"conformance", "user", "s"};
    co_await sessions->create_session(std::move(create));

    int status = 0;
    bool answered = !call;
    try {
        adk::Content message = adk::Content::user("run the scenario " + scenario);
        auto stream = co_await runner.run("user", "s", std::move(message));
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
