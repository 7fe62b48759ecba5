// The workflow nodes beyond edges (adk/workflow): a node that runs nodes itself (NodeContext::run_node), a workflow
// whose entry does (ADK's dynamicEntry), ParallelWorker, ToolNode and typed state; each resumed after a person's
// answer with every node run once.
#include <adk/adk.hpp>
#include <adk/workflow/typed_state.hpp>
#include <adk/workflow/workflow.hpp>

#include "support/agents.hpp"
#include "support/runner_fixture.hpp"
#include "support/workflow_nodes.hpp"

#include <boost/describe/class.hpp>
#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

namespace asio = boost::asio;
namespace json = boost::json;
namespace wf = adk::workflow;
using namespace std::chrono_literals;
using namespace adk::test::workflow_nodes;
using adk::Event;
using adk::test::Ran;
using wf::NodeContext;
using wf::START;

namespace {

using Fixture = adk::test::RunnerFixture;

// A node that counts its runs in `runs` under its name and answers fn(input).
std::shared_ptr<wf::FunctionNode> counted(std::string name, std::shared_ptr<std::map<std::string, int>> runs,
                                          std::function<json::value(const json::value&)> fn)
{
    std::string key = name;
    return wf::function_node(std::move(name),
                             [runs, key, fn](NodeContext&, json::value in) -> asio::awaitable<json::value> {
                                 ++(*runs)[key];
                                 co_return fn(in);
                             });
}

std::vector<std::string> authors_at(const std::vector<Event>& events, std::string_view path)
{
    std::vector<std::string> out;
    for (const Event& e : events)
        if (e.node_info && e.node_info->path == path)
            out.push_back(e.author);
    return out;
}

}  // namespace

TEST_CASE("run_node: a node runs nodes below it, each a run of its own with its own path", "[graph_workflow]")
{
    auto runs = std::make_shared<std::map<std::string, int>>();
    auto shout = counted("shout", runs, [](const json::value& in) { return suffix(in, "!"); });
    auto twice = wf::function_node("twice", [shout](NodeContext& ctx, json::value in) -> asio::awaitable<json::value> {
        json::value once = co_await ctx.run_node(shout, std::move(in));
        json::value again = co_await ctx.run_node(shout, std::move(once));
        co_return again;
    });
    auto seen = std::make_shared<Inputs>();
    auto after = node("after", seen, [](const json::value& in) { return in; });
    Fixture f(wf::Workflow::Builder("w").chain({START, twice, after}).build());
    Ran ran = f.say("hey");
    REQUIRE_FALSE(ran.error);
    CHECK((*seen)["after"] == std::vector<json::value>{"hey!!"});
    CHECK((*runs)["shout"] == 2);
    // Each run below "twice" has its own path and outputs for itself; "twice" outputs for itself.
    CHECK(paths(ran.events) == std::vector<std::string>{"w@1/twice@1/shout@1", "w@1/twice@1/shout@2", "w@1/twice@1",
                                                        "w@1/after@1"});
    const Event* second = output_event(ran.events, "w@1/twice@1/shout@2");
    REQUIRE(second);
    CHECK(second->author == "shout");
    CHECK(second->node_info->output_for == std::vector<std::string>{"w@1/twice@1/shout@2"});
}

TEST_CASE("run_node: a child that fails fails its caller, and the error names both", "[graph_workflow]")
{
    auto broken = wf::function_node("broken", [](NodeContext&, json::value) -> asio::awaitable<json::value> {
        throw std::runtime_error("disk full");
        co_return nullptr;
    });
    auto caller = wf::function_node("caller", [broken](NodeContext& ctx, json::value in) -> asio::awaitable<json::value> {
        co_return co_await ctx.run_node(broken, std::move(in));
    });
    auto seen = std::make_shared<Inputs>();
    auto after = node("after", seen, [](const json::value& in) { return in; });
    Fixture f(wf::Workflow::Builder("w").chain({START, caller, after}).build());
    Ran ran = f.say("go");
    REQUIRE(ran.error);
    CHECK(ran.error->message().find("'caller'") != std::string::npos);
    CHECK(ran.error->message().find("'broken'") != std::string::npos);
    CHECK(ran.error->message().find("disk full") != std::string::npos);
    CHECK(seen->count("after") == 0);  // downstream never sees an empty input
}

