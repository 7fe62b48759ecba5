// Which events a compaction takes, decided from the session's events alone (no I/O), so that each rule can be
// tested on a list of events; and how the summaries stand in for them in what a model is sent.
#pragma once

#include <adk/compaction/compaction.hpp>
#include <adk/sessions/event_list.hpp>

#include <optional>
#include <string_view>
#include <vector>

namespace adk::detail {

class CompactionPlan {
public:
    CompactionPlan() = default;
    std::vector<Event> input;  // for the summarizer: the previous summary first (when there is one), then events
    double start_timestamp = 0;
    double end_timestamp = 0;
};

// The compaction due after invocation `invocation_id` (whose events are the last of `events` it considers:
// anything a later invocation added is left for later), or nullopt when none is due.
std::optional<CompactionPlan> plan_compaction(const EventList& events, const EventsCompactionConfig& config,
                                              std::string_view invocation_id);

// The event that records `summary` for `plan`: author "user", a new invocation id, actions.compaction.
Event compaction_event(const CompactionPlan& plan, Summary summary);

// The events a model is sent, in order, once compactions apply (ADK's rule): a compaction's summary stands at its
// end timestamp as an event by `agent_name`, in place of the events its range covers; a compaction whose range
// lies inside another's is left out; an event with a call whose response came after the range is kept (with
// the responses to its other calls), so that no response is sent without its call. `skip` marks events left
// out before compaction (a rewind's); the summaries are kept in `summaries`, which the result points into.
// Returns nothing when no event holds a compaction: the events apply as they are.
std::optional<std::vector<const Event*>> apply_compactions(const EventList& events, const std::vector<bool>& skip,
                                                          std::string_view agent_name, std::vector<Event>& summaries);

}  // namespace adk::detail
