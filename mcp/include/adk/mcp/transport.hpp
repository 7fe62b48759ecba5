// How MCP messages travel: a Transport carries the text of whole JSON-RPC messages both ways. The connection
// (adk/mcp/connection.hpp) reads and writes through it and knows nothing of processes or HTTP.
#pragma once

#include <boost/asio/awaitable.hpp>

#include <optional>
#include <string>

namespace adk::mcp {

namespace asio = boost::asio;

class Transport {
public:
    virtual ~Transport() = default;

    // Starts the server's side: a process for stdio, nothing for HTTP (its first send connects). Throws
    // adk::Error naming the server when it cannot.
    virtual asio::awaitable<void> open() = 0;
    // Sends one message (its JSON text). Throws adk::Error when the server is gone.
    virtual asio::awaitable<void> send(std::string message) = 0;
    // The next message the server sent, whole; nullopt when the server ended the connection (the process
    // exited, the stream closed). Throws adk::Error for a message over the transport's size limit.
    virtual asio::awaitable<std::optional<std::string>> receive() = 0;
    // Ends the connection and whatever the transport started; idempotent.
    virtual asio::awaitable<void> close() = 0;
    // Names the server in logs and errors, without credentials: "stdio server npx", "http://host/mcp".
    virtual const std::string& name() const = 0;
    // What helps explain an ended connection, for errors: how the process exited, its last stderr lines.
    virtual std::string diagnostics() const { return {}; }
};

}  // namespace adk::mcp
