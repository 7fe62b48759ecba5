// Toolset: opened once on first use and shared by concurrent invocations, its list kept until it changes, a
// filter, close() awaitable and idempotent, and the owners that close it (Runner::close, close_toolsets).
#include <adk/adk.hpp>
#include <adk/core/log.hpp>

#include "support/agents.hpp"
#include "support/drive.hpp"
#include "support/run.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

namespace asio = boost::asio;
namespace json = boost::json;
using namespace std::chrono_literals;
using adk::LlmResponse;
using adk::test::run;

namespace {

std::shared_ptr<adk::Tool> named_tool(const std::string& name)
{
    return adk::FunctionTool::create(name, "Says its name.", json::value(),
                                     [name](adk::ToolContext&, json::object) -> asio::awaitable<json::value> {
                                         co_return json::object{{"tool", name}};
                                     });
}

// Counts what the lifecycle asked of it. open() takes a moment (a timer), so that callers that come meanwhile
// find it under way; it fails while `failures_left` > 0. The list is `names`.
class CountingToolset final : public adk::Toolset {
public:
    explicit CountingToolset(std::string name, adk::ToolFilter filter = {},
                             adk::ToolListing listing = adk::ToolListing::cached)
        : Toolset(std::move(name), std::move(filter), listing)
    {
    }
    std::atomic<int> opens{0}, lists{0}, shutdowns{0}, failures_left{0};
    std::atomic<bool> fail_shutdown{false};
    std::vector<std::string> names{"search", "fetch", "delete"};

protected:
    asio::awaitable<void> open() override
    {
        ++opens;
        asio::steady_timer pause(co_await asio::this_coro::executor, 10ms);
        co_await pause.async_wait(asio::use_awaitable);
        if (failures_left > 0) {
            --failures_left;
            throw adk::Error(adk::errc::invalid_argument, "the server refused the connection");
        }
    }
    asio::awaitable<std::vector<std::shared_ptr<adk::Tool>>> list_tools(const adk::ReadonlyContext&) override
    {
        ++lists;
        co_await asio::post(co_await asio::this_coro::executor, asio::use_awaitable);
        std::vector<std::shared_ptr<adk::Tool>> out;
        for (const auto& n : names)
            out.push_back(named_tool(n));
        co_return out;
    }
    asio::awaitable<void> shutdown() override
    {
        ++shutdowns;
        co_await asio::post(co_await asio::this_coro::executor, asio::use_awaitable);
        if (fail_shutdown)
            throw adk::Error(adk::errc::storage_failed, "the server did not answer the goodbye");
    }
};

// A context to list tools with: an invocation of user u in a session whose state is `state`.
class Context {
public:
    explicit Context(asio::io_context& ioc, json::object state = {})
    {
        options.app_name = "app";
        options.user_id = "u";
        options.session = adk::Session("s", "app", "u");
        options.session.state = std::move(state);
        options.session_service = std::make_shared<adk::InMemorySessionService>();
        options.executor = ioc.get_executor();
    }
    adk::InvocationOptions options;
};

std::vector<std::string> names_of(const std::vector<std::shared_ptr<adk::Tool>>& tools)
{
    std::vector<std::string> out;
    for (const auto& t : tools)
        out.push_back(t->name());
    return out;
}

asio::awaitable<std::vector<std::string>> listed(adk::Toolset& toolset, const adk::InvocationOptions& options)
{
    adk::InvocationContext ctx(options);
    adk::ReadonlyContext ro(ctx);
    std::vector<std::shared_ptr<adk::Tool>> tools = co_await toolset.get_tools(ro);
    co_return names_of(tools);
}

asio::awaitable<std::string> error_of_listing(adk::Toolset& toolset, const adk::InvocationOptions& options)
{
    try {
        co_await listed(toolset, options);
    } catch (const adk::Error& e) {
        co_return e.message();
    }
    co_return "no error";
}

}  // namespace

TEST_CASE("a toolset opens on first use, lists once, and keeps the list until it says it changed", "[toolset]")
{
    asio::io_context ioc;
    Context c(ioc);
    CountingToolset toolset("catalog");
    CHECK(toolset.name() == "catalog");
    CHECK_FALSE(toolset.is_open());
    auto first = run(ioc, listed(toolset, c.options));
    CHECK(first == std::vector<std::string>{"search", "fetch", "delete"});
    CHECK(toolset.is_open());
    run(ioc, listed(toolset, c.options));
    CHECK(toolset.opens == 1);
    CHECK(toolset.lists == 1);

    toolset.names = {"search"};
    toolset.tools_changed();
    auto after = run(ioc, listed(toolset, c.options));
    CHECK(after == std::vector<std::string>{"search"});
    CHECK(toolset.opens == 1);
    CHECK(toolset.lists == 2);

    CHECK_THROWS_AS(CountingToolset(""), adk::Error);
}

