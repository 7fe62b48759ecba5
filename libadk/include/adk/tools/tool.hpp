// Tool and ToolContext: what an LlmAgent lets its model call (toolsets: adk/tools/toolset.hpp).
#pragma once

#include <adk/agents/callback_context.hpp>
#include <adk/memory/memory_service.hpp>
#include <adk/models/llm_request.hpp>
#include <adk/tools/tool_confirmation.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace adk {

namespace asio = boost::asio;

// A tool's view of the invocation: state reads and writes (collected in actions()), the function call's
// id, artifacts and memory when the Runner has those services, and actions (skip_summarization, escalate,
// transfer_to_agent) that ride on the function-response event.
class ToolContext : public CallbackContext {
public:
    ToolContext(const InvocationContext& ctx, std::string function_call_id);

    const std::string& function_call_id() const noexcept { return function_call_id_; }

    // Asks a person to approve this call (adk/tools/tool_confirmation.hpp). What the tool returns is then
    // dropped: the call waits for the answer, and runs again once it is approved, with tool_confirmation() set.
    void request_confirmation(std::string hint = {}, json::value payload = nullptr);
    // The person's answer when this run follows an approval; nullopt otherwise.
    const std::optional<ToolConfirmation>& tool_confirmation() const noexcept { return tool_confirmation_; }
    void set_tool_confirmation(ToolConfirmation confirmation) { tool_confirmation_ = std::move(confirmation); }

    // Asks the client for a credential (adk/auth/credential_service.hpp): what the tool returns is dropped, the
    // call waits for the answer and runs again once the credential is kept.
    void request_credential(json::object auth_config);
    // The auth config kept for the user under credential_key_of(auth_config), its credential filled in; nullopt
    // when none is kept. Throws adk::Error when the Runner has no credential service.
    asio::awaitable<std::optional<json::object>> load_credential(const json::object& auth_config);

    // Saves a new version of an artifact and records it in actions().artifact_delta. Throws adk::Error
    // when the Runner has no artifact service.
    asio::awaitable<std::int64_t> save_artifact(std::string filename, Part artifact);
    // The given version, or the latest; nullopt when missing. Throws when there is no artifact service.
    asio::awaitable<std::optional<Part>> load_artifact(std::string filename,
                                                       std::optional<std::int64_t> version = std::nullopt);
    // What the user's remembered sessions in this app hold about `query` (MemoryService::search_memory).
    // Throws adk::Error when the Runner has no memory service.
    asio::awaitable<SearchMemoryResponse> search_memory(std::string query);

    // Media that goes to the model with this call's response (an image, audio, a document): the parts follow
    // the function responses in the response event, in call order, so that a provider sends them as what
    // they are rather than as base64 text inside the response. Dropped when the call waits for a person.
    void add_response_part(Part part) { response_parts_.push_back(std::move(part)); }
    std::vector<Part>& response_parts() noexcept { return response_parts_; }

private:
    std::string function_call_id_;
    std::optional<ToolConfirmation> tool_confirmation_;
    std::vector<Part> response_parts_;
};

// Decides from a call's arguments whether a person must approve it.
using ConfirmationPredicate = std::function<bool(const json::object& args)>;

class Tool {
public:
    Tool(std::string name, std::string description, bool is_long_running = false);
    virtual ~Tool() = default;
    Tool(const Tool&) = delete;
    Tool& operator=(const Tool&) = delete;

    const std::string& name() const noexcept { return name_; }
    const std::string& description() const noexcept { return description_; }
    // A long-running tool returns at once (e.g. {"status": "pending"}) and finishes later; its call ids
    // are listed in the model event's longRunningToolIds.
    bool is_long_running() const noexcept { return long_running_; }

    // How long run() may take before it is cancelled and the model gets {"error": ...}; nullopt (the default):
    // the agent's LlmAgentConfig::tool_timeout applies. Set it before the tool is in use.
    std::optional<std::chrono::milliseconds> timeout() const noexcept { return timeout_; }
    void set_timeout(std::optional<std::chrono::milliseconds> timeout) noexcept { timeout_ = timeout; }

    // Human in the loop (adk/tools/tool_confirmation.hpp). Set these before the tool is in use.
    // Every call needs a person's approval (true), or none does (false, the default).
    void set_require_confirmation(bool always);
    // A call needs approval when the predicate says so for its arguments.
    void set_require_confirmation_if(ConfirmationPredicate predicate);
    bool requires_confirmation(const json::object& args) const;
    // The tool needs a credential for this auth config (adk/auth/credential_service.hpp) before it runs.
    void set_auth_config(json::object auth_config) { auth_config_ = std::move(auth_config); }
    const std::optional<json::object>& auth_config() const noexcept { return auth_config_; }

    // How the model sees the tool; nullopt for a tool that is not declared to the model.
    virtual std::optional<FunctionDeclaration> declaration() const = 0;

    // Prepares a model request that offers this tool: by default, adds declaration() to request.tools. A
    // tool may add instructions or configuration too (the flow's tools processor calls it every step).
    virtual asio::awaitable<void> process_request(const ReadonlyContext& ctx, LlmRequest& request);

    // Runs the tool. What it throws becomes {"error": "..."} for the model, and the run goes on.
    virtual asio::awaitable<json::value> run(ToolContext& ctx, json::object args) = 0;

private:
    std::string name_;
    std::string description_;
    bool long_running_;
    std::optional<std::chrono::milliseconds> timeout_;
    ConfirmationPredicate require_confirmation_;
    std::optional<json::object> auth_config_;
};

}  // namespace adk
