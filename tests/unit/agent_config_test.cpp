// Agent-config YAML: real files in a temporary folder, read into agent trees; the errors name the file,
// the line and the field. And the adk command line's parser.
#include <adk/agents/llm_agent.hpp>
#include <adk/agents/workflow_agents.hpp>
#include <adk/cli/agent_config.hpp>
#include <adk/core/error.hpp>
#include <adk/mcp/mcp_toolset.hpp>
#include <adk/testing/scripted_model.hpp>
#include <adk/tools/function_tool.hpp>
#include <adk/workflow/workflow.hpp>

#include "command_line.hpp"
#include "support/runner_fixture.hpp"
#include "support/temp_dir.hpp"

#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

#include <fstream>

namespace asio = boost::asio;
namespace fs = std::filesystem;
namespace json = boost::json;
using adk::cli::AgentConfigOptions;

namespace {

void write(const fs::path& file, const std::string& text)
{
    fs::create_directories(file.parent_path());
    std::ofstream(file) << text;
}

// Models made by id, recorded; no provider is reached.
class Models {
public:
    AgentConfigOptions options()
    {
        AgentConfigOptions o;
        o.make_model = [this](const std::string& id) {
            made.push_back(id);
            return std::make_shared<adk::testing::ScriptedModel>(std::vector<adk::testing::ScriptedModel::Turn>{}, id);
        };
        return o;
    }
    std::vector<std::string> made;
};

std::string load_error(const fs::path& file, const AgentConfigOptions& options)
{
    try {
        adk::cli::load_agent_config(file, options);
    } catch (const adk::Error& e) {
        CHECK(e.code() == make_error_code(adk::errc::invalid_argument));
        return e.message();
    }
    return "loaded";
}

}  // namespace

TEST_CASE("agent config: an LlmAgent with every field, its tools from the registry", "[cli][config]")
{
    adk::test::TempDir dir("config");
    const fs::path yaml = dir.path() / "weather" / "root_agent.yaml";
    write(yaml, R"(# ADK's agent config
agent_class: LlmAgent
name: weather_agent
model: gemini-2.5-flash
description: Answers questions about the weather.
instruction: |
  You answer about the weather in {city?}.
global_instruction: Be brief.
tools:
  - name: get_weather
  - name: exit_loop
output_key: last_answer
include_contents: none
generate_content_config:
  temperature: 0.25
  top_p: 0.5
  top_k: 7
  max_output_tokens: 512
  stop_sequences: [END, STOP]
disallow_transfer_to_parent: true
disallow_transfer_to_peers: yes
)");
    Models models;
    AgentConfigOptions options = models.options();
    options.tools.add(adk::FunctionTool::create(
        "get_weather", "Weather.", boost::json::parse(R"({"type":"object","properties":{}})"),
        [](adk::ToolContext&, boost::json::object) -> asio::awaitable<boost::json::value> { co_return "sunny"; }));
    auto agent = std::dynamic_pointer_cast<adk::LlmAgent>(adk::cli::load_agent_config(yaml, options));
    REQUIRE(agent);
    const auto& c = agent->config();
    CHECK(c.name == "weather_agent");
    CHECK(c.description == "Answers questions about the weather.");
    CHECK(c.model->name() == "gemini-2.5-flash");
    CHECK(c.instruction == "You answer about the weather in {city?}.\n");
    CHECK(c.global_instruction == "Be brief.");
    REQUIRE(c.tools.size() == 2);
    CHECK(c.tools[0]->name() == "get_weather");
    CHECK(c.tools[1]->name() == "exit_loop");
    CHECK(c.output_key == "last_answer");
    CHECK(c.include_contents == adk::IncludeContents::none);
    CHECK(c.generate_content_config.temperature == 0.25);
    CHECK(c.generate_content_config.top_p == 0.5);
    CHECK(c.generate_content_config.top_k == 7);
    CHECK(c.generate_content_config.max_output_tokens == 512);
    CHECK(c.generate_content_config.stop_sequences == std::vector<std::string>{"END", "STOP"});
    CHECK(c.disallow_transfer_to_parent);
    CHECK(c.disallow_transfer_to_peers);
    CHECK(models.made == std::vector<std::string>{"gemini-2.5-flash"});
}

