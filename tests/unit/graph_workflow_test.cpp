// Graph workflows (adk/workflow): edges, routes, fan-out and joins, loops, agents as nodes, retries, timeouts,
// errors that name the node, and resume that passes over the nodes that finished.
#include <adk/adk.hpp>
#include <adk/workflow/workflow.hpp>

#include "support/agents.hpp"
#include "support/run.hpp"
#include "support/runner_fixture.hpp"
#include "support/workflow_nodes.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <catch2/catch.hpp>

#include <map>

namespace asio = boost::asio;
namespace json = boost::json;
namespace wf = adk::workflow;
using namespace std::chrono_literals;
using adk::Content;
using adk::Event;
using adk::LlmAgent;
using adk::LlmResponse;
using adk::test::drain;
using adk::test::run;
using wf::NodeContext;
using wf::START;

namespace {

using Fixture = adk::test::RunnerFixture;
using adk::test::Ran;
using namespace adk::test::workflow_nodes;

}  // namespace

TEST_CASE("workflow: a chain from START passes each output on, and every event says its node", "[graph_workflow]")
{
    auto seen = std::make_shared<Inputs>();
    auto a = node("a", seen, [](const json::value& in) { return suffix(in, "+a"); });
    auto b = node("b", seen, [](const json::value& in) { return suffix(in, "+b"); });
    auto c = node("c", seen, [](const json::value& in) { return json::object{{"last", in}}; });
    auto flow = wf::Workflow::Builder("pipeline").chain({START, a, b, c}).build();
    Fixture f(flow);
    Ran ran = f.say("hi");
    REQUIRE_FALSE(ran.error);
    CHECK((*seen)["a"] == std::vector<json::value>{"hi"});
    CHECK((*seen)["b"] == std::vector<json::value>{"hi+a"});
    CHECK((*seen)["c"] == std::vector<json::value>{"hi+a+b"});
    CHECK(paths(ran.events) == std::vector<std::string>{"pipeline@1/a@1", "pipeline@1/b@1", "pipeline@1/c@1"});
    const Event* first = output_event(ran.events, "pipeline@1/a@1");
    REQUIRE(first);
    CHECK(first->author == "a");
    CHECK(first->text() == "hi+a");
    CHECK(first->node_info->output_for == std::vector<std::string>{"pipeline@1/a@1"});
    // The last node's output is the workflow's too.
    const Event* last = output_event(ran.events, "pipeline@1/c@1");
    REQUIRE(last);
    CHECK(*last->output == json::parse(R"({"last":"hi+a+b"})"));
    CHECK(last->text() == R"({"last":"hi+a+b"})");
    CHECK(last->node_info->output_for == std::vector<std::string>{"pipeline@1/c@1", "pipeline@1"});
    // What the wire carries reads back the same.
    const json::value wire = json::value_from(*last);
    CHECK(wire.at("nodeInfo").at("path") == "pipeline@1/c@1");
    CHECK(json::value_to<Event>(wire) == *last);
}

TEST_CASE("workflow: a node's route picks the edge, and default_route is taken when no route matches", "[graph_workflow]")
{
    auto seen = std::make_shared<Inputs>();
    auto classify = wf::function_node("classify", [](NodeContext& ctx, json::value input) -> asio::awaitable<json::value> {
        const std::string text(input.as_string());
        if (text.find("crash") != std::string::npos)
            ctx.set_route("bug");
        else if (text.find("?") != std::string::npos)
            ctx.set_route(json::array{"question", "other"});
        else
            ctx.set_route(7);
        co_return input;
    });
    auto bug = node("bug", seen, [](const json::value& in) { return suffix(in, " -> bug"); });
    auto question = node("question", seen, [](const json::value& in) { return suffix(in, " -> question"); });
    auto seven = node("seven", seen, [](const json::value& in) { return suffix(in, " -> seven"); });
    auto other = node("other", seen, [](const json::value& in) { return suffix(in, " -> other"); });
    auto flow = wf::Workflow::Builder("triage")
                    .edge(START, classify)
                    .route(classify, "bug", bug)
                    .route(classify, "question", question)
                    .route(classify, 7, seven)
                    .route(classify, wf::default_route, other)
                    .build();
    Fixture f(flow);
    REQUIRE_FALSE(f.say("it will crash").error);
    REQUIRE_FALSE(f.say("why?").error);
    REQUIRE_FALSE(f.say("seven").error);
    CHECK((*seen)["bug"] == std::vector<json::value>{"it will crash"});
    CHECK((*seen)["question"] == std::vector<json::value>{"why?"});
    CHECK((*seen)["seven"] == std::vector<json::value>{"seven"});
    CHECK((*seen)["other"].empty());

    // The route is on the wire.
    Ran ran = f.say("crash again");
    const Event* routed = output_event(ran.events, "triage@1/classify@1");
    REQUIRE(routed);
    CHECK(routed->actions.route == json::value("bug"));
}

