// Workflow agents and multi-agent systems: Sequential, Parallel, Loop, transfer, AgentTool.
#include <adk/adk.hpp>

#include "support/agents.hpp"
#include "support/run.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

namespace asio = boost::asio;
namespace json = boost::json;
using namespace std::chrono_literals;
using adk::LlmAgent;
using adk::LlmResponse;
using adk::test::FnAgent;
using adk::test::run;
using adk::testing::ScriptedModel;
using Turns = std::vector<ScriptedModel::Turn>;

namespace {

std::shared_ptr<ScriptedModel> scripted_turns(Turns turns)
{
    return std::make_shared<ScriptedModel>(std::move(turns));
}

std::shared_ptr<ScriptedModel> model_of(const std::shared_ptr<LlmAgent>& agent)
{
    return std::dynamic_pointer_cast<ScriptedModel>(agent->config().model);
}

// A branch agent that waits an hour, recording whether it was aborted.
std::shared_ptr<FnAgent> sleeper(std::string name, std::shared_ptr<std::atomic<int>> aborted)
{
    return std::make_shared<FnAgent>(std::move(name), [aborted](adk::InvocationContext& ctx, adk::EventSink& out) -> asio::awaitable<void> {
        co_await out.emit(ctx.make_event(adk::Content::model("started")));
        asio::steady_timer t(co_await asio::this_coro::executor, 1h);
        try {
            co_await t.async_wait(asio::use_awaitable);
        } catch (const boost::system::system_error&) {
            ++*aborted;
            throw;
        }
    });
}

}  // namespace

TEST_CASE("SequentialAgent: children run in order and each sees what the others committed", "[workflow][threads]")
{
    adk::test::Harness h(4);  // a multi-threaded io_context
    auto writer = LlmAgent::builder("writer").model(scripted_turns({LlmResponse::text("A draft.")})).output_key("draft").build();
    auto editor = LlmAgent::builder("editor")
                      .model(scripted_turns({LlmResponse::text("An edited draft.")}))
                      .instruction("Edit this: {draft}")
                      .build();
    auto pipeline = std::make_shared<adk::SequentialAgent>("pipeline", "Write, then edit.",
                                                           std::vector<std::shared_ptr<adk::Agent>>{writer, editor});
    auto events = h.send(pipeline, "Write about cats.");
    REQUIRE(events.size() == 2);
    CHECK(events[0].author == "writer");
    CHECK(events[1].author == "editor");
    auto seen = model_of(editor)->requests().at(0);
    CHECK(seen.system_text().rfind("Edit this: A draft.", 0) == 0);  // the writer's output_key
    REQUIRE(seen.contents.size() == 2);
    CHECK(*seen.contents[1].parts[1].text == "[writer] said: A draft.");  // another agent's turn, as context
}

TEST_CASE("ParallelAgent: branches are named parent.child and see only their own branch", "[workflow][threads]")
{
    adk::test::Harness h(4);  // a multi-threaded io_context
    auto x = LlmAgent::builder("x").model(scripted_turns({LlmResponse::text("x1"), LlmResponse::text("x2")})).build();
    auto y = LlmAgent::builder("y").model(scripted_turns({LlmResponse::text("y1"), LlmResponse::text("y2")})).build();
    auto fanout = std::make_shared<adk::ParallelAgent>("fanout", "Both at once.", std::vector<std::shared_ptr<adk::Agent>>{x, y});
    auto root = std::make_shared<adk::SequentialAgent>("root", "Runs the fan-out.", std::vector<std::shared_ptr<adk::Agent>>{fanout});
    auto first = h.send(root, "one");
    REQUIRE(first.size() == 2);
    for (const auto& e : first)
        CHECK(e.branch == "fanout." + e.author);
    h.send(root, "two");
    auto second_x = model_of(x)->requests().at(1);
    REQUIRE(second_x.contents.size() == 3);  // one, x1, two: nothing of y's branch
    CHECK(second_x.contents[1].text() == "x1");
    CHECK(second_x.contents[2].text() == "two");
}