TEST_CASE("agent config: workflows of sub-agents by config_path, one model per id", "[cli][config]")
{
    adk::test::TempDir dir("config");
    const fs::path app = dir.path() / "pipeline";
    write(app / "root_agent.yaml", R"(
agent_class: SequentialAgent
name: pipeline
description: Research, then write.
sub_agents:
  - config_path: fanout.yaml
  - config_path: ./agents/refine.yaml
)");
    write(app / "fanout.yaml", R"(
agent_class: google.adk.agents.ParallelAgent
name: fanout
sub_agents: [{config_path: agents/a.yaml}, {config_path: agents/b.yaml}]
)");
    write(app / "agents" / "a.yaml", "name: a\nmodel: m1\n");
    write(app / "agents" / "b.yaml", "agent_class: Agent\nname: b\nmodel: m2\n");
    write(app / "agents" / "refine.yaml", R"(
agent_class: LoopAgent
name: refine
max_iterations: 3
sub_agents: [{config_path: writer.yaml}]
)");
    write(app / "agents" / "writer.yaml", "name: writer\nmodel: m1\ntools: [exit_loop]\n");
    Models models;
    auto root = adk::cli::load_agent_config(app / "root_agent.yaml", models.options());
    REQUIRE(dynamic_cast<adk::SequentialAgent*>(root.get()));
    CHECK(root->description() == "Research, then write.");
    REQUIRE(root->sub_agents().size() == 2);
    const auto& fanout = root->sub_agents()[0];
    CHECK(dynamic_cast<adk::ParallelAgent*>(fanout.get()));
    REQUIRE(fanout->sub_agents().size() == 2);
    CHECK(fanout->sub_agents()[0]->name() == "a");
    CHECK(fanout->sub_agents()[1]->name() == "b");
    auto* loop = dynamic_cast<adk::LoopAgent*>(root->sub_agents()[1].get());
    REQUIRE(loop);
    CHECK(loop->max_iterations() == 3);
    CHECK(root->find_agent("writer"));
    CHECK(models.made == std::vector<std::string>{"m1", "m2"});  // m1 made once, shared by a and writer

    SECTION("--model gives every LlmAgent the same model")
    {
        Models others;
        AgentConfigOptions options = others.options();
        options.model_override = "openai/gpt-4o-mini";
        adk::cli::load_agent_config(app / "root_agent.yaml", options);
        CHECK(others.made == std::vector<std::string>{"openai/gpt-4o-mini"});
    }
}

