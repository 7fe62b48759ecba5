#include "run_state.hpp"

#include <adk/agents/agent.hpp>
#include <adk/tools/tool_confirmation.hpp>

#include <algorithm>
#include <charconv>

namespace adk {

namespace node_path {

std::string child(std::string_view parent, std::string_view name, int run)
{
    std::string path;
    path.reserve(parent.size() + name.size() + 8);
    if (!parent.empty()) {
        path.append(parent);
        path.push_back('/');
    }
    path.append(name);
    path.push_back('@');
    path.append(std::to_string(run));
    return path;
}

namespace {

std::string_view last_segment(std::string_view path)
{
    const auto slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::string_view name_of(std::string_view path)
{
    std::string_view segment = last_segment(path);
    return segment.substr(0, segment.rfind('@'));
}

int run_of(std::string_view path)
{
    std::string_view segment = last_segment(path);
    const auto at = segment.rfind('@');
    if (at == std::string_view::npos)
        return 0;
    int run = 0;
    auto [end, ec] = std::from_chars(segment.data() + at + 1, segment.data() + segment.size(), run);
    return ec == std::errc() && end == segment.data() + segment.size() ? run : 0;
}

}  // namespace node_path

namespace detail {

namespace {

// Before paths, a parent that recorded the start of a sub-agent made that sub-agent and those below it start
// afresh (a loop's next round): their records are dropped.
void forget(std::map<std::string, NodeProgress, std::less<>>& by_author, const Agent& agent)
{
    by_author.erase(agent.name());
    for (const auto& sub : agent.sub_agents())
        forget(by_author, *sub);
}

// An agent's model turn that called tools: what a paused or interrupted LlmAgent continues. The questions the flow
// asks a person (adk_request_confirmation, adk_request_credential) are not the model's calls.
bool calls_tools(const Event& event)
{
    if (event.partial || !event.content || event.author == "user")
        return false;
    for (const Part& p : event.content->parts)
        if (p.function_call && !is_question(p.function_call->name))
            return true;
    return false;
}

// What the event gives as a node's output, if anything.
std::optional<json::value> output_of(const Event& event)
{
    if (event.output)
        return *event.output;
    if (event.node_info && event.node_info->message_as_output && event.content)
        return json::value(event.content->text());
    return std::nullopt;
}


}  // namespace

bool RunState::matters(const Event& event)
{
    return event.actions.agent_state || event.actions.end_of_agent || event.actions.route ||
           !event.long_running_tool_ids.empty() || calls_tools(event) ||
           (event.node_info && (event.output || event.node_info->message_as_output));
}

RunState::RunState(const EventList& events, std::string_view invocation_id, const Agent* root)
    : root_(root), by_author_too_(true)
{
    for (std::size_t i = 0; i < events.size(); ++i)
        if (events[i].invocation_id == invocation_id)
            record_locked(events[i], i);
}

void RunState::record(const Event& event, std::size_t index)
{
    if (!matters(event))
        return;
    std::lock_guard lock(mutex_);
    record_locked(event, index);
}

void RunState::record_locked(const Event& event, std::size_t index)
{
    if (!matters(event))
        return;
    std::string_view path = event.node_path();
    NodeProgress* node = nullptr;
    if (!path.empty()) {
        auto it = by_path_.find(path);
        node = it != by_path_.end() ? &it->second : &by_path_[std::string(path)];
    } else {
        if (!by_author_too_)
            return;
        const json::value* current =
            event.actions.agent_state ? event.actions.agent_state->if_contains("current_sub_agent") : nullptr;
        if (root_ && current && current->is_string())
            if (auto sub = root_->find_agent(current->get_string()))
                forget(by_author_, *sub);
        node = &by_author_[event.author];
    }
    if (event.actions.agent_state)
        node->agent_state = *event.actions.agent_state;
    if (event.actions.end_of_agent)
        node->ended = true;
    if (calls_tools(event))
        node->calls_turn = index;
    if (path.empty() || !event.node_info)
        return;
    if (event.actions.route)
        node->route = *event.actions.route;
    for (const std::string& id : event.long_running_tool_ids)
        if (std::find(node->interrupts.begin(), node->interrupts.end(), id) == node->interrupts.end())
            node->interrupts.push_back(id);
    std::optional<json::value> output = output_of(event);
    if (!output)
        return;
    if (event.node_info->output_for.empty())
        node->output = std::move(output);
    for (const std::string& owner : event.node_info->output_for)
        by_path_[owner].output = *output;
}

std::optional<NodeProgress> RunState::find(std::string_view path) const
{
    std::lock_guard lock(mutex_);
    if (auto it = by_path_.find(path); it != by_path_.end())
        return it->second;
    if (!by_author_.empty() && node_path::run_of(path) == 1)
        if (auto it = by_author_.find(node_path::name_of(path)); it != by_author_.end())
            return it->second;
    return std::nullopt;
}

}  // namespace detail

}  // namespace adk
