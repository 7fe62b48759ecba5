// LlmAgent: the model and tool loop. Configured with a builder; run by the flow in adk/flow/.
//
//   auto agent = adk::LlmAgent::builder("weather")
//       .model(model).instruction("Answer about {city?}.").tool(weather).output_key("answer").build();
//
// DESIGN: two layers, as ADK Go has them: LlmAgentConfig is plain data that the builder fills and
// validates; the flow (flow/llm_flow.hpp) builds each request from it, calls the model, dispatches tools
// and loops. Callbacks come in lists: they run in order, the first non-empty result wins, and an
// exception thrown by a callback ends the invocation with that error.
#pragma once

#include <adk/agents/agent.hpp>
#include <adk/agents/callback_context.hpp>
#include <adk/code_execution/code_executor.hpp>
#include <adk/core/error.hpp>
#include <adk/flow/processor.hpp>
#include <adk/models/model.hpp>
#include <adk/tools/tool.hpp>
#include <adk/tools/toolset.hpp>

#include <boost/json/value.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace adk {

enum class IncludeContents {
    history,  // ADK's "default": the session's history for this agent's branch
    none,     // only the current turn: from the latest user (or other agent's) message on
};

using InstructionProvider = std::function<asio::awaitable<std::string>(ReadonlyContext&)>;

using BeforeModelCallback =
    std::function<asio::awaitable<std::optional<LlmResponse>>(CallbackContext&, LlmRequest&)>;
using AfterModelCallback =
    std::function<asio::awaitable<std::optional<LlmResponse>>(CallbackContext&, const LlmResponse&)>;
using ModelErrorCallback =
    std::function<asio::awaitable<std::optional<LlmResponse>>(CallbackContext&, const LlmRequest&, const Error&)>;
using BeforeToolCallback =
    std::function<asio::awaitable<std::optional<json::value>>(Tool&, json::object& args, ToolContext&)>;
using AfterToolCallback = std::function<asio::awaitable<std::optional<json::value>>(
    Tool&, const json::object& args, ToolContext&, const json::value& result)>;
using ToolErrorCallback = std::function<asio::awaitable<std::optional<json::value>>(
    Tool&, const json::object& args, ToolContext&, const Error&)>;

struct LlmAgentConfig {
    std::string name;
    std::string description;
    std::shared_ptr<Model> model;
    std::string instruction;                      // templated with session state
    InstructionProvider instruction_provider;     // when set, used instead of `instruction`; not templated
    std::string global_instruction;               // the root agent's applies to every agent; templated
    std::optional<Content> static_instruction;    // verbatim, never templated
    GenerateContentConfig generate_content_config;
    std::vector<std::shared_ptr<Tool>> tools;
    std::vector<std::shared_ptr<Toolset>> toolsets;
    std::vector<std::shared_ptr<Agent>> sub_agents;
    bool disable_transfer = false;
    bool disallow_transfer_to_parent = false;
    bool disallow_transfer_to_peers = false;
    int max_iterations = 16;                      // model calls per run of this agent
    // Tool calls of one model turn that run at once; the rest wait their turn, in call order.
    int max_concurrent_tools = 8;
    // How long a tool's run may take, for tools without a Tool::timeout() of their own; nullopt: no limit. A
    // tool that runs longer is cancelled (it sees operation_aborted), and the model gets {"error": ...}.
    std::optional<std::chrono::milliseconds> tool_timeout;
    std::string output_key;
    std::optional<json::value> output_schema;
    std::optional<json::value> input_schema;
    // Runs the code the model writes (adk/code_execution/code_executor.hpp); null: code is only text.
    std::shared_ptr<CodeExecutor> code_executor;
    IncludeContents include_contents = IncludeContents::history;
    std::vector<AgentCallback> before_agent_callbacks;
    std::vector<AgentCallback> after_agent_callbacks;
    std::vector<BeforeModelCallback> before_model_callbacks;
    std::vector<AfterModelCallback> after_model_callbacks;
    std::vector<ModelErrorCallback> on_model_error_callbacks;
    std::vector<BeforeToolCallback> before_tool_callbacks;
    std::vector<AfterToolCallback> after_tool_callbacks;
    std::vector<ToolErrorCallback> on_tool_error_callbacks;
    // Run after the flow's own processors (adk/flow/processor.hpp), in order.
    std::vector<std::shared_ptr<RequestProcessor>> request_processors;
    std::vector<std::shared_ptr<ResponseProcessor>> response_processors;
};

