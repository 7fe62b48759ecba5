// Plugins: every hook, in order, before the agents' own callbacks, short-circuiting like them.
#include <adk/adk.hpp>

#include "support/agents.hpp"
#include "support/run.hpp"

#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

#include <sstream>

namespace asio = boost::asio;
namespace json = boost::json;
using adk::LlmAgent;
using adk::LlmResponse;
using adk::test::run;
using adk::testing::ScriptedModel;

namespace {

// Records every hook as "name:hook"; answers where the test tells it to.
class Recorder final : public adk::Plugin {
public:
    Recorder(std::string name, std::vector<std::string>& log) : adk::Plugin(std::move(name)), log_(log) {}

    std::optional<adk::Content> user_message_replacement;
    std::optional<adk::Content> run_answer;
    std::optional<LlmResponse> model_answer;
    std::optional<json::value> tool_answer;
    bool tag_events = false;
    bool partials = true;  // sees_partial_events()

    bool sees_partial_events() const noexcept override { return partials; }

    asio::awaitable<std::optional<adk::Content>> on_user_message(adk::InvocationContext&, const adk::Content& m) override
    {
        note("user_message " + m.text());
        co_return user_message_replacement;
    }
    asio::awaitable<std::optional<adk::Content>> before_run(adk::InvocationContext&) override
    {
        note("before_run");
        co_return run_answer;
    }
    asio::awaitable<std::optional<adk::Event>> on_event(adk::InvocationContext&, const adk::Event& e) override
    {
        note("on_event " + e.author + (e.partial ? " partial" : ""));
        if (!tag_events)
            co_return std::nullopt;
        adk::Event tagged = e;
        tagged.custom_metadata["seen_by"] = name();
        co_return tagged;
    }
    asio::awaitable<void> after_run(adk::InvocationContext&) override
    {
        note("after_run");
        co_return;
    }
    asio::awaitable<std::optional<adk::Content>> before_agent(adk::Agent& a, adk::CallbackContext&) override
    {
        note("before_agent " + a.name());
        co_return std::nullopt;
    }
    asio::awaitable<std::optional<adk::Content>> after_agent(adk::Agent& a, adk::CallbackContext&) override
    {
        note("after_agent " + a.name());
        co_return std::nullopt;
    }
    asio::awaitable<std::optional<LlmResponse>> before_model(adk::CallbackContext&, adk::LlmRequest&) override
    {
        note("before_model");
        co_return model_answer;
    }
    asio::awaitable<std::optional<LlmResponse>> after_model(adk::CallbackContext&, const LlmResponse&) override
    {
        note("after_model");
        co_return std::nullopt;
    }
    asio::awaitable<std::optional<LlmResponse>> on_model_error(adk::CallbackContext&, const adk::LlmRequest&,
                                                               const adk::Error& e) override
    {
        note("on_model_error " + e.message());
        co_return LlmResponse::text("plugin recovered");
    }
    asio::awaitable<std::optional<json::value>> before_tool(adk::Tool& t, json::object&, adk::ToolContext&) override
    {
        note("before_tool " + t.name());
        co_return tool_answer;
    }
    asio::awaitable<std::optional<json::value>> after_tool(adk::Tool& t, const json::object&, adk::ToolContext&,
                                                           const json::value&) override
    {
        note("after_tool " + t.name());
        co_return std::nullopt;
    }
    asio::awaitable<std::optional<json::value>> on_tool_error(adk::Tool& t, const json::object&, adk::ToolContext&,
                                                              const adk::Error&) override
    {
        note("on_tool_error " + t.name());
        co_return std::nullopt;
    }

private:
    void note(const std::string& what) { log_.push_back(name() + ":" + what); }
    std::vector<std::string>& log_;
};

std::shared_ptr<adk::FunctionTool> echo_tool(std::vector<std::string>& log)
{
    return adk::FunctionTool::create("echo", "Echoes.", json::value(),
                                     [&log](adk::ToolContext&, json::object args) -> asio::awaitable<json::value> {
                                         log.push_back("tool ran");
                                         co_return args;
                                     });
}

// Runs each message on a 4-thread io_context, with the given plugins.
struct PluginRun : adk::test::Harness {
    PluginRun() : adk::test::Harness(4) {}
    std::vector<adk::Event> send(std::shared_ptr<adk::Agent> agent, std::vector<std::shared_ptr<adk::Plugin>> with,
                                 std::string text, std::string session = "s")
    {
        plugins = std::move(with);
        return adk::test::Harness::send(std::move(agent), std::move(text), {}, std::move(session));
    }
};

}  // namespace