TEST_CASE("agent config: a graph Workflow as ADK spells it, with C++ nodes and tools, runs", "[cli][config]")
{
    adk::test::TempDir dir("config");
    const fs::path app = dir.path() / "desk";
    write(app / "root_agent.yaml", R"(
agent_class: Workflow
name: desk
description: Triage, then fix or answer.
max_concurrency: 2
edges:
  - [START, agents/classify.yaml, .agent.route]
  - - route
    - bug: [{name: fix, model: m-fix, instruction: Fix it.}, log_ticket]
      __DEFAULT__: {config_path: agents/answer.yaml}
  - [fix, done]
  - {from_node: log_ticket, to_node: done, route: null}
)");
    write(app / "agents" / "classify.yaml", "name: classify\nmodel: m-classify\ninstruction: One word.\n");
    write(app / "agents" / "answer.yaml", "name: answer\nmodel: m-answer\n");
    AgentConfigOptions options;
    std::map<std::string, std::shared_ptr<adk::testing::ScriptedModel>> models;
    options.make_model = [&](const std::string& id) {
        std::vector<adk::testing::ScriptedModel::Turn> turns;
        if (id == "m-classify")
            turns.push_back(adk::LlmResponse::text("bug"));
        if (id == "m-fix")
            turns.push_back(adk::LlmResponse::text("patched"));
        auto model = std::make_shared<adk::testing::ScriptedModel>(std::move(turns), id);
        models[id] = model;
        return model;
    };
    options.nodes["route"] = adk::workflow::function_node(
        "route", [](adk::workflow::NodeContext& ctx, json::value in) -> asio::awaitable<json::value> {
            ctx.set_route(in);
            co_return json::object{{"summary", in}};
        });
    options.nodes["done"] = adk::workflow::join_node("done");
    options.tools.add(adk::FunctionTool::create(
        "log_ticket", "Logs a ticket.", json::parse(R"({"type":"object"})"),
        [](adk::ToolContext&, json::object args) -> asio::awaitable<json::value> {
            co_return json::object{{"ticket", "T-1"}, {"about", args.at("summary")}};
        }));
    auto root = adk::cli::load_agent_config(app / "root_agent.yaml", options);
    auto* flow = dynamic_cast<adk::workflow::Workflow*>(root.get());
    REQUIRE(flow);
    CHECK(flow->description() == "Triage, then fix or answer.");
    std::vector<std::string> names;
    for (const auto& n : flow->nodes())
        names.push_back(n->name());
    CHECK(names == std::vector<std::string>{"classify", "route", "fix", "log_ticket", "answer", "done"});
    std::vector<std::string> edges;
    for (const auto& e : flow->edges())
        edges.push_back((e.from ? e.from->name() : "START") + ">" + e.to->name() +
                        (e.route ? "/" + std::string(e.route->as_string()) : ""));
    CHECK(edges == std::vector<std::string>{"START>classify", "classify>route", "route>fix/bug", "route>log_ticket/bug",
                                            "route>answer/__DEFAULT__", "fix>done", "log_ticket>done"});

    adk::test::RunnerFixture f(root);
    adk::test::Ran ran = f.say("it crashes on start");
    REQUIRE_FALSE(ran.error);
    const adk::Event& last = ran.events.back();
    REQUIRE(last.output);
    CHECK(*last.output == json::parse(R"({"fix":"patched","log_ticket":{"ticket":"T-1","about":"bug"}})"));
    CHECK(models.at("m-answer")->requests().empty());
}

TEST_CASE("agent config: a Workflow's edges that cannot be read say where and what to do", "[cli][config]")
{
    adk::test::TempDir dir("config");
    const fs::path yaml = dir.path() / "app" / "root_agent.yaml";
    Models models;
    AgentConfigOptions options = models.options();
    auto error_of = [&](const std::string& edges) {
        write(yaml, "agent_class: Workflow\nname: w\nedges:\n" + edges);
        return load_error(yaml, options);
    };
    CHECK_THAT(error_of("  - [START, nowhere]\n"), Catch::Contains("root_agent.yaml:4:") &&
                                                      Catch::Contains("no node named 'nowhere'"));
    CHECK_THAT(error_of("  - [START, {a: b.yaml}, c.yaml]\n"), Catch::Contains("routing map"));
    CHECK_THAT(error_of("  - [START]\n"), Catch::Contains("two or more nodes"));
    CHECK_THAT(error_of("  - {from_node: START}\n"), Catch::Contains("from_node and to_node"));
    CHECK_THAT(error_of("  - [START, {func_code: my.module.fn}]\n"), Catch::Contains("Python code"));
    CHECK_THAT(error_of("  - [START, ../elsewhere.yaml]\n"), Catch::Contains("does not exist"));
    write(dir.path() / "outside.yaml", "name: outside\nmodel: m\n");
    CHECK_THAT(error_of("  - [START, ../outside.yaml]\n"), Catch::Contains("outside the app's folder"));
    write(yaml.parent_path() / "a.yaml", "name: a\nmodel: m\n");
    CHECK_THAT(error_of("  - [a.yaml, a.yaml]\n"), Catch::Contains("edge from START"));
    write(yaml, "agent_class: Workflow\nname: w\nsub_agents: []\nedges: [[START, a.yaml]]\n");
    CHECK_THAT(load_error(yaml, options), Catch::Contains("'sub_agents' is not a field of Workflow"));
    write(yaml, "agent_class: Workflow\nname: w\n");
    CHECK_THAT(load_error(yaml, options), Catch::Contains("'edges' is missing"));
}

