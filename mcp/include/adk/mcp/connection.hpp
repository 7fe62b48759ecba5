// One MCP session over a transport: the handshake, requests that wait for their answers (each with a timeout,
// and cancelled on the server when their caller gives up), the server's requests answered by a handler, its
// notifications routed (progress to the call it is about, log lines to adk's log, list changes to a callback).
//
// Safe from any thread: the connection's work runs on the executor it is given (a strand, asio::make_strand, when
// several threads run the io_context; the transport's must be the same), and callers are resumed on their own
// executors. When the server ends the connection (its process exits, its stream closes), every call under way
// fails with an error that names the server and says how it ended; alive() is then false.
#pragma once

#include <adk/core/error.hpp>
#include <adk/mcp/client_session.hpp>
#include <adk/mcp/transport.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>

namespace adk::mcp {

// The server answered with a JSON-RPC error: its code, message and data, apart.
class RpcFailure : public Error {
public:
    RpcFailure(std::string server, jsonrpc::RpcError error);
    const jsonrpc::RpcError& rpc() const noexcept { return rpc_; }

private:
    jsonrpc::RpcError rpc_;
};

// Answers a request of the server's (elicitation/create, sampling/createMessage, roots/list): its result, or
// throw RpcFailure (or anything: internal_error) to refuse. Runs on the connection's strand; a server's
// notifications/cancelled for it cancels it.
using RequestHandler = std::function<asio::awaitable<json::value>(const jsonrpc::Request& request)>;

class ConnectionOptions {
public:
    ConnectionOptions() = default;
    ClientSessionOptions session;
    // How long a request waits for its answer unless its call says otherwise; then it is cancelled on the
    // server and fails with errc::timed_out.
    std::chrono::milliseconds request_timeout{std::chrono::seconds(60)};
    // How long the handshake may take (a server started through npx may first download itself).
    std::chrono::milliseconds initialize_timeout{std::chrono::seconds(60)};
    RequestHandler handle_request;                        // for the capabilities offered in `session`
    std::function<void()> on_tools_changed;               // notifications/tools/list_changed
    std::function<void(const event::Log&)> on_log;        // by default: adk's log, at the line's level
};

class CallOptions {
public:
    CallOptions() = default;
    std::optional<std::chrono::milliseconds> timeout;  // the connection's request_timeout when unset
    // Asks for progress notifications and hands each to this (on the connection's strand).
    std::function<void(const event::Progress&)> on_progress;
};

class Connection : public std::enable_shared_from_this<Connection> {
public:
    static std::shared_ptr<Connection> create(asio::any_io_executor executor, std::unique_ptr<Transport> transport,
                                              ConnectionOptions options);
    ~Connection();
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;

    // Opens the transport and runs the handshake. Throws adk::Error naming the server (it could not start,
    // refused, spoke an unknown version, ended, or timed out).
    asio::awaitable<void> start();

    // Sends a request and returns its result. Throws RpcFailure for an error answer, adk::Error (timed_out)
    // past the timeout, adk::Error (unavailable) when the server is gone, and operation_aborted when the
    // caller is cancelled (the server is then told with notifications/cancelled).
    asio::awaitable<json::value> call(std::string method, json::object params, CallOptions options = {});

    // Ends the session and the transport (the process, for stdio); calls under way fail. Idempotent.
    asio::awaitable<void> close();

    // Started, and the server has not ended the connection.
    bool alive() const;
    // What the server said of itself (after start()).
    ServerInfo server() const;
    const std::string& name() const;

    class Impl;

private:
    explicit Connection(std::shared_ptr<Impl> impl);
    std::shared_ptr<Impl> impl_;
};

}  // namespace adk::mcp
