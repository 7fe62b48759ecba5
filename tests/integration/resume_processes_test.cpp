// Kill and resume: a resumable app's invocation, killed (SIGKILL) between its pause and the answer, and at every
// point of a run, then resumed by another process on SQLite and on PostgreSQL. It finishes; every call has one
// response; a tool whose response was stored before the kill never ran again (tests/support/resume_worker.cpp
// is the process; its tools write what they run to a ledger).
#include <adk/adk.hpp>
#include <adk/services/service_url.hpp>

#include "support/child_process.hpp"
#include "support/postgres_server.hpp"
#include "support/run.hpp"
#include "support/session_at.hpp"
#include "support/temp_dir.hpp"

#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using adk::test::ChildProcess;
using adk::test::read_session;

const std::string resume_worker_program = adk::test::paths::resume_worker();
const std::string workflow_worker = adk::test::paths::workflow_worker();

// What a worker printed: the events it read (stored by then), the question it saw, whether it got to the end.
struct Printed {
    std::set<std::string> committed;
    std::vector<std::string> questions;
    bool ended = false;
    int exit_status = -1;
};

// Runs a worker (`program`) to its end, or kills it once it printed `kill_after` committed events.
Printed run_program(const std::string& program, std::vector<std::string> args, std::size_t kill_after = SIZE_MAX)
{
    args.insert(args.begin(), program);
    ChildProcess child(args);
    Printed printed;
    bool killed = false;
    while (auto line = child.read_line()) {
        if (line->starts_with("committed "))
            printed.committed.insert(line->substr(10));
        else if (line->starts_with("question "))
            printed.questions.push_back(line->substr(9));
        else if (*line == "end")
            printed.ended = true;
        if (!killed && printed.committed.size() >= kill_after) {
            child.kill_now();
            killed = true;
        }
    }
    printed.exit_status = child.wait();
    return printed;
}

Printed run_worker(std::vector<std::string> args, std::size_t kill_after = SIZE_MAX)
{
    return run_program(resume_worker_program, std::move(args), kill_after);
}

std::map<std::string, int> ledger_runs(const std::string& path)
{
    std::map<std::string, int> runs;  // call id -> how many times a tool ran for it
    std::ifstream in(path);
    std::string tool, id;
    while (in >> tool >> id)
        ++runs[id];
    return runs;
}

// The invocation finished as one uninterrupted run would have, and no stored tool response was run again.
void check_finished(const adk::Session& s, const std::string& ledger, const std::set<std::string>& stored_before_kill)
{
    REQUIRE(!s.events.empty());
    const std::string invocation = s.events.front().invocation_id;
    std::map<std::string, int> responses;   // call id -> responses stored
    std::map<std::string, std::string> response_event;  // call id -> the event that holds its response
    std::set<std::string> calls;            // the tools' call ids (not the questions)
    int pipeline_ends = 0, answers = 0;
    for (const adk::Event& e : s.events) {
        CHECK(e.invocation_id == invocation);  // one invocation, resumed: never a new one
        for (const auto& c : e.function_calls())
            if (c.name == "charge" || c.name == "notify")
                calls.insert(c.id);
        for (const auto& r : e.function_responses())
            if (r.name == "charge" || r.name == "notify") {
                ++responses[r.id];
                response_event[r.id] = e.id;
            }
        pipeline_ends += e.author == "pipeline" && e.actions.end_of_agent;
        answers += e.text() == "charge done" || e.text() == "notify done";
    }
    CHECK(pipeline_ends == 1);
    CHECK(s.events.back().author == "pipeline");
    CHECK(answers == 2);  // each LlmAgent answered once
    REQUIRE(calls.size() == 2);
    const std::map<std::string, int> runs = ledger_runs(ledger);
    for (const std::string& id : calls) {
        CHECK(responses[id] == 1);
        const int ran = runs.count(id) ? runs.at(id) : 0;
        CHECK(ran >= 1);
        if (stored_before_kill.contains(response_event[id]))
            CHECK(ran == 1);  // its response was stored: it never ran again
        else
            CHECK(ran <= 2);  // run, killed before its response was stored, run again
    }
    // The loop ran its three rounds: its last recorded position is the third round.
    std::optional<std::int64_t> last_round;
    for (const adk::Event& e : s.events)
        if (e.author == "steps" && e.actions.agent_state && e.actions.agent_state->contains("times_looped"))
            last_round = e.actions.agent_state->at("times_looped").as_int64();
    CHECK(last_round == 2);
}

std::string invocation_of(const std::string& url, const std::string& session)
{
    return read_session(url, session).events.front().invocation_id;
}

