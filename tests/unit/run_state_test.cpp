// RunState: where an invocation stands, by node path, read once from its events (libadk/src/agents/run_state.hpp).
#include <adk/adk.hpp>

#include "agents/run_state.hpp"
#include "support/agents.hpp"

#include <catch2/catch.hpp>

namespace json = boost::json;
using adk::Content;
using adk::Event;
using adk::detail::RunState;

namespace {

Event at(std::string author, std::string path, std::string invocation = "e-1")
{
    Event e(std::move(author), Content::model(""));
    e.content.reset();
    e.invocation_id = std::move(invocation);
    if (!path.empty()) {
        e.node_info.emplace();
        e.node_info->path = std::move(path);
    }
    return e;
}

Event state(std::string author, std::string path, json::object s)
{
    Event e = at(std::move(author), std::move(path));
    e.actions.agent_state = std::move(s);
    return e;
}

Event ended(std::string author, std::string path, std::string invocation = "e-1")
{
    Event e = at(std::move(author), std::move(path), std::move(invocation));
    e.actions.end_of_agent = true;
    return e;
}

}  // namespace

TEST_CASE("node paths: name@run segments joined by a slash", "[run_state]")
{
    CHECK(adk::node_path::child("", "root", 1) == "root@1");
    CHECK(adk::node_path::child("root@1/loop@1", "critic", 2) == "root@1/loop@1/critic@2");
    CHECK(adk::node_path::name_of("root@1/loop@1/critic@2") == "critic");
    CHECK(adk::node_path::run_of("root@1/loop@1/critic@2") == 2);
    CHECK(adk::node_path::name_of("plain") == "plain");
    CHECK(adk::node_path::run_of("plain") == 0);
    CHECK(adk::node_path::run_of("a@x") == 0);
    CHECK(adk::node_path::run_of("a@12") == 12);
}

TEST_CASE("run state: each run of a node keeps its own progress, other invocations are left out", "[run_state]")
{
    std::vector<Event> events;
    events.push_back(state("loop", "loop@1", {{"current_sub_agent", "critic"}, {"times_looped", 0}}));
    events.push_back(state("critic", "loop@1/critic@1", {{"step", 3}}));
    events.push_back(ended("critic", "loop@1/critic@1"));
    events.push_back(state("loop", "loop@1", {{"current_sub_agent", "critic"}, {"times_looped", 1}}));
    events.push_back(state("critic", "loop@1/critic@2", {{"step", 1}}));
    events.push_back(ended("critic", "loop@1/critic@2", "e-other"));
    RunState run(adk::EventList(events), "e-1", nullptr);

    auto first = run.find("loop@1/critic@1");
    REQUIRE(first);
    CHECK(first->ended);
    CHECK(first->agent_state->at("step") == 3);
    auto second = run.find("loop@1/critic@2");
    REQUIRE(second);
    CHECK_FALSE(second->ended);  // its end belongs to another invocation
    CHECK(second->agent_state->at("step") == 1);
    CHECK(run.find("loop@1")->agent_state->at("times_looped") == 1);
    CHECK_FALSE(run.find("loop@1/critic@3"));

    // Kept current as events are committed.
    run.record(ended("critic", "loop@1/critic@2"), events.size());
    CHECK(run.find("loop@1/critic@2")->ended);
}

TEST_CASE("run state: a model turn that called tools is found by its node, the questions to a person are not turns",
          "[run_state]")
{
    std::vector<Event> events;
    Event call = at("banker", "loop@1/banker@2");
    call.content = Content("model", {adk::Part::from_function_call("transfer_money", {{"amount", 5}}, "c1")});
    events.push_back(call);
    Event question = at("banker", "loop@1/banker@2");
    question.content = Content("model", {adk::Part::from_function_call(std::string(adk::request_confirmation_function), {}, "q1")});
    events.push_back(question);
    Event partial = call;
    partial.partial = true;
    events.push_back(partial);
    RunState run(adk::EventList(events), "e-1", nullptr);
    auto banker = run.find("loop@1/banker@2");
    REQUIRE(banker);
    CHECK(banker->calls_turn == 0u);
    CHECK_FALSE(run.find("loop@1/banker@1"));
}

TEST_CASE("run state: outputs are kept for the node and for each node the event is the output of", "[run_state]")
{
    std::vector<Event> events;
    Event classified = at("classify", "triage@1/classify@1");
    classified.output = json::object{{"category", "refund"}};
    events.push_back(classified);
    Event answer = at("refunds", "triage@1/refunds@1");
    answer.content = Content::model("Refunded.");
    answer.node_info->message_as_output = true;
    answer.node_info->output_for = {"triage@1/refunds@1", "triage@1"};
    events.push_back(answer);
    RunState run(adk::EventList(events), "e-1", nullptr);
    CHECK(run.find("triage@1/classify@1")->output == json::value(json::object{{"category", "refund"}}));
    CHECK(run.find("triage@1/refunds@1")->output == json::value("Refunded."));
    CHECK(run.find("triage@1")->output == json::value("Refunded."));
}

TEST_CASE("run state: events without paths are kept by author, a parent's start of a sub-agent forgets the "
          "sub-agent's, and only a first run finds them",
          "[run_state]")
{
    auto child = adk::test::counting_agent("child", 1);
    auto loop = std::make_shared<adk::LoopAgent>("loop", "Loops.", std::vector<std::shared_ptr<adk::Agent>>{child}, 3);
    std::vector<Event> events;
    events.push_back(state("loop", "", {{"current_sub_agent", "child"}, {"times_looped", 0}}));
    events.push_back(ended("child", ""));
    RunState before(adk::EventList(events), "e-1", loop.get());
    CHECK(before.find("loop@1/child@1")->ended);
    CHECK_FALSE(before.find("loop@1/child@2"));  // a later run is another node

    events.push_back(state("loop", "", {{"current_sub_agent", "child"}, {"times_looped", 1}}));
    RunState after(adk::EventList(events), "e-1", loop.get());
    CHECK_FALSE(after.find("loop@1/child@1"));  // the loop's next round started it afresh
    CHECK(after.find("loop@1")->agent_state->at("times_looped") == 1);
}