TEST_CASE("plugins: every hook runs, in plugin order, before the agent's own callbacks", "[plugins][threads]")
{
    PluginRun r;
    std::vector<std::string> log;
    auto first = std::make_shared<Recorder>("p1", log);
    auto second = std::make_shared<Recorder>("p2", log);
    auto model = std::make_shared<ScriptedModel>(std::vector<ScriptedModel::Turn>{
        LlmResponse::function_call("echo", {{"x", 1}}), LlmResponse::text("done")});
    auto agent = LlmAgent::builder("agent")
                     .model(model)
                     .tool(echo_tool(log))
                     .before_model_callback([&](adk::CallbackContext&, adk::LlmRequest&) -> asio::awaitable<std::optional<LlmResponse>> {
                         log.push_back("agent:before_model");
                         co_return std::nullopt;
                     })
                     .before_tool_callback([&](adk::Tool&, json::object&, adk::ToolContext&) -> asio::awaitable<std::optional<json::value>> {
                         log.push_back("agent:before_tool");
                         co_return std::nullopt;
                     })
                     .build();
    auto events = r.send(agent, {first, second}, "hi");
    REQUIRE(events.size() == 3);
    std::vector<std::string> expected{
        "p1:user_message hi", "p2:user_message hi", "p1:before_run", "p2:before_run",
        "p1:before_agent agent", "p2:before_agent agent",
        "p1:before_model", "p2:before_model", "agent:before_model", "p1:after_model", "p2:after_model",
        "p1:on_event agent", "p2:on_event agent",
        "p1:before_tool echo", "p2:before_tool echo", "agent:before_tool", "tool ran", "p1:after_tool echo", "p2:after_tool echo",
        "p1:on_event agent", "p2:on_event agent",
        "p1:before_model", "p2:before_model", "agent:before_model", "p1:after_model", "p2:after_model",
        "p1:on_event agent", "p2:on_event agent",
        "p1:after_agent agent", "p2:after_agent agent", "p1:after_run", "p2:after_run"};
    CHECK(log == expected);
}

TEST_CASE("plugins short-circuit like callbacks: model, tool, run, user message, events", "[plugins][threads]")
{
    PluginRun r;
    std::vector<std::string> log;
    auto plugin = std::make_shared<Recorder>("guard", log);
    plugin->model_answer = LlmResponse::function_call("echo", {{"x", 2}});
    plugin->tool_answer = json::object{{"from", "plugin"}};
    auto model = std::make_shared<ScriptedModel>(std::vector<ScriptedModel::Turn>{});
    bool agent_callback_ran = false;
    auto agent = LlmAgent::builder("agent")
                     .model(model)
                     .tool(echo_tool(log))
                     .max_iterations(1)
                     .before_model_callback([&](adk::CallbackContext&, adk::LlmRequest&) -> asio::awaitable<std::optional<LlmResponse>> {
                         agent_callback_ran = true;
                         co_return std::nullopt;
                     })
                     .build();
    auto events = r.send(agent, {plugin}, "hi");
    REQUIRE(events.size() == 3);  // the plugin's call, the plugin's tool result, the fail-safe
    CHECK(events[0].function_calls().at(0).args.at("x") == 2);
    CHECK(events[1].function_responses().at(0).response.at("from") == "plugin");
    CHECK(model->requests().empty());
    CHECK(!agent_callback_ran);
    CHECK(std::find(log.begin(), log.end(), "tool ran") == log.end());

    // before_run answers for the agent; on_user_message replaces what is stored; on_event tags what the
    // caller sees while the session keeps the event as committed.
    std::vector<std::string> log2;
    auto gate = std::make_shared<Recorder>("gate", log2);
    gate->user_message_replacement = adk::Content::user("[redacted]");
    gate->run_answer = adk::Content::model("Closed for maintenance.");
    gate->tag_events = true;
    auto never = LlmAgent::builder("never").model(std::make_shared<ScriptedModel>(std::vector<ScriptedModel::Turn>{})).build();
    auto closed = r.send(never, {gate}, "my card is 4111", "s2");
    REQUIRE(closed.size() == 1);
    CHECK(closed[0].text() == "Closed for maintenance.");
    CHECK(closed[0].custom_metadata.at("seen_by") == "gate");
    run(r.ioc, [&]() -> asio::awaitable<void> {
        auto s = co_await r.sessions->get_session({"app", "user1", "s2"});
        REQUIRE(s->events.size() == 2);
        CHECK(s->events[0].text() == "[redacted]");
        CHECK(s->events[1].custom_metadata.empty());
    }());
    CHECK(std::find(log2.begin(), log2.end(), "gate:after_run") == log2.end());
}

