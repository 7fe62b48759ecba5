#include <adk/agents/llm_agent.hpp>
#include <adk/core/log.hpp>
#include <adk/sessions/state.hpp>
#include <adk/tools/agent_tool.hpp>

#include "../flow/llm_flow.hpp"
#include "../flow/transfer_tool.hpp"

#include <algorithm>
#include <set>
#include <utility>

namespace adk {

namespace {

LlmAgentConfig validated(LlmAgentConfig config)
{
    auto fail = [&](const std::string& why) {
        throw Error(errc::invalid_argument, "LlmAgent '" + config.name + "': " + why);
    };
    Agent::validate_name(config.name);
    if (!config.model)
        fail("no model: give one with .model(...), a provider's model or adk::testing::ScriptedModel (the "
             "default model id is " + std::string(default_model_id) + ")");
    if (config.max_iterations < 1)
        fail("max_iterations must be at least 1, got " + std::to_string(config.max_iterations));
    if (config.max_concurrent_tools < 1)
        fail("max_concurrent_tools must be at least 1, got " + std::to_string(config.max_concurrent_tools));
    if (config.tool_timeout && config.tool_timeout->count() <= 0)
        fail("tool_timeout must be positive, got " + std::to_string(config.tool_timeout->count()) + " ms");
    if (!config.output_key.empty())
        validate_state_key(config.output_key);
    if (config.output_schema && !config.output_schema->is_object())
        fail("output_schema must be a JSON schema object");
    if (config.input_schema && !config.input_schema->is_object())
        fail("input_schema must be a JSON schema object");
    std::set<std::string, std::less<>> names;
    for (const auto& tool : config.tools) {
        if (!tool)
            fail("a tool is null");
        if (!names.insert(tool->name()).second)
            fail("two tools are named '" + tool->name() + "': the model calls tools by name, so names must differ");
        if (tool->name() == detail::transfer_tool_name && !config.sub_agents.empty() && !config.disable_transfer)
            fail("a tool is named transfer_to_agent, which the agent adds itself when it has sub-agents");
    }
    for (const auto& toolset : config.toolsets)
        if (!toolset)
            fail("a toolset is null");
    for (const auto& processor : config.request_processors)
        if (!processor)
            fail("a request processor is null");
    for (const auto& processor : config.response_processors)
        if (!processor)
            fail("a response processor is null");
    if (config.code_executor) {
        const CodeExecutorOptions& o = config.code_executor->options();
        if (o.error_retry_attempts < 0)
            fail("the code executor's error_retry_attempts must not be negative, got " +
                 std::to_string(o.error_retry_attempts));
        if (!config.code_executor->runs_in_model() && o.code_block_delimiters.empty())
            fail("the code executor has no code_block_delimiters: the model's code blocks could not be found");
        for (const auto& [start, end] : o.code_block_delimiters)
            if (start.empty() || end.empty())
                fail("a code block delimiter of the code executor is empty: give both where a block starts and "
                     "where it ends, as (\"```python\\n\", \"\\n```\")");
    }
    return config;
}

}  // namespace

std::vector<std::shared_ptr<Toolset>> LlmAgent::toolsets() const
{
    std::vector<std::shared_ptr<Toolset>> out = config_.toolsets;
    for (const auto& tool : config_.tools)
        if (const auto* wrapper = dynamic_cast<const AgentTool*>(tool.get()))
            for (auto& toolset : toolsets_in(*wrapper->agent()))
                out.push_back(std::move(toolset));
    return out;
}

LlmAgent::LlmAgent(LlmAgentConfig config)
    : Agent(config.name, config.description, config.sub_agents), config_(validated(std::move(config)))
{
    for (const auto& cb : config_.before_agent_callbacks)
        add_before_agent_callback(cb);
    for (const auto& cb : config_.after_agent_callbacks)
        add_after_agent_callback(cb);
}

asio::awaitable<void> LlmAgent::run_impl(InvocationContext& ctx, EventSink& out)
{
    co_await detail::run_llm_flow(*this, ctx, out);
}

LlmAgent::Builder LlmAgent::builder(std::string name)
{
    return Builder(std::move(name));
}

LlmAgent::Builder::Builder(std::string name)
{
    config_.name = std::move(name);
}

LlmAgent::Builder& LlmAgent::Builder::description(std::string text) { config_.description = std::move(text); return *this; }
LlmAgent::Builder& LlmAgent::Builder::model(std::shared_ptr<Model> model) { config_.model = std::move(model); return *this; }
LlmAgent::Builder& LlmAgent::Builder::instruction(std::string text) { config_.instruction = std::move(text); return *this; }
LlmAgent::Builder& LlmAgent::Builder::instruction_provider(InstructionProvider p) { config_.instruction_provider = std::move(p); return *this; }
LlmAgent::Builder& LlmAgent::Builder::global_instruction(std::string text) { config_.global_instruction = std::move(text); return *this; }
LlmAgent::Builder& LlmAgent::Builder::static_instruction(std::string text)
{
    config_.static_instruction = Content("", {Part::from_text(std::move(text))});
    return *this;
}
LlmAgent::Builder& LlmAgent::Builder::static_instruction_content(Content content) { config_.static_instruction = std::move(content); return *this; }
LlmAgent::Builder& LlmAgent::Builder::generate_content_config(GenerateContentConfig c) { config_.generate_content_config = std::move(c); return *this; }
LlmAgent::Builder& LlmAgent::Builder::tool(std::shared_ptr<Tool> tool) { config_.tools.push_back(std::move(tool)); return *this; }
LlmAgent::Builder& LlmAgent::Builder::tools(std::vector<std::shared_ptr<Tool>> tools)
{
    for (auto& t : tools)
        config_.tools.push_back(std::move(t));
    return *this;
}
LlmAgent::Builder& LlmAgent::Builder::toolset(std::shared_ptr<Toolset> toolset) { config_.toolsets.push_back(std::move(toolset)); return *this; }
LlmAgent::Builder& LlmAgent::Builder::sub_agent(std::shared_ptr<Agent> agent) { config_.sub_agents.push_back(std::move(agent)); return *this; }
LlmAgent::Builder& LlmAgent::Builder::disable_transfer(bool value) { config_.disable_transfer = value; return *this; }
LlmAgent::Builder& LlmAgent::Builder::disallow_transfer_to_parent(bool value) { config_.disallow_transfer_to_parent = value; return *this; }
LlmAgent::Builder& LlmAgent::Builder::disallow_transfer_to_peers(bool value) { config_.disallow_transfer_to_peers = value; return *this; }
LlmAgent::Builder& LlmAgent::Builder::max_iterations(int n) { config_.max_iterations = n; return *this; }
LlmAgent::Builder& LlmAgent::Builder::max_concurrent_tools(int n) { config_.max_concurrent_tools = n; return *this; }
LlmAgent::Builder& LlmAgent::Builder::tool_timeout(std::chrono::milliseconds t) { config_.tool_timeout = t; return *this; }
LlmAgent::Builder& LlmAgent::Builder::output_key(std::string key) { config_.output_key = std::move(key); return *this; }
LlmAgent::Builder& LlmAgent::Builder::code_executor(std::shared_ptr<CodeExecutor> executor) { config_.code_executor = std::move(executor); return *this; }
LlmAgent::Builder& LlmAgent::Builder::output_schema(json::value schema) { config_.output_schema = std::move(schema); return *this; }
LlmAgent::Builder& LlmAgent::Builder::input_schema(json::value schema) { config_.input_schema = std::move(schema); return *this; }
LlmAgent::Builder& LlmAgent::Builder::include_contents(IncludeContents mode) { config_.include_contents = mode; return *this; }
LlmAgent::Builder& LlmAgent::Builder::before_agent_callback(AgentCallback cb) { config_.before_agent_callbacks.push_back(std::move(cb)); return *this; }
LlmAgent::Builder& LlmAgent::Builder::after_agent_callback(AgentCallback cb) { config_.after_agent_callbacks.push_back(std::move(cb)); return *this; }
LlmAgent::Builder& LlmAgent::Builder::before_model_callback(BeforeModelCallback cb) { config_.before_model_callbacks.push_back(std::move(cb)); return *this; }
LlmAgent::Builder& LlmAgent::Builder::after_model_callback(AfterModelCallback cb) { config_.after_model_callbacks.push_back(std::move(cb)); return *this; }
LlmAgent::Builder& LlmAgent::Builder::on_model_error_callback(ModelErrorCallback cb) { config_.on_model_error_callbacks.push_back(std::move(cb)); return *this; }
LlmAgent::Builder& LlmAgent::Builder::before_tool_callback(BeforeToolCallback cb) { config_.before_tool_callbacks.push_back(std::move(cb)); return *this; }
LlmAgent::Builder& LlmAgent::Builder::after_tool_callback(AfterToolCallback cb) { config_.after_tool_callbacks.push_back(std::move(cb)); return *this; }
LlmAgent::Builder& LlmAgent::Builder::on_tool_error_callback(ToolErrorCallback cb) { config_.on_tool_error_callbacks.push_back(std::move(cb)); return *this; }
LlmAgent::Builder& LlmAgent::Builder::request_processor(std::shared_ptr<RequestProcessor> p) { config_.request_processors.push_back(std::move(p)); return *this; }
LlmAgent::Builder& LlmAgent::Builder::response_processor(std::shared_ptr<ResponseProcessor> p) { config_.response_processors.push_back(std::move(p)); return *this; }

std::shared_ptr<LlmAgent> LlmAgent::Builder::build()
{
    return std::make_shared<LlmAgent>(config_);
}

std::vector<std::shared_ptr<Model>> models_in(const Agent& root)
{
    std::vector<std::shared_ptr<Model>> out;
    auto visit = [&](const Agent& agent, auto& self) -> void {
        if (const auto* llm = dynamic_cast<const LlmAgent*>(&agent))
            if (llm->config().model && std::find(out.begin(), out.end(), llm->config().model) == out.end())
                out.push_back(llm->config().model);
        for (const auto& sub : agent.sub_agents())
            self(*sub, self);
    };
    visit(root, visit);
    return out;
}

asio::awaitable<void> close_models(std::vector<std::shared_ptr<Model>> models)
{
    for (const std::shared_ptr<Model>& model : models) {
        std::optional<std::string> failed;
        try {
            co_await model->close();
        } catch (const std::exception& e) {
            failed = e.what();
        }
        if (failed)
            log(LogLevel::warning, "model " + std::string(model->name()) + " did not close: " + *failed);
    }
}

}  // namespace adk
