// MCP over stdio: the server is a child process, messages are lines of JSON on its stdin and stdout, and what
// it writes to stderr goes to adk's log (info level, prefixed by the server's name).
//
// The child runs in a process group of its own, so that what it starts (npx starts node, which may start more)
// is ended with it. close() ends it as the spec's shutdown asks: stdin closed, then SIGTERM to the group after
// `term_after`, then SIGKILL to the group after `kill_after`, then reaped; it returns when no process of the
// group is left (or, for processes that escaped the group, after `kill_after` more). The destructor of a
// transport that was not closed kills the group at once (SIGKILL) and reaps the child.
//
// Every call is made on `executor`, which must be a strand when several threads run its io_context; one
// send() at a time, one receive() at a time.
//
// The child gets a small environment, as the MCP SDKs give it: HOME, LOGNAME, PATH, SHELL, TERM, USER (when
// set), then the options' `env`; nothing else of this process's (API keys stay here) unless `inherit_env`.
#pragma once

#include <adk/mcp/transport.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace adk::mcp {

class StdioServerParams {
public:
    explicit StdioServerParams(std::string command_, std::vector<std::string> args_ = {})
        : command(std::move(command_)), args(std::move(args_))
    {
    }
    std::string command;  // looked up in PATH when it has no '/'
    std::vector<std::string> args;
    std::map<std::string, std::string> env;  // set for the child, over the small default environment
    bool inherit_env = false;                // the child gets this process's whole environment (then `env`)
    std::string cwd;                         // the child's working folder; this process's when empty
    std::chrono::milliseconds term_after{std::chrono::seconds(2)};  // after stdin closes, before SIGTERM
    std::chrono::milliseconds kill_after{std::chrono::seconds(2)};  // after SIGTERM, before SIGKILL
    std::size_t max_message_bytes = std::size_t{16} << 20;          // one line of stdout; past it, an error
};

class StdioTransport final : public Transport {
public:
    StdioTransport(asio::any_io_executor executor, StdioServerParams params);
    ~StdioTransport() override;

    asio::awaitable<void> open() override;
    asio::awaitable<void> send(std::string message) override;
    asio::awaitable<std::optional<std::string>> receive() override;
    asio::awaitable<void> close() override;
    const std::string& name() const override;
    // "exited with status 1", or "killed by signal 9", when it has ended; then its last stderr lines.
    std::string diagnostics() const override;

    // The child's process id (and process group id); 0 before open() and after close().
    int pid() const noexcept;

private:
    class Impl;
    std::shared_ptr<Impl> impl_;
};

}  // namespace adk::mcp
