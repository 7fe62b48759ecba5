// McpToolset through the Runner: an LlmAgent calls a real MCP server over stdio (tests/support/mcp_test_server.cpp),
// the server is shared by concurrent invocations, started again after it died, and ended by Runner::close.
#include <adk/adk.hpp>
#include <adk/cli/agent_config.hpp>
#include <adk/mcp/mcp_toolset.hpp>
#include <adk/server/api_server.hpp>

#include "support/agents.hpp"
#include "support/api_client.hpp"
#include "support/run.hpp"
#include "support/child_process.hpp"
#include "support/drive.hpp"
#include "support/temp_dir.hpp"

#include <boost/asio/co_spawn.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <unistd.h>

#include <atomic>
#include <mutex>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace asio = boost::asio;
namespace json = boost::json;
namespace mcp = adk::mcp;
using namespace std::chrono_literals;

namespace {

const std::string toolset_server_program = adk::test::paths::mcp_test_server();

// Calls `tool` with {"text": "<the user's text>-<k>"} until it has `calls` answers, then says "done" and the
// last answer. Each invocation follows its own history, so that concurrent ones do not disturb each other.
class CallingModel final : public adk::Model {
public:
    CallingModel(std::string tool, int calls, json::object args = {})
        : tool_(std::move(tool)), calls_(calls), args_(std::move(args))
    {
    }
    std::string_view name() const override { return "calling-model"; }
    asio::awaitable<adk::Stream<adk::LlmResponse>> generate(adk::LlmRequest request, bool) override
    {
        ++requests;
        int answered = 0;
        std::string user, last;
        for (const auto& content : request.contents)
            for (const adk::Part& p : content.parts) {
                if (p.function_response) {
                    ++answered;
                    last = json::serialize(p.function_response->response);
                }
                if (p.text && content.role == "user")
                    user = *p.text;
            }
        {
            std::lock_guard lock(mutex_);
            tool_counts.push_back(request.tools.size());
        }
        json::object args = args_;
        if (args.empty())
            args["text"] = user + "-" + std::to_string(answered);
        adk::LlmResponse answer = answered >= calls_ ? adk::LlmResponse::text("done " + last)
                                                     : adk::LlmResponse::function_call(tool_, args);
        auto producer = [answer](adk::Sink<adk::LlmResponse> sink) mutable -> asio::awaitable<void> {
            co_await sink.emit(std::move(answer));
        };
        co_return adk::spawn_stream<adk::LlmResponse>(co_await asio::this_coro::executor, std::move(producer));
    }
    std::atomic<int> requests{0};
    std::vector<std::size_t> tool_counts;  // read once the invocations have ended

private:
    std::mutex mutex_;
    std::string tool_;
    int calls_;
    json::object args_;
};

// The test servers this process started that still run (other test processes may run their own meanwhile).
int servers_running()
{
    int n = 0;
    for (const auto& e : std::filesystem::directory_iterator("/proc")) {
        const std::string pid = e.path().filename();
        if (pid.empty() || pid[0] < '0' || pid[0] > '9')
            continue;
        std::ifstream stat(e.path() / "stat");
        std::string text;
        std::getline(stat, text);
        const auto close_paren = text.rfind(')');
        if (close_paren == std::string::npos)
            continue;
        std::istringstream fields(text.substr(close_paren + 2));
        char state = 0;
        long ppid = 0;
        if (!(fields >> state >> ppid) || ppid != ::getpid() || state == 'Z')
            continue;
        std::ifstream cmdline(e.path() / "cmdline");
        std::string first;
        std::getline(cmdline, first, '\0');
        if (first == toolset_server_program)
            ++n;
    }
    return n;
}

std::string response_text(const adk::Event& e)
{
    for (const adk::Part& p : e.content->parts)
        if (p.function_response)
            return json::serialize(p.function_response->response);
    return "";
}

std::vector<std::string> responses(const std::vector<adk::Event>& events)
{
    std::vector<std::string> out;
    for (const auto& e : events)
        if (e.content && !response_text(e).empty())
            out.push_back(response_text(e));
    return out;
}

// Runs one message through `runner` (the session created when missing), driving the io_context until the
// invocation ends: the server's connection keeps the io_context busy, so it never runs out of work.
std::vector<adk::Event> converse(asio::io_context& ioc, adk::Runner& runner, adk::InMemorySessionService& sessions,
                                 const std::string& session, const std::string& text)
{
    auto body = [&]() -> asio::awaitable<std::vector<adk::Event>> {
        if (!co_await sessions.get_session({"app", "user1", session}))
            co_await sessions.create_session({"app", "user1", session});
        co_return co_await adk::test::run_once(runner, session, text);
    };
    return adk::test::drive(ioc, body());
}

void close_runner(asio::io_context& ioc, adk::Runner& runner)
{
    ioc.restart();
    auto closed = asio::co_spawn(ioc, runner.close(), asio::use_future);
    ioc.run();  // returns once the connection and its process are gone
    closed.get();
}

}  // namespace

