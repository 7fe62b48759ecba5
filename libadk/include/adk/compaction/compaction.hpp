// Event compaction: a long session's older events summarized, so that what a model is sent stays bounded.
//
// A compaction is an event of its own, appended to the session after an invocation: author "user" (as ADK
// Python writes it), no content, and actions.compaction {startTimestamp, endTimestamp, compactedContent}, the
// summary of the events whose timestamps lie in that range. Nothing is deleted: the events stay in the session
// (the web UI, rewind and resume read them); build_contents (adk/flow/contents.hpp) sends the newest summary in
// their place. Each summary takes in the one before it, so a later compaction covers everything an earlier one
// did: one summary stands for the whole past, whatever the length of the session.
//
// Two triggers, as ADK's EventsCompactionConfig has them, checked after each invocation (RunnerOptions::
// compaction):
//   - every `compaction_interval` invocations since the last compaction, the new ones are summarized together
//     with the previous summary and the `overlap_size` invocations before them (carried over, as context);
//   - when the invocation's last model call was sent `token_threshold` prompt tokens or more
//     (usageMetadata.promptTokenCount), everything but the last `event_retention_size` events is summarized.
// A compaction never splits a function call from its response: the range ends before a call whose answer is
// not inside it (a tool still running, a question to a person not yet answered). Partial events are never
// summarized. The summary is made in the background: the reply is not delayed, no invocation waits for it,
// and a summary that fails is logged and changes nothing.
#pragma once

#include <adk/core/event.hpp>

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace adk {

namespace asio = boost::asio;

class Model;

// What a summarizer made: the summary (role "model") and what the call cost.
class Summary {
public:
    explicit Summary(Content content_, std::optional<UsageMetadata> usage_ = std::nullopt)
        : content(std::move(content_)), usage(std::move(usage_))
    {
    }
    Content content;
    std::optional<UsageMetadata> usage;
};

// ADK's BaseEventsSummarizer. `events` are oldest first and hold no partial event; when an earlier summary
// exists, the first is it: an event by "model" whose content is that summary and whose actions.compaction is
// set. Returns nullopt to leave the session as it is; throws to report a failure (logged, nothing changes).
class Summarizer {
public:
    virtual ~Summarizer() = default;
    virtual asio::awaitable<std::optional<Summary>> summarize(const std::vector<Event>& events) = 0;
};

// The default summarizer: one call to a model of the user's choice (a small, cheap one does), with a prompt
// that asks to keep names, numbers, decisions and open questions. The events are written out one line per
// part: "author: text", "author called tool `name` with {args}", "tool `name` returned {response}". Text (the
// previous summary, every turn) goes whole; a tool's arguments or result longer than max_value_bytes is cut there.
class LlmEventSummarizer final : public Summarizer {
public:
    // `prompt_template` holds "{conversation_history}" where the events go; the default when empty.
    explicit LlmEventSummarizer(std::shared_ptr<Model> model, std::string prompt_template = {});

    static const std::string_view default_prompt_template;
    static constexpr std::size_t max_value_bytes = 2000;

    asio::awaitable<std::optional<Summary>> summarize(const std::vector<Event>& events) override;

    // The prompt sent for `events` (what summarize() sends), for tests and for custom summarizers.
    std::string prompt(const std::vector<Event>& events) const;

private:
    std::shared_ptr<Model> model_;
    std::string prompt_template_;
};

// ADK's EventsCompactionConfig. Meant for designated initializers.
struct EventsCompactionConfig {
    // The LlmEventSummarizer over the root agent's model (or the first LlmAgent's of the tree) when null.
    std::shared_ptr<Summarizer> summarizer = nullptr;
    // The sliding window: summarize every this many new invocations; 0 turns it off.
    int compaction_interval = 0;
    // Invocations before the new ones summarized again with them, for context (ADK's overlap).
    int overlap_size = 0;
    // The token threshold: summarize once a prompt reaches this many tokens; unset turns it off.
    std::optional<std::int64_t> token_threshold = std::nullopt;
    // The most recent events that a token-threshold compaction leaves as they are.
    int event_retention_size = 0;
};

}  // namespace adk
