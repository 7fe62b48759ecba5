// RunState: where an invocation stands, by node path. The one place that reads an invocation's progress from
// its events: built once when the invocation starts (its earlier events, when it resumes), then kept current
// with each event it commits. Private to libadk.
//
// A node is an agent (or, in a workflow, any node) on one of its runs: its path is its ancestors' segments and
// its own, "name@run", joined by '/' ("loop@1/critic@2"), as ADK Python writes nodeInfo.path. A node that runs
// twice (a loop's rounds) has two paths, so what one run recorded never stands for the other.
//
// Events written before paths existed (or by ADK 1.x) carry no nodeInfo.path: they are kept by author, as
// adk-cpp read them then, and a node finds them when no event of its path exists and it is on its first run.
#pragma once

#include <adk/core/event.hpp>
#include <adk/sessions/event_list.hpp>

#include <boost/json/object.hpp>

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace adk {

class Agent;

namespace detail {

// What one node recorded: the latest actions.agentState, whether it recorded actions.endOfAgent, and where its
// latest model turn that called tools stands among the session's events (an LlmAgent continues that turn).
class NodeProgress {
public:
    NodeProgress() = default;
    std::optional<json::object> agent_state;
    bool ended = false;
    std::optional<std::size_t> calls_turn;  // index into the session's events
    // Its output (ADK 2.x): an event's `output`, or its text when nodeInfo.messageAsOutput, from an event that
    // names the node in nodeInfo.outputFor (or, naming none, is the node's own). A node with an output has run.
    std::optional<json::value> output;
    // The route it chose (ADK 2.x: actions.route), which a workflow follows to the nodes after it.
    std::optional<json::value> route;
    // The ids of the long-running calls it made (longRunningToolIds: a workflow node's questions), in order.
    std::vector<std::string> interrupts;
};

class RunState {
public:
    // A new invocation's of an app that is not resumable: it keeps what workflow nodes record (their events carry
    // paths) and ignores events without a path.
    RunState() = default;
    // The events of `invocation_id` among `events`, replayed in order. `root` is the app's root agent, used for
    // events without a path only.
    RunState(const EventList& events, std::string_view invocation_id, const Agent* root);

    // A committed event of the invocation, at `index` among the session's events. Safe from any branch.
    void record(const Event& event, std::size_t index);
    // Whether record() keeps anything of the event (most events, a model's text among them, say nothing of where
    // a node stands).
    static bool matters(const Event& event);

    // What the node at `path` recorded; nullopt when it recorded nothing.
    std::optional<NodeProgress> find(std::string_view path) const;

private:
    void record_locked(const Event& event, std::size_t index);

    mutable std::mutex mutex_;
    const Agent* root_ = nullptr;
    bool by_author_too_ = false;  // events without a path are kept by author (resumable apps)
    std::map<std::string, NodeProgress, std::less<>> by_path_;
    std::map<std::string, NodeProgress, std::less<>> by_author_;  // events without a path
};

}  // namespace detail

// Node paths (nodeInfo.path): "name@run" segments joined by '/'.
namespace node_path {

// The path of a run of node `name` below `parent` ("" for a node at the top).
std::string child(std::string_view parent, std::string_view name, int run);
// The last segment's name and run; run 0 when the segment has no "@run".
std::string_view name_of(std::string_view path);
int run_of(std::string_view path);

}  // namespace node_path

}  // namespace adk
