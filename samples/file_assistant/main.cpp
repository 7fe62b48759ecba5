// A file assistant: an LlmAgent whose tools come from the reference MCP filesystem server
// (@modelcontextprotocol/server-filesystem, started with npx, confined to one folder). By default the model's
// part is played offline by adk::testing::ScriptedModel (it lists the folder, then answers); with ADK_MODEL set a
// real model decides which file tools to call.
//
//   build/release/samples/file_assistant [FOLDER] ["question"]
//   ADK_MODEL=gemini-2.5-flash GEMINI_API_KEY=... build/release/samples/file_assistant ~/notes "What is in todo.txt?"
//
// FILES_SERVER replaces the command that starts the server (by default
// "npx -y @modelcontextprotocol/server-filesystem@2026.8.31"); the folder is added as its last argument.
// The same agent in agent-config YAML: samples/file_assistant/root_agent.yaml (adk run samples/file_assistant).
#include <adk/adk.hpp>
#include <adk/mcp/mcp_toolset.hpp>
#include <adk/providers/make_model.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/serialize.hpp>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>

namespace asio = boost::asio;
namespace json = boost::json;

asio::awaitable<void> chat(std::string folder, std::string question)
{
    std::shared_ptr<adk::Model> model;
    if (const char* id = std::getenv("ADK_MODEL"); id && *id) {
        model = adk::make_model(id);
    } else {
        using adk::testing::ScriptedModel;
        model = std::make_shared<ScriptedModel>(std::vector<ScriptedModel::Turn>{
            adk::LlmResponse::function_call("list_directory", {{"path", folder}}),
            ScriptedModel::chunks({"Those are the files ", "in your folder."}),
        });
    }
    std::vector<std::string> command;
    std::istringstream words(std::getenv("FILES_SERVER") ? std::getenv("FILES_SERVER")
                                                         : "npx -y @modelcontextprotocol/server-filesystem@2026.8.31");
    for (std::string w; words >> w;)
        command.push_back(w);
    adk::mcp::StdioServerParams server(command.front(), std::vector<std::string>(command.begin() + 1, command.end()));
    server.args.push_back(folder);
    adk::mcp::McpToolsetOptions files(server);
    files.filter = adk::ToolFilter({"list_directory", "read_text_file", "write_file", "search_files"});
    auto agent = adk::LlmAgent::builder("file_assistant")
                     .model(model)
                     .instruction("You help with the files in " + folder + ". Use the file tools; never guess.")
                     .toolset(adk::mcp::McpToolset::create(files))
                     .build();

    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::Runner runner({.app_name = "files", .agent = agent, .session_service = sessions});
    adk::CreateSessionRequest create{"files", "you"};
    adk::Session session = co_await sessions->create_session(std::move(create));
    std::cout << "you: " << question << "\n";
    adk::Content message = adk::Content::user(question);
    auto events = co_await runner.run("you", session.id, std::move(message));
    while (auto ev = co_await events.next()) {
        if (ev->error_message)
            std::cout << "error: " << *ev->error_message << "\n";
        if (!ev->content)
            continue;
        for (const adk::Part& p : ev->content->parts) {
            if (p.function_call)
                std::cout << "[calls " << p.function_call->name << json::serialize(p.function_call->args) << "]\n";
            if (p.function_response)
                std::cout << "[" << p.function_response->name << " returned "
                          << json::serialize(p.function_response->response).substr(0, 400) << "]\n";
            if (p.text && !ev->partial)
                std::cout << "file_assistant: " << *p.text << "\n";
        }
    }
    co_await runner.close();  // ends the server process, and whatever npx started
}

int main(int argc, char** argv)
{
    const std::string folder = std::filesystem::weakly_canonical(argc > 1 ? argv[1] : ".").string();
    const std::string question = argc > 2 ? argv[2] : "Which files are in my folder?";
    asio::io_context ioc;
    asio::co_spawn(ioc, chat(folder, question), [](std::exception_ptr e) {
        if (!e)
            return;
        try {
            std::rethrow_exception(e);
        } catch (const std::exception& error) {
            std::cerr << "file_assistant: " << error.what() << "\n";
        }
    });
    ioc.run();
}