TEST_CASE("agent config: each error names the file, the line and the field", "[cli][config]")
{
    adk::test::TempDir dir("config");
    const fs::path app = dir.path() / "app";
    const fs::path yaml = app / "root_agent.yaml";
    Models models;
    const AgentConfigOptions options = models.options();
    auto error_of = [&](const std::string& text) {
        write(yaml, text);
        return load_error(yaml, options);
    };
    const std::string at = yaml.string() + ":";
    CHECK_THAT(error_of("name: a\nmodel: m\ninstruction: [not, text]\n"),
               Catch::StartsWith(at + "3:14: 'instruction' must be a string"));
    CHECK_THAT(error_of("name: a\nmodel: m\ntemperature: 1\n"),
               Catch::StartsWith(at + "3:1: 'temperature' is not a field of LlmAgent"));
    CHECK_THAT(error_of("name: a\nmodel: m\nbefore_model_callbacks: [{name: x.y}]\n"),
               Catch::Contains("names Python code") && Catch::StartsWith(at + "3:1:"));
    CHECK_THAT(error_of("name: a\nmodel: m\ntools:\n  - name: nowhere\n"),
               Catch::StartsWith(at + "4:11: 'tools': no tool named 'nowhere'") && Catch::Contains("exit_loop"));
    {
        // Permissive: the missing tool is logged and left out; the agent declares only what it can call.
        AgentConfigOptions permissive = options;
        permissive.tools.set_validation_mode(adk::ValidationMode::permissive);
        write(yaml, "name: a\nmodel: m\ntools:\n  - name: nowhere\n  - name: exit_loop\n");
        auto agent = std::dynamic_pointer_cast<adk::LlmAgent>(adk::cli::load_agent_config(yaml, permissive));
        REQUIRE(agent);
        REQUIRE(agent->config().tools.size() == 1);
        CHECK(agent->config().tools[0]->name() == "exit_loop");
    }
    CHECK_THAT(error_of("name: a\nmodel: m\ntools:\n  - nme: get_weather\n"),
               Catch::StartsWith(at + "4:5: 'tools': an entry names its tool with name: TOOL"));
    CHECK_THAT(error_of("name: a\nmodel: m\ngenerate_content_config: {temperature: hot}\n"),
               Catch::StartsWith(at + "3:40: 'temperature' must be a number"));
    CHECK_THAT(error_of("name: a\nmodel: m\ngenerate_content_config: {seed: 1}\n"),
               Catch::Contains("'generate_content_config': unknown field 'seed'"));
    CHECK_THAT(error_of("model: m\n"), Catch::StartsWith(at + "1:1: 'name' is missing"));
    CHECK_THAT(error_of("name: 2fast\nmodel: m\n"), Catch::Contains("'name': '2fast' is not an identifier"));
    CHECK_THAT(error_of("name: a\n"), Catch::Contains("'model' is missing"));
    CHECK_THAT(error_of("agent_class: RouterAgent\nname: a\n"),
               Catch::StartsWith(at + "1:14: 'agent_class': 'RouterAgent' is not one of"));
    CHECK_THAT(error_of("agent_class: LoopAgent\nname: a\nmax_iterations: -1\n"),
               Catch::StartsWith(at + "3:17: 'max_iterations' must be 0"));
    CHECK_THAT(error_of("agent_class: SequentialAgent\nname: a\nmax_iterations: 2\n"),
               Catch::Contains("'max_iterations' is not a field of SequentialAgent"));
    CHECK_THAT(error_of("name: a\nmodel: m\ninclude_contents: some\n"),
               Catch::Contains("'include_contents' must be default or none"));
    CHECK_THAT(error_of("name: a\nmodel: m\noutput_key: 'temp:'\n"), Catch::StartsWith(at + "1:7:"));
    CHECK_THAT(error_of("name: a\n  model: [\n"), Catch::StartsWith(at + "2:") && Catch::Contains("not YAML"));
    CHECK_THAT(error_of("- just\n- a list\n"), Catch::Contains("must be a map of fields"));
    CHECK_THAT(error_of("name: a\nmodel: m\nsub_agents: [{code: my.module.agent}]\n"),
               Catch::Contains("'code' reference names Python code"));

    // Sub-agents stay in the app's folder, exist, and do not name their own file.
    write(dir.path() / "outside.yaml", "name: outside\nmodel: m\n");
    CHECK_THAT(error_of("name: a\nmodel: m\nsub_agents: [{config_path: ../outside.yaml}]\n"),
               Catch::StartsWith(at + "3:28: 'config_path': ../outside.yaml is outside the app's folder"));
    fs::create_symlink(dir.path() / "outside.yaml", app / "link.yaml");
    CHECK_THAT(error_of("name: a\nmodel: m\nsub_agents: [{config_path: link.yaml}]\n"),
               Catch::Contains("link.yaml is outside the app's folder"));
    CHECK_THAT(error_of("name: a\nmodel: m\nsub_agents: [{config_path: missing.yaml}]\n"),
               Catch::Contains("missing.yaml does not exist"));
    // A folder named as a file (found by fuzz_agent_config: yaml-cpp's reader aborted on it).
    CHECK_THAT(error_of("name: a\nmodel: m\nsub_agents: [{config_path: !.yaml }]\n"), Catch::Contains("is not a file"));
    CHECK_THAT(error_of("name: a\nmodel: m\nsub_agents: [{config_path: .}]\n"), Catch::Contains("is not a file"));
    write(app / "big.yaml", "name: big\nmodel: m\ndescription: " + std::string(std::size_t{1} << 20, 'x') + "\n");
    CHECK_THAT(error_of("name: a\nmodel: m\nsub_agents: [{config_path: big.yaml}]\n"),
               Catch::Contains("larger than an agent config may be"));
    CHECK_THAT(error_of("name: a\nmodel: m\nsub_agents: [{config_path: root_agent.yaml}]\n"),
               Catch::Contains("names itself among its sub_agents"));
    write(app / "b.yaml", "name: b\nmodel: m\nsub_agents: [{config_path: b.yaml}]\n");
    CHECK_THAT(error_of("name: a\nmodel: m\nsub_agents: [{config_path: b.yaml}]\n"),
               Catch::Contains("b.yaml: names itself"));
    // Two agents of one name: the tree refuses it, and the message says where.
    write(app / "c.yaml", "name: a\nmodel: m\n");
    CHECK_THAT(error_of("name: a\nmodel: m\nsub_agents: [{config_path: c.yaml}]\n"), Catch::StartsWith(at + "1:7:"));

    // A model's provider that refuses (a key not set) is named with the agent.
    AgentConfigOptions keyless;
    keyless.make_model = [](const std::string&) -> std::shared_ptr<adk::Model> {
        throw adk::Error(adk::errc::invalid_argument, "GEMINI_API_KEY is not set");
    };
    write(yaml, "name: a\nmodel: gemini-2.5-flash\n");
    CHECK(load_error(yaml, keyless) == at + "1:7: agent 'a': model 'gemini-2.5-flash': GEMINI_API_KEY is not set");
}

