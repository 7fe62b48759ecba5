#include <adk/code_execution/code_executor.hpp>

#include <adk/core/error.hpp>

namespace adk {

CodeFile::CodeFile(std::string name_, std::string content_, std::string mime_type_)
    : name(std::move(name_)), content(std::move(content_)), mime_type(std::move(mime_type_))
{
}

CodeExecutionInput::CodeExecutionInput(std::string code_, std::vector<CodeFile> input_files_)
    : code(std::move(code_)), input_files(std::move(input_files_))
{
}

CodeExecutor::CodeExecutor(CodeExecutorOptions options) : options_(std::move(options)) {}

asio::awaitable<CodeExecutionOutput> BuiltInCodeExecutor::execute_code(InvocationContext&, CodeExecutionInput)
{
    throw Error(errc::invalid_argument, "BuiltInCodeExecutor runs no code here: the model runs it itself");
    co_return CodeExecutionOutput();
}

}  // namespace adk