TEST_CASE("run_node: one run number twice, a negative one, or no node is refused", "[graph_workflow]")
{
    auto echo = wf::function_node("echo", [](NodeContext&, json::value in) -> asio::awaitable<json::value> {
        co_return in;
    });
    auto run_as = [echo](int first, int second) {
        return wf::function_node("caller", [echo, first, second](NodeContext& ctx, json::value in) -> asio::awaitable<json::value> {
            wf::RunNodeOptions a;
            a.run = first;
            co_await ctx.run_node(echo, in, a);
            wf::RunNodeOptions b;
            b.run = second;
            co_return co_await ctx.run_node(echo, in, b);
        });
    };
    {
        Fixture f(wf::Workflow::Builder("w").edge(START, run_as(3, 3)).build());
        Ran ran = f.say("x");
        REQUIRE(ran.error);
        CHECK(ran.error->message().find("run 3 twice") != std::string::npos);
    }
    {
        // Automatic numbering goes on after the highest number given.
        Fixture f(wf::Workflow::Builder("w").edge(START, run_as(5, 0)).build());
        Ran ran = f.say("x");
        REQUIRE_FALSE(ran.error);
        CHECK(output_event(ran.events, "w@1/caller@1/echo@5"));
        CHECK(output_event(ran.events, "w@1/caller@1/echo@6"));
    }
    {
        Fixture f(wf::Workflow::Builder("w").edge(START, run_as(-1, 0)).build());
        Ran ran = f.say("x");
        REQUIRE(ran.error);
        CHECK(ran.error->message().find("1 or more") != std::string::npos);
    }
    {
        auto none = wf::function_node("caller", [](NodeContext& ctx, json::value in) -> asio::awaitable<json::value> {
            std::shared_ptr<wf::Node> missing;
            co_return co_await ctx.run_node(std::move(missing), std::move(in));
        });
        Fixture f(wf::Workflow::Builder("w").edge(START, none).build());
        Ran ran = f.say("x");
        REQUIRE(ran.error);
        CHECK(ran.error->message().find("was given no node") != std::string::npos);
    }
}

TEST_CASE("dynamic workflow: the entry runs nodes and agents, and its result is the workflow's output",
          "[graph_workflow]")
{
    auto runs = std::make_shared<std::map<std::string, int>>();
    auto classify = counted("classify", runs, [](const json::value& in) {
        return json::value(in.as_string().find("refund") != json::string::npos ? "billing" : "general");
    });
    auto model = std::make_shared<adk::testing::ScriptedModel>(
        std::vector<adk::testing::ScriptedModel::Turn>{adk::LlmResponse::text("We will refund you.")});
    auto billing = adk::LlmAgent::builder("billing").model(model).instruction("Help with bills.").build();
    auto flow = std::make_shared<wf::Workflow>(
        "desk", [classify, billing](NodeContext& ctx, json::value input) -> asio::awaitable<json::value> {
            json::value kind = co_await ctx.run_node(classify, input);
            ctx.set_state("kind", kind);
            if (kind == "billing")
                co_return co_await ctx.run_node(billing, std::move(input));
            co_return json::value("Someone will be in touch.");
        });
    CHECK(flow->nodes().empty());
    CHECK(flow->edges().empty());
    Fixture f(flow);
    Ran ran = f.say("I want a refund");
    REQUIRE_FALSE(ran.error);
    CHECK((*runs)["classify"] == 1);
    const Event* answer = output_event(ran.events, "desk@1/billing@1");
    REQUIRE(answer);
    CHECK(*answer->output == "We will refund you.");
    // The user's message is the agent's input: it is not repeated as a turn of its own.
    const std::vector<adk::LlmRequest> requests = model->requests();
    REQUIRE(requests.size() == 1);
    const std::vector<adk::Content>& contents = requests[0].contents;
    CHECK(std::count_if(contents.begin(), contents.end(),
                        [](const adk::Content& c) { return c.text() == "I want a refund"; }) == 1);
    const Event* result = output_event(ran.events, "desk@1");
    REQUIRE(result);
    CHECK(result->author == "desk");
    CHECK(*result->output == "We will refund you.");
    CHECK(result->node_info->output_for == std::vector<std::string>{"desk@1"});
    CHECK(result->actions.state_delta.at("kind") == "billing");
    CHECK(f.session().state.at("kind") == "billing");
}