TEST_CASE("McpToolset: an agent calls a stdio server's tools, filtered, and Runner::close ends the server", "[mcp]")
{
    const int before = servers_running();
    mcp::McpToolsetOptions options{mcp::StdioServerParams(toolset_server_program)};
    options.filter = adk::ToolFilter({"echo", "add", "spawn"});
    auto toolset = mcp::McpToolset::create(options);
    CHECK(toolset->name() == std::filesystem::path(toolset_server_program).filename().string());
    auto model = std::make_shared<CallingModel>("spawn", 1);
    auto agent = adk::LlmAgent::builder("assistant").model(model).toolset(toolset).build();
    asio::io_context ioc;
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::Runner runner({.app_name = "app", .agent = agent, .session_service = sessions});
    auto answers = responses(converse(ioc, runner, *sessions, "s", "start something"));
    REQUIRE(answers.size() == 1);
    const int grandchild = std::stoi(std::string(json::parse(answers[0]).at("content").at(0).at("text").as_string()));
    CHECK(adk::test::process_running(grandchild));
    CHECK(model->tool_counts == std::vector<std::size_t>{3, 3});  // echo, add, spawn: the filter applied
    CHECK(servers_running() == before + 1);

    close_runner(ioc, runner);
    CHECK_FALSE(toolset->is_open());
    CHECK(servers_running() == before);
    CHECK_FALSE(adk::test::process_running(grandchild));
}

namespace {

// Keeps the spans it is handed.
class SpanList final : public adk::telemetry::SpanSink {
public:
    void on_end(const adk::telemetry::SpanData& span) override
    {
        std::lock_guard lock(mutex);
        spans.push_back(span);
    }
    std::mutex mutex;
    std::vector<adk::telemetry::SpanData> spans;
};

}  // namespace

TEST_CASE("McpToolset: a tool call carries its span's trace context to the server in _meta (traceparent, tracestate)",
          "[mcp][telemetry]")
{
    mcp::McpToolsetOptions options{mcp::StdioServerParams(toolset_server_program)};
    options.filter = adk::ToolFilter({"meta"});
    auto toolset = mcp::McpToolset::create(options);
    auto model = std::make_shared<CallingModel>("meta", 1, json::object{{"why", "trace"}});
    auto agent = adk::LlmAgent::builder("assistant").model(model).toolset(toolset).build();
    asio::io_context ioc;
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    auto sink = std::make_shared<SpanList>();
    auto tracer = std::make_shared<adk::telemetry::Tracer>(std::vector<std::shared_ptr<adk::telemetry::SpanSink>>{sink});
    adk::Runner runner({.app_name = "app", .agent = agent, .session_service = sessions, .tracer = tracer});
    auto caller = adk::telemetry::SpanContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                                                     "vendor=blue");
    REQUIRE(caller);
    auto body = [&]() -> asio::awaitable<std::vector<adk::Event>> {
        co_await sessions->create_session({"app", "user1", "s"});
        adk::RunRequest request("user1", "s", adk::Content::user("trace me"));
        request.trace_parent = *caller;
        std::vector<adk::Event> events;
        auto stream = co_await runner.run(std::move(request));
        while (auto e = co_await stream.next())
            events.push_back(std::move(*e));
        co_return events;
    };
    auto answers = responses(adk::test::drive(ioc, body()));
    REQUIRE(answers.size() == 1);
    const json::value meta = json::parse(json::parse(answers[0]).at("content").at(0).at("text").as_string());
    const std::string traceparent(meta.at("traceparent").as_string());
    CHECK(meta.at("tracestate") == "vendor=blue");
    // The server's parent is the tool's execute_tool span, in the caller's trace.
    std::string tool_span;
    {
        std::lock_guard lock(sink->mutex);
        for (const auto& s : sink->spans)
            if (s.name == "execute_tool meta")
                tool_span = adk::telemetry::to_hex(s.context.span_id);
    }
    REQUIRE_FALSE(tool_span.empty());
    CHECK(traceparent == "00-4bf92f3577b34da6a3ce929d0e0e4736-" + tool_span + "-01");
    close_runner(ioc, runner);
}