TEST_CASE("workflow: default_route runs when the chosen route matches no edge", "[graph_workflow]")
{
    auto seen = std::make_shared<Inputs>();
    auto pick = wf::function_node("pick", [](NodeContext& ctx, json::value input) -> asio::awaitable<json::value> {
        ctx.set_route("nowhere");
        co_return input;
    });
    auto known = node("known", seen, [](const json::value& in) { return in; });
    auto fallback = node("fallback", seen, [](const json::value& in) { return in; });
    Fixture f(wf::Workflow::Builder("w")
                  .edge(START, pick)
                  .route(pick, "known", known)
                  .route(pick, wf::default_route, fallback)
                  .build());
    REQUIRE_FALSE(f.say("x").error);
    CHECK((*seen)["known"].empty());
    CHECK((*seen)["fallback"] == std::vector<json::value>{"x"});
}

TEST_CASE("workflow: fan-out runs both branches at once, and a join gets both outputs by name", "[graph_workflow]")
{
    auto seen = std::make_shared<Inputs>();
    auto split = node("split", seen, [](const json::value& in) { return in; });
    // left waits until right has started: it finishes only if the two run at once.
    auto gate = std::make_shared<asio::steady_timer*>(nullptr);  // left's timer while it waits
    auto opened = std::make_shared<bool>(false);
    auto left = wf::function_node("left", [gate, opened](NodeContext&, json::value in) -> asio::awaitable<json::value> {
        if (!*opened) {
            asio::steady_timer timer(co_await asio::this_coro::executor, 20s);
            *gate = &timer;
            auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
            *gate = nullptr;
            (void)ec;
        }
        co_return json::value(std::string(in.as_string()) + (*opened ? " left" : " left-alone"));
    });
    auto right = wf::function_node("right", [gate, opened](NodeContext&, json::value in) -> asio::awaitable<json::value> {
        *opened = true;
        if (*gate)
            (*gate)->cancel();
        co_return json::value(std::string(in.as_string()) + " right");
    });
    auto both = wf::join_node("both");
    auto after = node("after", seen, [](const json::value& in) { return in; });
    Fixture f(wf::Workflow::Builder("fan")
                  .edge(START, split)
                  .edges(split, {left, right})
                  .edge(left, both)
                  .edge(right, both)
                  .edge(both, after)
                  .build());
    Ran ran = f.say("go");
    REQUIRE_FALSE(ran.error);
    REQUIRE((*seen)["after"].size() == 1);
    CHECK((*seen)["after"][0] == json::parse(R"({"left":"go left","right":"go right"})"));
    // Each branch of the fan-out has a branch of its own; the join is back on the workflow's.
    const Event* l = output_event(ran.events, "fan@1/left@1");
    const Event* j = output_event(ran.events, "fan@1/both@1");
    REQUIRE(l);
    REQUIRE(j);
    CHECK(l->branch == "left@1");
    CHECK(j->branch.empty());
}

TEST_CASE("workflow: max_concurrency 1 runs one node at a time", "[graph_workflow]")
{
    auto running = std::make_shared<int>(0);
    auto most = std::make_shared<int>(0);
    auto busy = [running, most](std::string name) {
        return wf::function_node(name, [running, most](NodeContext&, json::value in) -> asio::awaitable<json::value> {
            *most = std::max(*most, ++*running);
            asio::steady_timer t(co_await asio::this_coro::executor, 1ms);
            co_await t.async_wait(asio::use_awaitable);
            --*running;
            co_return in;
        });
    };
    auto s = busy("s");
    auto x = busy("x");
    auto y = busy("y");
    auto z = busy("z");
    auto all = wf::join_node("all");
    Fixture f(wf::Workflow::Builder("one")
                  .edge(START, s)
                  .edges(s, {x, y, z})
                  .edge(x, all)
                  .edge(y, all)
                  .edge(z, all)
                  .max_concurrency(1)
                  .build());
    Ran ran = f.say("go");
    INFO((ran.error ? ran.error->message() : std::string()));
    REQUIRE_FALSE(ran.error);
    CHECK(*most == 1);
}

TEST_CASE("workflow: an edge back to a node runs it again as a run of its own", "[graph_workflow]")
{
    auto count = wf::function_node("count", [](NodeContext& ctx, json::value) -> asio::awaitable<json::value> {
        std::optional<json::value> n = ctx.state("n");
        const std::int64_t next = n ? n->as_int64() + 1 : 1;
        ctx.set_state("n", next);
        ctx.set_route(next < 3 ? "again" : "done");
        co_return json::value(next);
    });
    auto seen = std::make_shared<Inputs>();
    auto done = node("done", seen, [](const json::value& in) { return in; });
    Fixture f(wf::Workflow::Builder("loop")
                  .edge(START, count)
                  .route(count, "again", count)
                  .route(count, "done", done)
                  .build());
    Ran ran = f.say("go");
    REQUIRE_FALSE(ran.error);
    CHECK(paths(ran.events) ==
          std::vector<std::string>{"loop@1/count@1", "loop@1/count@2", "loop@1/count@3", "loop@1/done@1"});
    CHECK((*seen)["done"] == std::vector<json::value>{3});
    const Event* second = output_event(ran.events, "loop@1/count@2");
    REQUIRE(second);
    CHECK(second->actions.state_delta.at("n") == 2);
}

