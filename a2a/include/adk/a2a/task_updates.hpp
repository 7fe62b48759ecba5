// An invocation's ADK events as A2A sees its task: the updates a stream sends, and the Task they add up to.
//
//   - a partial event's text: an artifact update of the answer under way (append after its first chunk);
//   - a final answer: the whole answer as that artifact (lastChunk); every answer of the task is an artifact of
//     its own ("response-1", "response-2", ...): none is lost;
//   - any other event of an agent (a tool call, its result, a transfer): a WORKING status with the event's parts;
//   - an event that waits for the client (a long-running call, a tool confirmation, a credential request): an
//     INPUT_REQUIRED (AUTH_REQUIRED for credentials) status once the run ends, the calls in its message;
//   - the end: COMPLETED, FAILED (the error's text in the status message, never as an answer), or CANCELED.
//
// Messages and artifact updates carry ADK's metadata (adk_author, adk_event_id, adk_invocation_id, adk_branch,
// adk_partial, adk_actions, adk_usage_metadata, adk_error_code) so that an ADK peer rebuilds the events.
#pragma once

#include <adk/a2a/types.hpp>
#include <adk/core/event.hpp>

#include <optional>
#include <string>
#include <vector>

namespace adk::a2a {

class TaskUpdates {
public:
    // `answers_so_far`: the artifacts the task has (from its earlier invocations); the next is numbered after them.
    TaskUpdates(std::string task_id, std::string context_id, int answers_so_far = 0);

    // The task as a stream first sends it: SUBMITTED, the client's message in its history.
    Task submitted(const Message& user_message);
    // The client's answer to a task that waited for it (INPUT_REQUIRED, AUTH_REQUIRED): in its history, WORKING.
    Task answered(const Message& user_message);
    // Appends the updates `event` makes to `out`.
    void add(const Event& event, std::vector<StreamResponse>& out);
    // Appends the final status: CANCELED when `cancelled`, FAILED when `failure` is set or an event carried an
    // error, INPUT_REQUIRED or AUTH_REQUIRED when an event waits for the client, COMPLETED otherwise.
    void end(const std::optional<std::string>& failure, bool cancelled, std::vector<StreamResponse>& out);

    // What the updates add up to: the status, every artifact, the messages (the client's, then the agents').
    const Task& task() const noexcept { return task_; }
    int answers() const noexcept { return answers_; }

private:
    TaskStatusUpdateEvent status_update(TaskState state, std::optional<Message> message);
    Message agent_message(const Event& event);  // the event's content, with its metadata

    Task task_;
    int answers_ = 0;          // artifacts named so far
    bool answering_ = false;   // partial text of the current answer was sent
    std::optional<TaskState> waiting_;  // what the client must give
    std::optional<Message> waiting_message_;
    std::optional<std::string> error_;  // an event's error (a model's): the task fails
    int messages_ = 0;
};

}  // namespace adk::a2a