TEST_CASE("dynamic workflow: paused by a person, the entry runs again and passes over what finished",
          "[graph_workflow][hitl]")
{
    auto runs = std::make_shared<std::map<std::string, int>>();
    auto draft = counted("draft", runs, [](const json::value& in) { return suffix(in, " (draft)"); });
    auto approve = asking("approve", "Send it?", "q-send");
    auto send = counted("send", runs, [](const json::value& in) { return in; });
    auto entries = std::make_shared<int>(0);
    auto flow = std::make_shared<wf::Workflow>(
        "mail", [=](NodeContext& ctx, json::value input) -> asio::awaitable<json::value> {
            ++*entries;
            json::value text = co_await ctx.run_node(draft, std::move(input));
            json::value verdict = co_await ctx.run_node(approve, text);
            if (verdict != true)  // the answer is the asking node's output (it is not run again)
                co_return json::value("not sent");
            co_return co_await ctx.run_node(send, std::move(text));
        });
    Fixture f(flow, /*resumable=*/true);
    Ran asked = f.say("hello");
    REQUIRE_FALSE(asked.error);
    REQUIRE(questions(asked.events).count("q-send") == 1);
    CHECK((*runs)["draft"] == 1);
    CHECK(runs->count("send") == 0);
    CHECK_FALSE(output_event(asked.events, "mail@1"));  // paused: no output yet

    Ran done = f.answer("q-send", "adk_request_input", json::object{{"result", true}});
    INFO((done.error ? done.error->message() : std::string()));
    REQUIRE_FALSE(done.error);
    CHECK(*entries == 2);
    CHECK((*runs)["draft"] == 1);  // passed over with its recorded output
    CHECK((*runs)["send"] == 1);
    const Event* result = output_event(done.events, "mail@1");
    REQUIRE(result);
    CHECK(*result->output == "hello (draft)");
    // The answer is the asking node's output, recorded once, on the invocation that asked.
    CHECK(authors_at(done.events, "mail@1/approve@1") == std::vector<std::string>{"approve"});
    CHECK(done.events.back().invocation_id == asked.events.front().invocation_id);
}

TEST_CASE("ParallelWorker: each item a run of its own, at most max_workers at once, outputs in the items' order",
          "[graph_workflow]")
{
    auto running = std::make_shared<int>(0);
    auto peak = std::make_shared<int>(0);
    auto branches = std::make_shared<std::map<std::int64_t, std::string>>();
    auto square = wf::function_node("square", [running, peak, branches](NodeContext& ctx, json::value in) -> asio::awaitable<json::value> {
        *peak = std::max(*peak, ++*running);
        // Later items finish first (on the test's clock: item i takes 20 - 3i seconds): the output keeps the items'
        // order all the same.
        adk::Timer timer(co_await asio::this_coro::executor, std::chrono::seconds(20 - 3 * in.as_int64()));
        co_await timer.async_wait(asio::use_awaitable);
        --*running;
        (*branches)[in.as_int64()] = ctx.invocation().branch();
        co_return in.as_int64() * in.as_int64();
    });
    auto items = wf::function_node("items", [](NodeContext&, json::value) -> asio::awaitable<json::value> {
        co_return json::array{0, 1, 2, 3, 4};
    });
    auto seen = std::make_shared<Inputs>();
    auto sum = node("sum", seen, [](const json::value& in) { return in; });
    auto workers = std::make_shared<wf::ParallelWorker>(square, 2);
    CHECK(workers->name() == "square");
    adk::testing::ManualClock clock;
    Fixture f(wf::Workflow::Builder("w").chain({START, items, workers, sum}).build());
    f.clock = &clock;
    Ran ran = f.say("go");
    REQUIRE_FALSE(ran.error);
    CHECK((*seen)["sum"] == std::vector<json::value>{json::parse("[0,1,4,9,16]")});
    CHECK(*peak == 2);
    for (int i = 1; i <= 5; ++i) {
        CHECK(output_event(ran.events, "w@1/square@1/square@" + std::to_string(i)));
        CHECK((*branches)[i - 1] == "square@" + std::to_string(i));  // each item on a branch of its own
    }

    // One input that is not a list is one item; an empty list, no item.
    auto one = std::make_shared<wf::ParallelWorker>(square, 3);
    Fixture single(wf::Workflow::Builder("w").chain({START, wf::function_node("three", [](NodeContext&, json::value) -> asio::awaitable<json::value> { co_return 3; }), one}).build());
    single.clock = &clock;
    Ran ran_one = single.say("go");
    REQUIRE_FALSE(ran_one.error);
    const Event* out = output_event(ran_one.events, "w@1/square@1");
    REQUIRE(out);
    CHECK(*out->output == json::parse("[9]"));

    CHECK_THROWS_AS(wf::ParallelWorker(square, 0), adk::Error);
}