TEST_CASE("agent config: a folder of apps, each named by its folder, sorted", "[cli][config]")
{
    adk::test::TempDir dir("config");
    write(dir.path() / "zeta" / "root_agent.yaml", "name: z\nmodel: m\n");
    write(dir.path() / "alpha" / "root_agent.yaml", "name: a\nmodel: m\n");
    write(dir.path() / "notes" / "README.md", "not an app\n");
    write(dir.path() / "loose.yaml", "name: loose\nmodel: m\n");
    Models models;
    auto apps = adk::cli::load_apps(dir.path(), models.options());
    REQUIRE(apps.size() == 2);
    CHECK(apps[0].name == "alpha");
    CHECK(apps[0].root_agent->name() == "a");
    CHECK(apps[1].name == "zeta");

    write(dir.path() / "bad-name" / "root_agent.yaml", "name: b\nmodel: m\n");
    CHECK_THROWS_WITH(adk::cli::load_apps(dir.path(), models.options()), Catch::Contains("bad-name: an app's folder"));
    adk::test::TempDir empty("config");
    CHECK_THROWS_WITH(adk::cli::load_apps(empty.path(), models.options()), Catch::Contains("holds no app"));
    CHECK_THROWS_WITH(adk::cli::load_apps(empty.path() / "nowhere", models.options()), Catch::Contains("is not a folder"));
}

