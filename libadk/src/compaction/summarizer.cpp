#include <adk/compaction/compaction.hpp>
#include <adk/core/error.hpp>
#include <adk/core/utf8.hpp>
#include <adk/models/model.hpp>

#include <boost/json/serialize.hpp>

namespace adk {

const std::string_view LlmEventSummarizer::default_prompt_template =
    "The following is a conversation between a user and an AI agent, oldest first; when it starts with a summary, "
    "that summary stands for everything said before. Write a new summary that the agent will read in place of "
    "the whole conversation. Keep exactly as written every name, number, date, amount, identifier and file name; "
    "every decision made and why; what each tool returned that may matter later; and every question or task "
    "still open. Leave out greetings and repetition. Write plain sentences, nothing else.\n\n"
    "{conversation_history}";

namespace {

constexpr std::string_view placeholder = "{conversation_history}";

std::string cut(std::string text)
{
    if (text.size() > LlmEventSummarizer::max_value_bytes) {
        text.resize(utf8_prefix_size(text, LlmEventSummarizer::max_value_bytes));
        text += " [...]";
    }
    return text;
}

}  // namespace

LlmEventSummarizer::LlmEventSummarizer(std::shared_ptr<Model> model, std::string prompt_template)
    : model_(std::move(model)), prompt_template_(std::move(prompt_template))
{
    if (!model_)
        throw Error(errc::invalid_argument, "LlmEventSummarizer needs a model: give it the one to summarize with");
    if (prompt_template_.empty())
        prompt_template_ = default_prompt_template;
    if (prompt_template_.find(placeholder) == std::string::npos)
        throw Error(errc::invalid_argument,
                    "the prompt template of LlmEventSummarizer has no {conversation_history}: put it where the "
                    "conversation goes");
}

std::string LlmEventSummarizer::prompt(const std::vector<Event>& events) const
{
    std::string history;
    for (const Event& e : events) {
        if (!e.content)
            continue;
        const bool summary = e.actions.compaction.has_value();
        for (const Part& p : e.content->parts) {
            std::string line;
            if (p.thought)
                continue;
            // Text goes whole: the previous summary stands for the whole past, and the tail of a long turn may
            // hold what matters. Only a tool's arguments and results, which can be any size, are cut.
            if (summary && p.text)
                line = "Summary of the conversation before: " + *p.text;
            else if (p.text && !p.text->empty())
                line = e.author + ": " + *p.text;
            else if (p.function_call)
                line = e.author + " called tool `" + p.function_call->name + "` with " +
                       cut(json::serialize(p.function_call->args));
            else if (p.function_response)
                line = "tool `" + p.function_response->name + "` returned " +
                       cut(json::serialize(p.function_response->response));
            else if (p.inline_data)
                line = e.author + " sent a file (" + p.inline_data->mime_type + ")";
            if (line.empty())
                continue;
            if (!history.empty())
                history += '\n';
            history += line;
        }
    }
    std::string out = prompt_template_;
    out.replace(out.find(placeholder), placeholder.size(), history);
    return out;
}

asio::awaitable<std::optional<Summary>> LlmEventSummarizer::summarize(const std::vector<Event>& events)
{
    if (events.empty())
        co_return std::nullopt;
    LlmRequest request;
    request.model = std::string(model_->name());
    request.contents.emplace_back("user", std::vector<Part>{Part::from_text(prompt(events))});
    Stream<LlmResponse> stream = co_await model_->generate(std::move(request), false);
    std::string text;
    std::optional<UsageMetadata> usage;
    while (auto response = co_await stream.next()) {
        if (response->error_code)
            throw Error(errc::bad_response, "the summarizer's model answered " + *response->error_code + ": " +
                                                response->error_message.value_or(""));
        if (response->content && !response->partial)
            for (const Part& p : response->content->parts)
                if (p.text && !p.thought)
                    text += *p.text;
        if (response->usage_metadata)
            usage = response->usage_metadata;
    }
    if (text.empty())
        co_return std::nullopt;
    co_return Summary(Content("model", {Part::from_text(std::move(text))}), std::move(usage));
}

}  // namespace adk
