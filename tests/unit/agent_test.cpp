// Agent: names and trees, callbacks with ADK's semantics, and InvocationContext.
#include <adk/adk.hpp>

#include "support/agents.hpp"
#include "support/run.hpp"

#include <boost/asio/strand.hpp>

#include <catch2/catch.hpp>

namespace asio = boost::asio;
namespace json = boost::json;
using adk::test::FnAgent;
using adk::test::run;

namespace {

std::shared_ptr<FnAgent> leaf(const std::string& name, std::vector<std::shared_ptr<adk::Agent>> subs = {})
{
    return std::make_shared<FnAgent>(
        name, [](adk::InvocationContext&, adk::EventSink&) -> asio::awaitable<void> { co_return; }, std::move(subs));
}

std::string construction_error(const std::function<void()>& make)
{
    try {
        make();
    } catch (const adk::Error& e) {
        CHECK(e.code() == adk::errc::invalid_argument);
        return e.message();
    }
    return "accepted";
}

struct Fixture {
    asio::io_context ioc;
    std::shared_ptr<adk::InMemorySessionService> sessions = std::make_shared<adk::InMemorySessionService>();
    int runs = 0;

    std::vector<adk::Event> run_agent(std::shared_ptr<adk::Agent> agent, adk::RunConfig config = {})
    {
        adk::Runner runner({.app_name = "app", .agent = agent, .session_service = sessions});
        std::string id = "s" + std::to_string(++runs);
        return run(ioc, [&]() -> asio::awaitable<std::vector<adk::Event>> {
            co_await sessions->create_session({"app", "user1", id});
            co_return co_await adk::test::run_once(runner, id, "hi", config);
        }());
    }
};

}  // namespace

TEST_CASE("agent names are identifiers, never 'user'", "[agent]")
{
    for (const char* bad : {"", "1abc", "has space", "dash-name", "dot.name", "ünï"})
        CHECK_THAT(construction_error([&] { leaf(bad); }), Catch::Contains("not an identifier"));
    CHECK_THAT(construction_error([] { leaf("user"); }), Catch::Contains("reserved"));
    for (const char* good : {"a", "_private", "Agent_2", "weather_agent"})
        CHECK(construction_error([&] { leaf(good); }) == "accepted");
}

TEST_CASE("an agent tree: one parent each, unique names, depth-first find", "[agent]")
{
    auto x = leaf("x");
    auto a = leaf("a", {x});
    auto b = leaf("b", {leaf("y", {leaf("z")})});
    auto root = leaf("root", {a, b});
    CHECK(x->parent() == a.get());
    CHECK(a->parent() == root.get());
    CHECK(&x->root_agent() == root.get());
    CHECK(root->find_agent("root") == root);
    CHECK(root->find_agent("x") == x);
    CHECK(root->find_agent("z")->name() == "z");
    CHECK(root->find_agent("nobody") == nullptr);
    CHECK(root->find_sub_agent("root") == nullptr);
    CHECK(a->find_agent("z") == nullptr);  // only its own subtree

    CHECK_THAT(construction_error([&] { leaf("other", {x}); }), Catch::Contains("already has parent 'a'"));
    CHECK_THAT(construction_error([] { leaf("p", {leaf("d"), leaf("q", {leaf("d")})}); }),
               Catch::Contains("'d' appears 2 times"));
    CHECK_THAT(construction_error([] { leaf("same", {leaf("same")}); }), Catch::Contains("'same' appears 2 times"));
    CHECK_THAT(construction_error([] { leaf("p", {nullptr}); }), Catch::Contains("null sub-agent"));

    // A failed construction leaves the would-be children free.
    auto free_child = leaf("free");
    CHECK(construction_error([&] { leaf("p", {free_child, leaf("free")}); }) != "accepted");
    CHECK(free_child->parent() == nullptr);
}