void paused_killed_resumed(const std::string& url, const adk::test::TempDir& dir)
{
    const std::string ledger = dir.file("paused.ledger");
    Printed asked = run_worker({url, "p", ledger, "start"});
    REQUIRE(asked.exit_status == 0);
    REQUIRE(asked.questions.size() == 1);
    CHECK(ledger_runs(ledger).empty());  // nothing ran before the approval

    // The answer's process dies in the middle of the loop; another resumes the invocation.
    Printed answered = run_worker({url, "p", ledger, "answer", asked.questions.front()}, 6);
    CHECK(answered.exit_status == 128 + SIGKILL);
    CHECK(!answered.ended);
    std::set<std::string> stored = asked.committed;
    stored.insert(answered.committed.begin(), answered.committed.end());
    Printed resumed = run_worker({url, "p", ledger, "resume", invocation_of(url, "p")});
    CHECK(resumed.exit_status == 0);
    CHECK(resumed.questions.empty());  // the approval was stored: not asked again
    check_finished(read_session(url, "p"), ledger, stored);

    // Once finished, it cannot be resumed again, and nothing runs.
    Printed again = run_worker({url, "p", ledger, "resume", invocation_of(url, "p")});
    CHECK(again.exit_status == 1);
    CHECK(again.committed.empty());
}

using Check = std::function<void(const adk::Session&, const std::string& ledger, const std::set<std::string>& stored)>;

// A run of `program`'s app whose root agent is `root`, killed after each of its events in turn, then resumed by
// another process: each time it finishes as `check` says.
void kill_at_every_event(const std::string& program, const std::string& root, const Check& check,
                         const std::string& url, const adk::test::TempDir& dir, std::size_t at_least)
{
    // One run, uninterrupted, to count its events.
    Printed whole = run_program(program, {url, "whole", dir.file("whole.ledger"), "start", "--approve"});
    REQUIRE(whole.exit_status == 0);
    check(read_session(url, "whole"), dir.file("whole.ledger"), whole.committed);
    const std::size_t total = whole.committed.size();
    REQUIRE(total > at_least);

    for (std::size_t k = 1; k < total; ++k) {
        const std::string session = "k" + std::to_string(k);
        const std::string ledger = dir.file(session + ".ledger");
        INFO("killed after " << k << " of " << total << " events");
        Printed killed = run_program(program, {url, session, ledger, "start", "--approve"}, k);
        if (killed.ended)
            continue;  // it finished before the signal landed
        const adk::Session before = read_session(url, session);
        const bool finished = before.events.back().author == root && before.events.back().actions.end_of_agent;
        Printed resumed = run_program(program, {url, session, ledger, "resume", invocation_of(url, session), "--approve"});
        CHECK(resumed.exit_status == (finished ? 1 : 0));  // a finished invocation is not resumed: nothing to do
        check(read_session(url, session), ledger, killed.committed);
    }
}

void killed_everywhere(const std::string& url, const adk::test::TempDir& dir)
{
    kill_at_every_event(resume_worker_program, "pipeline", check_finished, url, dir, 20);
}

// The workflow (tests/support/workflow_worker.cpp) finished as one uninterrupted run would have: each node's run
// stored its output once (the ParallelWorker's items and the runs of the entry of the nested workflow too), no node
// whose output was stored before the kill ran again, the join joined, and the charge tool ran once for its stored
// response.
void check_workflow_finished(const adk::Session& s, const std::string& ledger,
                             const std::set<std::string>& stored_before_kill)
{
    REQUIRE(!s.events.empty());
    const std::string invocation = s.events.front().invocation_id;
    std::map<std::string, int> outputs;              // node path -> output events
    std::map<std::string, std::string> output_event;  // node path -> the event with its output
    int ends = 0, charges = 0;
    std::optional<json::value> joined, final_output, items, tail;
    for (const adk::Event& e : s.events) {
        CHECK(e.invocation_id == invocation);
        ends += e.author == "flow" && e.actions.end_of_agent;
        charges += static_cast<int>(e.function_responses().size() == 1 && e.function_responses()[0].name == "charge");
        if (!e.output || !e.node_info || !e.node_info->path)
            continue;
        ++outputs[*e.node_info->path];
        output_event[*e.node_info->path] = e.id;
        if (*e.node_info->path == "flow@1/joined@1")
            joined = *e.output;
        if (*e.node_info->path == "flow@1/done@1")
            final_output = *e.output;
        if (*e.node_info->path == "flow@1/item@1")
            items = *e.output;
        if (*e.node_info->path == "flow@1/tail@1")
            tail = *e.output;
    }
    CHECK(ends == 1);
    CHECK(s.events.back().author == "flow");
    CHECK(charges == 1);
    const std::vector<std::string> nodes{"flow@1/prepare@1", "flow@1/payer@1", "flow@1/stock@1", "flow@1/joined@1",
                                         "flow@1/approve@1", "flow@1/ship@1",  "flow@1/count@1", "flow@1/count@2",
                                         "flow@1/count@3",   "flow@1/done@1", "flow@1/listing@1", "flow@1/item@1",
                                         "flow@1/item@1/item@1", "flow@1/item@1/item@2", "flow@1/item@1/item@3",
                                         "flow@1/tail@1/step@1", "flow@1/tail@1/step@2", "flow@1/tail@1"};
    for (const std::string& path : nodes) {
        INFO(path);
        CHECK(outputs[path] == 1);
    }
    CHECK(outputs.size() == nodes.size());
    CHECK(joined == json::parse(R"({"payer":"charge done","stock":"in stock"})"));
    CHECK(final_output == json::value("counted 3"));
    CHECK(items == json::parse("[10,20,30]"));
    CHECK(tail == json::parse(R"({"seen":{"seen":[10,20,30]}})"));
    std::map<std::string, int> runs = ledger_runs(ledger);  // node path (or charge call id) -> runs
    for (const auto& [path, event] : output_event) {
        if (path.find("payer") != std::string::npos || path.find("joined") != std::string::npos ||
            path.find("approve") != std::string::npos || path == "flow@1/item@1" || path == "flow@1/tail@1")
            continue;  // not function nodes of the ledger
        INFO(path);
        CHECK(runs[path] >= 1);
        if (stored_before_kill.contains(event))
            CHECK(runs[path] == 1);  // its output was stored: it never ran again
        else
            CHECK(runs[path] <= 2);
    }
}