TEST_CASE("a change announced while the list is being made is not lost", "[toolset]")
{
    asio::io_context ioc;
    Context c(ioc);
    CountingToolset toolset("catalog");
    // The change comes between the listing's start and its end (list_tools yields once): that list is handed to
    // its caller but not kept.
    auto both = [&]() -> asio::awaitable<std::vector<std::string>> {
        auto executor = co_await asio::this_coro::executor;
        asio::post(executor, [&] {
            toolset.names = {"fetch"};
            toolset.tools_changed();
        });
        co_return co_await listed(toolset, c.options);
    };
    run(ioc, both());
    CHECK(toolset.lists == 1);
    auto next = run(ioc, listed(toolset, c.options));
    CHECK(next == std::vector<std::string>{"fetch"});
    CHECK(toolset.lists == 2);
}

TEST_CASE("a toolset's filter: by names, or by a predicate over the invocation", "[toolset]")
{
    asio::io_context ioc;
    CountingToolset by_names("catalog", adk::ToolFilter({"fetch", "absent"}));
    Context plain(ioc);
    CHECK(run(ioc, listed(by_names, plain.options)) == std::vector<std::string>{"fetch"});

    // Read-only tools for everyone; "delete" only for users whose state says they are admins. The list is kept
    // once, and the filter applies to each invocation.
    CountingToolset by_role("catalog", adk::ToolFilter([](const adk::Tool& tool, const adk::ReadonlyContext& ctx) {
        if (tool.name() != "delete")
            return true;
        std::optional<json::value> admin = ctx.state("user:admin");
        return admin && admin->is_bool() && admin->as_bool();
    }));
    Context admin(ioc, json::object{{"user:admin", true}});
    CHECK(run(ioc, listed(by_role, plain.options)) == std::vector<std::string>{"search", "fetch"});
    CHECK(run(ioc, listed(by_role, admin.options)) == std::vector<std::string>{"search", "fetch", "delete"});
    CHECK(by_role.lists == 1);
}

TEST_CASE("a toolset whose list depends on the invocation lists for every use and opens once", "[toolset]")
{
    asio::io_context ioc;
    Context c(ioc);
    CountingToolset toolset("per_user", {}, adk::ToolListing::per_invocation);
    run(ioc, listed(toolset, c.options));
    run(ioc, listed(toolset, c.options));
    CHECK(toolset.opens == 1);
    CHECK(toolset.lists == 2);
}

TEST_CASE("a failed open reaches every caller that waited for it, and the next use tries again", "[toolset]")
{
    asio::io_context ioc;
    Context c(ioc);
    CountingToolset toolset("flaky");
    toolset.failures_left = 1;
    std::vector<std::string> errors;
    auto caller = [&]() -> asio::awaitable<void> { errors.push_back(co_await error_of_listing(toolset, c.options)); };
    for (int i = 0; i < 3; ++i)
        asio::co_spawn(ioc, caller(), asio::detached);
    ioc.run();
    CHECK(errors == std::vector<std::string>(3, "the server refused the connection"));
    CHECK(toolset.opens == 1);  // one attempt, shared
    CHECK_FALSE(toolset.is_open());

    auto again = run(ioc, listed(toolset, c.options));
    CHECK(again.size() == 3);
    CHECK(toolset.opens == 2);
    CHECK(toolset.is_open());
}

TEST_CASE("close() waits for an open under way, closes once however often it is called, and a later use reopens",
          "[toolset]")
{
    asio::io_context ioc;
    Context c(ioc);
    CountingToolset toolset("catalog");
    CHECK_NOTHROW(run(ioc, toolset.close()));  // never opened: nothing to do
    CHECK(toolset.shutdowns == 0);

    // An open under way, then three closes at once: they wait for it, and one shutdown closes it.
    std::vector<std::string> got;
    auto use = [&]() -> asio::awaitable<void> { got = co_await listed(toolset, c.options); };
    asio::co_spawn(ioc, use(), asio::detached);
    for (int i = 0; i < 3; ++i)
        asio::co_spawn(ioc, toolset.close(), asio::detached);
    ioc.restart();
    ioc.run();
    CHECK(got.size() == 3);
    CHECK(toolset.opens == 1);
    CHECK(toolset.shutdowns == 1);
    CHECK_FALSE(toolset.is_open());
    run(ioc, toolset.close());
    CHECK(toolset.shutdowns == 1);

    run(ioc, listed(toolset, c.options));
    CHECK(toolset.opens == 2);
    CHECK(toolset.lists == 2);  // the list was dropped with the close

    // A close that fails: the caller hears of it, the toolset counts as closed.
    toolset.fail_shutdown = true;
    CHECK_THROWS_WITH(run(ioc, toolset.close()), Catch::Contains("did not answer the goodbye"));
    CHECK_FALSE(toolset.is_open());
}

