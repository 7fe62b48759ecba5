// Tools that come with adk-cpp.
#pragma once

#include <adk/tools/function_tool.hpp>

#include <memory>

namespace adk {

// exit_loop: escalates (and skips summarization), which ends the enclosing LoopAgent.
std::shared_ptr<FunctionTool> exit_loop_tool();

}  // namespace adk
