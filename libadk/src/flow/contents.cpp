#include <adk/flow/contents.hpp>

#include <boost/json/serialize.hpp>

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

bool is_other_agent(std::string_view agent_name, const Event& e)
{
    return e.author != agent_name && e.author != "user";
}

Content own_content(const Event& e)
{
    Content c = *e.content;
    if (c.role.empty())
        c.role = e.author == "user" ? "user" : "model";
    for (Part& p : c.parts) {
        if (p.function_call && p.function_call->id.rfind("adk-", 0) == 0)
            p.function_call->id.clear();
        if (p.function_response && p.function_response->id.rfind("adk-", 0) == 0)
            p.function_response->id.clear();
    }
    return c;
}

Content other_agent_content(const Event& e)
{
    Content c("user", {Part::from_text("For context:")});
    for (const Part& p : e.content->parts) {
        if (p.thought)
            continue;
        if (p.text)
            c.parts.push_back(Part::from_text("[" + e.author + "] said: " + *p.text));
        else if (p.function_call)
            c.parts.push_back(Part::from_text("[" + e.author + "] called tool `" + p.function_call->name +
                                              "` with parameters: " + json::serialize(p.function_call->args)));
        else if (p.function_response)
            c.parts.push_back(Part::from_text("[" + e.author + "] `" + p.function_response->name +
                                              "` tool returned result: " +
                                              json::serialize(p.function_response->response)));
        else
            c.parts.push_back(p);
    }
    return c;
}

}  // namespace

std::vector<Content> build_contents(const std::vector<Event>& events, std::string_view agent_name,
                                    std::string_view branch, IncludeContents mode)
{
    std::vector<const Event*> kept;
    for (const Event& e : events)
        if (!e.partial && has_content(e) && belongs_to_branch(branch, e))
            kept.push_back(&e);

    std::size_t first = 0;
    if (mode == IncludeContents::none) {
        for (std::size_t i = kept.size(); i-- > 0;) {
            if (kept[i]->author == "user" || is_other_agent(agent_name, *kept[i])) {
                first = i;
                break;
            }
        }
    }
    std::vector<Content> out;
    out.reserve(kept.size() - first);
    for (std::size_t i = first; i < kept.size(); ++i)
        out.push_back(is_other_agent(agent_name, *kept[i]) ? other_agent_content(*kept[i]) : own_content(*kept[i]));
    return out;
}

}  // namespace adk
