#include <adk/tools/builtin_tools.hpp>

namespace adk {

std::shared_ptr<FunctionTool> exit_loop_tool()
{
    return FunctionTool::create("exit_loop",
                                "Exits the loop.\n\nCall this function only when you are instructed to do so.",
                                json::object{{"type", "object"}, {"properties", json::object{}}},
                                [](ToolContext& ctx, json::object) -> asio::awaitable<json::value> {
                                    ctx.actions().escalate = true;
                                    ctx.actions().skip_summarization = true;
                                    co_return json::object{};
                                });
}

}  // namespace adk