TEST_CASE("ParallelAgent: two CPU-bound branches run at the same time on a multi-threaded io_context", "[workflow][threads]")
{
    std::atomic<int> started{0};
    std::atomic<int> saw_other{0};
    auto busy = [&](std::string name) {
        return std::make_shared<FnAgent>(name, [&](adk::InvocationContext& ctx, adk::EventSink& out) -> asio::awaitable<void> {
            ++started;
            // Spin (no co_await: the strand is busy) until the other branch has started too. Run one after
            // the other, the first branch would spin to the deadline and never see the second.
            auto deadline = std::chrono::steady_clock::now() + 10s;
            while (started.load() < 2 && std::chrono::steady_clock::now() < deadline) {
            }
            if (started.load() == 2)
                ++saw_other;
            co_await out.emit(ctx.make_event(adk::Content::model("done")));
        });
    };
    auto fanout = std::make_shared<adk::ParallelAgent>("fanout", "CPU-bound branches.",
                                                       std::vector<std::shared_ptr<adk::Agent>>{busy("left"), busy("right")});
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::Runner runner({.app_name = "app", .agent = fanout, .session_service = sessions});
    asio::io_context ioc;
    auto body = [&]() -> asio::awaitable<std::size_t> {
        co_await sessions->create_session({"app", "user1", "s"});
        co_return (co_await adk::test::run_once(runner, "s", "go")).size();
    };
    auto result = asio::co_spawn(ioc, body, asio::use_future);
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i)
        threads.emplace_back([&] { ioc.run(); });
    CHECK(result.get() == 2);
    for (auto& t : threads)
        t.join();
    CHECK(saw_other == 2);
}

TEST_CASE("ParallelAgent: one failing branch cancels its siblings and its error surfaces", "[workflow][threads]")
{
    adk::test::Harness h(4);  // a multi-threaded io_context
    auto aborted = std::make_shared<std::atomic<int>>(0);
    auto failing = std::make_shared<FnAgent>("failing", [](adk::InvocationContext& ctx, adk::EventSink& out) -> asio::awaitable<void> {
        co_await out.emit(ctx.make_event(adk::Content::model("about to fail")));
        asio::steady_timer t(co_await asio::this_coro::executor, 10ms);
        co_await t.async_wait(asio::use_awaitable);
        throw std::runtime_error("the search backend is down");
    });
    auto fanout = std::make_shared<adk::ParallelAgent>(
        "fanout", "One fails.",
        std::vector<std::shared_ptr<adk::Agent>>{sleeper("slow_a", aborted), failing, sleeper("slow_b", aborted)});
    std::string error;
    try {
        h.send(fanout, "go");
    } catch (const adk::Error& e) {
        error = e.message();
    }
    CHECK_THAT(error, Catch::Contains("agent 'failing' failed: the search backend is down"));
    CHECK(*aborted == 2);  // both siblings were stopped; run() checked nothing is left running
}

TEST_CASE("ParallelAgent: cancelling the invocation stops every branch, io_context on 4 threads", "[workflow][threads]")
{
    auto aborted = std::make_shared<std::atomic<int>>(0);
    auto fanout = std::make_shared<adk::ParallelAgent>(
        "fanout", "All wait.",
        std::vector<std::shared_ptr<adk::Agent>>{sleeper("a", aborted), sleeper("b", aborted), sleeper("c", aborted)});
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::Runner runner({.app_name = "app", .agent = fanout, .session_service = sessions});
    asio::io_context ioc;
    std::promise<std::string> id;
    auto body = [&]() -> asio::awaitable<std::string> {
        co_await sessions->create_session({"app", "u", "s"});
        auto stream = co_await runner.run("u", "s", adk::Content::user("go"));
        int started = 0;
        std::string invocation;
        while (started < 3) {
            auto ev = co_await stream.next();
            invocation = ev->invocation_id;
            ++started;
        }
        id.set_value(invocation);
        try {
            while (co_await stream.next()) {
            }
        } catch (const adk::Error& e) {
            co_return e.message();
        }
        co_return "no error";
    };
    auto result = asio::co_spawn(asio::make_strand(ioc), body, asio::use_future);
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i)
        threads.emplace_back([&] { ioc.run(); });
    CHECK(runner.cancel(id.get_future().get()));
    CHECK_THAT(result.get(), Catch::Contains("cancelled"));
    for (auto& t : threads)
        t.join();  // every branch ended: the io_context ran out of work
    CHECK(*aborted == 3);
}

