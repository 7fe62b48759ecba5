// The LlmAgent's code execution steps (adk/code_execution/code_executor.hpp), called by the flow (llm_flow.cpp):
// one shapes each model request, the other runs the code of each model answer.
#pragma once

#include <adk/agents/llm_agent.hpp>
#include <adk/code_execution/code_executor.hpp>
#include <adk/core/event.hpp>
#include <adk/models/llm_request.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace adk {
class EventSink;
}

namespace adk::detail {

// What code execution keeps over one run of an agent's flow.
class CodeRunState {
public:
    CodeRunState() = default;
    int failures_in_a_row = 0;
    std::vector<CodeFile> data_files;  // the user's CSV files (optimize_data_file), from the latest request
};

// For an agent with a code executor: a model that runs code itself is asked to (LlmRequest::code_execution);
// otherwise the model is told how to write code blocks, earlier code and results reach it as text between
// the executor's delimiters, and (optimize_data_file) the user's CSV parts become files for the code, named in
// the request instead of sent.
void prepare_code_execution(const LlmAgentConfig& cfg, LlmRequest& request, CodeRunState& state);

// The first code block of `content`: an executableCode part without its result, else the first block between
// delimiters in its text. `content` is cut after that block, which becomes an executableCode part (the text
// before it is kept). nullopt, and `content` unchanged, when it holds no code.
std::optional<std::string> extract_code(Content& content,
                                        const std::vector<std::pair<std::string, std::string>>& delimiters);

// When the model's answer holds code that is to run here: emits the answer (cut after the code), runs the code,
// saves the files it wrote as artifacts and emits the result; true (the model is called again). False, with
// nothing emitted, when there is no code to run.
asio::awaitable<bool> run_model_code(const LlmAgent& agent, InvocationContext& ctx, EventSink& out, Event& answer,
                                     CodeRunState& state);

}  // namespace adk::detail