TEST_CASE("adk command line: commands, flags in both forms, and usage errors", "[cli]")
{
    using adk::cli::detail::AppSource;
    using adk::cli::detail::parse_command_line;
    using adk::cli::detail::UsageError;
    auto cmd = parse_command_line({"web", "--port", "0", "--host=127.0.0.2", "--allow_origins", "http://a:1,http://b:2",
                                   "--allow_origins=*", "agents"},
                                  AppSource::yaml, "adk");
    CHECK(cmd.name == "web");
    CHECK(cmd.value("--port") == "0");
    CHECK(cmd.value("--host") == "127.0.0.2");
    CHECK(cmd.list("--allow_origins") == std::vector<std::string>{"http://a:1", "http://b:2", "*"});
    CHECK(cmd.positional == std::vector<std::string>{"agents"});
    CHECK_FALSE(cmd.value("--log_level"));

    auto run = parse_command_line({"run", "--resume", "--user", "ann", "agents/weather"}, AppSource::yaml, "adk");
    CHECK(run.has("--resume"));
    CHECK(run.value("--user") == "ann");

    auto help = parse_command_line({"run", "--help"}, AppSource::code, "prog");
    CHECK(help.help);
    CHECK_THAT(adk::cli::detail::usage(AppSource::code, "prog", "run"),
               Catch::Contains("usage: prog run [FLAGS] APP") && Catch::Contains("--session V"));
    CHECK_THAT(adk::cli::detail::usage(AppSource::yaml, "adk", "web"), Catch::Contains("--ui_dir") && Catch::Contains("--model"));
    CHECK_THAT(adk::cli::detail::usage(AppSource::code, "prog", "web"), !Catch::Contains("--model"));

    auto refusal = [](std::vector<std::string> args, AppSource source) -> std::string {
        try {
            parse_command_line(args, source, "adk");
        } catch (const UsageError& e) {
            CHECK_FALSE(e.usage.empty());
            return e.what();
        }
        return "accepted";
    };
    CHECK(refusal({}, AppSource::yaml) == "give a command");
    CHECK(refusal({"serve"}, AppSource::yaml) == "unknown command 'serve'");
    CHECK(refusal({"web", "--prot", "1"}, AppSource::yaml) == "unknown flag '--prot' for web");
    CHECK(refusal({"web", "--port"}, AppSource::yaml) == "--port needs a value");
    CHECK(refusal({"run", "--resume=yes", "a"}, AppSource::yaml) == "--resume takes no value");
    CHECK(refusal({"web", "a", "b"}, AppSource::yaml) == "unexpected argument 'b'");
    CHECK(refusal({"web", "agents"}, AppSource::code) == "unexpected argument 'agents'");
    CHECK(refusal({"run"}, AppSource::yaml) == "name the app: adk run AGENTS_DIR/APP");
    CHECK(refusal({"run", "--ui_dir", "x", "a"}, AppSource::yaml) == "unknown flag '--ui_dir' for run");
    CHECK(refusal({"api_server", "--model", "m"}, AppSource::code) == "unknown flag '--model' for api_server");
}

