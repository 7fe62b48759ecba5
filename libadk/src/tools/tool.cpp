#include <adk/artifacts/artifact_service.hpp>
#include <adk/auth/credential_service.hpp>
#include <adk/core/error.hpp>
#include <adk/tools/function_tool.hpp>
#include <adk/tools/tool.hpp>

#include <utility>

namespace adk {

ToolContext::ToolContext(const InvocationContext& ctx, std::string function_call_id)
    : CallbackContext(ctx), function_call_id_(std::move(function_call_id))
{
}

namespace {
ArtifactService& artifacts_of(const InvocationContext& ctx)
{
    if (!ctx.artifact_service())
        throw Error(errc::invalid_argument,
                    "this Runner has no artifact service: set RunnerOptions::artifact_service "
                    "(e.g. std::make_shared<adk::InMemoryArtifactService>())");
    return *ctx.artifact_service();
}
}  // namespace

asio::awaitable<std::int64_t> ToolContext::save_artifact(std::string filename, Part artifact)
{
    const InvocationContext& ctx = invocation_context();
    ArtifactKey key(ctx.app_name(), ctx.user_id(), ctx.session_id(), filename);
    std::int64_t version = co_await artifacts_of(ctx).save_artifact(std::move(key), std::move(artifact));
    actions().artifact_delta[filename] = version;
    co_return version;
}

asio::awaitable<std::optional<Part>> ToolContext::load_artifact(std::string filename,
                                                                std::optional<std::int64_t> version)
{
    const InvocationContext& ctx = invocation_context();
    ArtifactKey key(ctx.app_name(), ctx.user_id(), ctx.session_id(), std::move(filename));
    co_return co_await artifacts_of(ctx).load_artifact(std::move(key), version);
}

asio::awaitable<SearchMemoryResponse> ToolContext::search_memory(std::string query)
{
    const InvocationContext& ctx = invocation_context();
    if (!ctx.memory_service())
        throw Error(errc::invalid_argument,
                    "this Runner has no memory service: set RunnerOptions::memory_service "
                    "(e.g. std::make_shared<adk::InMemoryMemoryService>())");
    SearchMemoryRequest request(ctx.app_name(), ctx.user_id(), std::move(query));
    co_return co_await ctx.memory_service()->search_memory(std::move(request));
}

void ToolContext::request_confirmation(std::string hint, json::value payload)
{
    ToolConfirmation asked(std::move(hint), false, std::move(payload));
    actions().requested_tool_confirmations[function_call_id_] = json::value_from(asked);
}

void ToolContext::request_credential(json::object auth_config)
{
    actions().requested_auth_configs[function_call_id_] = std::move(auth_config);
}

asio::awaitable<std::optional<json::object>> ToolContext::load_credential(const json::object& auth_config)
{
    const InvocationContext& ctx = invocation_context();
    if (!ctx.credential_service())
        throw Error(errc::invalid_argument, "this Runner has no credential service: set "
                                            "RunnerOptions::credential_service (e.g. "
                                            "std::make_shared<adk::InMemoryCredentialService>())");
    CredentialKey key(ctx.app_name(), ctx.user_id(), credential_key_of(auth_config));
    co_return co_await ctx.credential_service()->load_credential(std::move(key));
}

void Tool::set_require_confirmation(bool always)
{
    require_confirmation_ = always ? ConfirmationPredicate([](const json::object&) { return true; }) : nullptr;
}

void Tool::set_require_confirmation_if(ConfirmationPredicate predicate)
{
    require_confirmation_ = std::move(predicate);
}

bool Tool::requires_confirmation(const json::object& args) const
{
    return require_confirmation_ && require_confirmation_(args);
}

asio::awaitable<void> Tool::process_request(const ReadonlyContext&, LlmRequest& request)
{
    if (auto d = declaration())
        request.tools.push_back(std::move(*d));
    co_return;
}

Tool::Tool(std::string name, std::string description, bool is_long_running)
    : name_(std::move(name)), description_(std::move(description)), long_running_(is_long_running)
{
    if (name_.empty())
        throw Error(errc::invalid_argument, "a tool needs a name: the model calls it by that name");
}

FunctionTool::FunctionTool(std::string name, std::string description, json::value parameters, Function fn,
                           bool is_long_running)
    : Tool(std::move(name), std::move(description), is_long_running), parameters_(std::move(parameters)),
      fn_(std::move(fn))
{
    if (!fn_)
        throw Error(errc::invalid_argument, "FunctionTool '" + this->name() + "' was given no function");
    if (!parameters_.is_null() && !parameters_.is_object())
        throw Error(errc::invalid_argument, "FunctionTool '" + this->name() +
                                                "': the parameters must be a JSON schema object, or null for none");
}

std::optional<FunctionDeclaration> FunctionTool::declaration() const
{
    return FunctionDeclaration(name(), description(), parameters_);
}

asio::awaitable<json::value> FunctionTool::run(ToolContext& ctx, json::object args)
{
    if (parameters_.is_object()) {
        json::value as_value(args);
        if (auto mismatch = schema_mismatch(parameters_, as_value))
            co_return json::object{{"error", "Invalid arguments for " + name() + ": " + *mismatch +
                                                 ". Call it again with arguments that fit its schema."}};
    }
    co_return co_await fn_(ctx, std::move(args));
}

}  // namespace adk