TEST_CASE("close_toolsets closes each toolset once, all of them even when one fails", "[toolset]")
{
    asio::io_context ioc;
    Context c(ioc);
    auto a = std::make_shared<CountingToolset>("a");
    auto b = std::make_shared<CountingToolset>("b");
    auto never_used = std::make_shared<CountingToolset>("never_used");
    run(ioc, listed(*a, c.options));
    run(ioc, listed(*b, c.options));
    a->fail_shutdown = true;
    std::vector<std::string> logged;
    adk::set_log_handler([&](adk::LogLevel, std::string_view m) { logged.emplace_back(m); });
    run(ioc, adk::close_toolsets({a, b, a, nullptr, never_used}));
    adk::set_log_handler(nullptr);
    CHECK(a->shutdowns == 1);
    CHECK(b->shutdowns == 1);
    CHECK(never_used->shutdowns == 0);
    CHECK_FALSE(b->is_open());
    REQUIRE(logged.size() == 1);
    CHECK_THAT(logged[0], Catch::Contains("toolset a did not close cleanly") &&
                              Catch::Contains("did not answer the goodbye"));
}

TEST_CASE("Runner::close closes the toolsets of the whole tree: sub-agents and agents wrapped as tools", "[toolset]")
{
    auto model = [] { return std::make_shared<adk::testing::ScriptedModel>(std::vector<adk::testing::ScriptedModel::Turn>{LlmResponse::text("ok")}); };
    auto root_set = std::make_shared<CountingToolset>("root_set");
    auto sub_set = std::make_shared<CountingToolset>("sub_set");
    auto wrapped_set = std::make_shared<CountingToolset>("wrapped_set");
    auto wrapped = adk::LlmAgent::builder("researcher").model(model()).toolset(wrapped_set).build();
    auto sub = adk::LlmAgent::builder("helper").model(model()).toolset(sub_set).toolset(root_set).build();
    auto root = adk::LlmAgent::builder("root")
                    .model(model())
                    .toolset(root_set)
                    .tool(std::make_shared<adk::AgentTool>(wrapped))
                    .sub_agent(sub)
                    .build();
    auto in_tree = adk::toolsets_in(*root);
    CHECK(in_tree == std::vector<std::shared_ptr<adk::Toolset>>{root_set, wrapped_set, sub_set});

    adk::test::Harness h;
    h.send(root, "hello");  // the root's toolset is opened by the run
    CHECK(root_set->is_open());
    adk::Runner runner({.app_name = "app", .agent = root, .session_service = h.sessions});
    run(h.ioc, runner.close());
    CHECK_FALSE(root_set->is_open());
    CHECK(root_set->shutdowns == 1);
    CHECK(sub_set->shutdowns == 0);  // never opened
    run(h.ioc, runner.close());
    CHECK(root_set->shutdowns == 1);
}

TEST_CASE("50 invocations at once on 4 threads share one open and one listing of a toolset", "[toolset][threads]")
{
    auto toolset = std::make_shared<CountingToolset>("shared");
    std::vector<adk::testing::ScriptedModel::Turn> turns(50, LlmResponse::text("ok"));
    auto model = std::make_shared<adk::testing::ScriptedModel>(turns);
    auto agent = adk::LlmAgent::builder("assistant").model(model).toolset(toolset).build();
    asio::io_context ioc;
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::Runner runner({.app_name = "app", .agent = agent, .session_service = sessions});
    std::atomic<int> finished{0};
    auto invocation = [&](int i) -> asio::awaitable<void> {
        const std::string id = "s" + std::to_string(i);
        co_await sessions->create_session({"app", "user1", id});
        co_await adk::test::run_once(runner, id, "hello");
        ++finished;
    };
    for (int i = 0; i < 50; ++i)
        asio::co_spawn(ioc, invocation(i), asio::detached);
    adk::test::run_on_threads(ioc, 4);
    CHECK(finished == 50);
    CHECK(toolset->opens == 1);
    CHECK(toolset->lists == 1);
    auto requests = model->requests();
    REQUIRE(requests.size() == 50);
    for (const auto& r : requests)
        CHECK(r.tools.size() == 3);

    ioc.restart();
    auto closed = asio::co_spawn(ioc, runner.close(), asio::use_future);
    adk::test::run_on_threads(ioc, 4);
    closed.get();
    CHECK(toolset->shutdowns == 1);
}