TEST_CASE("plugins: a plugin that does not see partial events misses only the deltas", "[plugins][threads]")
{
    PluginRun r;
    std::vector<std::string> log;
    auto deltas = std::make_shared<Recorder>("deltas", log);
    auto whole = std::make_shared<Recorder>("whole", log);
    whole->partials = false;
    whole->tag_events = true;  // a plugin that replaces whole events still does
    auto model = std::make_shared<ScriptedModel>(std::vector<ScriptedModel::Turn>{
        ScriptedModel::Turn::streamed({LlmResponse::text("It is "), LlmResponse::text("sunny.")})});
    auto agent = LlmAgent::builder("agent").model(model).build();
    r.plugins = {deltas, whole};
    adk::RunConfig sse;
    sse.streaming_mode = adk::StreamingMode::sse;
    auto events = r.adk::test::Harness::send(agent, "weather?", sse);
    REQUIRE(events.size() == 3);
    CHECK(events[0].partial);
    CHECK(events[0].custom_metadata.empty());
    CHECK(events[2].text() == "It is sunny.");
    CHECK(events[2].custom_metadata.at("seen_by") == "whole");
    std::vector<std::string> on_event;
    for (const auto& line : log)
        if (line.find(":on_event") != std::string::npos)
            on_event.push_back(line);
    CHECK(on_event == std::vector<std::string>{"deltas:on_event agent partial", "deltas:on_event agent partial",
                                               "deltas:on_event agent", "whole:on_event agent"});

    // Without a plugin that sees them, the deltas stream past the plugins altogether.
    log.clear();
    r.plugins = {whole};
    auto model2 = std::make_shared<ScriptedModel>(std::vector<ScriptedModel::Turn>{
        ScriptedModel::Turn::streamed({LlmResponse::text("Rain "), LlmResponse::text("later.")})});
    auto again = r.adk::test::Harness::send(LlmAgent::builder("agent").model(model2).build(), "and later?", sse, "s2");
    REQUIRE(again.size() == 3);
    CHECK(again[1].partial);
    CHECK(again[1].text() == "later.");
    CHECK(std::count(log.begin(), log.end(), "whole:on_event agent") == 1);
    CHECK(std::count_if(log.begin(), log.end(), [](const std::string& l) { return l.find("partial") != std::string::npos; }) == 0);
}

TEST_CASE("plugins: on_model_error recovers, and the runner refuses bad plugin lists", "[plugins][threads]")
{
    PluginRun r;
    std::vector<std::string> log;
    auto plugin = std::make_shared<Recorder>("rescue", log);
    auto model = std::make_shared<ScriptedModel>(std::vector<ScriptedModel::Turn>{
        ScriptedModel::Turn::raise(adk::Error(adk::errc::agent_failed, "upstream 500"))});
    auto agent = LlmAgent::builder("agent").model(model).build();
    auto events = r.send(agent, {plugin}, "hi");
    REQUIRE(events.size() == 1);
    CHECK(events[0].text() == "plugin recovered");
    CHECK(std::find(log.begin(), log.end(), "rescue:on_model_error upstream 500") != log.end());

    auto dup_a = std::make_shared<Recorder>("same", log);
    auto dup_b = std::make_shared<Recorder>("same", log);
    CHECK_THROWS_WITH(adk::Runner({.app_name = "a", .agent = agent, .session_service = r.sessions, .plugins = {dup_a, dup_b}}),
                      Catch::Contains("two plugins are named 'same'"));
    CHECK_THROWS_WITH(adk::Runner({.app_name = "a", .agent = agent, .session_service = r.sessions, .plugins = {nullptr}}),
                      Catch::Contains("null plugin"));
}

TEST_CASE("LoggingPlugin writes one line per step", "[plugins][threads]")
{
    PluginRun r;
    std::ostringstream out;
    auto model = std::make_shared<ScriptedModel>(std::vector<ScriptedModel::Turn>{
        LlmResponse::function_call("echo", {{"x", 1}}), LlmResponse::text("all done")});
    std::vector<std::string> unused;
    auto agent = LlmAgent::builder("agent").model(model).tool(echo_tool(unused)).build();
    r.send(agent, {std::make_shared<adk::LoggingPlugin>(out)}, "hello there");
    std::string text = out.str();
    CHECK_THAT(text, Catch::Contains("[adk] user message, invocation e-") && Catch::Contains(": hello there"));
    CHECK_THAT(text, Catch::Contains("[adk] agent agent starts"));
    CHECK_THAT(text, Catch::Contains("[adk] model scripted-model called by agent with 1 contents and 1 tools"));
    CHECK_THAT(text, Catch::Contains("[adk] tool echo called with {\"x\":1}"));
    CHECK_THAT(text, Catch::Contains("[adk] tool echo returned {\"x\":1}"));
    CHECK_THAT(text, Catch::Contains("calls echo"));
    CHECK_THAT(text, Catch::Contains("from agent: all done"));
    CHECK_THAT(text, Catch::Contains("[adk] run ends"));
}
