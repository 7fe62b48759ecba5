#include "plugin_manager.hpp"

namespace adk::detail {

// Each hook binds its arguments by reference (they outlive the caller's co_await) and hands them to the policy.

asio::awaitable<void> PluginManager::on_user_message(InvocationContext& ctx, Content& message) const
{
    std::optional<Content> replaced;
    for (const auto& plugin : plugins_) {
        replaced = co_await plugin->on_user_message(ctx, message);
        if (replaced) {
            message = std::move(*replaced);
            co_return;
        }
    }
}

asio::awaitable<std::optional<Content>> PluginManager::before_run(InvocationContext& ctx) const
{
    for (const auto& plugin : plugins_)
        if (auto answer = co_await plugin->before_run(ctx))
            co_return answer;
    co_return std::nullopt;
}

bool PluginManager::sees(const Event& event) const noexcept
{
    for (const auto& plugin : plugins_)
        if (!event.partial || plugin->sees_partial_events())
            return true;
    return false;
}

asio::awaitable<void> PluginManager::on_event(InvocationContext& ctx, Event& event) const
{
    for (const auto& plugin : plugins_) {
        if (event.partial && !plugin->sees_partial_events())
            continue;
        if (auto replaced = co_await plugin->on_event(ctx, event)) {
            event = std::move(*replaced);
            co_return;
        }
    }
}

asio::awaitable<void> PluginManager::after_run(InvocationContext& ctx) const
{
    for (const auto& plugin : plugins_)
        co_await plugin->after_run(ctx);
}

asio::awaitable<void> PluginManager::before_agent(Agent& agent, CallbackContext& cb,
                                                  std::span<const AgentCallback> callbacks,
                                                  std::optional<Content>& answer) const
{
    auto ask_plugin = [&agent, &cb](Plugin& p) { return p.before_agent(agent, cb); };
    auto ask_callback = [&cb](const AgentCallback& c) { return c(cb); };
    return first_answer(ask_plugin, callbacks, ask_callback, answer);
}

asio::awaitable<void> PluginManager::after_agent(Agent& agent, CallbackContext& cb,
                                                 std::span<const AgentCallback> callbacks,
                                                 std::optional<Content>& answer) const
{
    auto ask_plugin = [&agent, &cb](Plugin& p) { return p.after_agent(agent, cb); };
    auto ask_callback = [&cb](const AgentCallback& c) { return c(cb); };
    return first_answer(ask_plugin, callbacks, ask_callback, answer);
}

asio::awaitable<void> PluginManager::before_model(CallbackContext& cb, LlmRequest& request,
                                                  std::span<const BeforeModelCallback> callbacks,
                                                  std::optional<LlmResponse>& answer) const
{
    auto ask_plugin = [&cb, &request](Plugin& p) { return p.before_model(cb, request); };
    auto ask_callback = [&cb, &request](const BeforeModelCallback& c) { return c(cb, request); };
    return first_answer(ask_plugin, callbacks, ask_callback, answer);
}

asio::awaitable<void> PluginManager::after_model(CallbackContext& cb, const LlmResponse& response,
                                                 std::span<const AfterModelCallback> callbacks,
                                                 std::optional<LlmResponse>& answer) const
{
    auto ask_plugin = [&cb, &response](Plugin& p) { return p.after_model(cb, response); };
    auto ask_callback = [&cb, &response](const AfterModelCallback& c) { return c(cb, response); };
    return first_answer(ask_plugin, callbacks, ask_callback, answer);
}

asio::awaitable<void> PluginManager::on_model_error(CallbackContext& cb, const LlmRequest& request, const Error& error,
                                                    std::span<const ModelErrorCallback> callbacks,
                                                    std::optional<LlmResponse>& answer) const
{
    auto ask_plugin = [&cb, &request, &error](Plugin& p) { return p.on_model_error(cb, request, error); };
    auto ask_callback = [&cb, &request, &error](const ModelErrorCallback& c) { return c(cb, request, error); };
    return first_answer(ask_plugin, callbacks, ask_callback, answer);
}

asio::awaitable<void> PluginManager::before_tool(Tool& tool, json::object& args, ToolContext& tc,
                                                 std::span<const BeforeToolCallback> callbacks,
                                                 std::optional<json::value>& answer) const
{
    auto ask_plugin = [&tool, &args, &tc](Plugin& p) { return p.before_tool(tool, args, tc); };
    auto ask_callback = [&tool, &args, &tc](const BeforeToolCallback& c) { return c(tool, args, tc); };
    return first_answer(ask_plugin, callbacks, ask_callback, answer);
}

asio::awaitable<void> PluginManager::after_tool(Tool& tool, const json::object& args, ToolContext& tc,
                                                const json::value& result,
                                                std::span<const AfterToolCallback> callbacks,
                                                std::optional<json::value>& answer) const
{
    auto ask_plugin = [&tool, &args, &tc, &result](Plugin& p) { return p.after_tool(tool, args, tc, result); };
    auto ask_callback = [&tool, &args, &tc, &result](const AfterToolCallback& c) { return c(tool, args, tc, result); };
    return first_answer(ask_plugin, callbacks, ask_callback, answer);
}

asio::awaitable<void> PluginManager::on_tool_error(Tool& tool, const json::object& args, ToolContext& tc,
                                                   const Error& error, std::span<const ToolErrorCallback> callbacks,
                                                   std::optional<json::value>& answer) const
{
    auto ask_plugin = [&tool, &args, &tc, &error](Plugin& p) { return p.on_tool_error(tool, args, tc, error); };
    auto ask_callback = [&tool, &args, &tc, &error](const ToolErrorCallback& c) { return c(tool, args, tc, error); };
    return first_answer(ask_plugin, callbacks, ask_callback, answer);
}

}  // namespace adk::detail
