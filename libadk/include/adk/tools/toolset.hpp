// Toolset: tools that come as a set from somewhere else (an MCP server, a remote catalog, the user's own
// choice per invocation), with a lifecycle.
//
// A toolset is opened on first use: the first get_tools() runs open() and then list_tools(); callers that come
// while that is under way (concurrent invocations, on any thread) wait for it and share its result, or its
// error. The list is kept until the toolset says it changed (tools_changed(), e.g. when an MCP server sends
// notifications/tools/list_changed); each caller gets it through the toolset's filter. Whoever owns a toolset
// closes it when done: the Runner (Runner::close), ApiServer::stop, the `adk` command line on exit. close()
// waits for an open under way, is idempotent, and a later use opens the toolset again.
//
//   class Catalog final : public adk::Toolset {
//   public:
//       Catalog() : Toolset("catalog", adk::ToolFilter({"search", "fetch"})) {}
//   protected:
//       asio::awaitable<void> open() override { ... connect ... }
//       asio::awaitable<std::vector<std::shared_ptr<adk::Tool>>> list_tools(const adk::ReadonlyContext&) override;
//       asio::awaitable<void> shutdown() override { ... disconnect ... }
//   };
#pragma once

#include <adk/core/error.hpp>
#include <adk/tools/tool.hpp>

#include <boost/asio/awaitable.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace adk {

// Thrown by a toolset's list_tools() when it cannot list its tools before the invocation's user gives a
// credential (an MCP server that asks for OAuth). The LlmAgent then asks the client for it as it asks for a tool's
// credential (adk_request_credential with this auth config; adk/auth/credential_service.hpp) and pauses. The
// Runner keeps the answer in its CredentialService, under credential_key_of(auth_config) for the user, and the
// agent runs again: the toolset finds the answer there and lists its tools.
class CredentialRequired : public Error {
public:
    CredentialRequired(json::object auth_config, const std::string& message)
        : Error(errc::unavailable, message), auth_config_(std::move(auth_config))
    {
    }
    const json::object& auth_config() const noexcept { return auth_config_; }

private:
    json::object auth_config_;
};

// Which of a toolset's tools an agent offers: all (the default), those of the given names, or those a
// predicate picks for the invocation (ADK's tool_filter, a list or a callable).
class ToolFilter {
public:
    using Predicate = std::function<bool(const Tool& tool, const ReadonlyContext& ctx)>;

    ToolFilter() = default;
    ToolFilter(std::vector<std::string> names);  // NOLINT: implicit, so that {"a", "b"} reads as a filter
    ToolFilter(Predicate predicate);             // NOLINT

    bool allows(const Tool& tool, const ReadonlyContext& ctx) const;
    bool allows_all() const noexcept { return !names_ && !predicate_; }

private:
    std::shared_ptr<const std::vector<std::string>> names_;
    Predicate predicate_;
};

// Whether a toolset's list is kept between uses (the default) or asked for by every invocation (a list
// that depends on the invocation's user or state).
enum class ToolListing { cached, per_invocation };

class Toolset {
public:
    // Throws adk::Error (invalid_argument) for an empty name.
    explicit Toolset(std::string name, ToolFilter filter = {}, ToolListing listing = ToolListing::cached);
    virtual ~Toolset();
    Toolset(const Toolset&) = delete;
    Toolset& operator=(const Toolset&) = delete;

    // Names the toolset in logs and errors (e.g. the MCP server it reaches).
    const std::string& name() const noexcept { return name_; }
    const ToolFilter& filter() const noexcept { return filter_; }

    // The tools offered to this invocation: opens the toolset if it is not open, lists its tools unless a list is
    // kept, and returns those the filter allows. Throws what open() or list_tools() threw, to every caller that
    // waited for that attempt; the next call tries again. With ToolListing::cached, the list is made with the
    // context of the caller that made it.
    asio::awaitable<std::vector<std::shared_ptr<Tool>>> get_tools(const ReadonlyContext& ctx);

    // Ends what open() started. Waits for an open or a listing under way; a second call (at once, or later)
    // finds it closed and returns. Throws what shutdown() threw; the toolset counts as closed all the same.
    // Tools handed out before keep working only as far as their toolset lets them (an MCP tool's call fails).
    asio::awaitable<void> close();

    bool is_open() const;

    // The kept list is stale: the next get_tools() lists again. From any thread, at any time (a listing under
    // way when it is called is not kept).
    void tools_changed();

protected:
    // Connects, starts a process...: whatever list_tools() and the tools need. Nothing by default.
    virtual asio::awaitable<void> open();
    virtual asio::awaitable<std::vector<std::shared_ptr<Tool>>> list_tools(const ReadonlyContext& ctx) = 0;
    // Undoes open(). Nothing by default.
    virtual asio::awaitable<void> shutdown();

private:
    class State;

    std::string name_;
    ToolFilter filter_;
    ToolListing listing_;
    std::unique_ptr<State> state_;
};

// Closes every toolset at once and waits for all of them; a toolset whose close throws is logged (by its
// name) and the others are closed all the same. Each toolset once, even when listed twice.
asio::awaitable<void> close_toolsets(std::vector<std::shared_ptr<Toolset>> toolsets);

}  // namespace adk