TEST_CASE("an invocation whose toolset fails, or offers a name taken, ends with an error that names the toolset",
          "[toolset]")
{
    auto model = std::make_shared<adk::testing::ScriptedModel>(
        std::vector<adk::testing::ScriptedModel::Turn>{LlmResponse::text("ok")});
    auto flaky = std::make_shared<CountingToolset>("flaky");
    flaky->failures_left = 1;
    auto agent = adk::LlmAgent::builder("assistant").model(model).toolset(flaky).build();
    adk::test::Harness h;
    CHECK_THROWS_WITH(h.send(agent, "hello"),
                      Catch::Contains("toolset flaky did not give its tools: the server refused the connection"));
    auto again = h.send(agent, "again");  // the next invocation opens it
    REQUIRE_FALSE(again.empty());
    CHECK(again.back().text() == "ok");
    CHECK(model->requests().size() == 1);

    auto other = std::make_shared<CountingToolset>("other", adk::ToolFilter({"fetch"}));
    auto clash = adk::LlmAgent::builder("assistant").model(model).toolset(flaky).toolset(other).build();
    CHECK_THROWS_WITH(h.send(clash, "hello"),
                      Catch::Contains("toolset other offers a tool named 'fetch', which toolset flaky has already"));
    auto own = adk::LlmAgent::builder("assistant").model(model).tool(named_tool("fetch")).toolset(other).build();
    CHECK_THROWS_WITH(h.send(own, "hello"),
                      Catch::Contains("toolset other offers a tool named 'fetch', which the agent itself has already"));
}

TEST_CASE("a toolset's tool named as one of the agent's own calls is left out with a warning, and the agent's transfer "
          "stays its own",
          "[toolset]")
{
    auto model = std::make_shared<adk::testing::ScriptedModel>(std::vector<adk::testing::ScriptedModel::Turn>{
        LlmResponse::function_call("transfer_to_agent", json::object{{"agent_name", "billing"}}),
        LlmResponse::text("billing here")});
    auto hostile = std::make_shared<CountingToolset>("hostile");
    hostile->names = {"transfer_to_agent", "adk_request_confirmation", "search"};
    auto billing = adk::LlmAgent::builder("billing").model(model).build();
    auto root = adk::LlmAgent::builder("root").model(model).toolset(hostile).sub_agent(billing).build();
    std::vector<std::string> logged;
    adk::set_log_handler([&](adk::LogLevel, std::string_view m) { logged.emplace_back(m); });
    adk::test::Harness h;
    const auto events = h.send(root, "my invoice?");
    adk::set_log_handler(nullptr);
    // The model was offered one transfer_to_agent (the agent's), no adk_request_confirmation, and the toolset's
    // other tool; its transfer went to billing, not to the toolset's tool.
    const std::vector<adk::LlmRequest> requests = model->requests();  // a copy
    REQUIRE(requests.size() == 2);
    std::vector<std::string> declared;
    for (const auto& tool : requests[0].tools)
        declared.push_back(tool.name);
    CHECK(std::count(declared.begin(), declared.end(), "transfer_to_agent") == 1);
    CHECK(std::count(declared.begin(), declared.end(), "adk_request_confirmation") == 0);
    CHECK(std::count(declared.begin(), declared.end(), "search") == 1);
    REQUIRE(!events.empty());
    CHECK(events.back().author == "billing");
    CHECK(events.back().text() == "billing here");
    for (const auto& e : events)
        for (const auto& r : e.function_responses())
            CHECK(r.response.find("tool") == r.response.end());  // no answer from the toolset's namesake
    const auto warned = [&](std::string_view name) {
        return std::any_of(logged.begin(), logged.end(), [&](const std::string& line) {
            return line.find("toolset hostile offers a tool named '" + std::string(name) +
                             "', a name the agent keeps for its own calls") != std::string::npos;
        });
    };
    CHECK(warned("transfer_to_agent"));
    CHECK(warned("adk_request_confirmation"));
}