TEST_CASE("ParallelAgent of LlmAgents with tools: every event committed once and in branch order, 4 threads",
          "[workflow][threads]")
{
    constexpr int branches = 4;
    constexpr int calls = 10;
    std::vector<std::shared_ptr<adk::Agent>> children;
    for (int b = 0; b < branches; ++b) {
        Turns turns;
        for (int c = 0; c < calls; ++c)
            turns.push_back(LlmResponse::function_call("count", {{"n", c}}));
        turns.push_back(LlmResponse::text("finished"));
        std::string key = "branch_" + std::to_string(b);
        auto counter = adk::FunctionTool::create("count", "Counts.", json::value(),
                                                 [key](adk::ToolContext& ctx, json::object args) -> asio::awaitable<json::value> {
                                                     ctx.set_state(key, args.at("n"));
                                                     co_return json::object{{"ok", true}};
                                                 });
        children.push_back(LlmAgent::builder("worker_" + std::to_string(b)).model(scripted_turns(turns)).tool(counter).build());
    }
    auto fanout = std::make_shared<adk::ParallelAgent>("fanout", "Workers.", children);
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::Runner runner({.app_name = "app", .agent = fanout, .session_service = sessions});
    asio::io_context ioc;
    auto body = [&]() -> asio::awaitable<std::vector<adk::Event>> {
        co_await sessions->create_session({"app", "user1", "s"});
        co_return co_await adk::test::run_once(runner, "s", "go");
    };
    auto result = asio::co_spawn(ioc, body, asio::use_future);
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i)
        threads.emplace_back([&] { ioc.run(); });
    auto events = result.get();
    for (auto& t : threads)
        t.join();
    REQUIRE(events.size() == branches * (2 * calls + 1));
    for (int b = 0; b < branches; ++b) {
        std::string name = "worker_" + std::to_string(b);
        int n = 0;
        for (const auto& e : events)
            if (e.author == name && !e.function_calls().empty())
                CHECK(e.function_calls()[0].args.at("n") == n++);
        CHECK(n == calls);
    }
    ioc.restart();
    auto stored = asio::co_spawn(ioc, sessions->get_session({"app", "user1", "s"}), asio::use_future);
    ioc.run();
    auto session = stored.get();
    CHECK(session->events.size() == events.size() + 1);
    for (int b = 0; b < branches; ++b)
        CHECK(session->state.at("branch_" + std::to_string(b)) == calls - 1);
}