TEST_CASE("workflow: a cycle of function nodes ends at RunConfig::max_node_runs with an error that says so, nested "
          "workflows counted",
          "[graph_workflow]")
{
    auto runs = std::make_shared<int>(0);
    auto ping = wf::function_node("ping", [runs](NodeContext&, json::value in) -> asio::awaitable<json::value> {
        ++*runs;
        co_return in;
    });
    auto pong = wf::function_node("pong", [runs](NodeContext&, json::value in) -> asio::awaitable<json::value> {
        ++*runs;
        co_return in;
    });
    // pong's edge leads back to ping: nothing ever ends it, and no model is called.
    Fixture f(wf::Workflow::Builder("forever").edge(START, ping).edge(ping, pong).edge(pong, ping).build());
    adk::RunRequest request("u", "s", Content::user("go"));
    request.run_config.max_node_runs = 40;
    Ran ran = f.send(std::move(request));
    REQUIRE(ran.error);
    CHECK(ran.error->code() == adk::make_error_code(adk::errc::node_run_limit_exceeded));
    CHECK_THAT(ran.error->message(), Catch::Contains("reached RunConfig::max_node_runs (40 node runs)"));
    CHECK(*runs == 40);

    // The default bounds it too; a nested workflow's nodes count against the same invocation.
    *runs = 0;
    auto inner = wf::Workflow::Builder("inner").edge(START, ping).edge(ping, pong).edge(pong, ping).build();
    Fixture g(wf::Workflow::Builder("outer").edge(START, inner).build());
    Ran nested = g.say("go");
    REQUIRE(nested.error);
    CHECK_THAT(nested.error->message(), Catch::Contains("node 'inner' of workflow 'outer' failed") &&
                                            Catch::Contains("reached RunConfig::max_node_runs (1000 node runs)"));
    CHECK(*runs == adk::RunConfig().max_node_runs - 1);  // the nested workflow is a node run of its own
}

TEST_CASE("workflow: LlmAgents as nodes, each answer the next node's input", "[graph_workflow]")
{
    auto writer_model = std::make_shared<adk::testing::ScriptedModel>(
        std::vector<adk::testing::ScriptedModel::Turn>{LlmResponse::text("A short poem.")});
    auto critic_model = std::make_shared<adk::testing::ScriptedModel>(
        std::vector<adk::testing::ScriptedModel::Turn>{LlmResponse::text("{\"score\": 7}")});
    auto writer = LlmAgent::builder("writer").model(writer_model).instruction("Write.").build();
    json::value score_schema = json::parse(R"({"type":"object","properties":{"score":{"type":"integer"}}})");
    auto critic = LlmAgent::builder("critic").model(critic_model).instruction("Judge.").output_schema(score_schema).build();
    auto seen = std::make_shared<Inputs>();
    auto report = node("report", seen, [](const json::value& in) { return in; });
    auto flow = wf::Workflow::Builder("review").chain({START, writer, critic, report}).build();
    Fixture f(flow);
    Ran ran = f.say("Write about the sea");
    REQUIRE_FALSE(ran.error);
    // The writer answered the user's message; its answer became a user turn for the critic.
    const Event* poem = output_event(ran.events, "review@1/writer@1");
    REQUIRE(poem);
    CHECK(poem->author == "writer");
    CHECK(poem->node_info->message_as_output);
    CHECK(*poem->output == "A short poem.");
    const std::vector<adk::LlmRequest> asked = critic_model->requests();
    REQUIRE(asked.size() == 1);
    REQUIRE_FALSE(asked[0].contents.empty());
    CHECK(asked[0].contents.back().role == "user");
    CHECK(asked[0].contents.back().text() == "A short poem.");
    // The critic's JSON answer (it has an output schema) is its output, and the report node's input.
    CHECK((*seen)["report"] == std::vector<json::value>{json::parse(R"({"score":7})")});
}

TEST_CASE("workflow: a nested workflow is a node, its last node's output its output", "[graph_workflow]")
{
    auto seen = std::make_shared<Inputs>();
    auto x = node("x", seen, [](const json::value& in) { return suffix(in, "+x"); });
    auto y = node("y", seen, [](const json::value& in) { return suffix(in, "+y"); });
    auto inner = wf::Workflow::Builder("inner").chain({START, x, y}).build();
    auto pre = node("pre", seen, [](const json::value& in) { return suffix(in, "+pre"); });
    auto z = node("z", seen, [](const json::value& in) { return suffix(in, "+z"); });
    Fixture f(wf::Workflow::Builder("outer").chain({START, pre, inner, z}).build());
    Ran ran = f.say("in");
    REQUIRE_FALSE(ran.error);
    CHECK((*seen)["x"] == std::vector<json::value>{"in+pre"});  // the nested workflow's input is its node's
    CHECK((*seen)["z"] == std::vector<json::value>{"in+pre+x+y"});
    const Event* last_inner = output_event(ran.events, "outer@1/inner@1/y@1");
    REQUIRE(last_inner);
    CHECK(last_inner->node_info->output_for ==
          std::vector<std::string>{"outer@1/inner@1/y@1", "outer@1/inner@1"});
    const Event* last = output_event(ran.events, "outer@1/z@1");
    REQUIRE(last);
    CHECK(last->node_info->output_for == std::vector<std::string>{"outer@1/z@1", "outer@1"});
}