TEST_CASE("McpToolset: a server that dies mid-call fails that call for the model, and the next call starts it again",
          "[mcp]")
{
    asio::io_context ioc;  // declared first, so that it outlives the toolset and its connection
    mcp::McpToolsetOptions options{mcp::StdioServerParams(toolset_server_program)};
    auto toolset = mcp::McpToolset::create(options);
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    auto crasher = adk::LlmAgent::builder("assistant").model(std::make_shared<CallingModel>("crash", 1)).toolset(toolset).build();
    adk::Runner crash_runner({.app_name = "app", .agent = crasher, .session_service = sessions});
    auto crashed = responses(converse(ioc, crash_runner, *sessions, "s1", "crash please"));
    REQUIRE(crashed.size() == 1);
    CHECK_THAT(crashed[0], Catch::Contains("\"error\"") && Catch::Contains("exited with status 3") &&
                               Catch::Contains("crashing as asked"));
    auto echoer = adk::LlmAgent::builder("assistant").model(std::make_shared<CallingModel>("echo", 1)).toolset(toolset).build();
    adk::Runner echo_runner({.app_name = "app", .agent = echoer, .session_service = sessions});
    auto echoed = responses(converse(ioc, echo_runner, *sessions, "s2", "again"));
    REQUIRE(echoed.size() == 1);
    CHECK_THAT(echoed[0], Catch::Contains("again-0"));
    close_runner(ioc, echo_runner);
}

TEST_CASE("McpToolset: the model gets isError results and bad structured results as errors", "[mcp]")
{
    const json::value schema = json::parse(R"({"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]})");
    json::value ok = json::parse(R"({"content":[{"type":"text","text":"5"}],"structuredContent":{"sum":5},"_meta":{"x":1}})");
    json::value kept = mcp::tool_response("add", ok, schema).response;
    CHECK(kept.at("structuredContent").at("sum") == 5);
    CHECK_FALSE(kept.as_object().contains("_meta"));
    CHECK_THROWS_WITH(mcp::tool_response("add", json::parse(R"({"content":[],"structuredContent":{"sum":"five"}})"), schema),
                      Catch::Contains("does not fit its outputSchema"));
    CHECK_THROWS_WITH(mcp::tool_response("read", json::parse(R"({"content":[{"type":"text","text":"no such file"}],"isError":true})"),
                                         nullptr),
                      Catch::StartsWith("no such file"));
    json::value deep = json::object{};
    for (int i = 0; i < 70; ++i)
        deep = json::object{{"a", deep}};
    CHECK_THROWS_WITH(mcp::tool_response("deep", json::object{{"content", json::array{}}, {"structuredContent", deep}}, nullptr),
                      Catch::Contains("nests deeper"));
    CHECK_THROWS_WITH(mcp::tool_response("odd", json::value(3), nullptr), Catch::Contains("not a result object"));
}

