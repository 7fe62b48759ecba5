// adk::a2a::Server: every app of an adk::server::ApiServer served over A2A 1.0, mounted beside ADK's routes:
//
//   adk::server::ApiServer api(ioc.get_executor(), apps, options);
//   adk::a2a::Server a2a(api);
//   a2a.mount();   // before api.start()
//   api.start();
//
// Under the mount path ("/a2a"), for each app:
//   GET  /{app}/.well-known/agent-card.json     the agent card (agent_card.hpp)
//   POST /{app}                                 the JSON-RPC binding: SendMessage, SendStreamingMessage, GetTask,
//                                               ListTasks, CancelTask, SubscribeToTask
//   POST /{app}/message:send, /{app}/message:stream, GET /{app}/tasks, GET /{app}/tasks/{id},
//   POST /{app}/tasks/{id}:cancel, GET|POST /{app}/tasks/{id}:subscribe    the HTTP+JSON binding
//
// A message's contextId is the ADK session (of the user "A2A_USER_<contextId>", as ADK Python names it; made when
// new), a task is an invocation (its id the invocation's), run as the server's runs are: a client that drops a
// stream subscribes again and gets what it missed; a task runs to its end whether a client follows it or not
// (CancelTask stops it). A task that waits for its client (INPUT_REQUIRED, AUTH_REQUIRED) goes on when a message
// with its taskId answers its calls (function responses); in an app that is not resumable that answer runs as a
// new invocation of the same task. Updates: task_updates.hpp. Errors: JSON-RPC's codes with A2A's
// google.rpc.ErrorInfo, google.rpc.Status over HTTP+JSON; a request whose A2A-Version is not 1.0 is refused
// (VersionNotSupportedError).
//
// Push notifications (when ServerOptions::push_allowed_urls allows some): a task's webhooks (configs set with its
// message, or by CreateTaskPushNotificationConfig) get each status update and each whole artifact as a
// StreamResponse (POST, "Authorization: <scheme> <credentials>" and "X-A2A-Notification-Token: <token>" when
// given), retried, in order, never a streamed text delta.
//
// The routes sit behind the ApiServer's checks (Host, origin, bearer token), but for the card: public, as the
// specification has it (a client reads it to learn how to authenticate). An app's card names its endpoints by the
// Host the request came to (checked by the ApiServer), or by ServerOptions::public_url when set.
#pragma once

#include <adk/a2a/agent_card.hpp>
#include <adk/server/api_server.hpp>
#include <adk/server/routes.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace adk::server {
class Run;
}

namespace adk::a2a {

class ServerOptions {
public:
    ServerOptions() = default;
    // Where the routes are mounted on the ApiServer ("/a2a", where ADK's clients look).
    std::string path = "/a2a";
    // The URL clients reach that path at ("https://agents.example.com/a2a"); empty: the request's scheme and Host.
    std::string public_url;
    std::string agent_version = "0.1.0";
    // The tasks whose app and context the server remembers (GetTask and CancelTask by id alone); past it the
    // oldest are forgotten (their sessions keep their events).
    std::size_t max_tasks = 100000;

    // Push notifications: the URL prefixes a client's webhook may be under ("https://hooks.example.com/a2a/").
    // None (the default): push notifications are off (the card says so; their methods answer
    // PushNotificationNotSupportedError). A webhook anywhere else is refused: the server posts only where its
    // operator allows (the agent cannot be made to reach into its own network).
    std::vector<std::string> push_allowed_urls;
    std::size_t max_push_configs = 10;  // per task
    // What every task's webhooks may hold together (URLs, tokens, credentials; unknown members are not kept):
    // past it, setting one more is refused (413) until tasks are forgotten or webhooks deleted.
    std::size_t max_push_config_bytes = std::size_t{64} << 20;
    // Each notification is tried this many times, the waits between doubling from push_retry_delay.
    int push_attempts = 3;
    std::chrono::milliseconds push_retry_delay{200};
    std::chrono::milliseconds push_timeout{std::chrono::seconds(10)};  // one POST, from connect to answer

    // The A2A extensions the apps support (AgentExtension objects: {"uri", "description", "required", "params"}),
    // listed in every card's capabilities. A request activates those it names in its A2A-Extensions header (0.3:
    // X-A2A-Extensions, comma-separated URIs); the answer names them in its own A2A-Extensions header, and a task's
    // run gets them as the state "temp:a2a_extensions" (an array of URIs, for this invocation only) for the agent
    // to act on. A request that leaves out a required one is refused (ExtensionSupportRequiredError). Throws at
    // construction for one without a "uri", or whose URI holds a comma, a space or a control character.
    std::vector<json::object> extensions;

    // The extended agent card (GetExtendedAgentCard; 0.3's agent/getAuthenticatedExtendedCard), for clients that
    // carry the ApiServer's bearer token: given an app's name and its public card, the card they get (more skills,
    // quotas, ...); nullopt: none for that app (ExtendedAgentCardNotConfiguredError). Unset (the default): the
    // cards say extendedAgentCard false and the method answers UnsupportedOperationError. Needs a bearer token on
    // the ApiServer: the specification requires the extended card to be authenticated.
    std::function<std::optional<AgentCard>(const std::string& app, const AgentCard& card)> extended_card;
};

class Server {
public:
    // `api` must outlive the server and its routes. Throws adk::Error (invalid_argument) for a path that does not
    // start with '/', and for an extended card on an ApiServer without a bearer token.
    explicit Server(server::ApiServer& api, ServerOptions options = {});

    // The routes, relative to the mount path; mount() mounts them at ServerOptions::path (before the ApiServer
    // starts).
    server::Routes routes();
    void mount();

    // The card of `app` as served at `url` (the app's A2A endpoint); throws adk::Error (not_found) for an app the
    // ApiServer does not serve.
    AgentCard card(std::string_view app, const std::string& url) const;

    class Impl;

private:
    std::shared_ptr<Impl> impl_;
};

}  // namespace adk::a2a