TEST_CASE("workflow: a failing node is retried as its RetryConfig says, then succeeds", "[graph_workflow]")
{
    // On the test's clock: the delays are a real RetryConfig's (2 s, then 4 s, no jitter), and each retry comes
    // when its delay has passed, not before.
    adk::testing::ManualClock clock;
    auto attempts = std::make_shared<std::vector<adk::Clock::time_point>>();
    wf::NodeOptions options;
    options.retry.emplace();
    options.retry->max_attempts = 3;
    options.retry->initial_delay = 2s;
    options.retry->max_delay = 4s;
    options.retry->jitter = 0;
    auto flaky = wf::function_node(
        "flaky",
        [attempts](NodeContext& ctx, json::value) -> asio::awaitable<json::value> {
            attempts->push_back(adk::Clock::now());
            CHECK(ctx.attempt() == static_cast<int>(attempts->size()));
            if (attempts->size() < 3)
                throw std::runtime_error("service unavailable");
            co_return json::value("ok");
        },
        options);
    Fixture f(wf::Workflow::Builder("w").edge(START, flaky).build());
    f.clock = &clock;
    Ran ran = f.say("go");
    REQUIRE_FALSE(ran.error);
    REQUIRE(attempts->size() == 3);
    const auto first_wait = (*attempts)[1] - (*attempts)[0];
    const auto second_wait = (*attempts)[2] - (*attempts)[1];
    CHECK(first_wait >= 2s);
    CHECK(first_wait < 2s + 2 * f.time_step);
    CHECK(second_wait >= 4s);
    CHECK(second_wait < 4s + 2 * f.time_step);
    CHECK(output_event(ran.events, "w@1/flaky@1"));
}

TEST_CASE("workflow: a node that fails after its retries ends the workflow with an error naming it", "[graph_workflow]")
{
    auto attempts = std::make_shared<int>(0);
    wf::NodeOptions options;
    options.retry.emplace();
    options.retry->max_attempts = 2;
    options.retry->initial_delay = 1s;
    options.retry->retry_on = [](const std::exception& e) {
        return std::string(e.what()).find("transient") != std::string::npos;
    };
    auto broken = wf::function_node(
        "broken",
        [attempts](NodeContext&, json::value) -> asio::awaitable<json::value> {
            ++*attempts;
            throw std::runtime_error("transient: the database is down");
            co_return json::value();
        },
        options);
    auto seen = std::make_shared<Inputs>();
    auto after = node("after", seen, [](const json::value& in) { return in; });
    adk::testing::ManualClock clock;
    Fixture f(wf::Workflow::Builder("w").chain({START, broken, after}).build());
    f.clock = &clock;
    Ran ran = f.say("go");
    REQUIRE(ran.error);
    CHECK(*attempts == 2);
    CHECK(seen->count("after") == 0);  // downstream never sees an empty input
    const std::string message = ran.error->message();
    CHECK(message.find("node 'broken' of workflow 'w' failed") != std::string::npos);
    CHECK(message.find("the database is down") != std::string::npos);
    bool reported = false;
    for (const Event& e : f.session().events)
        if (e.error_code == "NODE_FAILED") {
            reported = true;
            CHECK(e.author == "broken");
            CHECK(e.node_path() == "w@1/broken@1");
        }
    CHECK(reported);

    // An error retry_on refuses is not retried.
    *attempts = 0;
    auto strict = wf::function_node(
        "strict",
        [attempts](NodeContext&, json::value) -> asio::awaitable<json::value> {
            ++*attempts;
            throw std::invalid_argument("bad input");
            co_return json::value();
        },
        options);
    Fixture g(wf::Workflow::Builder("w2").edge(START, strict).build());
    CHECK(g.say("go").error);
    CHECK(*attempts == 1);
}

TEST_CASE("workflow: a node over its timeout fails with NODE_TIMEOUT", "[graph_workflow]")
{
    // A 30-second timeout on the test's clock: the node is cut off when 30 s have passed, not before.
    adk::testing::ManualClock clock;
    const adk::Clock::time_point started = adk::Clock::now();
    wf::NodeOptions options;
    options.timeout = 30s;
    auto slow = wf::function_node(
        "slow",
        [](NodeContext&, json::value) -> asio::awaitable<json::value> {
            adk::Timer t(co_await asio::this_coro::executor, 1h);
            co_await t.async_wait(asio::use_awaitable);
            co_return json::value("never");
        },
        options);
    Fixture f(wf::Workflow::Builder("w").edge(START, slow).build());
    f.clock = &clock;
    Ran ran = f.say("go");
    CHECK(adk::Clock::now() - started >= 30s);
    CHECK(adk::Clock::now() - started < 31s);
    REQUIRE(ran.error);
    CHECK(ran.error->code() == adk::errc::timed_out);
    CHECK(ran.error->message().find("node 'slow'") != std::string::npos);
    bool timed_out = false;
    for (const Event& e : f.session().events)
        timed_out = timed_out || e.error_code == "NODE_TIMEOUT";
    CHECK(timed_out);
}