TEST_CASE("ParallelWorker: the first item that fails fails it, and no other item starts", "[graph_workflow]")
{
    auto started = std::make_shared<std::vector<std::int64_t>>();
    auto check = wf::function_node("check", [started](NodeContext&, json::value in) -> asio::awaitable<json::value> {
        started->push_back(in.as_int64());
        if (in.as_int64() == 2)
            throw std::runtime_error("item 2 is bad");
        co_return in;
    });
    auto list = wf::function_node("list", [](NodeContext&, json::value) -> asio::awaitable<json::value> {
        co_return json::array{1, 2, 3, 4};
    });
    Fixture f(wf::Workflow::Builder("w").chain({START, list, std::make_shared<wf::ParallelWorker>(check, 1)}).build());
    Ran ran = f.say("go");
    REQUIRE(ran.error);
    CHECK(ran.error->message().find("item 2 is bad") != std::string::npos);
    CHECK(ran.error->message().find("'check'") != std::string::npos);
    CHECK(*started == std::vector<std::int64_t>{1, 2});
}

TEST_CASE("ParallelWorker: items that ask a person pause it, and answered, only they finish and it joins them all",
          "[graph_workflow][hitl]")
{
    auto runs = std::make_shared<std::map<std::string, int>>();
    // Even items are fine; odd ones ask a person which way to go.
    auto review = wf::function_node("review", [runs](NodeContext& ctx, json::value in) -> asio::awaitable<json::value> {
        ++(*runs)[std::to_string(in.as_int64())];
        if (in.as_int64() % 2 == 0)
            co_return in;
        wf::RequestInput question;
        question.message = "Keep " + std::to_string(in.as_int64()) + "?";
        question.interrupt_id = "q" + std::to_string(in.as_int64());
        co_return co_await ctx.request_input(std::move(question));
    }, [] {
        wf::NodeOptions options;
        options.rerun_on_resume = true;
        return options;
    }());
    auto list = wf::function_node("list", [](NodeContext&, json::value) -> asio::awaitable<json::value> {
        co_return json::array{0, 1, 2, 3};
    });
    auto seen = std::make_shared<Inputs>();
    auto done = node("done", seen, [](const json::value& in) { return in; });
    Fixture f(wf::Workflow::Builder("w").chain({START, list, std::make_shared<wf::ParallelWorker>(review), done}).build(),
              /*resumable=*/true);
    Ran asked = f.say("go");
    REQUIRE_FALSE(asked.error);
    auto q = questions(asked.events);
    REQUIRE(q.size() == 2);
    CHECK(q.count("q1") == 1);
    CHECK(q.count("q3") == 1);

    Ran first = f.answer("q3", "adk_request_input", json::object{{"result", "yes"}});
    REQUIRE_FALSE(first.error);
    CHECK(questions(first.events).empty());  // q1 is not asked again
    CHECK(seen->count("done") == 0);

    Ran second = f.answer("q1", "adk_request_input", json::object{{"result", "no"}});
    REQUIRE_FALSE(second.error);
    CHECK((*seen)["done"] == std::vector<json::value>{json::parse(R"([0,"no",2,"yes"])")});
    // The items that finished ran once; those that asked ran again once per answer that came for them.
    CHECK((*runs)["0"] == 1);
    CHECK((*runs)["2"] == 1);
    CHECK((*runs)["3"] == 2);
    CHECK((*runs)["1"] == 3);
}

