// Code execution: an LlmAgent given a code executor (LlmAgent::Builder::code_executor) runs the code its model
// writes and feeds the results back to the model, as ADK's code executors do.
//
//   auto agent = adk::LlmAgent::builder("analyst").model(model)
//       .code_executor(std::make_shared<adk::SandboxedCodeExecutor>())   // adk::sandbox, <adk/sandbox/...>
//       .build();
//
// Each model answer that holds a code block (between one of code_block_delimiters, "```tool_code" or
// "```python" by default) or an executableCode part is cut after its first block; the block runs, and its
// result becomes a codeExecutionResult part in an event of the agent's, which the model reads on its next
// call. Files the code writes are saved as the session's artifacts. After error_retry_attempts failed runs in a
// row the model's code is no longer run in that invocation, and its answer stands.
//
// BuiltInCodeExecutor asks the model to run the code itself (Gemini's code execution tool): its executableCode
// and codeExecutionResult parts are kept as the model sent them, and nothing runs here.
#pragma once

#include <boost/asio/awaitable.hpp>

#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace adk {

namespace asio = boost::asio;

class InvocationContext;

// A file given to the code, or written by it.
class CodeFile {
public:
    CodeFile() = default;
    CodeFile(std::string name_, std::string content_, std::string mime_type_ = "text/plain");
    std::string name;     // a relative path: "data.csv", "plots/temperature.png"
    std::string content;  // the bytes
    std::string mime_type;
    friend bool operator==(const CodeFile&, const CodeFile&) = default;
};

class CodeExecutionInput {
public:
    CodeExecutionInput() = default;
    explicit CodeExecutionInput(std::string code_, std::vector<CodeFile> input_files_ = {});
    std::string code;
    std::vector<CodeFile> input_files;      // in the code's working folder when it starts
    std::optional<std::string> execution_id;  // stateful executors: the session's id, the same on every run
};

class CodeExecutionOutput {
public:
    CodeExecutionOutput() = default;
    std::string stdout_text;
    std::string stderr_text;
    std::vector<CodeFile> output_files;  // files the code wrote or changed
    // Set when the run was stopped by a limit, saying which ("the wall time limit of 30 s was reached").
    std::string limit_reached;
    bool failed() const noexcept { return !stderr_text.empty() || !limit_reached.empty(); }
};

class CodeExecutorOptions {
public:
    CodeExecutorOptions() = default;
    // CSV files the user sends (inline text/csv parts) are given to the code as files ("data_1_2.csv"), and the
    // model sees their names instead of their bytes.
    bool optimize_data_file = false;
    // The executor keeps the code's variables from one run to the next; runs get the session's id.
    bool stateful = false;
    // Failed runs in a row, in one invocation, after which the model's code is no longer run.
    int error_retry_attempts = 2;
    // Where a code block starts and ends in the model's text; the first pair also writes code back to the model.
    std::vector<std::pair<std::string, std::string>> code_block_delimiters{{"```tool_code\n", "\n```"},
                                                                           {"```python\n", "\n```"}};
    // How a run's result is written back to the model, as text.
    std::pair<std::string, std::string> execution_result_delimiters{"```tool_output\n", "\n```"};
};

class CodeExecutor {
public:
    explicit CodeExecutor(CodeExecutorOptions options = {});
    virtual ~CodeExecutor() = default;
    CodeExecutor(const CodeExecutor&) = delete;
    CodeExecutor& operator=(const CodeExecutor&) = delete;

    const CodeExecutorOptions& options() const noexcept { return options_; }

    // Runs one block of the model's code. A failure of the code is in the output (stderr_text, limit_reached);
    // an exception (adk::Error) means it could not be run at all, and ends the agent's run with that error.
    virtual asio::awaitable<CodeExecutionOutput> execute_code(InvocationContext& ctx, CodeExecutionInput input) = 0;

    // True when the model runs the code itself (BuiltInCodeExecutor): the flow then only asks for it.
    virtual bool runs_in_model() const noexcept { return false; }

private:
    CodeExecutorOptions options_;
};

// The model's own code execution (Gemini: the codeExecution tool). Providers without one log a warning once and
// send the request without it; the executableCode and codeExecutionResult parts of earlier answers reach them
// as text.
class BuiltInCodeExecutor final : public CodeExecutor {
public:
    BuiltInCodeExecutor() = default;
    // Never called by the flow; throws adk::Error (the model runs the code).
    asio::awaitable<CodeExecutionOutput> execute_code(InvocationContext& ctx, CodeExecutionInput input) override;
    bool runs_in_model() const noexcept override { return true; }
};

static_assert(!std::is_aggregate_v<CodeFile> && !std::is_aggregate_v<CodeExecutionInput>);
static_assert(!std::is_aggregate_v<CodeExecutionOutput> && !std::is_aggregate_v<CodeExecutorOptions>);

}  // namespace adk