TEST_CASE("workflow: schemas check a node's input and output", "[graph_workflow]")
{
    wf::NodeOptions options;
    options.output_schema = json::parse(R"({"type":"object","required":["n"]})");
    auto wrong = wf::function_node(
        "wrong", [](NodeContext&, json::value) -> asio::awaitable<json::value> { co_return json::value("text"); },
        options);
    Fixture f(wf::Workflow::Builder("w").edge(START, wrong).build());
    Ran ran = f.say("go");
    REQUIRE(ran.error);
    CHECK(ran.error->message().find("node 'wrong'") != std::string::npos);
    CHECK(ran.error->message().find("output") != std::string::npos);

    wf::NodeOptions typed;
    typed.input_schema = json::parse(R"({"type":"integer"})");
    auto numbers = wf::function_node(
        "numbers", [](NodeContext&, json::value in) -> asio::awaitable<json::value> { co_return in; }, typed);
    Fixture g(wf::Workflow::Builder("w").edge(START, numbers).build());
    Ran refused = g.say("not a number");
    REQUIRE(refused.error);
    CHECK(refused.error->message().find("input") != std::string::npos);
}

TEST_CASE("workflow: graphs it cannot run are refused when built, with what to do", "[graph_workflow]")
{
    auto seen = std::make_shared<Inputs>();
    auto a = node("a", seen, [](const json::value& in) { return in; });
    auto b = node("b", seen, [](const json::value& in) { return in; });
    auto a_again = node("a", seen, [](const json::value& in) { return in; });
    auto message_of = [](auto&& make) -> std::string {
        try {
            make();
        } catch (const adk::Error& e) {
            return e.message();
        }
        return "no error";
    };
    CHECK(message_of([&] { wf::Workflow::Builder("w").edge(a, b).build(); }).find("no edge from START") !=
          std::string::npos);
    CHECK(message_of([&] { wf::Workflow::Builder("w").edge(START, a).edge(a, START).build(); })
              .find("into START") != std::string::npos);
    CHECK(message_of([&] { wf::Workflow::Builder("w").edge(START, a).edge(b, a).build(); })
              .find("'b' cannot be reached") != std::string::npos);
    CHECK(message_of([&] { wf::Workflow::Builder("w").edge(START, a).edge(a, a_again).build(); })
              .find("two nodes named 'a'") != std::string::npos);
    CHECK(message_of([&] { wf::Workflow::Builder("w").edge(START, a).route(a, json::object{}, b).build(); })
              .find("a route is a string") != std::string::npos);
    CHECK(message_of([&] { wf::function_node("bad name", nullptr); }).find("not an identifier") != std::string::npos);
    CHECK(message_of([&] { wf::Workflow::Builder("w").build(); }).find("no edges") != std::string::npos);
}

TEST_CASE("workflow: routes compare as ADK compares them, as text", "[graph_workflow]")
{
    auto seen = std::make_shared<Inputs>();
    auto pick = wf::function_node("pick", [](NodeContext& ctx, json::value in) -> asio::awaitable<json::value> {
        ctx.set_route(in.as_string() == "yes");
        co_return in;
    });
    auto yes = node("yes", seen, [](const json::value& in) { return in; });
    auto no = node("no", seen, [](const json::value& in) { return in; });
    Fixture f(wf::Workflow::Builder("w").edge(START, pick).route(pick, "true", yes).route(pick, false, no).build());
    REQUIRE_FALSE(f.say("yes").error);
    REQUIRE_FALSE(f.say("no").error);
    CHECK((*seen)["yes"] == std::vector<json::value>{"yes"});
    CHECK((*seen)["no"] == std::vector<json::value>{"no"});
}

TEST_CASE("workflow: RetryConfig's delays double from the initial delay, capped, spread by the jitter", "[graph_workflow]")
{
    wf::RetryConfig plain;
    plain.jitter = 0;
    CHECK(plain.delay_after(1, 0.5) == 1000ms);
    CHECK(plain.delay_after(2, 0.5) == 2000ms);
    CHECK(plain.delay_after(3, 0.5) == 4000ms);
    CHECK(plain.delay_after(10, 0.5) == 60000ms);
    wf::RetryConfig jittered;  // ADK's defaults: jitter 1 spreads a delay over [0, 2x]
    CHECK(jittered.delay_after(1, 0.0) == 0ms);
    CHECK(jittered.delay_after(1, 0.5) == 1000ms);
    CHECK(jittered.delay_after(1, 0.999) >= 1990ms);
    CHECK(jittered.delay_after(20, 0.999) <= 60000ms);
}

