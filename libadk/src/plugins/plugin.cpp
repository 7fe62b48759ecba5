#include <adk/agents/agent.hpp>
#include <adk/plugins/plugin.hpp>
#include <adk/tools/tool.hpp>

#include <boost/json/serialize.hpp>

#include <iostream>

namespace adk {

Plugin::Plugin(std::string name) : name_(std::move(name))
{
    if (name_.empty())
        throw Error(errc::invalid_argument, "a plugin needs a name");
}

asio::awaitable<std::optional<Content>> Plugin::on_user_message(InvocationContext&, const Content&) { co_return std::nullopt; }
asio::awaitable<std::optional<Content>> Plugin::before_run(InvocationContext&) { co_return std::nullopt; }
asio::awaitable<std::optional<Event>> Plugin::on_event(InvocationContext&, const Event&) { co_return std::nullopt; }
asio::awaitable<void> Plugin::after_run(InvocationContext&) { co_return; }
asio::awaitable<std::optional<Content>> Plugin::before_agent(Agent&, CallbackContext&) { co_return std::nullopt; }
asio::awaitable<std::optional<Content>> Plugin::after_agent(Agent&, CallbackContext&) { co_return std::nullopt; }
asio::awaitable<std::optional<LlmResponse>> Plugin::before_model(CallbackContext&, LlmRequest&) { co_return std::nullopt; }
asio::awaitable<std::optional<LlmResponse>> Plugin::after_model(CallbackContext&, const LlmResponse&) { co_return std::nullopt; }
asio::awaitable<std::optional<LlmResponse>> Plugin::on_model_error(CallbackContext&, const LlmRequest&, const Error&)
{
    co_return std::nullopt;
}
asio::awaitable<std::optional<json::value>> Plugin::before_tool(Tool&, json::object&, ToolContext&) { co_return std::nullopt; }
asio::awaitable<std::optional<json::value>> Plugin::after_tool(Tool&, const json::object&, ToolContext&, const json::value&)
{
    co_return std::nullopt;
}
asio::awaitable<std::optional<json::value>> Plugin::on_tool_error(Tool&, const json::object&, ToolContext&, const Error&)
{
    co_return std::nullopt;
}

// ---- LoggingPlugin ------------------------------------------------------------------------------------

LoggingPlugin::LoggingPlugin(std::ostream& out, std::string name) : Plugin(std::move(name)), out_(out) {}
LoggingPlugin::LoggingPlugin() : LoggingPlugin(std::clog) {}

void LoggingPlugin::line(const std::string& text)
{
    std::lock_guard lock(mutex_);
    out_ << "[adk] " << text << '\n';
}

namespace {
std::string shorten(std::string text, std::size_t limit = 120)
{
    if (text.size() > limit)
        text = text.substr(0, limit) + "...";
    return text;
}
}  // namespace

asio::awaitable<std::optional<Content>> LoggingPlugin::on_user_message(InvocationContext& ctx, const Content& message)
{
    line("user message, invocation " + ctx.invocation_id() + ", session " + ctx.session_id() + ": " +
         shorten(message.text()));
    co_return std::nullopt;
}

asio::awaitable<std::optional<Content>> LoggingPlugin::before_run(InvocationContext& ctx)
{
    line("run starts, invocation " + ctx.invocation_id() + ", app " + ctx.app_name() + ", user " + ctx.user_id());
    co_return std::nullopt;
}

asio::awaitable<std::optional<Event>> LoggingPlugin::on_event(InvocationContext&, const Event& event)
{
    std::string what = event.partial ? "partial event" : "event";
    std::string detail;
    for (const auto& call : event.function_calls())
        detail += " calls " + call.name;
    for (const auto& response : event.function_responses())
        detail += " response of " + response.name;
    if (event.error_code)
        detail += " error " + *event.error_code;
    if (detail.empty())
        detail = ": " + shorten(event.text());
    line(what + " " + event.id + " from " + event.author + (event.branch.empty() ? "" : " [" + event.branch + "]") + detail);
    co_return std::nullopt;
}

asio::awaitable<void> LoggingPlugin::after_run(InvocationContext& ctx)
{
    line("run ends, invocation " + ctx.invocation_id());
    co_return;
}

asio::awaitable<std::optional<Content>> LoggingPlugin::before_agent(Agent& agent, CallbackContext&)
{
    line("agent " + agent.name() + " starts");
    co_return std::nullopt;
}

asio::awaitable<std::optional<Content>> LoggingPlugin::after_agent(Agent& agent, CallbackContext&)
{
    line("agent " + agent.name() + " ends");
    co_return std::nullopt;
}

asio::awaitable<std::optional<LlmResponse>> LoggingPlugin::before_model(CallbackContext& ctx, LlmRequest& request)
{
    line("model " + request.model + " called by " + ctx.agent_name() + " with " + std::to_string(request.contents.size()) +
         " contents and " + std::to_string(request.tools.size()) + " tools");
    co_return std::nullopt;
}

asio::awaitable<std::optional<LlmResponse>> LoggingPlugin::after_model(CallbackContext& ctx, const LlmResponse& response)
{
    std::string what = response.error_code ? "error " + *response.error_code
                                           : (response.content ? shorten(response.content->text()) : std::string());
    line("model answered " + ctx.agent_name() + ": " + what);
    co_return std::nullopt;
}

asio::awaitable<std::optional<LlmResponse>> LoggingPlugin::on_model_error(CallbackContext& ctx, const LlmRequest&,
                                                                          const Error& error)
{
    line("model failed for " + ctx.agent_name() + ": " + error.message());
    co_return std::nullopt;
}

asio::awaitable<std::optional<json::value>> LoggingPlugin::before_tool(Tool& tool, json::object& args, ToolContext&)
{
    line("tool " + tool.name() + " called with " + shorten(json::serialize(args)));
    co_return std::nullopt;
}

asio::awaitable<std::optional<json::value>> LoggingPlugin::after_tool(Tool& tool, const json::object&, ToolContext&,
                                                                      const json::value& result)
{
    line("tool " + tool.name() + " returned " + shorten(json::serialize(result)));
    co_return std::nullopt;
}

asio::awaitable<std::optional<json::value>> LoggingPlugin::on_tool_error(Tool& tool, const json::object&, ToolContext&,
                                                                         const Error& error)
{
    line("tool " + tool.name() + " failed: " + error.message());
    co_return std::nullopt;
}

}  // namespace adk
