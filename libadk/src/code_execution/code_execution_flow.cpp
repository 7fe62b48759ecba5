// Code execution in the LlmAgent's flow, as ADK's code execution processors: the request is shaped for code
// blocks, and the first block of each answer runs, its result fed back on the next model call.
#include "code_execution_flow.hpp"

#include <adk/agents/event_sink.hpp>
#include <adk/agents/invocation_context.hpp>
#include <adk/artifacts/artifact_service.hpp>
#include <adk/core/error.hpp>

#include <boost/system/system_error.hpp>

#include <algorithm>

namespace adk::detail {

namespace {

// The user's CSV parts become files for the code; the model reads their names instead ("data_2_1.csv": the
// request's second content, its first part).
std::vector<CodeFile> take_data_files(LlmRequest& request)
{
    std::vector<CodeFile> files;
    for (std::size_t i = 0; i < request.contents.size(); ++i) {
        Content& c = request.contents[i];
        if (c.role != "user")
            continue;
        for (std::size_t j = 0; j < c.parts.size(); ++j) {
            Part& p = c.parts[j];
            if (!p.inline_data || p.inline_data->mime_type != "text/csv")
                continue;
            std::string name = "data_" + std::to_string(i + 1) + "_" + std::to_string(j + 1) + ".csv";
            files.emplace_back(name, std::move(p.inline_data->data), "text/csv");
            p = Part::from_text("\nAvailable file: `" + name + "`\n");
        }
    }
    return files;
}

// Code and results of earlier answers, as text between the executor's delimiters: a model that does not run
// code itself reads them so. A content holding only a result is the code's answer to the model: a user turn.
void write_code_as_text(Content& content, const CodeExecutorOptions& o)
{
    const auto& [code_start, code_end] = o.code_block_delimiters.front();
    const auto& [result_start, result_end] = o.execution_result_delimiters;
    const bool only_result = content.parts.size() == 1 && content.parts[0].code_execution_result;
    for (Part& p : content.parts) {
        if (p.executable_code)
            p = Part::from_text(code_start + p.executable_code->code + code_end);
        else if (p.code_execution_result)
            p = Part::from_text(result_start + p.code_execution_result->output + result_end);
    }
    if (only_result)
        content.role = "user";
}

std::string instruction(const CodeExecutorOptions& o, const std::vector<CodeFile>& files)
{
    const auto& [code_start, code_end] = o.code_block_delimiters.front();
    const auto& [result_start, result_end] = o.execution_result_delimiters;
    std::string text = "You can run Python code. Write it in a block like this one, and it runs:\n" + code_start +
                       "print(6 * 7)" + code_end + "\nOnly the first block of an answer runs. What it prints comes "
                       "back to you like this:\n" + result_start + "42" + result_end +
                       "\nFiles it writes in its working folder are saved for the user. Write code when you need "
                       "its result, and answer in words once you have what you need.";
    if (!files.empty()) {
        text += "\nFiles in the code's working folder:";
        for (const CodeFile& f : files)
            text += " `" + f.name + "`";
        text += ".";
    }
    return text;
}

bool names_time(const std::string& limit)
{
    return limit.find("time") != std::string::npos;
}

class SavedFiles {
public:
    SavedFiles() = default;
    std::vector<std::string> names;
    std::vector<std::string> notes;  // files not saved, and why
};

// The files the code wrote become the session's artifacts (a new version when one has the name already); a name
// of the user's scope ("user:...") is refused.
asio::awaitable<SavedFiles> save_files(InvocationContext& ctx, std::vector<CodeFile> files, Event& result)
{
    SavedFiles saved;
    if (files.empty())
        co_return saved;
    if (!ctx.artifact_service()) {
        saved.notes.push_back("The files it wrote were not saved: this app has no artifact service.");
        co_return saved;
    }
    for (CodeFile& f : files) {
        // The code's files are the session's: a "user:" name would hand one to every session of the user.
        if (f.name.rfind(user_artifact_prefix, 0) == 0) {
            saved.notes.push_back("`" + f.name + "` was not saved: the code's files are the session's, and a name that "
                                  "begins with `user:` would give it to every session of the user; write it under a "
                                  "plain name");
            continue;
        }
        std::optional<std::string> refused;
        try {
            Part part = Part::from_bytes(std::move(f.content), f.mime_type);
            ArtifactKey key(ctx.app_name(), ctx.user_id(), ctx.session_id(), f.name);
            result.actions.artifact_delta[f.name] =
                co_await ctx.artifact_service()->save_artifact(std::move(key), std::move(part));
            saved.names.push_back(f.name);
        } catch (const Error& e) {
            if (e.code() == make_error_code(errc::cancelled))
                throw;
            refused = e.message();
        }
        if (refused)
            saved.notes.push_back("`" + f.name + "` was not saved: " + *refused);
    }
    co_return saved;
}

// The result as the model reads it. ADK's wording for output and saved files; errors, the limit that stopped
// the code and the files not saved follow.
CodeExecutionResult result_part(const CodeExecutionOutput& output, const SavedFiles& saved)
{
    std::string text;
    if (!output.stdout_text.empty() || (!output.failed() && saved.names.empty()))
        text += "Code execution result:\n" + output.stdout_text + "\n";
    if (!output.stderr_text.empty())
        text += (text.empty() ? "" : "\n") + output.stderr_text;
    if (!output.limit_reached.empty())
        text += (text.empty() ? "" : "\n") + std::string("Stopped: ") + output.limit_reached + ".";
    if (!saved.names.empty()) {
        text += (text.empty() ? "" : "\n\n") + std::string("Saved artifacts:\n");
        for (std::size_t i = 0; i < saved.names.size(); ++i)
            text += (i ? ",`" : "`") + saved.names[i] + "`";
    }
    for (const std::string& note : saved.notes)
        text += (text.empty() ? "" : "\n") + note;
    const char* outcome = !output.failed()                      ? "OUTCOME_OK"
                          : names_time(output.limit_reached)   ? "OUTCOME_DEADLINE_EXCEEDED"
                                                               : "OUTCOME_FAILED";
    return CodeExecutionResult(outcome, std::move(text));
}

// The first block between delimiters in `text`, as {start of the block, start of the code, end of the code}.
struct Block {
    std::size_t begin = 0;
    std::size_t code_begin = 0;
    std::size_t code_end = 0;
};

std::optional<Block> find_block(std::string_view text, const std::vector<std::pair<std::string, std::string>>& delimiters)
{
    std::optional<Block> first;
    for (const auto& [start, end] : delimiters) {
        const std::size_t at = text.find(start);
        if (at == std::string_view::npos || (first && at >= first->begin))
            continue;
        first = Block{at, at + start.size(), std::string_view::npos};
    }
    if (!first)
        return std::nullopt;
    // The nearest end of any kind, as ADK's pattern matches.
    for (const auto& [start, end] : delimiters) {
        const std::size_t at = text.find(end, first->code_begin);
        if (at != std::string_view::npos && at < first->code_end)
            first->code_end = at;
    }
    if (first->code_end == std::string_view::npos || first->code_end == first->code_begin)
        return std::nullopt;
    return first;
}

}  // namespace

void prepare_code_execution(const LlmAgentConfig& cfg, LlmRequest& request, CodeRunState& state)
{
    if (!cfg.code_executor)
        return;
    const CodeExecutor& executor = *cfg.code_executor;
    if (executor.runs_in_model()) {
        request.code_execution = true;
        return;
    }
    const CodeExecutorOptions& o = executor.options();
    if (o.optimize_data_file)
        state.data_files = take_data_files(request);
    for (Content& c : request.contents)
        write_code_as_text(c, o);
    request.append_instruction(instruction(o, state.data_files));
}

std::optional<std::string> extract_code(Content& content,
                                        const std::vector<std::pair<std::string, std::string>>& delimiters)
{
    for (std::size_t i = 0; i < content.parts.size(); ++i) {
        const Part& p = content.parts[i];
        const bool answered = i + 1 < content.parts.size() && content.parts[i + 1].code_execution_result;
        if (p.executable_code && !answered) {
            std::string code = p.executable_code->code;
            content.parts.resize(i + 1);
            return code;
        }
    }
    std::string text;  // the answer's text parts, joined by new lines (thoughts are left out)
    bool any = false;
    for (const Part& p : content.parts) {
        if (!p.text || p.thought)
            continue;
        text += (any ? "\n" : "") + *p.text;
        any = true;
    }
    std::optional<Block> block = find_block(text, delimiters);
    if (!block)
        return std::nullopt;
    std::string code = text.substr(block->code_begin, block->code_end - block->code_begin);
    std::vector<Part> parts;
    for (Part& p : content.parts)
        if (p.thought)
            parts.push_back(std::move(p));
    if (block->begin > 0)
        parts.push_back(Part::from_text(text.substr(0, block->begin)));
    Part code_part;
    code_part.executable_code = ExecutableCode("PYTHON", code);
    parts.push_back(std::move(code_part));
    content.parts = std::move(parts);
    return code;
}

asio::awaitable<bool> run_model_code(const LlmAgent& agent, InvocationContext& ctx, EventSink& out, Event& answer,
                                     CodeRunState& state)
{
    const LlmAgentConfig& cfg = agent.config();
    if (!cfg.code_executor || cfg.code_executor->runs_in_model() || !answer.content || answer.partial ||
        answer.error_code)
        co_return false;
    CodeExecutor& executor = *cfg.code_executor;
    const CodeExecutorOptions& o = executor.options();
    if (state.failures_in_a_row >= o.error_retry_attempts)
        co_return false;  // the code failed too often in a row: the answer stands
    const auto& parts = answer.content->parts;
    if (std::any_of(parts.begin(), parts.end(), [](const Part& p) { return p.function_call.has_value(); }))
        co_return false;  // the model calls tools: they run, not its code
    Content cut = *answer.content;
    std::optional<std::string> code = extract_code(cut, o.code_block_delimiters);
    if (!code)
        co_return false;
    answer.content = std::move(cut);
    co_await out.emit(std::move(answer));

    CodeExecutionInput input(std::move(*code), state.data_files);
    if (o.stateful)
        input.execution_id = ctx.session_id();
    CodeExecutionOutput output = co_await executor.execute_code(ctx, std::move(input));
    state.failures_in_a_row = output.failed() ? state.failures_in_a_row + 1 : 0;
    Event result = ctx.make_event();
    SavedFiles saved = co_await save_files(ctx, std::move(output.output_files), result);
    Part part;
    part.code_execution_result = result_part(output, saved);
    result.content = Content("model", {std::move(part)});
    co_await out.emit(std::move(result));
    co_return true;
}

}  // namespace adk::detail