TEST_CASE("workflow: resumed after a failure, the nodes that finished are passed over with their outputs",
          "[graph_workflow]")
{
    auto runs = std::make_shared<std::map<std::string, int>>();
    auto fail_once = std::make_shared<bool>(true);
    auto counted = [runs](std::string name, std::function<json::value(const json::value&)> fn) {
        std::string key = name;
        return wf::function_node(name, [runs, key, fn](NodeContext&, json::value in) -> asio::awaitable<json::value> {
            ++(*runs)[key];
            co_return fn(in);
        });
    };
    auto a = counted("a", [](const json::value& in) { return suffix(in, "+a"); });
    auto b = counted("b", [](const json::value& in) { return suffix(in, "+b"); });
    auto c = counted("c", [](const json::value& in) { return suffix(in, "+c"); });
    // c2 fails the first time. It starts once c's output is stored, and b's, which was emitted before it.
    auto c2 = wf::function_node("c2", [runs, fail_once](NodeContext&, json::value in) -> asio::awaitable<json::value> {
        ++(*runs)["c2"];
        if (*fail_once) {
            *fail_once = false;
            throw std::runtime_error("the printer is out of paper");
        }
        co_return suffix(in, "+c2");
    });
    auto both = wf::join_node("both");
    auto d = counted("d", [](const json::value& in) { return in; });
    Fixture f(wf::Workflow::Builder("job")
                  .edge(START, a)
                  .edges(a, {b, c})
                  .edge(b, both)
                  .chain({c, c2, both})
                  .edge(both, d)
                  .build(),
              /*resumable=*/true);
    Ran first = f.say("x");
    REQUIRE(first.error);
    CHECK(first.error->message().find("the printer is out of paper") != std::string::npos);
    const std::string invocation = f.session().events.back().invocation_id;
    CHECK((*runs)["a"] == 1);
    CHECK((*runs)["b"] == 1);
    CHECK((*runs)["c"] == 1);
    CHECK((*runs)["c2"] == 1);
    CHECK((*runs)["d"] == 0);

    Ran second = f.resume(invocation);
    REQUIRE_FALSE(second.error);
    CHECK((*runs)["a"] == 1);  // passed over: their outputs were stored
    CHECK((*runs)["b"] == 1);
    CHECK((*runs)["c"] == 1);
    CHECK((*runs)["c2"] == 2);
    CHECK((*runs)["d"] == 1);
    const Event* joined = output_event(second.events, "job@1/both@1");
    REQUIRE(joined);
    CHECK(*joined->output == json::parse(R"({"b":"x+a+b","c2":"x+a+c+c2"})"));
    // Nothing of the nodes that were passed over is said again.
    CHECK_FALSE(output_event(second.events, "job@1/a@1"));

    // A finished invocation does not resume.
    Ran again = f.resume(invocation);
    CHECK(again.error);
}

TEST_CASE("workflow: a node asks a person, the invocation pauses, and the answer is the node's output",
          "[graph_workflow][hitl]")
{
    auto runs = std::make_shared<int>(0);
    auto approve = asking("approve", "Ship it?", "", json::parse(R"({"type":"boolean"})"), false, runs);
    auto seen = std::make_shared<Inputs>();
    auto ship = node("ship", seen, [](const json::value& in) { return in; });
    Fixture f(wf::Workflow::Builder("release").chain({START, approve, ship}).build(), /*resumable=*/true);
    Ran asked = f.say("release 1.2");
    REQUIRE_FALSE(asked.error);
    const auto q = questions(asked.events);
    REQUIRE(q.size() == 1);
    const std::string id = q.begin()->first;
    CHECK(q.begin()->second.at("message") == "Ship it?");
    CHECK(q.begin()->second.at("interruptId") == json::value(id));
    CHECK(q.begin()->second.at("payload").at("asked_by") == "approve");
    CHECK(q.begin()->second.at("response_schema").at("type") == "boolean");
    CHECK(seen->count("ship") == 0);

    // An answer that misses the schema is refused and changes nothing.
    Ran wrong = f.answer(id, "adk_request_input", json::object{{"result", "maybe"}});
    REQUIRE(wrong.error);
    CHECK(wrong.error->message().find("response_schema") != std::string::npos);
    CHECK(seen->count("ship") == 0);

    Ran resumed = f.answer(id, "adk_request_input", json::object{{"result", true}});
    REQUIRE_FALSE(resumed.error);
    CHECK(*runs == 1);  // not run again (rerun_on_resume is off): the answer is its output
    CHECK((*seen)["ship"] == std::vector<json::value>{true});
    CHECK(asked.events.front().invocation_id == resumed.events.back().invocation_id);

    // Answered twice: refused.
    Ran twice = f.answer(id, "adk_request_input", json::object{{"result", true}});
    CHECK(twice.error);
}