TEST_CASE("agent config: MCP toolsets spelled as ADK Python spells them, and refused where processes may not start",
          "[cli][config]")
{
    adk::test::TempDir dir("config");
    const fs::path yaml = dir.path() / "files" / "root_agent.yaml";
    write(yaml, R"(name: files_agent
model: gemini-2.5-flash
tools:
  - name: McpToolset
    args:
      stdio_connection_params:
        server_params:
          command: npx
          args: ["-y", "@modelcontextprotocol/server-filesystem", "/tmp/work"]
          env: {NODE_ENV: production}
          cwd: /tmp
        timeout: 5
      tool_filter: [read_file, list_directory]
  - name: MCPToolset
    args:
      stdio_server_params: {command: /usr/bin/my-server}
)");
    Models models;
    AgentConfigOptions options = models.options();
    auto agent = std::dynamic_pointer_cast<adk::LlmAgent>(adk::cli::load_agent_config(yaml, options));
    REQUIRE(agent);
    REQUIRE(agent->config().toolsets.size() == 2);
    auto first = std::dynamic_pointer_cast<adk::mcp::McpToolset>(agent->config().toolsets[0]);
    REQUIRE(first);
    const auto& o = first->options();
    CHECK(first->name() == "npx");
    CHECK(o.stdio->command == "npx");
    CHECK(o.stdio->args == std::vector<std::string>{"-y", "@modelcontextprotocol/server-filesystem", "/tmp/work"});
    CHECK(o.stdio->env.at("NODE_ENV") == "production");
    CHECK(o.stdio->cwd == "/tmp");
    CHECK(o.timeout == std::chrono::seconds(5));
    CHECK_FALSE(first->filter().allows_all());
    auto second = std::dynamic_pointer_cast<adk::mcp::McpToolset>(agent->config().toolsets[1]);
    REQUIRE(second);
    CHECK(second->name() == "my-server");
    CHECK(second->filter().allows_all());
    CHECK(second->options().timeout == std::chrono::seconds(60));

    options.allow_mcp_stdio = false;  // adk web and adk api_server without --allow_mcp_stdio
    CHECK_THAT(load_error(yaml, options), Catch::Contains("root_agent.yaml:") &&
                                              Catch::Contains("starts the process 'npx'") &&
                                              Catch::Contains("--allow_mcp_stdio"));
    options.allow_mcp_stdio = true;
    struct Case {
        const char* args;
        const char* error;
    };
    const Case cases[] = {
        {"{}", "give one server"},
        {"{stdio_connection_params: {server_params: {command: x}}, streamable_http_connection_params: {url: 'http://x/mcp'}}",
         "give one server"},
        {"{streamable_http_connection_params: {headers: {a: b}}}", "must be a map with a url"},
        {"{streamable_http_connection_params: {url: 'ftp://x/mcp'}}", "'url':"},
        {"{streamable_http_connection_params: {url: 'http://x/mcp', headers: {'bad name': v}}}", "'headers':"},
        {"{streamable_http_connection_params: {url: 'http://x/mcp', terminate_on_close: false}}", "unknown field 'terminate_on_close'"},
        {"{stdio_connection_params: {server_params: {command: x}}, tool_name_prefix: fs_}", "unknown arg 'tool_name_prefix'"},
        {"{stdio_connection_params: {server_params: {args: [a]}}}", "with a command"},
        {"{stdio_connection_params: {server_params: {command: x, shell: true}}}", "unknown field 'shell'"},
        {"{stdio_connection_params: {server_params: {command: x}, timeout: -1}}", "'timeout' must be a number of seconds"},
        {"{stdio_connection_params: {server_params: {command: x}}, tool_filter: read_file}", "'tool_filter' must be a list"},
    };
    for (const Case& c : cases) {
        INFO(c.args);
        write(yaml, std::string("name: files_agent\nmodel: m\ntools:\n  - name: McpToolset\n    args: ") + c.args + "\n");
        CHECK_THAT(load_error(yaml, options), Catch::Contains(c.error));
    }
}