TEST_CASE("McpToolset: images, audio and blobs go to the model as parts of their own, text stays in the response",
          "[mcp]")
{
    const json::value result = json::parse(R"({"content":[
        {"type":"text","text":"here"},
        {"type":"image","data":"iVBORw==","mimeType":"image/png"},
        {"type":"audio","data":"UklGRg==","mimeType":"audio/wav","annotations":{"priority":1}},
        {"type":"resource","resource":{"uri":"file:///a.pdf","mimeType":"application/pdf","blob":"JVBERg=="}},
        {"type":"resource","resource":{"uri":"file:///a.txt","mimeType":"text/plain","text":"plain"}},
        {"type":"resource_link","uri":"file:///b.txt","name":"b"},
        {"type":"image","data":"not base64!","mimeType":"image/png"},
        {"type":"image","data":"iVBORw=="}]})");
    mcp::ToolResponse mapped = mcp::tool_response("media", result, nullptr);
    REQUIRE(mapped.media.size() == 3);
    CHECK(mapped.media[0].inline_data->mime_type == "image/png");
    CHECK(mapped.media[0].inline_data->data == "\x89PNG");
    CHECK(mapped.media[1].inline_data->data == "RIFF");
    CHECK(mapped.media[2].inline_data->mime_type == "application/pdf");
    CHECK(mapped.media[2].inline_data->data == "%PDF");
    const json::array& content = mapped.response.at("content").as_array();
    CHECK(content[0].at("text") == "here");
    CHECK_FALSE(content[1].as_object().contains("data"));
    CHECK(content[1].at("note") == "the image/png content follows this response");
    CHECK(content[2].at("annotations").at("priority") == 1);
    CHECK_FALSE(content[3].at("resource").as_object().contains("blob"));
    CHECK(content[3].at("resource").at("uri") == "file:///a.pdf");
    CHECK(content[4].at("resource").at("text") == "plain");  // text stays where the model reads it
    CHECK(content[5].at("uri") == "file:///b.txt");
    CHECK_THAT(std::string(content[6].at("error").as_string()), Catch::Contains("not valid base64"));
    CHECK_FALSE(content[6].as_object().contains("data"));
    CHECK_THAT(std::string(content[7].at("error").as_string()), Catch::Contains("mimeType"));
}

TEST_CASE("McpToolset: the server's sampling goes to the model the toolset names, and its roots/list gets the "
          "toolset's roots, and without them neither is offered",
          "[mcp]")
{
    asio::io_context ioc;
    mcp::McpToolsetOptions options{mcp::StdioServerParams(toolset_server_program)};
    auto sampler = std::make_shared<adk::testing::ScriptedModel>(
        std::vector<adk::testing::ScriptedModel::Turn>{adk::LlmResponse::text("hi from the sampler")}, "sampler-model");
    options.sampling_model = sampler;
    options.roots = {mcp::Root("file:///srv/work", "work")};
    auto toolset = mcp::McpToolset::create(options);
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    auto sample_agent = adk::LlmAgent::builder("assistant").model(std::make_shared<CallingModel>("sample", 1)).toolset(toolset).build();
    adk::Runner sample_runner({.app_name = "app", .agent = sample_agent, .session_service = sessions});
    auto sampled = responses(converse(ioc, sample_runner, *sessions, "s1", "sample"));
    REQUIRE(sampled.size() == 1);
    CHECK_THAT(sampled[0], Catch::Contains("hi from the sampler") && Catch::Contains("sampler-model") &&
                               Catch::Contains("endTurn"));
    REQUIRE(sampler->requests().size() == 1);
    CHECK(sampler->requests()[0].system_text() == "Be brief.");
    CHECK(sampler->requests()[0].config.max_output_tokens == 50);
    CHECK(sampler->requests()[0].contents.at(0).parts.at(0).text == "Say hi");

    auto roots_agent = adk::LlmAgent::builder("assistant").model(std::make_shared<CallingModel>("roots", 1)).toolset(toolset).build();
    adk::Runner roots_runner({.app_name = "app", .agent = roots_agent, .session_service = sessions});
    auto rooted = responses(converse(ioc, roots_runner, *sessions, "s2", "roots"));
    REQUIRE(rooted.size() == 1);
    CHECK_THAT(rooted[0], Catch::Contains("file:///srv/work") && Catch::Contains("work"));
    close_runner(ioc, roots_runner);

    // A toolset without them: the server's requests are refused (the capabilities were not offered).
    auto plain = mcp::McpToolset::create(mcp::McpToolsetOptions{mcp::StdioServerParams(toolset_server_program)});
    auto refused_agent = adk::LlmAgent::builder("assistant").model(std::make_shared<CallingModel>("sample", 1)).toolset(plain).build();
    adk::Runner refused_runner({.app_name = "app", .agent = refused_agent, .session_service = sessions});
    auto refused = responses(converse(ioc, refused_runner, *sessions, "s3", "sample"));
    REQUIRE(refused.size() == 1);
    CHECK_THAT(refused[0], Catch::Contains("this client does not serve sampling/createMessage"));
    close_runner(ioc, refused_runner);
}