TEST_CASE("workflow: a node that asks twice, run again after each answer, gets both", "[graph_workflow][hitl]")
{
    auto runs = std::make_shared<int>(0);
    wf::NodeOptions options;
    options.rerun_on_resume = true;
    auto interview = wf::function_node(
        "interview",
        [runs](NodeContext& ctx, json::value) -> asio::awaitable<json::value> {
            ++*runs;
            wf::RequestInput first;
            first.message = "Your name?";
            json::value name = co_await ctx.request_input(std::move(first));
            wf::RequestInput second;
            second.message = "Your city?";
            json::value city = co_await ctx.request_input(std::move(second));
            co_return json::object{{"name", name}, {"city", city}};
        },
        options);
    auto seen = std::make_shared<Inputs>();
    auto done = node("done", seen, [](const json::value& in) { return in; });
    Fixture f(wf::Workflow::Builder("form").chain({START, interview, done}).build(), /*resumable=*/true);
    Ran one = f.say("hello");
    REQUIRE_FALSE(one.error);
    auto q1 = questions(one.events);
    REQUIRE(q1.size() == 1);
    Ran two = f.answer(q1.begin()->first, "adk_request_input", json::object{{"result", "Ada"}});
    REQUIRE_FALSE(two.error);
    auto q2 = questions(two.events);
    REQUIRE(q2.size() == 1);  // the second question, and only it
    CHECK(q2.begin()->second.at("message") == "Your city?");
    Ran three = f.answer(q2.begin()->first, "adk_request_input", json::object{{"result", "London"}});
    REQUIRE_FALSE(three.error);
    CHECK(questions(three.events).empty());
    CHECK((*seen)["done"] == std::vector<json::value>{json::parse(R"({"name":"Ada","city":"London"})")});
    CHECK(*runs == 3);
}

TEST_CASE("workflow: two branches ask at once, answered in either order, each resumes only its own branch and the join joins",
          "[graph_workflow][hitl]")
{
    auto left_after = std::make_shared<Inputs>();
    auto left = asking("left", "Left?", "q-left");
    auto right = asking("right", "Right?", "q-right");
    auto left_next = node("left_next", left_after, [](const json::value& in) { return in; });
    auto both = wf::join_node("both");
    auto seen = std::make_shared<Inputs>();
    auto done = node("done", seen, [](const json::value& in) { return in; });
    auto split = node("split", seen, [](const json::value& in) { return in; });
    Fixture f(wf::Workflow::Builder("two")
                  .edge(START, split)
                  .edges(split, {left, right})
                  .edge(left, left_next)
                  .edge(left_next, both)
                  .edge(right, both)
                  .edge(both, done)
                  .build(),
              /*resumable=*/true);
    Ran asked = f.say("go");
    REQUIRE_FALSE(asked.error);
    auto q = questions(asked.events);
    REQUIRE(q.size() == 2);
    CHECK(q.count("q-left") == 1);
    CHECK(q.count("q-right") == 1);

    // The right branch is answered first: it goes on to the join, which waits for the left.
    Ran r = f.answer("q-right", "adk_request_input", json::object{{"result", "R"}});
    REQUIRE_FALSE(r.error);
    CHECK(questions(r.events).empty());  // the left question is not asked again
    CHECK(left_after->count("left_next") == 0);
    CHECK(seen->count("done") == 0);
    CHECK((*seen)["split"].size() == 1);  // passed over on resume

    Ran l = f.answer("q-left", "adk_request_input", json::object{{"result", "L"}});
    REQUIRE_FALSE(l.error);
    // The answers are the asking nodes' outputs (rerun_on_resume is off: the nodes did not run again).
    CHECK((*left_after)["left_next"] == std::vector<json::value>{"L"});
    REQUIRE((*seen)["done"].size() == 1);
    CHECK((*seen)["done"][0] == json::parse(R"({"left_next":"L","right":"R"})"));
    CHECK((*seen)["split"].size() == 1);
}

TEST_CASE("workflow: asking a person in an app that cannot resume is an error that says so", "[graph_workflow][hitl]")
{
    Fixture f(wf::Workflow::Builder("w").edge(START, asking("ask", "?")).build(), /*resumable=*/false);
    Ran ran = f.say("go");
    REQUIRE(ran.error);
    CHECK(ran.error->message().find("resumable") != std::string::npos);
}

TEST_CASE("workflow: on an io_context of four threads, fan-out and agent nodes keep to the invocation's strand",
          "[graph_workflow][threads]")
{
    adk::test::Harness h(4);
    auto agent = [](std::string name, std::string answer) {
        return LlmAgent::builder(std::move(name))
            .model(std::make_shared<adk::testing::ScriptedModel>(std::vector<adk::testing::ScriptedModel::Turn>{
                LlmResponse::text(answer), LlmResponse::text(answer), LlmResponse::text(answer)}))
            .build();
    };
    auto seen = std::make_shared<Inputs>();
    auto split = node("split", seen, [](const json::value& in) { return in; });
    auto a = agent("a", "from a");
    auto b = agent("b", "from b");
    auto c = node("c", seen, [](const json::value& in) { return suffix(in, "+c"); });
    auto all = wf::join_node("all");
    auto last = node("last", seen, [](const json::value& in) { return in; });
    auto flow = wf::Workflow::Builder("threads")
                    .edge(START, split)
                    .edges(split, {a, b, c})
                    .edge(a, all)
                    .edge(b, all)
                    .edge(c, all)
                    .edge(all, last)
                    .build();
    for (int i = 0; i < 3; ++i) {
        std::vector<Event> events = h.send(flow, "go", {}, "s" + std::to_string(i));
        REQUIRE_FALSE(events.empty());
    }
    REQUIRE((*seen)["last"].size() == 3);
    for (const json::value& joined : (*seen)["last"])
        CHECK(joined == json::parse(R"({"a":"from a","b":"from b","c":"go+c"})"));
}