TEST_CASE("a before-agent callback that answers replaces the agent and ends the invocation", "[agent]")
{
    Fixture f;
    bool ran = false;
    bool after_ran = false;
    std::vector<int> called;
    auto agent = std::make_shared<FnAgent>("guarded", [&](adk::InvocationContext&, adk::EventSink&) -> asio::awaitable<void> {
        ran = true;
        co_return;
    });
    agent->add_before_agent_callback([&](adk::CallbackContext& cb) -> asio::awaitable<std::optional<adk::Content>> {
        called.push_back(1);
        cb.set_state("checked", true);
        co_return std::nullopt;
    });
    agent->add_before_agent_callback([&](adk::CallbackContext& cb) -> asio::awaitable<std::optional<adk::Content>> {
        called.push_back(2);
        CHECK(cb.state("checked")->as_bool());  // sees the first callback's write
        CHECK(cb.agent_name() == "guarded");
        co_return adk::Content::model("blocked by policy");
    });
    agent->add_before_agent_callback([&](adk::CallbackContext&) -> asio::awaitable<std::optional<adk::Content>> {
        called.push_back(3);  // never: the first answer wins
        co_return adk::Content::model("unreachable");
    });
    agent->add_after_agent_callback([&](adk::CallbackContext&) -> asio::awaitable<std::optional<adk::Content>> {
        after_ran = true;
        co_return std::nullopt;
    });
    auto events = f.run_agent(agent);
    CHECK(!ran);
    CHECK(!after_ran);
    CHECK(called == std::vector<int>{1, 2});
    REQUIRE(events.size() == 1);
    CHECK(events[0].author == "guarded");
    CHECK(events[0].text() == "blocked by policy");
    CHECK(events[0].actions.state_delta.at("checked") == true);
}

TEST_CASE("callbacks that only change state yield an actions-only event, and after callbacks answer last", "[agent]")
{
    Fixture f;
    auto agent = adk::test::counting_agent("counter", 2);
    agent->add_before_agent_callback([](adk::CallbackContext& cb) -> asio::awaitable<std::optional<adk::Content>> {
        cb.set_state("temp:started", true);
        co_return std::nullopt;
    });
    agent->add_after_agent_callback([](adk::CallbackContext& cb) -> asio::awaitable<std::optional<adk::Content>> {
        CHECK(cb.state("count")->as_int64() == 2);  // the agent's events were committed
        CHECK(cb.state("temp:started")->as_bool());
        co_return adk::Content::model("summary");
    });
    auto events = f.run_agent(agent);
    REQUIRE(events.size() == 4);
    CHECK(!events[0].content);
    CHECK(events[0].text().empty());
    CHECK(events[1].text() == "1");
    CHECK(events[2].text() == "2");
    CHECK(events[3].text() == "summary");
}

TEST_CASE("an exception in a callback or in the agent ends the stream with adk::Error", "[agent]")
{
    Fixture f;
    auto agent = adk::test::counting_agent("counter", 1);
    agent->add_after_agent_callback([](adk::CallbackContext&) -> asio::awaitable<std::optional<adk::Content>> {
        throw adk::Error(adk::errc::invalid_argument, "the callback refused");
        co_return std::nullopt;
    });
    CHECK_THROWS_WITH(f.run_agent(agent), Catch::Contains("the callback refused"));

    auto broken = std::make_shared<FnAgent>("broken", [](adk::InvocationContext& ctx, adk::EventSink& out) -> asio::awaitable<void> {
        co_await out.emit(ctx.make_event(adk::Content::model("before")));
        throw std::runtime_error("division by zero");
    });
    try {
        f.run_agent(broken);
        FAIL("no error");
    } catch (const adk::Error& e) {
        CHECK(e.code() == adk::errc::agent_failed);
        CHECK_THAT(e.message(), Catch::Contains("agent 'broken' failed: division by zero"));
    }

    auto anonymous = std::make_shared<FnAgent>("anon", [](adk::InvocationContext&, adk::EventSink& out) -> asio::awaitable<void> {
        adk::Event no_author;
        co_await out.emit(std::move(no_author));
    });
    CHECK_THROWS_WITH(f.run_agent(anonymous), Catch::Contains("ctx.make_event"));
}

