// PluginManager: the one place where the plugin policy is written. For each hook, the Runner's plugins run
// in order, then the agent's own callbacks; the first that answers wins and the rest are skipped (ADK's
// rule, and adk-go's plugin_manager). Every place that runs a hook asks it. Private to libadk.
#pragma once

#include <adk/agents/agent.hpp>
#include <adk/agents/invocation_context.hpp>
#include <adk/agents/llm_agent.hpp>
#include <adk/core/stream.hpp>
#include <adk/plugins/plugin.hpp>
#include <adk/tools/tool.hpp>

#include <memory>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

namespace adk::detail {

class PluginManager {
public:
    explicit PluginManager(const std::vector<std::shared_ptr<Plugin>>& plugins) noexcept : plugins_(plugins) {}

    bool empty() const noexcept { return plugins_.empty(); }

    // The Runner's hooks (plugins only). The message and the event are replaced in place.
    asio::awaitable<void> on_user_message(InvocationContext& ctx, Content& message) const;
    asio::awaitable<std::optional<Content>> before_run(InvocationContext& ctx) const;
    asio::awaitable<void> on_event(InvocationContext& ctx, Event& event) const;
    // Whether any plugin's on_event is to see this event (a partial one only goes to plugins that see those).
    bool sees(const Event& event) const noexcept;
    asio::awaitable<void> after_run(InvocationContext& ctx) const;

    // The agents' and the flow's hooks: plugins, then `callbacks`. Each leaves the first answer in `answer`
    // (nullopt when none answered).
    asio::awaitable<void> before_agent(Agent& agent, CallbackContext& cb, std::span<const AgentCallback> callbacks,
                                       std::optional<Content>& answer) const;
    asio::awaitable<void> after_agent(Agent& agent, CallbackContext& cb, std::span<const AgentCallback> callbacks,
                                      std::optional<Content>& answer) const;
    asio::awaitable<void> before_model(CallbackContext& cb, LlmRequest& request,
                                       std::span<const BeforeModelCallback> callbacks,
                                       std::optional<LlmResponse>& answer) const;
    asio::awaitable<void> after_model(CallbackContext& cb, const LlmResponse& response,
                                      std::span<const AfterModelCallback> callbacks,
                                      std::optional<LlmResponse>& answer) const;
    asio::awaitable<void> on_model_error(CallbackContext& cb, const LlmRequest& request, const Error& error,
                                         std::span<const ModelErrorCallback> callbacks,
                                         std::optional<LlmResponse>& answer) const;
    asio::awaitable<void> before_tool(Tool& tool, json::object& args, ToolContext& tc,
                                      std::span<const BeforeToolCallback> callbacks,
                                      std::optional<json::value>& answer) const;
    asio::awaitable<void> after_tool(Tool& tool, const json::object& args, ToolContext& tc, const json::value& result,
                                     std::span<const AfterToolCallback> callbacks,
                                     std::optional<json::value>& answer) const;
    asio::awaitable<void> on_tool_error(Tool& tool, const json::object& args, ToolContext& tc, const Error& error,
                                        std::span<const ToolErrorCallback> callbacks,
                                        std::optional<json::value>& answer) const;

private:
    // The policy, written once: ask each plugin, then each callback, in order; stop at the first answer.
    // `ask_plugin(Plugin&)` and `ask_callback(const Callback&)` return what the hook returns. Not a coroutine
    // when there is nobody to ask.
    template <class R, class AskPlugin, class Callback, class AskCallback>
    asio::awaitable<void> first_answer(AskPlugin ask_plugin, std::span<const Callback> callbacks, AskCallback ask_callback,
                                       std::optional<R>& answer) const
    {
        answer.reset();
        if (plugins_.empty() && callbacks.empty())
            return ready();
        return ask_in_order(std::move(ask_plugin), callbacks, std::move(ask_callback), answer);
    }

    // The asking itself; the two functions are held by value in its frame (the hooks return it unstarted).
    template <class R, class AskPlugin, class Callback, class AskCallback>
    asio::awaitable<void> ask_in_order(AskPlugin ask_plugin, std::span<const Callback> callbacks, AskCallback ask_callback,
                                       std::optional<R>& answer) const
    {
        for (const auto& plugin : plugins_) {
            answer = co_await ask_plugin(*plugin);
            if (answer)
                co_return;
        }
        for (const auto& callback : callbacks) {
            answer = co_await ask_callback(callback);
            if (answer)
                co_return;
        }
    }

    const std::vector<std::shared_ptr<Plugin>>& plugins_;
};
static_assert(!std::is_aggregate_v<PluginManager>);

}  // namespace adk::detail