TEST_CASE("LoopAgent: repeats until a child calls exit_loop, or max_iterations rounds", "[workflow][threads]")
{
    adk::test::Harness h(4);  // a multi-threaded io_context
    auto refiner = LlmAgent::builder("refiner")
                       .model(scripted_turns({LlmResponse::text("draft 1"), LlmResponse::text("draft 2")}))
                       .output_key("draft")
                       .build();
    auto critic = LlmAgent::builder("critic")
                      .model(scripted_turns({LlmResponse::text("Needs work."), LlmResponse::function_call("exit_loop", {})}))
                      .instruction("Review: {draft}")
                      .tool(adk::exit_loop_tool())
                      .build();
    auto loop = std::make_shared<adk::LoopAgent>("refine", "Until good.", std::vector<std::shared_ptr<adk::Agent>>{refiner, critic},
                                                 /*max_iterations=*/5);
    auto events = h.send(loop, "Write a haiku.");
    REQUIRE(events.size() == 5);  // draft 1, critique, draft 2, exit_loop call, its response
    CHECK(events[4].actions.escalate);
    CHECK(model_of(critic)->requests().at(1).system_text().rfind("Review: draft 2", 0) == 0);
    CHECK(model_of(refiner)->turns_left() == 0);

    int rounds = 0;
    auto counter = std::make_shared<FnAgent>("counter", [&](adk::InvocationContext& ctx, adk::EventSink& out) -> asio::awaitable<void> {
        ++rounds;
        co_await out.emit(ctx.make_event(adk::Content::model("round")));
    });
    auto capped = std::make_shared<adk::LoopAgent>("capped", "Three rounds.", std::vector<std::shared_ptr<adk::Agent>>{counter}, 3);
    CHECK(h.send(capped, "go", {}, "s2").size() == 3);
    CHECK(rounds == 3);

    // Any tool that sets actions.escalate ends the loop too.
    auto escalating = adk::FunctionTool::create("done", "Stops.", json::value(),
                                                [](adk::ToolContext& ctx, json::object) -> asio::awaitable<json::value> {
                                                    ctx.actions().escalate = true;
                                                    co_return json::object{{"stopped", true}};
                                                });
    auto stopper = LlmAgent::builder("stopper")
                       .model(scripted_turns({LlmResponse::function_call("done", {}), LlmResponse::text("stopped")}))
                       .tool(escalating)
                       .build();
    auto until = std::make_shared<adk::LoopAgent>("until", "Until escalated.", std::vector<std::shared_ptr<adk::Agent>>{stopper});
    CHECK(h.send(until, "go", {}, "s3").size() == 3);
    CHECK_THROWS_WITH(adk::LoopAgent("bad", "", {}, -1), Catch::Contains("max_iterations"));
}

TEST_CASE("transfer: the target answers, and the next message goes to the agent that answered last", "[workflow][threads]")
{
    adk::test::Harness h(4);  // a multi-threaded io_context
    auto billing = LlmAgent::builder("billing")
                       .description("Handles invoices.")
                       .model(scripted_turns({LlmResponse::text("Your invoice is paid."), LlmResponse::text("Anything else?")}))
                       .build();
    auto locked = LlmAgent::builder("locked")
                      .description("Never hands back.")
                      .model(scripted_turns({LlmResponse::text("locked answer")}))
                      .disallow_transfer_to_parent()
                      .build();
    auto coordinator = LlmAgent::builder("coordinator")
                           .model(scripted_turns({LlmResponse::function_call("transfer_to_agent", {{"agent_name", "billing"}}),
                                            LlmResponse::function_call("transfer_to_agent", {{"agent_name", "locked"}}),
                                            LlmResponse::text("coordinator again")}))
                           .sub_agent(billing)
                           .sub_agent(locked)
                           .build();
    auto first = h.send(coordinator, "Is my invoice paid?");
    CHECK(first.back().author == "billing");
    auto second = h.send(coordinator, "Thanks!");
    REQUIRE(second.size() == 1);
    CHECK(second[0].author == "billing");  // the conversation stayed with billing
    CHECK(second[0].text() == "Anything else?");

    auto fresh = h.send(coordinator, "Something else", {}, "s2");
    CHECK(fresh.back().author == "locked");
    auto after_locked = h.send(coordinator, "Hello?", {}, "s2");
    CHECK(after_locked.back().author == "coordinator");  // locked may not keep it: back to the root
    CHECK(after_locked.back().text() == "coordinator again");
}