TEST_CASE("ToolNode: a tool as a node, its input the call's arguments and its response the output", "[graph_workflow]")
{
    auto lookups = std::make_shared<int>(0);
    auto lookup = adk::FunctionTool::create(
        "lookup_order", "Finds an order.",
        json::parse(R"({"type":"object","properties":{"order":{"type":"string"}},"required":["order"]})"),
        [lookups](adk::ToolContext& ctx, json::object args) -> asio::awaitable<json::value> {
            ++*lookups;
            ctx.set_state("last_order", args.at("order"));
            co_return json::object{{"order", args.at("order")}, {"status", "shipped"}};
        });
    auto count = adk::FunctionTool::create("count", "Counts.", json::parse(R"({"type":"object"})"),
                                           [](adk::ToolContext&, json::object args) -> asio::awaitable<json::value> {
                                               co_return static_cast<std::int64_t>(args.size());
                                           });
    auto ask = wf::function_node("ask", [](NodeContext&, json::value in) -> asio::awaitable<json::value> {
        co_return json::object{{"order", in}};
    });
    auto seen = std::make_shared<Inputs>();
    auto reply = node("reply", seen, [](const json::value& in) { return in; });
    Fixture f(wf::Workflow::Builder("orders").chain({START, ask, lookup, count, reply}).build());
    Ran ran = f.say("A-17");
    REQUIRE_FALSE(ran.error);
    CHECK(*lookups == 1);
    const Event* response = output_event(ran.events, "orders@1/lookup_order@1");
    REQUIRE(response);
    CHECK(response->author == "lookup_order");
    REQUIRE(response->content);
    REQUIRE(response->content->parts.size() == 1);
    const auto& fr = response->content->parts[0].function_response;
    REQUIRE(fr);
    CHECK(fr->name == "lookup_order");
    CHECK(fr->id == "orders@1/lookup_order@1");
    CHECK(json::value(fr->response) == json::parse(R"({"order":"A-17","status":"shipped"})"));
    CHECK(*response->output == json::parse(R"({"order":"A-17","status":"shipped"})"));
    CHECK(response->actions.state_delta.at("last_order") == "A-17");
    // Only one event carries the tool node's output.
    int outputs = 0;
    for (const Event& e : ran.events)
        outputs += e.node_info && e.node_info->path == "orders@1/lookup_order@1" && e.output ? 1 : 0;
    CHECK(outputs == 1);
    // A result that is not an object is {"result": ...}, as a model sees it.
    CHECK((*seen)["reply"] == std::vector<json::value>{json::parse(R"({"result":2})")});
    CHECK(f.session().state.at("last_order") == "A-17");
}