TEST_CASE("McpToolset: 1,000 calls from 50 concurrent invocations on 4 threads use one server process",
          "[mcp][threads]")
{
    const int before = servers_running();
    mcp::McpToolsetOptions options{mcp::StdioServerParams(toolset_server_program)};
    options.filter = adk::ToolFilter({"echo"});
    auto toolset = mcp::McpToolset::create(options);
    auto model = std::make_shared<CallingModel>("echo", 20);
    auto agent = adk::LlmAgent::builder("assistant").model(model).toolset(toolset).max_iterations(21).build();
    asio::io_context ioc;
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::Runner runner({.app_name = "app", .agent = agent, .session_service = sessions});
    std::atomic<int> right{0}, finished{0};
    std::atomic<int> most_servers{0};
    auto invocation = [&](int i) -> asio::awaitable<void> {
        const std::string id = "s" + std::to_string(i);
        co_await sessions->create_session({"app", "user1", id});
        auto events = co_await adk::test::run_once(runner, id, "u" + std::to_string(i));
        for (const auto& r : responses(events))
            if (r.find("u" + std::to_string(i) + "-") != std::string::npos)
                ++right;
        most_servers = std::max(most_servers.load(), servers_running() - before);
        if (++finished == 50)
            ioc.stop();  // the server's connection would keep the threads running
    };
    for (int i = 0; i < 50; ++i)
        asio::co_spawn(ioc, invocation(i), asio::detached);
    adk::test::run_on_threads(ioc, 4);
    CHECK(right == 1000);
    CHECK(most_servers == 1);
    ioc.restart();
    auto closed = asio::co_spawn(ioc, runner.close(), asio::use_future);
    ioc.run();
    closed.get();
    CHECK(servers_running() == before);
}

TEST_CASE("McpToolset from agent-config YAML: the agent calls the server the file names", "[mcp][cli]")
{
    adk::test::TempDir dir("mcp_yaml");
    const std::filesystem::path yaml = dir.path() / "echo_app" / "root_agent.yaml";
    std::filesystem::create_directories(yaml.parent_path());
    std::ofstream(yaml) << "name: echo_agent\nmodel: calling\ntools:\n  - name: McpToolset\n    args:\n"
                           "      stdio_connection_params:\n        server_params:\n          command: "
                        << toolset_server_program << "\n          args: [--stderr, started from YAML]\n        timeout: 10\n"
                        << "      tool_filter: [echo]\n";
    adk::cli::AgentConfigOptions options;
    options.make_model = [](const std::string&) { return std::make_shared<CallingModel>("echo", 1); };
    auto agent = adk::cli::load_agent_config(yaml, options);
    asio::io_context ioc;
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::Runner runner({.app_name = "app", .agent = agent, .session_service = sessions});
    auto answers = responses(converse(ioc, runner, *sessions, "s", "from yaml"));
    REQUIRE(answers.size() == 1);
    CHECK_THAT(answers[0], Catch::Contains("from yaml-0"));
    close_runner(ioc, runner);
}

TEST_CASE("McpToolset in ApiServer: a run over /run_sse streams the MCP tool's answer, and stop() ends the server "
          "process",
          "[mcp][server]")
{
    const int before = servers_running();
    asio::io_context ioc;
    mcp::McpToolsetOptions options{mcp::StdioServerParams(toolset_server_program)};
    options.filter = adk::ToolFilter({"echo"});
    auto agent = adk::LlmAgent::builder("files_agent")
                     .model(std::make_shared<adk::testing::ScriptedModel>(std::vector<adk::testing::ScriptedModel::Turn>{
                         adk::LlmResponse::function_call("echo", json::object{{"text", "over the API"}}),
                         adk::LlmResponse::text("done")}))
                     .toolset(mcp::McpToolset::create(options))
                     .build();
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::server::ApiServer server(ioc.get_executor(), {{"files", agent}}, adk::test::options_with(sessions));
    server.start();
    adk::net::HttpClient client(adk::test::no_retries());
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        adk::test::Reply created = co_await adk::test::call(client, server, "POST", "/apps/files/users/u/sessions/s1");
        CHECK(created.status == 200);
        adk::test::Reply ran = co_await adk::test::call(
            client, server, "POST", "/run_sse",
            R"({"appName": "files", "userId": "u", "sessionId": "s1", "streaming": true,
                "newMessage": {"role": "user", "parts": [{"text": "echo it"}]}})");
        CHECK(ran.status == 200);
        CHECK_THAT(ran.body, Catch::Contains("data: ") && Catch::Contains("functionResponse") &&
                                 Catch::Contains("over the API"));
        CHECK(servers_running() == before + 1);
        server.stop();
    }());
    CHECK(servers_running() == before);
}
