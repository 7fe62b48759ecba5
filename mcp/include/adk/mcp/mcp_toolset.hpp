// McpToolset: the tools of an MCP server, as an adk::Toolset (adk/tools/toolset.hpp).
//
//   adk::mcp::StdioServerParams files("npx", {"-y", "@modelcontextprotocol/server-filesystem", "/tmp/work"});
//   auto toolset = adk::mcp::McpToolset::create(adk::mcp::McpToolsetOptions(files));
//   auto agent = adk::LlmAgent::builder("files").model(model).toolset(toolset).build();
//
//   adk::mcp::HttpServerParams remote("https://tools.example.com/mcp");   // Streamable HTTP
//   remote.headers.emplace_back("authorization", "Bearer " + token);
//   auto remote_tools = adk::mcp::McpToolset::create(adk::mcp::McpToolsetOptions(remote));
//
// The server is started (stdio) or its session opened (HTTP) when an invocation first needs the tools, shared by
// every invocation after, and ended when the toolset is closed (Runner::close, ApiServer::stop, `adk run` on
// exit). Its tools are listed once (all pages) and again when the server says they changed. A call runs
// `tools/call` with the toolset's timeout; the model gets the result, its images and audio as parts of their own
// (tool_response below), or {"error": ...} when the server reports one. A server that died is started again by the next call (stdio); an HTTP server that
// forgot the session gets a new one (adk/mcp/http_transport.hpp).
#pragma once

#include <adk/mcp/connection.hpp>
#include <adk/mcp/http_transport.hpp>
#include <adk/mcp/stdio_transport.hpp>
#include <adk/tools/toolset.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace adk {
class Model;
}

namespace adk::mcp {

// A folder the server may work in, offered through roots/list.
class Root {
public:
    Root(std::string uri_, std::string name_ = {}) : uri(std::move(uri_)), name(std::move(name_)) {}
    std::string uri;  // file:///srv/work
    std::string name;
};

// A progress notification of a tool call, for McpToolsetOptions::on_progress.
class ToolProgress {
public:
    std::string tool;
    std::string function_call_id;
    double progress = 0;
    std::optional<double> total;
    std::string message;
};

class McpToolsetOptions {
public:
    explicit McpToolsetOptions(StdioServerParams stdio_);
    explicit McpToolsetOptions(HttpServerParams http_);

    // Names the toolset in logs and errors; the command's file name, or the URL's host, by default.
    std::string name;
    ToolFilter filter;
    // The server: exactly one of them is set.
    std::optional<StdioServerParams> stdio;
    std::optional<HttpServerParams> http;
    // How long one tool call may take (ADK's `timeout`), and the handshake.
    std::chrono::milliseconds timeout{std::chrono::seconds(60)};
    std::chrono::milliseconds initialize_timeout{std::chrono::seconds(60)};
    // Progress of the calls under way (logged at info level in any case). Called on the connection's strand.
    std::function<void(const ToolProgress&)> on_progress;
    // Answers the server's elicitation/create requests (offered to the server only when set): the result as
    // the spec writes it ({"action": "accept", "content": {...}}, or "decline", or "cancel"). Fields an
    // acceptance leaves out get the requested schema's defaults (apply_elicitation_defaults).
    RequestHandler on_elicitation;
    // Offered to the server (roots/list, the roots capability) when not empty.
    std::vector<Root> roots;
    // Answers the server's sampling/createMessage with this model (offered only when set; text messages): a
    // server's own model calls, billed to this app. Without it, the server is not offered sampling.
    std::shared_ptr<Model> sampling_model;
    // What the server's tool list may take, all pages together (names, descriptions and schemas, as JSON): the
    // list is declared to the model on every call. Past it, listing the tools fails with an error that says so.
    std::size_t max_tool_list_bytes = std::size_t{1} << 20;
};

class McpToolset final : public Toolset {
public:
    static std::shared_ptr<McpToolset> create(McpToolsetOptions options);
    explicit McpToolset(McpToolsetOptions options);
    ~McpToolset() override;

    const McpToolsetOptions& options() const noexcept { return options_; }

    // The connection in use, started (again) when there is none or the server ended it. Throws adk::Error
    // naming the server when it cannot start.
    asio::awaitable<std::shared_ptr<Connection>> connection();

    class State;  // what the toolset shares with its tools (src/mcp_toolset.cpp)

protected:
    asio::awaitable<void> open() override;
    asio::awaitable<std::vector<std::shared_ptr<Tool>>> list_tools(const ReadonlyContext& ctx) override;
    asio::awaitable<void> shutdown() override;

private:
    asio::awaitable<std::vector<std::shared_ptr<Tool>>> list_all(const ReadonlyContext& ctx);  // every page

    McpToolsetOptions options_;
    std::shared_ptr<State> state_;
};

// Adds to an accepted elicitation's `content` the `default` of each property of `requested_schema` that it
// does not hold (spec 2025-11-25, SEP-1034).
void apply_elicitation_defaults(const json::value& requested_schema, json::object& content);

// What the model gets from a tools/call result.
class ToolResponse {
public:
    ToolResponse(json::value response_, std::vector<Part> media_)
        : response(std::move(response_)), media(std::move(media_))
    {
    }
    // The result as MCP gives it (content, structuredContent), less _meta and the media's bytes: an image or
    // audio item, or an embedded resource's blob, keeps its type and MIME type and says that it follows.
    json::value response;
    // Those bytes as inline data parts, in content order (ToolContext::add_response_part): a provider sends
    // them to the model as what they are, not as base64 text.
    std::vector<Part> media;
};

// Maps a tools/call result: {"isError": true} results become an error (the model gets
// {"error": "<their text>"}); structuredContent is checked against the tool's outputSchema when it has one.
// Throws adk::Error for a result that is not an object, does not fit its schema or nests too deep.
ToolResponse tool_response(const std::string& tool, const json::value& result, const json::value& output_schema);

}  // namespace adk::mcp