class LlmAgent final : public Agent {
public:
    class Builder;
    static Builder builder(std::string name);

    // Prefer the builder; this validates the same way and throws adk::Error when the config is invalid.
    explicit LlmAgent(LlmAgentConfig config);

    const LlmAgentConfig& config() const noexcept { return config_; }
    // The config's toolsets, then those of the agents its AgentTools wrap.
    std::vector<std::shared_ptr<Toolset>> toolsets() const override;

protected:
    asio::awaitable<void> run_impl(InvocationContext& ctx, EventSink& out) override;

private:
    LlmAgentConfig config_;
};

class LlmAgent::Builder {
public:
    explicit Builder(std::string name);

    Builder& description(std::string text);
    Builder& model(std::shared_ptr<Model> model);
    Builder& instruction(std::string text);
    Builder& instruction_provider(InstructionProvider provider);
    Builder& global_instruction(std::string text);
    Builder& static_instruction(std::string text);
    Builder& static_instruction_content(Content content);
    Builder& generate_content_config(GenerateContentConfig config);
    Builder& tool(std::shared_ptr<Tool> tool);
    Builder& tools(std::vector<std::shared_ptr<Tool>> tools);
    Builder& toolset(std::shared_ptr<Toolset> toolset);
    Builder& sub_agent(std::shared_ptr<Agent> agent);
    Builder& disable_transfer(bool value = true);
    Builder& disallow_transfer_to_parent(bool value = true);
    Builder& disallow_transfer_to_peers(bool value = true);
    Builder& max_iterations(int n);
    Builder& max_concurrent_tools(int n);
    Builder& tool_timeout(std::chrono::milliseconds timeout);
    Builder& output_key(std::string key);
    Builder& output_schema(json::value schema);
    Builder& input_schema(json::value schema);
    Builder& include_contents(IncludeContents mode);
    // Runs the code blocks the model writes and feeds the results back (adk/code_execution/code_executor.hpp).
    Builder& code_executor(std::shared_ptr<CodeExecutor> executor);
    Builder& before_agent_callback(AgentCallback callback);
    Builder& after_agent_callback(AgentCallback callback);
    Builder& before_model_callback(BeforeModelCallback callback);
    Builder& after_model_callback(AfterModelCallback callback);
    Builder& on_model_error_callback(ModelErrorCallback callback);
    Builder& before_tool_callback(BeforeToolCallback callback);
    Builder& after_tool_callback(AfterToolCallback callback);
    Builder& on_tool_error_callback(ToolErrorCallback callback);
    Builder& request_processor(std::shared_ptr<RequestProcessor> processor);
    Builder& response_processor(std::shared_ptr<ResponseProcessor> processor);

    // Throws adk::Error: empty or invalid name, no model, max_iterations or max_concurrent_tools < 1, a tool
    // timeout that is not positive, an invalid output_key, a code executor with a negative error_retry_attempts
    // or an empty code block delimiter,
    // two tools with one name, a tool named transfer_to_agent beside sub-agents.
    std::shared_ptr<LlmAgent> build();

private:
    LlmAgentConfig config_;
};

// The models of the LlmAgents of the tree under `root`, each once (Runner::close and ApiServer::stop close them).
std::vector<std::shared_ptr<Model>> models_in(const Agent& root);
// Closes each (Model::close), one after the other; a failure is logged and the rest still close.
asio::awaitable<void> close_models(std::vector<std::shared_ptr<Model>> models);

}  // namespace adk