TEST_CASE("InvocationContext: ids, events, LLM call budget, attributes, sub-agent contexts", "[agent]")
{
    asio::io_context ioc;
    auto child = leaf("child");
    auto root = leaf("root", {child});
    adk::InvocationOptions options;
    options.app_name = "app";
    options.user_id = "u";
    options.session = adk::Session("s", "app", "u");
    options.session_service = std::make_shared<adk::InMemorySessionService>();
    options.root_agent = root;
    options.executor = asio::make_strand(ioc);
    options.run_config.max_llm_calls = 3;
    adk::InvocationContext ctx(options, root.get());

    CHECK(ctx.invocation_id().rfind("e-", 0) == 0);
    CHECK(ctx.invocation_id().size() == 38);
    CHECK(ctx.invocation_id()[16] == '4');  // a version 4 UUID
    CHECK(ctx.origin() == "runner");
    adk::Event e = ctx.make_event(adk::Content::model("x"));
    CHECK(e.author == "root");
    CHECK(e.invocation_id == ctx.invocation_id());
    CHECK(e.id.size() == 36);
    CHECK(e.timestamp > 1.6e9);

    adk::InvocationContext sub = ctx.for_agent(*child).with_branch("root.child");
    CHECK(sub.make_event().author == "child");
    CHECK(sub.make_event().branch == "root.child");
    CHECK(sub.invocation_id() == ctx.invocation_id());

    ctx.check_and_inc_llm_call();
    sub.check_and_inc_llm_call();  // the budget is the invocation's, shared by its agents
    ctx.check_and_inc_llm_call();
    try {
        ctx.check_and_inc_llm_call();
        FAIL("a fourth call was allowed");
    } catch (const adk::Error& error) {
        CHECK(error.code() == adk::errc::llm_call_limit_exceeded);
        CHECK_THAT(error.message(), Catch::Contains("max_llm_calls (3"));
    }
    options.run_config.max_llm_calls = 0;
    adk::InvocationContext unlimited(options, root.get());
    for (int i = 0; i < 1000; ++i)
        unlimited.check_and_inc_llm_call();

    sub.set_attribute("trace", std::string("abc"));
    CHECK(std::any_cast<std::string>(ctx.attribute("trace")) == "abc");
    CHECK(!ctx.attribute("missing").has_value());
    CHECK(!ctx.cancelled());
    sub.cancel();
    CHECK(ctx.cancelled());

    adk::InvocationOptions no_service;
    no_service.executor = ioc.get_executor();
    CHECK_THROWS_WITH(adk::InvocationContext(no_service), Catch::Contains("session service"));
}

TEST_CASE("an agent runs without a Runner, and runs its children inline", "[agent]")
{
    asio::io_context ioc;
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    auto first = adk::test::counting_agent("first", 2);
    auto second = adk::test::counting_agent("second", 1);
    auto parent = std::make_shared<FnAgent>(
        "parent",
        [](adk::InvocationContext& ctx, adk::EventSink& out) -> asio::awaitable<void> {
            for (const auto& sub : ctx.agent().sub_agents())
                co_await sub->run_inline(ctx, out);
        },
        std::vector<std::shared_ptr<adk::Agent>>{first, second});
    auto events = run(ioc, [&]() -> asio::awaitable<std::vector<adk::Event>> {
        adk::InvocationOptions options;
        options.app_name = "app";
        options.user_id = "u";
        options.session = co_await sessions->create_session({"app", "u", "s"});
        options.session_service = sessions;
        options.root_agent = parent;
        options.executor = asio::make_strand(ioc);
        auto ctx = std::make_shared<adk::InvocationContext>(options, parent.get());
        auto stream = parent->run(ctx);
        auto collected = co_await adk::test::drain(stream);
        CHECK(ctx->session().events.size() == 3);
        co_return collected;
    }());
    REQUIRE(events.size() == 3);
    CHECK(events[0].author == "first");
    CHECK(events[2].author == "second");
    CHECK(events[2].text() == "1");
}
