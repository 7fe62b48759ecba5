// The MCP client's side of a session, without I/O: what to send, and what each message from the server means.
// A driver (adk/mcp/connection.hpp) owns a transport and feeds every message it reads to receive(); the
// handshake and each exchange can so be tested without sockets or processes.
//
//   initialize() ........ the `initialize` request (protocol 2025-11-25; a server may answer 2025-06-18 or
//                         2025-03-26, anything else fails the handshake)
//   receive(answer) ..... Ready, and `notifications/initialized` to send
//   request(m, params) .. a request of ours, with a fresh id (and a progress token when asked)
//   receive(...) ........ Answer (to a request of ours), Incoming (a request of the server's that a handler
//                         must answer: elicitation, sampling, roots), Progress, Log, ToolsChanged,
//                         ServerCancelled; ping and what the client does not serve are answered here
//   abandon(id) ......... `notifications/cancelled` for a request we stop waiting for
#pragma once

#include <adk/mcp/jsonrpc.hpp>

#include <boost/json/object.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace adk::mcp {

namespace json = boost::json;

inline constexpr std::string_view latest_protocol_version = "2025-11-25";
// The protocol versions adk-cpp speaks, newest first.
std::span<const std::string_view> protocol_versions();

// What the client offers the server (the toolset's options decide).
class ClientCapabilities {
public:
    bool elicitation = false;  // form mode: the server may ask the user for input (elicitation/create)
    bool sampling = false;     // the server may ask a model of the client's (sampling/createMessage)
    bool roots = false;        // the server may ask which folders it may work in (roots/list)
};

class ClientSessionOptions {
public:
    ClientSessionOptions() = default;
    std::string client_name = "adk-cpp";
    std::string client_version = "0.1";
    ClientCapabilities capabilities;
    // The version asked for in `initialize`; tests set an older one to see a server negotiate.
    std::string protocol_version = std::string(latest_protocol_version);
};

// What the server said of itself in its answer to `initialize`.
class ServerInfo {
public:
    std::string protocol_version;
    json::object capabilities;
    std::string name;
    std::string version;
    std::string instructions;
    bool has(std::string_view capability) const { return capabilities.contains(capability); }
    bool tools_list_changed() const;
};

// What a message from the server means.
namespace event {
// The handshake is done (`notifications/initialized` is among what to send).
class Ready {};
// The handshake failed: the server refused `initialize` or answered what adk-cpp cannot speak.
class Failed {
public:
    std::string why;
};
// The answer to a request of ours (result or error).
class Answer {
public:
    jsonrpc::Response response;
    std::string method;  // of the request it answers
};
// A request of the server's for a capability the client offered: a handler answers it (respond()).
class Incoming {
public:
    jsonrpc::Request request;
};
class Progress {
public:
    jsonrpc::Id request;  // the request of ours it is about
    double progress = 0;
    std::optional<double> total;
    std::string message;
};
// notifications/message: a log line of the server's.
class Log {
public:
    std::string level;
    std::string logger;
    json::value data;
};
class ToolsChanged {};
// The server gave up a request of its own (an elicitation the user has not answered yet).
class ServerCancelled {
public:
    jsonrpc::Id request;
    std::string reason;
};
// Nothing to do: a stray answer, an unknown notification, a malformed message. Worth a debug log line.
class Ignored {
public:
    std::string why;
};
}  // namespace event

using SessionEvent = std::variant<event::Ready, event::Failed, event::Answer, event::Incoming, event::Progress,
                                  event::Log, event::ToolsChanged, event::ServerCancelled, event::Ignored>;

class ClientSession {
public:
    enum class Phase { idle, initializing, ready, failed };

    explicit ClientSession(ClientSessionOptions options = {});

    Phase phase() const noexcept { return phase_; }
    const ServerInfo& server() const noexcept { return server_; }
    const ClientSessionOptions& options() const noexcept { return options_; }

    // The `initialize` request; the session is then initializing.
    jsonrpc::Request initialize();

    // A request of ours with a fresh id, remembered until it is answered or abandoned. With `progress`, its
    // params carry `_meta.progressToken` (the id itself), and Progress events name it.
    jsonrpc::Request request(std::string method, json::object params = {}, bool progress = false);

    // We stop waiting for a pending request (a timeout, a cancelled invocation): the notification that tells
    // the server; nullopt when it was not pending (answered already) or is `initialize` (which the spec
    // forbids cancelling).
    std::optional<jsonrpc::Notification> abandon(const jsonrpc::Id& id, std::string reason);

    // Reads one item of what the server sent; what must be sent in return (the answer to a ping, an error for a
    // request the client does not serve, `notifications/initialized`) is appended to `out`.
    SessionEvent receive(const jsonrpc::Item& item, std::vector<jsonrpc::Message>& out);

    // The requests of ours still waiting for an answer.
    std::size_t pending() const noexcept { return pending_.size(); }

private:
    SessionEvent receive_response(const jsonrpc::Response& response, std::vector<jsonrpc::Message>& out);
    SessionEvent receive_request(const jsonrpc::Request& request, std::vector<jsonrpc::Message>& out);
    SessionEvent receive_notification(const jsonrpc::Notification& note);
    SessionEvent initialized(const jsonrpc::Response& response, std::vector<jsonrpc::Message>& out);

    ClientSessionOptions options_;
    Phase phase_ = Phase::idle;
    ServerInfo server_;
    std::int64_t next_id_ = 0;
    std::optional<jsonrpc::Id> initialize_id_;
    std::map<jsonrpc::Id, std::string> pending_;  // id -> method
};

}  // namespace adk::mcp
