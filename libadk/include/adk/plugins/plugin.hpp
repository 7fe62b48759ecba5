// Plugins: callbacks for a whole Runner, around every agent, model call and tool of every invocation.
//
// Plugins run in the order given, before the agents' own callbacks. A hook that returns a value
// short-circuits exactly as the matching agent callback does (before_model's response replaces the model
// call, before_tool's result replaces the tool, ...), and the agents' own callbacks for that step are then
// skipped. An exception from a hook ends the invocation with that error.
#pragma once

#include <adk/agents/callback_context.hpp>
#include <adk/core/error.hpp>
#include <adk/core/event.hpp>
#include <adk/models/llm_request.hpp>
#include <adk/models/llm_response.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <iosfwd>
#include <mutex>
#include <optional>
#include <string>

namespace adk {

namespace asio = boost::asio;

class Agent;
class Tool;
class ToolContext;

class Plugin {
public:
    explicit Plugin(std::string name);
    virtual ~Plugin() = default;
    Plugin(const Plugin&) = delete;
    Plugin& operator=(const Plugin&) = delete;

    const std::string& name() const noexcept { return name_; }

    // The user's message, before it is stored: return a replacement, or nullopt to keep it.
    virtual asio::awaitable<std::optional<Content>> on_user_message(InvocationContext& ctx, const Content& message);
    // Before the agent runs: content returned here is the answer, and the agent does not run.
    virtual asio::awaitable<std::optional<Content>> before_run(InvocationContext& ctx);
    // Every event on its way to the caller (after it was stored): return what the caller sees instead.
    virtual asio::awaitable<std::optional<Event>> on_event(InvocationContext& ctx, const Event& event);
    // Whether on_event is also called for partial events (the deltas of a streamed answer, one per chunk).
    // A plugin that looks only at whole events answers false: the deltas then stream past it, costing it
    // nothing. True by default, as in ADK.
    virtual bool sees_partial_events() const noexcept { return true; }
    // After the agent finished without error.
    virtual asio::awaitable<void> after_run(InvocationContext& ctx);

    virtual asio::awaitable<std::optional<Content>> before_agent(Agent& agent, CallbackContext& ctx);
    virtual asio::awaitable<std::optional<Content>> after_agent(Agent& agent, CallbackContext& ctx);

    virtual asio::awaitable<std::optional<LlmResponse>> before_model(CallbackContext& ctx, LlmRequest& request);
    virtual asio::awaitable<std::optional<LlmResponse>> after_model(CallbackContext& ctx, const LlmResponse& response);
    virtual asio::awaitable<std::optional<LlmResponse>> on_model_error(CallbackContext& ctx, const LlmRequest& request,
                                                                       const Error& error);

    virtual asio::awaitable<std::optional<json::value>> before_tool(Tool& tool, json::object& args, ToolContext& ctx);
    virtual asio::awaitable<std::optional<json::value>> after_tool(Tool& tool, const json::object& args,
                                                                   ToolContext& ctx, const json::value& result);
    virtual asio::awaitable<std::optional<json::value>> on_tool_error(Tool& tool, const json::object& args,
                                                                      ToolContext& ctx, const Error& error);

private:
    std::string name_;
};

// Writes one line per hook to a stream (std::clog by default): what ran, with ids, names and sizes.
// Safe when invocations run on several threads.
class LoggingPlugin final : public Plugin {
public:
    explicit LoggingPlugin(std::ostream& out, std::string name = "logging");
    LoggingPlugin();

    asio::awaitable<std::optional<Content>> on_user_message(InvocationContext& ctx, const Content& message) override;
    asio::awaitable<std::optional<Content>> before_run(InvocationContext& ctx) override;
    asio::awaitable<std::optional<Event>> on_event(InvocationContext& ctx, const Event& event) override;
    asio::awaitable<void> after_run(InvocationContext& ctx) override;
    asio::awaitable<std::optional<Content>> before_agent(Agent& agent, CallbackContext& ctx) override;
    asio::awaitable<std::optional<Content>> after_agent(Agent& agent, CallbackContext& ctx) override;
    asio::awaitable<std::optional<LlmResponse>> before_model(CallbackContext& ctx, LlmRequest& request) override;
    asio::awaitable<std::optional<LlmResponse>> after_model(CallbackContext& ctx, const LlmResponse& response) override;
    asio::awaitable<std::optional<LlmResponse>> on_model_error(CallbackContext& ctx, const LlmRequest& request,
                                                               const Error& error) override;
    asio::awaitable<std::optional<json::value>> before_tool(Tool& tool, json::object& args, ToolContext& ctx) override;
    asio::awaitable<std::optional<json::value>> after_tool(Tool& tool, const json::object& args, ToolContext& ctx,
                                                           const json::value& result) override;
    asio::awaitable<std::optional<json::value>> on_tool_error(Tool& tool, const json::object& args, ToolContext& ctx,
                                                              const Error& error) override;

private:
    void line(const std::string& text);
    std::ostream& out_;
    std::mutex mutex_;
};

}  // namespace adk