TEST_CASE("ToolNode: input that is no arguments, and tools that must wait in a model's turn, are refused",
          "[graph_workflow]")
{
    auto echo = adk::FunctionTool::create("echo", "Echoes.", json::parse(R"({"type":"object"})"),
                                          [](adk::ToolContext&, json::object args) -> asio::awaitable<json::value> {
                                              co_return args;
                                          });
    auto give = [](json::value v) {
        return wf::function_node("give", [v](NodeContext&, json::value) -> asio::awaitable<json::value> { co_return v; });
    };
    {
        Fixture f(wf::Workflow::Builder("w").chain({START, give(json::array{1, 2}), echo}).build());
        Ran ran = f.say("x");
        REQUIRE(ran.error);
        CHECK(ran.error->message().find("object of the tool's arguments") != std::string::npos);
    }
    {
        Fixture f(wf::Workflow::Builder("w").chain({START, give("not json"), echo}).build());
        Ran ran = f.say("x");
        REQUIRE(ran.error);
        CHECK(ran.error->message().find("not a JSON object") != std::string::npos);
    }
    {
        // Text holding an object is read as one.
        Fixture f(wf::Workflow::Builder("w").chain({START, give(R"( {"a": 1} )"), echo}).build());
        Ran ran = f.say("x");
        REQUIRE_FALSE(ran.error);
        const Event* out = output_event(ran.events, "w@1/echo@1");
        REQUIRE(out);
        CHECK(*out->output == json::parse(R"({"a":1})"));
    }
    auto slow = adk::FunctionTool::create(
        "slow", "Runs long.", json::parse(R"({"type":"object"})"),
        [](adk::ToolContext&, json::object) -> asio::awaitable<json::value> { co_return "pending"; }, true);
    CHECK_THROWS_AS(wf::ToolNode(slow), adk::Error);
    auto guarded = adk::FunctionTool::create("guarded", "Needs approval.", json::parse(R"({"type":"object"})"),
                                             [](adk::ToolContext&, json::object) -> asio::awaitable<json::value> {
                                                 co_return "done";
                                             });
    guarded->set_require_confirmation(true);
    Fixture f(wf::Workflow::Builder("w").chain({START, guarded}).build());
    Ran ran = f.say("{}");
    REQUIRE(ran.error);
    INFO(ran.error->message());
    CHECK(ran.error->message().find("confirmation") != std::string::npos);
}

namespace {

struct Triage {
    std::string customer;
    int attempts = 0;
    std::vector<std::string> notes;
};
BOOST_DESCRIBE_STRUCT(Triage, (), (customer, attempts, notes))

}  // namespace

TEST_CASE("typed state: a node reads the state as a struct, and what it changes is stored with its output",
          "[graph_workflow]")
{
    auto intake = wf::typed_function_node<Triage>(
        "intake", [](NodeContext&, json::value in, Triage& t) -> asio::awaitable<json::value> {
            CHECK(t.attempts == 0);  // no key yet: the member as Triage{} has it
            t.customer = std::string(in.as_string());
            co_return nullptr;
        });
    auto attempt = wf::typed_function_node<Triage>(
        "attempt", [](NodeContext& ctx, json::value, Triage& t) -> asio::awaitable<json::value> {
            ++t.attempts;
            t.notes.push_back("try " + std::to_string(t.attempts));
            ctx.set_route(t.attempts < 3 ? "again" : "done");
            co_return nullptr;
        });
    auto finish = wf::typed_function_node<Triage>(
        "finish", [](NodeContext&, json::value, Triage& t) -> asio::awaitable<json::value> {
            co_return json::value(t.customer + " after " + std::to_string(t.attempts));
        });
    Fixture f(wf::Workflow::Builder("typed")
                  .chain({START, intake, attempt})
                  .route(attempt, "again", attempt)
                  .route(attempt, "done", finish)
                  .build());
    Ran ran = f.say("ada");
    REQUIRE_FALSE(ran.error);
    const Event* out = output_event(ran.events, "typed@1/finish@1");
    REQUIRE(out);
    CHECK(*out->output == "ada after 3");
    const adk::Session s = f.session();
    CHECK(s.state.at("customer") == "ada");
    CHECK(s.state.at("attempts") == 3);
    CHECK(s.state.at("notes") == json::parse(R"(["try 1","try 2","try 3"])"));
    // The finish node changed nothing: it stored no state.
    CHECK(out->actions.state_delta.empty());

    // A state value its member cannot take is an error naming the key.
    auto set_bad = wf::function_node("set_bad", [](NodeContext& ctx, json::value) -> asio::awaitable<json::value> {
        ctx.set_state("attempts", "many");
        co_return nullptr;
    });
    Fixture g(wf::Workflow::Builder("typed").chain({START, set_bad, finish}).build());
    Ran failed = g.say("x");
    REQUIRE(failed.error);
    CHECK(failed.error->message().find("state key 'attempts'") != std::string::npos);
}

