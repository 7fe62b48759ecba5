#include <adk/a2a/task_updates.hpp>

#include <adk/a2a/convert.hpp>
#include <adk/core/ids.hpp>

#include <boost/json/value_from.hpp>

#include <algorithm>
#include <chrono>

namespace adk::a2a {

namespace {

json::object event_metadata(const Event& e)
{
    json::object m;
    m["adk_author"] = e.author;
    if (!e.id.empty())
        m["adk_event_id"] = e.id;
    if (!e.invocation_id.empty())
        m["adk_invocation_id"] = e.invocation_id;
    if (!e.branch.empty())
        m["adk_branch"] = e.branch;
    if (e.partial)
        m["adk_partial"] = true;
    if (!e.actions.empty())  // written only when the event did something (a chunk's never do)
        m["adk_actions"] = json::value_from(e.actions);
    if (e.usage_metadata)
        m["adk_usage_metadata"] = json::value_from(*e.usage_metadata);
    if (e.error_code)
        m["adk_error_code"] = *e.error_code;
    return m;
}

bool waits_for_client(const Event& e)
{
    return !e.long_running_tool_ids.empty() || !e.actions.requested_tool_confirmations.empty() ||
           !e.actions.requested_auth_configs.empty();
}

}  // namespace

TaskUpdates::TaskUpdates(std::string task_id, std::string context_id, int answers_so_far) : answers_(answers_so_far)
{
    task_.id = std::move(task_id);
    task_.context_id = std::move(context_id);
    task_.status.state = TaskState::submitted;
}

Task TaskUpdates::submitted(const Message& user_message)
{
    Message m = user_message;
    m.task_id = task_.id;
    m.context_id = task_.context_id;
    task_.history.push_back(std::move(m));
    task_.status.state = TaskState::submitted;
    task_.status.timestamp = format_timestamp(now_seconds());
    return task_;
}

Task TaskUpdates::answered(const Message& user_message)
{
    Message m = user_message;
    m.task_id = task_.id;
    m.context_id = task_.context_id;
    task_.history.push_back(std::move(m));
    waiting_.reset();
    waiting_message_.reset();
    answering_ = false;
    task_.status.state = TaskState::working;
    task_.status.message.reset();
    task_.status.timestamp = format_timestamp(now_seconds());
    return task_;
}

Message TaskUpdates::agent_message(const Event& event)
{
    Message m = to_message(*event.content, Role::agent,
                           event.id.empty() ? task_.id + "-m" + std::to_string(++messages_) : event.id);
    m.task_id = task_.id;
    m.context_id = task_.context_id;
    m.metadata = event_metadata(event);
    // ADK marks the calls the client must answer (to_message keeps the parts' order).
    const auto& waiting = event.long_running_tool_ids;
    for (std::size_t i = 0; i < m.parts.size(); ++i)
        if (const adk::Part& p = event.content->parts[i];
            p.function_call && std::find(waiting.begin(), waiting.end(), p.function_call->id) != waiting.end())
            m.parts[i].metadata["adk_is_long_running"] = true;
    return m;
}

TaskStatusUpdateEvent TaskUpdates::status_update(TaskState state, std::optional<Message> message)
{
    task_.status.state = state;
    task_.status.message = std::move(message);
    task_.status.timestamp = format_timestamp(now_seconds());
    TaskStatusUpdateEvent u;
    u.task_id = task_.id;
    u.context_id = task_.context_id;
    u.status = task_.status;
    return u;
}

void TaskUpdates::add(const Event& event, std::vector<StreamResponse>& out)
{
    if (event.error_code || event.error_message)  // an error an agent reported (a model's): the task fails
        error_ = event.error_message.value_or("the agent failed: " + event.error_code.value_or(""));
    if (event.author == "user" || !event.content || event.content->parts.empty())
        return;
    const std::string artifact_id = "response-" + std::to_string(answers_ + 1);
    if (event.partial) {
        const std::string text = event.text();
        if (text.empty())
            return;
        TaskArtifactUpdateEvent u;
        u.task_id = task_.id;
        u.context_id = task_.context_id;
        u.artifact.artifact_id = artifact_id;
        u.artifact.parts.push_back(Part::text_part(text));
        u.artifact.metadata = event_metadata(event);
        u.append = answering_;
        answering_ = true;
        out.emplace_back(std::move(u));
        return;
    }
    if (event.is_final_response() && !waits_for_client(event)) {
        ++answers_;
        answering_ = false;
        Artifact a;
        a.artifact_id = artifact_id;
        a.name = event.author;
        for (const adk::Part& p : event.content->parts)
            a.parts.push_back(to_a2a(p));
        a.metadata = event_metadata(event);
        TaskArtifactUpdateEvent u;
        u.task_id = task_.id;
        u.context_id = task_.context_id;
        u.artifact = a;
        u.last_chunk = true;
        task_.artifacts.push_back(std::move(a));
        out.emplace_back(std::move(u));
        return;
    }
    answering_ = false;
    Message m = agent_message(event);
    task_.history.push_back(m);
    if (waits_for_client(event)) {
        waiting_ = event.actions.requested_auth_configs.empty() ? TaskState::input_required : TaskState::auth_required;
        waiting_message_ = m;
    }
    out.emplace_back(status_update(TaskState::working, std::move(m)));
}

void TaskUpdates::end(const std::optional<std::string>& run_failure, bool cancelled, std::vector<StreamResponse>& out)
{
    const std::optional<std::string> failure = run_failure ? run_failure : error_;
    if (failure && !cancelled) {
        Message m;
        m.message_id = task_.id + "-error";
        m.role = Role::agent;
        m.task_id = task_.id;
        m.context_id = task_.context_id;
        m.parts.push_back(Part::text_part(*failure));
        out.emplace_back(status_update(TaskState::failed, std::move(m)));
    } else if (cancelled) {
        out.emplace_back(status_update(TaskState::canceled, std::nullopt));
    } else if (waiting_) {
        out.emplace_back(status_update(*waiting_, waiting_message_));
    } else {
        out.emplace_back(status_update(TaskState::completed, std::nullopt));
    }
}

}  // namespace adk::a2a
