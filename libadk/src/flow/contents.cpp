#include <adk/flow/contents.hpp>

#include <adk/tools/tool_confirmation.hpp>

#include "../compaction/plan.hpp"

#include <boost/json/serialize.hpp>

#include <algorithm>
#include <map>
#include <set>

namespace adk {

namespace {

bool belongs_to_branch(std::string_view branch, const Event& e)
{
    if (branch.empty() || e.branch.empty())
        return true;
    return branch == e.branch || (branch.size() > e.branch.size() && branch.substr(0, e.branch.size()) == e.branch &&
                                  branch[e.branch.size()] == '.');
}

bool has_content(const Event& e)
{
    if (!e.content || e.content->parts.empty())
        return false;
    for (const Part& p : e.content->parts)
        if (!(p.text && p.text->empty()) || p.thought_signature)
            return true;
    return false;
}

bool is_other_agent(std::string_view agent_name, const std::string& author)
{
    return author != agent_name && author != "user";
}

Content own_content(const std::string& author, Content c)
{
    if (c.role.empty())
        c.role = author == "user" ? "user" : "model";
    for (Part& p : c.parts) {
        if (p.function_call && p.function_call->id.rfind("adk-", 0) == 0)
            p.function_call->id.clear();
        if (p.function_response && p.function_response->id.rfind("adk-", 0) == 0)
            p.function_response->id.clear();
    }
    return c;
}

Content other_agent_content(const std::string& author, const Content& content)
{
    Content c("user", {Part::from_text("For context:")});
    for (const Part& p : content.parts) {
        if (p.thought)
            continue;
        if (p.text)
            c.parts.push_back(Part::from_text("[" + author + "] said: " + *p.text));
        else if (p.function_call)
            c.parts.push_back(Part::from_text("[" + author + "] called tool `" + p.function_call->name +
                                              "` with parameters: " + json::serialize(p.function_call->args)));
        else if (p.function_response)
            c.parts.push_back(Part::from_text("[" + author + "] `" + p.function_response->name +
                                              "` tool returned result: " +
                                              json::serialize(p.function_response->response)));
        else
            c.parts.push_back(p);
    }
    return c;
}

// Questions to a person and their answers are between the agent and the client: the model never sees them.
bool visible(const Part& p)
{
    return !(p.function_call && is_question(p.function_call->name)) &&
           !(p.function_response && is_question(p.function_response->name));
}

bool has_visible_part(const Event& e)
{
    return std::any_of(e.content->parts.begin(), e.content->parts.end(), visible);
}

// The events of invocations that a Runner::rewind marker took back: from the first event of the invocation
// it names up to the marker.
std::vector<bool> rewound(const EventList& events)
{
    const bool any = std::any_of(events.begin(), events.end(),
                                 [](const Event& e) { return e.actions.rewind_before_invocation_id.has_value(); });
    if (!any)
        return {};  // the usual case: nothing to leave out, nothing allocated
    std::vector<bool> out(events.size(), false);
    for (std::size_t i = events.size(); i-- > 0;) {
        const auto& before = events[i].actions.rewind_before_invocation_id;
        if (!before || out[i])
            continue;
        std::size_t first = i;
        for (std::size_t j = 0; j < i; ++j)
            if (events[j].invocation_id == *before) {
                first = j;
                break;
            }
        for (std::size_t j = first; j <= i; ++j)
            out[j] = true;
    }
    return out;
}

}  // namespace

std::vector<Content> build_contents(const EventList& events, std::string_view agent_name,
                                    std::string_view branch, IncludeContents mode, std::string_view isolation_scope)
{
    const std::vector<bool> taken_back = rewound(events);
    std::vector<Event> summaries;  // what the compactions' summaries stand for, when there are any
    const auto compacted = detail::apply_compactions(events, taken_back, agent_name, summaries);
    std::vector<const Event*> kept;
    auto consider = [&](const Event& e) {
        const bool in_scope = !e.isolation_scope || *e.isolation_scope == isolation_scope;
        if (!e.partial && has_content(e) && belongs_to_branch(branch, e) && in_scope && has_visible_part(e))
            kept.push_back(&e);
    };
    if (compacted) {
        for (const Event* e : *compacted)
            consider(*e);
    } else {
        for (std::size_t i = 0; i < events.size(); ++i)
            if (taken_back.empty() || !taken_back[i])
                consider(events[i]);
    }

    std::size_t first = 0;
    if (mode == IncludeContents::none) {
        for (std::size_t i = kept.size(); i-- > 0;) {
            if (kept[i]->author == "user" || is_other_agent(agent_name, kept[i]->author)) {
                first = i;
                break;
            }
        }
    }
    // Each call's latest response follows the call at once: responses that came at different times (a person's
    // approval, a long-running tool's answer) join, and a long-running tool's final answer replaces its first.
    // A call that never got a response is left out, as models refuse a call without its response.
    // The media a tool sent with its response (ToolContext::add_response_part) goes with the response.
    struct Response {
        const Part* part;
        const Event* event;
    };
    std::map<std::string_view, Response> latest_response;
    std::set<std::string_view> called;
    for (std::size_t i = first; i < kept.size(); ++i)
        for (const Part& p : kept[i]->content->parts) {
            if (p.function_response && !p.function_response->id.empty() && visible(p))
                latest_response.insert_or_assign(p.function_response->id, Response{&p, kept[i]});
            if (p.function_call && !p.function_call->id.empty())
                called.insert(p.function_call->id);
        }
    auto moves_to_call = [&](const Part& p) { return p.function_response && called.contains(p.function_response->id); };
    auto media_of = [&](const Event& e, Content& into) {
        for (const Part& p : e.content->parts)
            if (!p.function_response && visible(p))
                into.parts.push_back(p);
    };
    auto convert = [&](const std::string& author, Content c) {
        return is_other_agent(agent_name, author) ? other_agent_content(author, c) : own_content(author, std::move(c));
    };

    std::vector<Content> out;
    out.reserve(kept.size() - first);
    for (std::size_t i = first; i < kept.size(); ++i) {
        const Event& e = *kept[i];
        Content shown(e.content->role, {});
        Content responses("user", {});
        std::vector<const Event*> responders;  // the events the responses came from, for their media
        const bool responses_moved = std::ranges::any_of(e.content->parts, moves_to_call);
        for (const Part& p : e.content->parts) {
            if (!visible(p) || moves_to_call(p) || (responses_moved && !p.function_response))
                continue;  // a response follows its call, with its media
            if (p.function_call && !p.function_call->id.empty()) {
                auto response = latest_response.find(p.function_call->id);
                if (response == latest_response.end())
                    continue;
                responses.parts.push_back(*response->second.part);
                if (std::ranges::find(responders, response->second.event) == responders.end())
                    responders.push_back(response->second.event);
            }
            shown.parts.push_back(p);
        }
        for (const Event* responder : responders)
            media_of(*responder, responses);
        if (!shown.parts.empty())
            out.push_back(convert(e.author, std::move(shown)));
        if (!responses.parts.empty())
            out.push_back(convert(e.author, std::move(responses)));
    }
    return out;
}

}  // namespace adk
