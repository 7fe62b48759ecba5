// RemoteA2aAgent: an agent of the local tree whose turns a remote A2A agent takes. At each run it sends the turn
// (the user's messages since its last answer, other agents' words as context, the person's answers to the remote's
// questions) to the remote agent, and turns the remote task's updates back into events as they come:
//
//   auto flights = adk::a2a::RemoteA2aAgent::create({.name = "flight_agent",
//                                                    .card_url = "http://flights.internal/a2a/flights"});
//   auto planner = adk::LlmAgent::builder("travel_planner").model(model).sub_agent(flights).build();
//
//   remote update                              local event
//   streamed text (an artifact's chunks)       partial events, as a model's deltas are
//   an artifact, whole                         a final event with its parts (every artifact of the task, none lost)
//   WORKING with a message                     an event with its parts (the remote's calls and their results)
//   INPUT_REQUIRED / AUTH_REQUIRED             an event with the remote's calls as long-running calls: the local
//                                              runner pauses for the person's answer, which goes back to the
//                                              remote task (its taskId) at the next run
//   FAILED, REJECTED, CANCELED                 an error event (error_code A2A_TASK_FAILED, ...; the remote's text
//                                              in error_message), never an answer
//
// Each event says which remote context and task it belongs to (custom_metadata "a2a:context_id",
// "a2a:task_id", "a2a:task_state"): the next run continues that context. Cancelling the invocation cancels the
// remote task (CancelTask). It speaks A2A 1.0 over JSON-RPC or HTTP+JSON, whichever the card lists first, and A2A
// 0.3 over JSON-RPC to an agent whose card offers nothing newer.
//
// Credentials: a card whose security scheme asks for one (HTTP Bearer or Basic, an API key in a header, the query
// or a cookie, an OAuth 2.0 or OpenID Connect access token; adk/a2a/card_auth.hpp) gets the credential kept for
// the user in the runner's CredentialService. When none is kept, or the remote refuses the one kept (HTTP 401 or
// 403), the agent asks the person through adk_request_credential (the auth config of the card's scheme) and the
// invocation pauses; the runner keeps the answer (never in the session) and the agent's next run sends the turn
// with it. An operator may keep a user's credential beforehand under the same key (CardAuth::auth_config).
#pragma once

#include <adk/a2a/types.hpp>
#include <adk/agents/agent.hpp>
#include <adk/net/http_client.hpp>

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace adk::a2a {

class RemoteAgentOptions {
public:
    // The agent's name in the local tree (an identifier) and its description; with a card given, its name and
    // description when left empty.
    std::string name = {};
    std::string description = {};
    // The remote agent's card: its URL ("http://host/a2a/app/.well-known/agent-card.json"), or the agent's base
    // URL ("http://host/a2a/app"), read at the first run; or the card itself.
    std::string card_url = {};
    std::optional<AgentCard> card = std::nullopt;
    // Sent as "Authorization: Bearer <token>" with every request but the card's (public), for every user; the
    // card's schemes and the CredentialService are then not consulted.
    std::string bearer_token = {};
    // Streams the remote's updates when its card says it streams; otherwise each turn waits for the whole task.
    bool streaming = true;
    net::HttpClientOptions http = {};
    // How long a cancelled run's CancelTask may take.
    std::chrono::milliseconds cancel_timeout = std::chrono::seconds(5);
    // The most bytes one update (an SSE event) or a card may hold.
    std::size_t max_update_bytes = std::size_t{16} << 20;
    // The longest a stream may go without an update (an event with data): keep-alives (SSE comments, empty
    // events) keep the connection's idle timeout at bay, not this. Past it the run fails with errc::timed_out
    // and the remote task is cancelled.
    std::chrono::milliseconds update_timeout = std::chrono::minutes(10);
};

class RemoteA2aAgent final : public Agent {
public:
    // Throws adk::Error (invalid_argument) when neither a card nor its URL is given, or when there is no name (none
    // given, no card to take it from).
    static std::shared_ptr<RemoteA2aAgent> create(RemoteAgentOptions options);

    // The card, read when first needed; throws adk::Error when it cannot be read or names no interface this agent
    // speaks.
    asio::awaitable<AgentCard> card();

    class Impl;
    RemoteA2aAgent(std::string name, std::string description, std::shared_ptr<Impl> impl);

protected:
    asio::awaitable<void> run_impl(InvocationContext& ctx, EventSink& out) override;

private:
    std::shared_ptr<Impl> impl_;
};

}  // namespace adk::a2a
