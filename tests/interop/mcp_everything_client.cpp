// An agent on the reference MCP servers from npm (tests/interop/run_mcp_servers.sh): an LlmAgent whose tools are an
// McpToolset on the server, over stdio or HTTP, run through the Runner; the scripted model calls the server's
// tools one after another, and each answer is checked as the model got it.
//
//   mcp_everything_client stdio COMMAND [ARG...]            @modelcontextprotocol/server-everything
//   mcp_everything_client http URL                          the same over Streamable HTTP (or the old SSE)
//   mcp_everything_client files DIR COMMAND [ARG...]        @modelcontextprotocol/server-filesystem on DIR
//
// Prints "PASS name" or "FAIL name: why" per tool, and "everything: N passed, M failed"; exits 1 on a failure.
#include <adk/adk.hpp>
#include <adk/mcp/mcp_toolset.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <atomic>
#include <functional>
#include <iostream>

namespace asio = boost::asio;
namespace json = boost::json;
namespace mcp = adk::mcp;

namespace {

// What the model got for one call: the function response, and the media that came with it.
class Answer {
public:
    Answer(std::string tool_, json::object response_) : tool(std::move(tool_)), response(std::move(response_)) {}
    std::string tool;
    json::object response;
    std::vector<adk::Part> media;
};

using Problem = std::function<std::optional<std::string>(const Answer&)>;  // nothing when right

class Check {
public:
    std::string tool;
    json::object args;
    Problem problem;
};

std::string text_of(const json::object& response)
{
    std::string text;
    if (const json::value* content = response.if_contains("content"); content && content->is_array())
        for (const json::value& item : content->get_array())
            if (item.is_object() && item.as_object().contains("text") && item.at("text").is_string())
                text += std::string(item.at("text").get_string());
    return text;
}

Problem contains(std::string what)
{
    return [what](const Answer& a) -> std::optional<std::string> {
        const std::string all = json::serialize(a.response);
        if (all.find(what) == std::string::npos)
            return "no \"" + what + "\" in " + all.substr(0, 300);
        return std::nullopt;
    };
}

std::atomic<int> progress_seen{0};

asio::awaitable<json::value> accept(const mcp::jsonrpc::Request&)
{
    co_return json::object{{"action", "accept"}, {"content", json::object{{"name", "Ann Example"}, {"check", true}}}};
}

// server-filesystem on `dir`: a file written, read back, listed, searched.
std::vector<Check> file_checks(const std::string& dir)
{
    const std::string note = dir + "/note.txt";
    return {
        {"write_file", {{"path", note}, {"content", "written by an adk-cpp agent"}}, contains("Successfully wrote")},
        {"read_text_file", {{"path", note}}, contains("written by an adk-cpp agent")},
        {"list_directory", {{"path", dir}}, contains("[FILE] note.txt")},
        {"search_files", {{"path", dir}, {"pattern", "*.txt"}}, contains("note.txt")},
        {"read_text_file", {{"path", "/etc/passwd"}}, contains("Access denied")},
    };
}

std::vector<Check> everything_checks()
{
    return {
        {"echo", {{"message", "hello everything"}}, contains("hello everything")},
        {"get-sum", {{"a", 2}, {"b", 3}}, contains("5")},
        {"get-structured-content", {{"location", "New York"}},
         [](const Answer& a) -> std::optional<std::string> {
             const json::value* s = a.response.if_contains("structuredContent");
             if (!s || !s->is_object() || !s->as_object().contains("temperature"))
                 return "no structuredContent with a temperature: " + json::serialize(a.response).substr(0, 300);
             return std::nullopt;
         }},
        // The image reaches the model as an inline part of its own, not as base64 inside the response.
        {"get-tiny-image", {},
         [](const Answer& a) -> std::optional<std::string> {
             const std::string all = json::serialize(a.response);
             if (all.find("\"data\"") != std::string::npos || all.find("image/png content follows") == std::string::npos)
                 return "the response still holds the image's bytes, or no note: " + all.substr(0, 300);
             if (a.media.size() != 1 || !a.media[0].inline_data || a.media[0].inline_data->mime_type != "image/png" ||
                 a.media[0].inline_data->data.rfind("\x89PNG", 0) != 0)
                 return "no PNG part beside the response (" + std::to_string(a.media.size()) + " parts)";
             return std::nullopt;
         }},
        {"trigger-long-running-operation", {{"duration", 1}, {"steps", 3}},
         [](const Answer& a) -> std::optional<std::string> {
             const std::string text = text_of(a.response);
             if (text.find("completed") == std::string::npos && text.find("Completed") == std::string::npos)
                 return "not completed: " + json::serialize(a.response).substr(0, 300);
             if (progress_seen < 1)
                 return "no progress notification reached the toolset";
             return std::nullopt;
         }},
        {"get-resource-links", {{"count", 2}}, contains("resource_link")},
        {"trigger-elicitation-request", {}, contains("Ann Example")},
        {"trigger-sampling-request", {{"prompt", "Say hi"}, {"maxTokens", 20}}, contains("sampled by adk-cpp")},
    };
}

asio::awaitable<int> run(mcp::McpToolsetOptions options, std::vector<Check> checks)
{
    std::vector<adk::testing::ScriptedModel::Turn> turns;
    for (const Check& c : checks)
        turns.emplace_back(adk::LlmResponse::function_call(c.tool, c.args));
    turns.emplace_back(adk::LlmResponse::text("all done"));

    options.timeout = std::chrono::seconds(30);
    options.on_elicitation = accept;
    options.on_progress = [](const mcp::ToolProgress&) { ++progress_seen; };
    options.sampling_model = std::make_shared<adk::testing::ScriptedModel>(
        std::vector<adk::testing::ScriptedModel::Turn>{adk::LlmResponse::text("sampled by adk-cpp")}, "sampler");
    auto toolset = mcp::McpToolset::create(options);
    auto model = std::make_shared<adk::testing::ScriptedModel>(std::move(turns));
    auto agent = adk::LlmAgent::builder("everything").model(model).toolset(toolset).build();
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::Runner runner({.app_name = "everything", .agent = agent, .session_service = sessions});
    adk::CreateSessionRequest create{"everything", "user", "s"};
    co_await sessions->create_session(std::move(create));

    std::vector<Answer> answers;  // in the order of the calls
    try {
        adk::Content message = adk::Content::user("try every tool");
        auto stream = co_await runner.run("user", "s", std::move(message));
        while (auto event = co_await stream.next()) {
            if (event->error_message)
                std::cout << "error event: " << *event->error_message << "\n";
            if (event->content)
                for (const adk::Part& p : event->content->parts) {
                    if (p.function_response)
                        answers.emplace_back(p.function_response->name, p.function_response->response);
                    else if (p.inline_data && !answers.empty())
                        answers.back().media.push_back(p);
                }
        }
    } catch (const std::exception& e) {
        std::cout << "FAIL the run: " << e.what() << "\n";
    }
    int passed = 0;
    int failed = 0;
    for (std::size_t i = 0; i < checks.size(); ++i) {
        const Check& c = checks[i];
        const bool has = i < answers.size() && answers[i].tool == c.tool;
        std::optional<std::string> problem = has ? c.problem(answers[i]) : std::optional<std::string>("no answer");
        if (problem && has && answers[i].response.contains("error"))
            problem = "the tool failed: " + json::serialize(answers[i].response.at("error"));
        std::cout << (problem ? "FAIL " + c.tool + ": " + *problem : "PASS " + c.tool) << "\n";
        (problem ? failed : passed)++;
    }
    // Media a tool sent reaches the model in the request after the call, right after the call's response.
    const bool sends_media = std::ranges::any_of(answers, [](const Answer& a) { return !a.media.empty(); });
    bool model_saw_media = false;
    for (const adk::LlmRequest& request : model->requests())
        for (const adk::Content& content : request.contents)
            for (std::size_t k = 1; k < content.parts.size(); ++k)
                model_saw_media = model_saw_media || (content.parts[k].inline_data && content.parts[0].function_response);
    if (sends_media) {
        std::cout << (model_saw_media ? "PASS media reach the model after their response"
                                      : "FAIL media reach the model after their response")
                  << "\n";
        (model_saw_media ? passed : failed)++;
    }
    const std::size_t offered = model->requests().empty() ? 0 : model->requests().front().tools.size();
    std::cout << "tools offered to the model: " << offered << "\n";
    co_await runner.close();
    std::cout << "everything: " << passed << " passed, " << failed << " failed\n";
    co_return failed == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv)
{
    const std::string usage =
        "usage: mcp_everything_client stdio COMMAND [ARG...] | http URL | files DIR COMMAND [ARG...]\n";
    if (argc < 3) {
        std::cerr << usage;
        return 2;
    }
    const std::string mode = argv[1];
    std::optional<mcp::McpToolsetOptions> options;
    std::vector<Check> checks = everything_checks();
    if (mode == "stdio") {
        options.emplace(mcp::StdioServerParams(argv[2], std::vector<std::string>(argv + 3, argv + argc)));
    } else if (mode == "http") {
        options.emplace(mcp::HttpServerParams(argv[2]));
    } else if (mode == "files" && argc >= 4) {
        options.emplace(mcp::StdioServerParams(argv[3], std::vector<std::string>(argv + 4, argv + argc)));
        checks = file_checks(argv[2]);
    } else {
        std::cerr << usage;
        return 2;
    }
    asio::io_context ioc;
    int status = 1;
    asio::co_spawn(ioc, run(std::move(*options), std::move(checks)), [&](std::exception_ptr e, int s) {
        status = e ? 1 : s;
        ioc.stop();
    });
    ioc.run();
    return status;
}
