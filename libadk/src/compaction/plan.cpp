#include "plan.hpp"

#include <adk/core/ids.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <string>

namespace adk::detail {

namespace {

bool is_compaction(const Event& e)
{
    return e.actions.compaction.has_value();
}

// An event a compaction may summarize.
bool summarizable(const Event& e)
{
    return !is_compaction(e) && !e.partial;
}

// The newest complete compaction among events[0, n): the one that reaches furthest.
const Event* latest_compaction(const EventList& events, std::size_t n)
{
    const Event* latest = nullptr;
    for (std::size_t i = 0; i < n; ++i) {
        const auto& c = events[i].actions.compaction;
        if (c && c->complete() && (!latest || *c->end_timestamp >= *latest->actions.compaction->end_timestamp))
            latest = &events[i];
    }
    return latest;
}

// Moves `cut` back until events[from, cut) split no call from its answer: each call among them has a response
// before the cut, and the event at the cut is later than every event before it (a range of timestamps cannot
// take one of two events stamped alike).
std::size_t safe_cut(const EventList& events, std::size_t from, std::size_t cut)
{
    for (bool moved = true; moved && cut > from;) {
        moved = false;
        std::set<std::string_view> answered;
        for (std::size_t i = 0; i < cut; ++i) {
            if (!events[i].content)
                continue;
            for (const Part& p : events[i].content->parts)
                if (p.function_response && !p.function_response->id.empty())
                    answered.insert(p.function_response->id);
        }
        for (std::size_t i = from; i < cut && !moved; ++i) {
            if (!events[i].content)
                continue;
            for (const Part& p : events[i].content->parts)
                if (p.function_call && !p.function_call->id.empty() && !answered.contains(p.function_call->id)) {
                    cut = i;
                    moved = true;
                    break;
                }
        }
        if (!moved && cut < events.size() && cut > from && events[cut - 1].timestamp >= events[cut].timestamp) {
            --cut;
            moved = true;
        }
    }
    return cut;
}

// The prompt tokens of the invocation's last model call that reported them.
std::optional<std::int64_t> last_prompt_tokens(const EventList& events, std::size_t n,
                                               std::string_view invocation_id)
{
    for (std::size_t i = n; i-- > 0;) {
        const Event& e = events[i];
        if (e.invocation_id == invocation_id && e.usage_metadata && e.usage_metadata->prompt_token_count)
            return e.usage_metadata->prompt_token_count;
    }
    return std::nullopt;
}

}  // namespace

std::optional<CompactionPlan> plan_compaction(const EventList& events, const EventsCompactionConfig& config,
                                              std::string_view invocation_id)
{
    std::size_t n = events.size();
    while (n > 0 && (events[n - 1].invocation_id != invocation_id || !summarizable(events[n - 1])))
        --n;
    if (n == 0)
        return std::nullopt;
    const Event* previous = latest_compaction(events, n);
    const double covered_until = previous ? *previous->actions.compaction->end_timestamp : -1;

    // The invocations in the order they started, each with the index of its first event and its latest time.
    struct Started {
        std::size_t first;
        double latest;
    };
    std::vector<Started> invocations;
    std::map<std::string_view, std::size_t> position;
    for (std::size_t i = 0; i < n; ++i) {
        const Event& e = events[i];
        if (!summarizable(e) || e.invocation_id.empty())
            continue;
        auto [it, added] = position.try_emplace(e.invocation_id, invocations.size());
        if (added)
            invocations.push_back(Started{i, e.timestamp});
        else
            invocations[it->second].latest = std::max(invocations[it->second].latest, e.timestamp);
    }
    std::size_t first_new = invocations.size();
    for (std::size_t k = 0; k < invocations.size() && first_new == invocations.size(); ++k)
        if (invocations[k].latest > covered_until)
            first_new = k;
    const std::size_t new_count = invocations.size() - first_new;

    std::size_t from = 0;
    std::size_t cut = n;
    if (config.compaction_interval > 0 && new_count >= static_cast<std::size_t>(config.compaction_interval)) {
        const std::size_t overlap = static_cast<std::size_t>(std::max(config.overlap_size, 0));
        from = invocations[first_new >= overlap ? first_new - overlap : 0].first;
    } else if (config.token_threshold && new_count > 0) {
        auto tokens = last_prompt_tokens(events, n, invocation_id);
        if (!tokens || *tokens < *config.token_threshold)
            return std::nullopt;
        from = invocations[first_new].first;
        for (int kept = 0; kept < config.event_retention_size && cut > from;) {
            --cut;
            if (summarizable(events[cut]))
                ++kept;
        }
    } else {
        return std::nullopt;
    }
    cut = safe_cut(events, from, cut);

    CompactionPlan plan;
    bool anything_new = false;
    std::optional<double> first_time, last_time;
    if (previous) {
        Event summary("model", *previous->actions.compaction->compacted_content);
        summary.timestamp = *previous->actions.compaction->end_timestamp;
        summary.actions.compaction = previous->actions.compaction;
        plan.input.push_back(std::move(summary));
        first_time = *previous->actions.compaction->start_timestamp;
    }
    for (std::size_t i = from; i < cut; ++i) {
        const Event& e = events[i];
        if (!summarizable(e))
            continue;
        anything_new = anything_new || e.timestamp > covered_until;
        first_time = std::min(first_time.value_or(e.timestamp), e.timestamp);
        last_time = std::max(last_time.value_or(e.timestamp), e.timestamp);
        plan.input.push_back(e);
    }
    if (!anything_new || !last_time)
        return std::nullopt;
    plan.start_timestamp = *first_time;
    plan.end_timestamp = std::max(*last_time, previous ? *previous->actions.compaction->end_timestamp : *last_time);
    return plan;
}

Event compaction_event(const CompactionPlan& plan, Summary summary)
{
    Event e;
    e.id = new_uuid();
    e.invocation_id = new_invocation_id();
    e.author = "user";
    e.timestamp = now_seconds();
    summary.content.role = "model";
    EventCompaction compaction;
    compaction.start_timestamp = plan.start_timestamp;
    compaction.end_timestamp = plan.end_timestamp;
    compaction.compacted_content = std::move(summary.content);
    e.actions.compaction = std::move(compaction);
    e.usage_metadata = std::move(summary.usage);
    return e;
}

std::optional<std::vector<const Event*>> apply_compactions(const EventList& events, const std::vector<bool>& skip,
                                                          std::string_view agent_name, std::vector<Event>& summaries)
{
    auto skipped = [&](std::size_t i) { return !skip.empty() && skip[i]; };
    std::vector<std::size_t> compactions;
    for (std::size_t i = 0; i < events.size(); ++i)
        if (events[i].actions.compaction && events[i].actions.compaction->complete() && !skipped(i))
            compactions.push_back(i);
    if (compactions.empty())
        return std::nullopt;

    // A compaction inside another's range is left out; of two alike, the later stands.
    auto range = [&](std::size_t i) {
        const EventCompaction& c = *events[i].actions.compaction;
        return std::pair{*c.start_timestamp, *c.end_timestamp};
    };
    std::vector<std::pair<double, double>> ranges;
    std::vector<std::size_t> kept;
    for (std::size_t i : compactions) {
        auto [start, end] = range(i);
        bool inside = false;
        for (std::size_t j : compactions) {
            auto [other_start, other_end] = range(j);
            if (j != i && other_start <= start && other_end >= end && (other_start < start || other_end > end || j > i))
                inside = true;
        }
        if (!inside) {
            kept.push_back(i);
            ranges.emplace_back(start, end);
        }
    }
    std::vector<bool> covered(events.size(), false);
    for (std::size_t i = 0; i < events.size(); ++i)
        covered[i] = !events[i].actions.compaction &&
                     std::any_of(ranges.begin(), ranges.end(), [&](const auto& r) {
                         return r.first <= events[i].timestamp && events[i].timestamp <= r.second;
                     });

    // A response outside every range brings back the event of its call, and that event's other responses.
    std::map<std::string_view, std::size_t> call_event, response_event;
    for (std::size_t i = 0; i < events.size(); ++i) {
        if (!events[i].content)
            continue;
        for (const Part& p : events[i].content->parts) {
            if (p.function_call && !p.function_call->id.empty())
                call_event.try_emplace(p.function_call->id, i);
            if (p.function_response && !p.function_response->id.empty())
                response_event.insert_or_assign(p.function_response->id, i);
        }
    }
    for (std::size_t i = 0; i < events.size(); ++i) {
        if (covered[i] || skipped(i) || !events[i].content)
            continue;
        for (const Part& p : events[i].content->parts) {
            if (!p.function_response)
                continue;
            auto call = call_event.find(p.function_response->id);
            if (call == call_event.end() || !covered[call->second])
                continue;
            covered[call->second] = false;
            for (const Part& sibling : events[call->second].content->parts)
                if (sibling.function_call)
                    if (auto r = response_event.find(sibling.function_call->id); r != response_event.end())
                        covered[r->second] = false;
        }
    }

    summaries.clear();
    summaries.reserve(kept.size());
    struct Placed {
        double time;
        std::size_t index;
        const Event* event;
    };
    std::vector<Placed> placed;
    for (std::size_t i : kept) {
        const Event& c = events[i];
        Event summary(std::string(agent_name.empty() ? "model" : agent_name), *c.actions.compaction->compacted_content);
        summary.content->role = "model";
        summary.timestamp = *c.actions.compaction->end_timestamp;
        summary.branch = c.branch;
        summary.invocation_id = c.invocation_id;
        summaries.push_back(std::move(summary));
        placed.push_back(Placed{summaries.back().timestamp, i, &summaries.back()});
    }
    for (std::size_t i = 0; i < events.size(); ++i)
        if (!events[i].actions.compaction && !covered[i] && !skipped(i))
            placed.push_back(Placed{events[i].timestamp, i, &events[i]});
    std::stable_sort(placed.begin(), placed.end(), [](const Placed& a, const Placed& b) {
        return a.time != b.time ? a.time < b.time : a.index < b.index;
    });
    std::vector<const Event*> out;
    out.reserve(placed.size());
    for (const Placed& p : placed)
        out.push_back(p.event);
    return out;
}

}  // namespace adk::detail