TEST_CASE("isolation scope: an agent node in a scope of its own keeps its conversation from the agents outside it",
          "[graph_workflow]")
{
    using Turn = adk::testing::ScriptedModel::Turn;
    auto planner_model = std::make_shared<adk::testing::ScriptedModel>(
        std::vector<Turn>{adk::LlmResponse::text("secret plan")});
    auto writer_model = std::make_shared<adk::testing::ScriptedModel>(
        std::vector<Turn>{adk::LlmResponse::text("public text")});
    auto planner = adk::LlmAgent::builder("planner").model(planner_model).instruction("Plan.").build();
    auto writer = adk::LlmAgent::builder("writer").model(writer_model).instruction("Write.").build();
    wf::NodeOptions isolated;
    isolated.isolation_scope = "";
    auto plan = std::make_shared<wf::AgentNode>(planner, isolated);
    auto brief = wf::function_node("brief", [](NodeContext&, json::value) -> asio::awaitable<json::value> {
        co_return json::value("write it up");
    });
    Fixture f(wf::Workflow::Builder("w").chain({START, plan, brief, writer}).build());
    Ran ran = f.say("go");
    REQUIRE_FALSE(ran.error);
    const Event* secret = output_event(ran.events, "w@1/planner@1");
    REQUIRE(secret);
    CHECK(secret->isolation_scope == std::optional<std::string>("w@1/planner@1"));
    const Event* text = output_event(ran.events, "w@1/writer@1");
    REQUIRE(text);
    CHECK_FALSE(text->isolation_scope);
    // The writer saw the user's message and its brief, not the planner's answer.
    const std::vector<adk::LlmRequest> requests = writer_model->requests();
    REQUIRE(requests.size() == 1);
    std::vector<std::string> seen;
    for (const adk::Content& c : requests[0].contents)
        seen.push_back(c.text());
    CHECK(std::find(seen.begin(), seen.end(), "write it up") != seen.end());
    for (const std::string& s : seen)
        CHECK(s.find("secret plan") == std::string::npos);
    // Stored, the scope reads back.
    bool stored = false;
    for (const Event& e : f.session().events)
        stored = stored || (e.isolation_scope == std::optional<std::string>("w@1/planner@1") && e.output);
    CHECK(stored);
}

TEST_CASE("ParallelWorker and run_node: on an io_context of four threads, agent items keep to the invocation's strand",
          "[graph_workflow][threads]")
{
    adk::test::Harness h(4);
    std::vector<adk::testing::ScriptedModel::Turn> turns(24, adk::LlmResponse::text("checked"));
    auto checker = adk::LlmAgent::builder("checker")
                       .model(std::make_shared<adk::testing::ScriptedModel>(std::move(turns)))
                       .instruction("Check.")
                       .build();
    auto list = wf::function_node("list", [](NodeContext&, json::value) -> asio::awaitable<json::value> {
        co_return json::array{"a", "b", "c", "d"};
    });
    auto seen = std::make_shared<Inputs>();
    auto done = node("done", seen, [](const json::value& in) { return in; });
    auto workers = std::make_shared<wf::ParallelWorker>(std::make_shared<wf::AgentNode>(checker), 4);
    auto again = wf::function_node("again", [checker](NodeContext& ctx, json::value in) -> asio::awaitable<json::value> {
        json::value first = co_await ctx.run_node(checker, json::value("once more"));
        co_return json::object{{"items", std::move(in)}, {"again", std::move(first)}};
    });
    auto flow = wf::Workflow::Builder("threads").chain({START, list, workers, again, done}).build();
    for (int i = 0; i < 3; ++i)
        REQUIRE_FALSE(h.send(flow, "go", {}, "s" + std::to_string(i)).empty());
    REQUIRE((*seen)["done"].size() == 3);
    for (const json::value& out : (*seen)["done"])
        CHECK(out == json::parse(R"({"items":["checked","checked","checked","checked"],"again":"checked"})"));
}