TEST_CASE("agent config: an MCP toolset over HTTP, its headers and timeouts, loads where processes may not start",
          "[cli][config]")
{
    adk::test::TempDir dir("config-mcp-http");
    const fs::path yaml = dir.path() / "root_agent.yaml";
    write(yaml, R"(name: remote_agent
model: gemini-2.5-flash
tools:
  - name: McpToolset
    args:
      streamable_http_connection_params:
        url: https://tools.example.com/mcp
        headers: {Authorization: Bearer abc}
        timeout: 7
        sse_read_timeout: 120
      tool_filter: [search]
)");
    Models models;
    AgentConfigOptions options = models.options();
    options.allow_mcp_stdio = false;  // no process starts: allowed without --allow_mcp_stdio
    auto agent = std::dynamic_pointer_cast<adk::LlmAgent>(adk::cli::load_agent_config(yaml, options));
    REQUIRE(agent);
    REQUIRE(agent->config().toolsets.size() == 1);
    auto toolset = std::dynamic_pointer_cast<adk::mcp::McpToolset>(agent->config().toolsets[0]);
    REQUIRE(toolset);
    CHECK(toolset->name() == "tools.example.com");
    const auto& o = toolset->options();
    REQUIRE(o.http);
    CHECK_FALSE(o.stdio);
    CHECK(o.http->url == "https://tools.example.com/mcp");
    CHECK(o.http->headers == std::vector<std::pair<std::string, std::string>>{{"Authorization", "Bearer abc"}});
    CHECK(o.http->http.idle_timeout == std::chrono::seconds(120));
    CHECK(o.timeout == std::chrono::seconds(7));
    CHECK_FALSE(toolset->filter().allows_all());
    CHECK_FALSE(o.http->oauth);  // no OAuth unless the server or the file asks for it
}

TEST_CASE("agent config: an MCP server's OAuth client from auth_credential, and per user where a server loads it",
          "[cli][config]")
{
    adk::test::TempDir dir("config-mcp-oauth");
    const fs::path yaml = dir.path() / "root_agent.yaml";
    auto with_args = [&](const std::string& args) {
        write(yaml, "name: remote_agent\nmodel: gemini-2.5-flash\ntools:\n  - name: McpToolset\n    args:\n" + args);
    };
    with_args(R"(      streamable_http_connection_params: {url: "https://tools.example.com/mcp"}
      auth_scheme: {type: oauth2}
      auth_credential:
        auth_type: oauth2
        oauth2: {client_id: app-1, client_secret: s3cret}
)");
    Models models;
    AgentConfigOptions options = models.options();
    options.allow_mcp_stdio = false;
    options.mcp_oauth_per_user = true;  // as adk web and adk api_server load apps
    options.mcp_oauth_redirect_uri = "http://127.0.0.1:8000/dev-ui/";
    auto toolset_of = [&]() {
        auto agent = std::dynamic_pointer_cast<adk::LlmAgent>(adk::cli::load_agent_config(yaml, options));
        return std::dynamic_pointer_cast<adk::mcp::McpToolset>(agent->config().toolsets.at(0));
    };
    auto served = toolset_of();
    REQUIRE(served->options().http->oauth);
    const adk::mcp::OAuthOptions& oauth = *served->options().http->oauth;
    CHECK(oauth.client_id == "app-1");
    CHECK(oauth.client_secret == "s3cret");
    CHECK(oauth.per_user);
    CHECK_FALSE(oauth.authorize);
    CHECK(oauth.redirect_uri == "http://127.0.0.1:8000/dev-ui/");

    // adk run: the person at the terminal authorizes, for the one user.
    options.mcp_authorize = [](std::string) -> asio::awaitable<std::string> { co_return ""; };
    auto terminal = toolset_of();
    CHECK_FALSE(terminal->options().http->oauth->per_user);
    CHECK(terminal->options().http->oauth->authorize);
    CHECK(terminal->options().http->oauth->client_id == "app-1");

    with_args(R"(      streamable_http_connection_params: {url: "https://tools.example.com/mcp"}
      auth_credential: {auth_type: oauth2, oauth2: {client_id: app-1, redirect_uri: "https://app.example.com/back"}}
)");
    options.mcp_authorize = nullptr;
    CHECK(toolset_of()->options().http->oauth->redirect_uri == "https://app.example.com/back");  // the file's wins

    with_args(R"(      streamable_http_connection_params: {url: "https://tools.example.com/mcp"}
      auth_credential: {auth_type: api_key, api_key: abc}
)");
    CHECK_THAT(load_error(yaml, options), Catch::Contains("MCP servers take OAuth 2.1"));
    with_args(R"(      streamable_http_connection_params: {url: "https://tools.example.com/mcp"}
      auth_credential: {oauth2: {client_id: a, scopes: [x]}}
)");
    CHECK_THAT(load_error(yaml, options), Catch::Contains("unknown oauth2 field 'scopes'"));
}