TEST_CASE("workflow: a node with wait_for_output fires its edges only once it gives an output", "[graph_workflow]")
{
    auto seen = std::make_shared<Inputs>();
    auto a = node("a", seen, [](const json::value& in) { return suffix(in, "+a"); });
    auto b = node("b", seen, [](const json::value& in) { return suffix(in, "+b"); });
    wf::NodeOptions waits;
    waits.wait_for_output = true;
    auto collect = wf::function_node(
        "collect",
        [](NodeContext& ctx, json::value in) -> asio::awaitable<json::value> {
            json::array got;
            if (std::optional<json::value> before = ctx.state("got"))
                got = before->as_array();
            got.push_back(in);
            ctx.set_state("got", got);
            co_return got.size() < 2 ? json::value() : json::value(got.size());
        },
        waits);
    auto after = node("after", seen, [](const json::value& in) { return in; });
    Fixture f(wf::Workflow::Builder("w")
                  .edge(START, a)
                  .edge(START, b)
                  .edge(a, collect)
                  .edge(b, collect)
                  .edge(collect, after)
                  .build());
    Ran ran = f.say("x");
    REQUIRE_FALSE(ran.error);
    CHECK((*seen)["after"] == std::vector<json::value>{2});  // once, after the second input
    CHECK(paths(ran.events) == std::vector<std::string>{"w@1/a@1", "w@1/b@1", "w@1/collect@2", "w@1/after@1"});
}

TEST_CASE("workflow: a resumed workflow follows the routes it recorded, even where a node would now choose another",
          "[graph_workflow]")
{
    auto calls = std::make_shared<int>(0);
    auto fail_once = std::make_shared<bool>(true);
    auto pick = wf::function_node("pick", [calls](NodeContext& ctx, json::value in) -> asio::awaitable<json::value> {
        ++*calls;
        ctx.set_route(*calls == 1 ? "left" : "right");  // it would choose differently if it ran again
        co_return in;
    });
    auto seen = std::make_shared<Inputs>();
    auto left = wf::function_node("left", [seen, fail_once](NodeContext&, json::value in) -> asio::awaitable<json::value> {
        (*seen)["left"].push_back(in);
        if (std::exchange(*fail_once, false))
            throw std::runtime_error("not yet");
        co_return in;
    });
    auto right = node("right", seen, [](const json::value& in) { return in; });
    Fixture f(wf::Workflow::Builder("w").edge(START, pick).route(pick, "left", left).route(pick, "right", right).build(),
              /*resumable=*/true);
    REQUIRE(f.say("x").error);
    Ran resumed = f.resume(f.session().events.back().invocation_id);
    REQUIRE_FALSE(resumed.error);
    CHECK(*calls == 1);  // passed over, with the route it recorded
    CHECK((*seen)["left"].size() == 2);
    CHECK(seen->count("right") == 0);
}

TEST_CASE("workflow: a nested workflow that paused continues inside when its invocation resumes", "[graph_workflow][hitl]")
{
    auto runs = std::make_shared<std::map<std::string, int>>();
    auto counted = [runs](std::string name) {
        std::string key = name;
        return wf::function_node(name, [runs, key](NodeContext&, json::value in) -> asio::awaitable<json::value> {
            ++(*runs)[key];
            co_return in;
        });
    };
    auto inner = wf::Workflow::Builder("inner").chain({START, counted("x"), asking("ask", "Go on?", "q-inner"), counted("y")}).build();
    Fixture f(wf::Workflow::Builder("outer").chain({START, counted("before"), inner, counted("after")}).build(),
              /*resumable=*/true);
    Ran asked = f.say("go");
    REQUIRE_FALSE(asked.error);
    REQUIRE(questions(asked.events).count("q-inner") == 1);
    Ran done = f.answer("q-inner", "adk_request_input", json::object{{"result", "yes"}});
    REQUIRE_FALSE(done.error);
    CHECK((*runs)["before"] == 1);
    CHECK((*runs)["x"] == 1);  // the nested workflow did not start over
    CHECK((*runs)["y"] == 1);
    CHECK((*runs)["after"] == 1);
    const Event* last = output_event(done.events, "outer@1/after@1");
    REQUIRE(last);
    CHECK(*last->output == "yes");
}