TEST_CASE("transfer: peers and parents only when allowed, and a disallowed target is an error the model sees", "[workflow][threads]")
{
    adk::test::Harness h(4);  // a multi-threaded io_context
    auto peer = LlmAgent::builder("peer").description("A peer.").model(scripted_turns({})).build();
    auto shy = LlmAgent::builder("shy")
                   .model(scripted_turns({LlmResponse::function_call("transfer_to_agent", {{"agent_name", "peer"}}),
                                    LlmResponse::text("I stay.")}))
                   .disallow_transfer_to_peers()
                   .build();
    auto root = LlmAgent::builder("root")
                    .model(scripted_turns({LlmResponse::function_call("transfer_to_agent", {{"agent_name", "shy"}})}))
                    .sub_agent(shy)
                    .sub_agent(peer)
                    .build();
    auto events = h.send(root, "hi");
    REQUIRE(events.size() == 5);  // root's transfer call and response, shy's call, its error, shy's answer
    CHECK_THAT(std::string(events[3].content->parts[0].function_response->response.at("error").as_string()),
               Catch::Contains("cannot transfer to 'peer'") && Catch::Contains("root"));
    CHECK(events[4].author == "shy");
    CHECK(model_of(peer)->requests().empty());
}

TEST_CASE("AgentTool: an agent as a tool, with schemas, state flowing back, and skip_summarization", "[workflow][threads]")
{
    adk::test::Harness h(4);  // a multi-threaded io_context
    json::value input = json::parse(R"({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]})");
    json::value output = json::parse(R"({"type":"object","properties":{"temp":{"type":"integer"}}})");
    auto researcher = LlmAgent::builder("researcher")
                          .description("Finds the temperature of a city.")
                          .model(scripted_turns({LlmResponse::text(R"({"temp": 21})")}))
                          .instruction("Known home: {user:home}")
                          .input_schema(input)
                          .output_schema(output)
                          .output_key("temp:ignored_by_parent_store")
                          .after_agent_callback([](adk::CallbackContext& cb) -> asio::awaitable<std::optional<adk::Content>> {
                              cb.set_state("researched", true);
                              co_return std::nullopt;
                          })
                          .build();
    auto boss = LlmAgent::builder("boss")
                    .model(scripted_turns({LlmResponse::function_call("researcher", {{"city", "Lima"}}),
                                     LlmResponse::text("It is 21 degrees in Lima.")}))
                    .tool(std::make_shared<adk::AgentTool>(researcher))
                    .build();
    run(h.ioc, [&]() -> asio::awaitable<void> {
        json::object state{{"user:home", "Quito"}};
        co_await h.sessions->create_session({"app", "user1", "s", std::move(state)});
    }());
    auto events = h.send(boss, "How warm is Lima?");
    REQUIRE(events.size() == 3);
    auto declaration = model_of(boss)->requests().at(0).tools.at(0);
    CHECK(declaration.name == "researcher");
    CHECK(declaration.parameters == input);
    const auto& response = events[1].content->parts[0].function_response->response;
    CHECK(response.at("temp") == 21);  // the output_schema JSON is the result
    CHECK(events[1].actions.state_delta.at("researched") == true);  // its state changes flowed back
    auto sub_request = model_of(researcher)->requests().at(0);
    CHECK(sub_request.system_text().rfind("Known home: Quito", 0) == 0);  // it started from the caller's state
    CHECK(sub_request.contents.back().text() == R"({"city":"Lima"})");

    auto summarizer = LlmAgent::builder("summarizer").description("Summarizes.")
                          .model(scripted_turns({LlmResponse::text("Short summary.")})).build();
    auto direct = LlmAgent::builder("direct")
                      .model(scripted_turns({LlmResponse::function_call("summarizer", {{"request", "Summarize this."}})}))
                      .tool(std::make_shared<adk::AgentTool>(summarizer, /*skip_summarization=*/true))
                      .build();
    auto answered = h.send(direct, "Summarize.", {}, "s2");
    REQUIRE(answered.size() == 2);  // the tool's answer is the answer: no second model call
    CHECK(answered[1].content->parts[0].function_response->response.at("result") == "Short summary.");
    CHECK(answered[1].is_final_response());
    CHECK(model_of(summarizer)->requests().at(0).contents.back().text() == "Summarize this.");
}
