#include <adk/agents/llm_agent.hpp>
#include <adk/runner/runner.hpp>
#include <adk/sessions/in_memory_session_service.hpp>
#include <adk/tools/agent_tool.hpp>
#include <adk/tools/json_schema.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace adk {

namespace {
const LlmAgent* as_llm(const std::shared_ptr<Agent>& agent)
{
    return dynamic_cast<const LlmAgent*>(agent.get());
}
}  // namespace

AgentTool::AgentTool(std::shared_ptr<Agent> agent, bool skip_summarization)
    : Tool(agent ? agent->name() : std::string(), agent ? agent->description() : std::string()),
      agent_(std::move(agent)), skip_summarization_(skip_summarization)
{
}

std::optional<FunctionDeclaration> AgentTool::declaration() const
{
    if (const LlmAgent* llm = as_llm(agent_); llm && llm->config().input_schema)
        return FunctionDeclaration(name(), description(), *llm->config().input_schema);
    json::object schema{{"type", "object"},
                        {"properties", json::object{{"request", json::object{{"type", "string"}}}}},
                        {"required", json::array{"request"}}};
    return FunctionDeclaration(name(), description(), std::move(schema));
}

asio::awaitable<json::value> AgentTool::run(ToolContext& ctx, json::object args)
{
    const LlmAgent* llm = as_llm(agent_);
    std::string request;
    if (llm && llm->config().input_schema) {
        if (auto mismatch = schema_mismatch(*llm->config().input_schema, json::value(args)))
            co_return json::object{{"error", "Invalid arguments for " + name() + ": " + *mismatch}};
        request = json::serialize(args);
    } else if (const json::value* r = args.if_contains("request"); r && r->is_string()) {
        request = std::string(r->get_string());
    } else {
        co_return json::object{{"error", "Call " + name() + " with {\"request\": \"...\"}: the request is missing"}};
    }

    // A session of its own, starting from a copy of the caller's state (create_session drops temp: keys).
    const InvocationContext& parent = ctx.invocation_context();
    json::object state = parent.with_session([](const Session& s) { return s.state; });
    auto sessions = std::make_shared<InMemorySessionService>();
    Runner runner({.app_name = agent_->name(), .agent = agent_, .session_service = sessions,
                   .artifact_service = parent.artifact_service(), .memory_service = parent.memory_service(),
                   .credential_service = parent.credential_service()});
    CreateSessionRequest create(agent_->name(), parent.user_id(), {}, std::move(state));
    Session session = co_await sessions->create_session(std::move(create));
    RunRequest run_request(parent.user_id(), session.id, Content::user(request));
    run_request.run_config = parent.run_config();
    auto events = co_await runner.run(std::move(run_request));

    std::optional<Content> last;
    while (auto event = co_await events.next()) {
        if (event->partial)
            continue;
        for (const auto& kv : event->actions.state_delta)
            ctx.set_state(kv.key(), kv.value());  // the agent's state changes flow back to the caller
        for (const auto& [file, version] : event->actions.artifact_delta)
            ctx.actions().artifact_delta[file] = version;
        if (event->content && !event->content->parts.empty())
            last = std::move(event->content);
    }
    if (skip_summarization_)
        ctx.actions().skip_summarization = true;
    std::string text = last ? last->text() : std::string();
    if (llm && llm->config().output_schema) {
        boost::system::error_code ec;
        json::value parsed = json::parse(text, ec);
        if (!ec)
            co_return parsed;
    }
    co_return json::value(text);
}

}  // namespace adk