void workflow_killed_everywhere(const std::string& url, const adk::test::TempDir& dir)
{
    kill_at_every_event(workflow_worker, "flow", check_workflow_finished, url, dir, 12);
}

// Paused at the question, the answer's process killed mid-way, another resumes: the question is not asked again.
void workflow_paused_killed_resumed(const std::string& url, const adk::test::TempDir& dir)
{
    const std::string ledger = dir.file("paused.ledger");
    Printed asked = run_program(workflow_worker, {url, "p", ledger, "start"});
    REQUIRE(asked.exit_status == 0);
    REQUIRE(asked.questions.size() == 1);
    CHECK(ledger_runs(ledger).count("flow@1/ship@1") == 0);
    Printed answered = run_program(workflow_worker, {url, "p", ledger, "answer", asked.questions.front()}, 3);
    CHECK(answered.exit_status == 128 + SIGKILL);
    std::set<std::string> stored = asked.committed;
    stored.insert(answered.committed.begin(), answered.committed.end());
    Printed resumed = run_program(workflow_worker, {url, "p", ledger, "resume", invocation_of(url, "p")});
    CHECK(resumed.exit_status == 0);
    CHECK(resumed.questions.empty());
    check_workflow_finished(read_session(url, "p"), ledger, stored);
}

}  // namespace

TEST_CASE("kill and resume on SQLite: killed between the pause and the answer's end, then resumed by another "
          "process",
          "[sqlite][processes][resume]")
{
    adk::test::TempDir dir("resume-sqlite");
    paused_killed_resumed("sqlite:///" + dir.file("paused.db"), dir);
}

TEST_CASE("kill and resume on SQLite: killed after each event of a run, resumed, finished with no tool run twice",
          "[sqlite][processes][resume]")
{
    adk::test::TempDir dir("resume-sqlite-all");
    killed_everywhere("sqlite:///" + dir.file("all.db"), dir);
}

TEST_CASE("kill and resume on PostgreSQL: killed between the pause and the answer's end, then resumed",
          "[postgres][processes][resume]")
{
    auto* server = adk::test::PostgresServer::get();
    if (!server)
        return adk::test::skip(adk::test::PostgresServer::skip_reason());
    adk::test::TempDir dir("resume-pg");
    paused_killed_resumed(server->new_database(), dir);
}

TEST_CASE("kill and resume on PostgreSQL: killed after each event of a run, resumed, finished with no tool run "
          "twice",
          "[postgres][processes][resume]")
{
    auto* server = adk::test::PostgresServer::get();
    if (!server)
        return adk::test::skip(adk::test::PostgresServer::skip_reason());
    adk::test::TempDir dir("resume-pg-all");
    killed_everywhere(server->new_database(), dir);
}

TEST_CASE("kill and resume a graph workflow on SQLite: killed after each event, resumed, every node's output once",
          "[sqlite][processes][resume][graph_workflow]")
{
    adk::test::TempDir dir("resume-workflow-sqlite");
    workflow_killed_everywhere("sqlite:///" + dir.file("all.db"), dir);
    workflow_paused_killed_resumed("sqlite:///" + dir.file("paused.db"), dir);
}

TEST_CASE("kill and resume a graph workflow on PostgreSQL: killed after each event, resumed, every node's output once",
          "[postgres][processes][resume][graph_workflow]")
{
    auto* server = adk::test::PostgresServer::get();
    if (!server)
        return adk::test::skip(adk::test::PostgresServer::skip_reason());
    adk::test::TempDir dir("resume-workflow-pg");
    workflow_killed_everywhere(server->new_database(), dir);
    workflow_paused_killed_resumed(server->new_database(), dir);
}
