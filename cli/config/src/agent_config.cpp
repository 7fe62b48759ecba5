// Agent-config YAML to agents: each field checked where it stands, each error placed at its file, line and
// column.
#include <adk/cli/agent_config.hpp>

#include <adk/agents/llm_agent.hpp>
#include <adk/agents/workflow_agents.hpp>
#include <adk/core/error.hpp>
#include <adk/core/identifier.hpp>
#include <adk/providers/make_model.hpp>
#include <adk/mcp/mcp_toolset.hpp>
#include <adk/net/url.hpp>
#include <adk/tools/builtin_tools.hpp>
#include <adk/workflow/workflow.hpp>

#include <boost/json/value.hpp>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <fstream>
#include <set>
#include <system_error>

namespace adk::cli {

namespace fs = std::filesystem;

AgentConfigOptions::AgentConfigOptions()
    : make_model([](const std::string& id) { return adk::make_model(id); })
{
}

namespace {

bool is_under(const fs::path& root, const fs::path& path)
{
    auto [end, rest] = std::mismatch(root.begin(), root.end(), path.begin(), path.end());
    return end == root.end();
}

// Reads one app's YAML files, the root and those its sub_agents name.
class Loader {
public:
    Loader(const AgentConfigOptions& options, fs::path app_dir) : options_(options), app_dir_(std::move(app_dir)) {}

    std::shared_ptr<Agent> load(const fs::path& file)
    {
        std::error_code ec;
        const fs::path canonical = fs::canonical(file, ec);
        if (ec)
            throw Error(errc::invalid_argument, file.string() + ": cannot be read (" + ec.message() + ")");
        if (!is_under(app_dir_, canonical))
            throw Error(errc::invalid_argument, file.string() + ": is outside the app's folder " +
                                                    app_dir_.string() + "; an app's YAML files stay in its folder");
        if (!open_.insert(canonical).second)
            throw Error(errc::invalid_argument, file.string() + ": names itself among its sub_agents, directly "
                                                                "or through another file");
        // Read here, bounded, rather than by yaml-cpp: its reader ends the program when the stream fails (a
        // folder named as a file).
        constexpr std::uintmax_t max_bytes = 1 << 20;
        if (!fs::is_regular_file(canonical, ec))
            throw Error(errc::invalid_argument, file.string() + ": is not a file");
        const auto size = fs::file_size(canonical, ec);
        if (ec)
            throw Error(errc::invalid_argument, file.string() + ": cannot be read (" + ec.message() + ")");
        if (size > max_bytes)
            throw Error(errc::invalid_argument, file.string() + ": is larger than an agent config may be (1 MiB)");
        std::string text(static_cast<std::size_t>(size), '\0');
        std::ifstream in(canonical, std::ios::binary);
        if (!in.read(text.data(), static_cast<std::streamsize>(text.size())))
            throw Error(errc::invalid_argument, file.string() + ": cannot be read");
        YAML::Node root;
        try {
            root = YAML::Load(text);
        } catch (const YAML::ParserException& e) {
            throw Error(errc::invalid_argument, where(file, e.mark) + "not YAML: " + e.msg);
        } catch (const YAML::Exception& e) {
            throw Error(errc::invalid_argument, file.string() + ": not YAML: " + e.msg);
        }
        auto agent = build(file, root);
        open_.erase(canonical);
        return agent;
    }

private:
    static std::string where(const fs::path& file, const YAML::Mark& mark)
    {
        if (mark.is_null())
            return file.string() + ": ";
        return file.string() + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1) + ": ";
    }

    [[noreturn]] static void fail(const fs::path& file, const YAML::Node& node, const std::string& what)
    {
        throw Error(errc::invalid_argument, where(file, node.Mark()) + what);
    }

    static std::string text(const fs::path& file, const YAML::Node& node, std::string_view field)
    {
        if (!node.IsScalar())
            fail(file, node, "'" + std::string(field) + "' must be a string");
        return node.Scalar();
    }

    template <class T>
    static T number(const fs::path& file, const YAML::Node& node, std::string_view field, std::string_view expected)
    {
        try {
            if (node.IsScalar())
                return node.as<T>();
        } catch (const YAML::Exception&) {
        }
        fail(file, node, "'" + std::string(field) + "' must be " + std::string(expected));
    }

    static bool flag(const fs::path& file, const YAML::Node& node, std::string_view field)
    {
        return number<bool>(file, node, field, "true or false");
    }

    std::shared_ptr<Model> model(const std::string& id, const std::string& agent_name)
    {
        auto it = models_.find(id);
        if (it != models_.end())
            return it->second;
        std::shared_ptr<Model> m;
        try {
            m = options_.make_model(id);
        } catch (const Error& e) {
            throw Error(e.code(), "agent '" + agent_name + "': model '" + id + "': " + e.message());
        }
        if (!m)
            throw Error(errc::invalid_argument, "agent '" + agent_name + "': no model for '" + id + "'");
        models_.emplace(id, m);
        return m;
    }

    std::vector<std::shared_ptr<Agent>> sub_agents(const fs::path& file, const YAML::Node& list)
    {
        std::vector<std::shared_ptr<Agent>> out;
        if (!list.IsSequence())
            fail(file, list, "'sub_agents' must be a list of {config_path: FILE}");
        for (const auto& item : list) {
            if (!item.IsMap() || !item["config_path"])
                fail(file, item, item.IsMap() && item["code"]
                                     ? "'sub_agents': a 'code' reference names Python code; adk-cpp's YAML takes "
                                       "'config_path' (build agents of your own in C++)"
                                     : "'sub_agents': each item must be {config_path: FILE}");
            for (const auto& field : item)
                if (field.first.Scalar() != "config_path")
                    fail(file, field.first, "'sub_agents': unknown field '" + field.first.Scalar() + "'");
            out.push_back(agent_file(file, item["config_path"], "config_path"));
        }
        return out;
    }

    // An agent's YAML file named by `node` (relative to `file`, in the app's folder).
    std::shared_ptr<Agent> agent_file(const fs::path& file, const YAML::Node& node, std::string_view field)
    {
        const std::string relative = text(file, node, field);
        const fs::path path = file.parent_path() / relative;
        std::error_code ec;
        if (!fs::exists(path, ec))
            fail(file, node, "'" + std::string(field) + "': " + relative + " does not exist");
        const fs::path canonical = fs::canonical(path, ec);
        if (ec || !is_under(app_dir_, canonical))
            fail(file, node, "'" + std::string(field) + "': " + relative + " is outside the app's folder");
        return load(path);
    }

    // --- agent_class: Workflow ---

    // The nodes one workflow's edges named so far, by the text that named them and by their names.
    using Named = std::map<std::string, workflow::Step, std::less<>>;

    static bool is_yaml_file(std::string_view ref) { return ref.ends_with(".yaml") || ref.ends_with(".yml"); }

    // A map in a chain is a node when it says so (agent_class, config_path, or name with only an agent's fields);
    // otherwise it is a routing map {route: node}, as ADK tells them apart.
    static bool names_a_node(const YAML::Node& map)
    {
        if (map["agent_class"] || map["config_path"] || map["func_code"] || map["code"])
            return true;
        static const std::set<std::string, std::less<>> agent_fields{
            "name", "description", "model", "instruction", "tools", "output_key", "include_contents",
            "generate_content_config", "disallow_transfer_to_parent", "disallow_transfer_to_peers",
            "global_instruction", "static_instruction", "sub_agents", "max_iterations", "edges"};
        if (!map["name"])
            return false;
        for (const auto& field : map)
            if (!field.first.IsScalar() || !agent_fields.contains(field.first.Scalar()))
                return false;
        return true;
    }

    workflow::Step node_of(const fs::path& file, const YAML::Node& node, Named& named)
    {
        auto remember = [&](std::string key, workflow::Step step, const std::string& name) {
            named.emplace(std::move(key), step);
            named.emplace(name, step);
            return step;
        };
        if (node.IsScalar()) {
            const std::string ref = node.Scalar();
            if (ref == "START")
                return workflow::START;
            if (auto it = named.find(ref); it != named.end())
                return it->second;
            if (is_yaml_file(ref)) {
                std::shared_ptr<Agent> agent = agent_file(file, node, "edges");
                const std::string agent_name = agent->name();
                return remember(ref, workflow::Step(std::move(agent)), agent_name);
            }
            // A code reference ("my.module.fn", ".agent.fn") names the C++ node of its last segment.
            const std::string name = ref.substr(ref.rfind('.') == std::string::npos ? 0 : ref.rfind('.') + 1);
            if (auto it = named.find(name); it != named.end())
                return remember(ref, it->second, name);
            if (auto it = options_.nodes.find(name); it != options_.nodes.end() && it->second)
                return remember(ref, workflow::Step(it->second), name);
            if (std::shared_ptr<Tool> tool = options_.tools.find(name))
                return remember(ref, workflow::Step(std::move(tool)), name);
            fail(file, node, "'edges': no node named '" + name + "': register it in AgentConfigOptions::nodes (C++), "
                             "name a tool of the registry, or give an agent's YAML file");
        }
        if (node.IsMap()) {
            if (node["func_code"] || (node["code"] && !node["agent_class"]))
                fail(file, node, "'edges': a 'func_code' or 'code' reference names Python code; name a node of "
                                 "AgentConfigOptions::nodes instead");
            if (node["config_path"]) {
                for (const auto& field : node)
                    if (field.first.Scalar() != "config_path")
                        fail(file, field.first, "'edges': unknown field '" + field.first.Scalar() + "'");
                const std::string ref = text(file, node["config_path"], "config_path");
                if (auto it = named.find(ref); it != named.end())
                    return it->second;
                std::shared_ptr<Agent> agent = agent_file(file, node["config_path"], "config_path");
                const std::string agent_name = agent->name();
                return remember(ref, workflow::Step(std::move(agent)), agent_name);
            }
            if (node["name"] && node["name"].IsScalar())
                if (auto it = named.find(node["name"].Scalar()); it != named.end())
                    return it->second;
            std::shared_ptr<Agent> agent = build(file, node);
            const std::string agent_name = agent->name();
            return remember(agent_name, workflow::Step(std::move(agent)), agent_name);
        }
        fail(file, node, "'edges': a node is START, a name, an agent's YAML file or an inline agent config");
    }

    // The nodes of a chain element: one, or a list of them (a fan-out).
    std::vector<workflow::Step> nodes_of(const fs::path& file, const YAML::Node& element, Named& named)
    {
        std::vector<workflow::Step> out;
        if (!element.IsSequence()) {
            out.push_back(node_of(file, element, named));
            return out;
        }
        if (element.size() == 0)
            fail(file, element, "'edges': an empty list of nodes");
        for (const auto& n : element)
            out.push_back(node_of(file, n, named));
        return out;
    }

    static json::value route_of(const fs::path& file, const YAML::Node& node)
    {
        if (node.IsScalar())
            return json::value(node.Scalar());
        if (node.IsSequence() && node.size() > 0) {
            json::array routes;
            for (const auto& r : node) {
                if (!r.IsScalar())
                    fail(file, r, "'edges': a route is a word, a number or true/false");
                routes.emplace_back(r.Scalar());
            }
            return routes;
        }
        fail(file, node, "'edges': a route is a word, a number or true/false, or a list of them");
    }

    std::shared_ptr<Agent> workflow(const fs::path& file, const YAML::Node& root, const std::string& name,
                                    const std::string& description)
    {
        const YAML::Node edges = root["edges"];
        if (!edges)
            fail(file, root, "'edges' is missing: a Workflow lists its edges, starting from START");
        if (!edges.IsSequence() || edges.size() == 0)
            fail(file, edges, "'edges' must be a list of chains ([START, a, b]) and edges ({from_node, to_node})");
        workflow::Workflow::Builder builder(name);
        builder.description(description);
        if (root["max_concurrency"]) {
            const int n = number<int>(file, root["max_concurrency"], "max_concurrency", "a whole number");
            if (n < 0)
                fail(file, root["max_concurrency"], "'max_concurrency' must be 0 (no limit) or more");
            builder.max_concurrency(n);
        }
        Named named;
        for (const auto& item : edges) {
            if (item.IsMap()) {
                for (const auto& field : item) {
                    const std::string key = field.first.Scalar();
                    if (key != "from_node" && key != "to_node" && key != "route")
                        fail(file, field.first, "'edges': an edge has from_node, to_node and route, not '" + key + "'");
                }
                if (!item["from_node"] || !item["to_node"])
                    fail(file, item, "'edges': an edge needs from_node and to_node");
                workflow::Step from = node_of(file, item["from_node"], named);
                workflow::Step to = node_of(file, item["to_node"], named);
                if (item["route"] && !item["route"].IsNull())
                    builder.route(std::move(from), route_of(file, item["route"]), std::move(to));
                else
                    builder.edge(std::move(from), std::move(to));
                continue;
            }
            if (!item.IsSequence() || item.size() < 2)
                fail(file, item, "'edges': a chain lists two or more nodes ([START, a, b])");
            std::vector<workflow::Step> before;
            for (std::size_t i = 0; i < item.size(); ++i) {
                const YAML::Node element = item[i];
                if (element.IsMap() && !names_a_node(element)) {
                    if (i == 0 || i + 1 != item.size())
                        fail(file, element, "'edges': a routing map {route: node} ends a chain, after the node "
                                            "whose routes it maps");
                    for (const auto& entry : element) {
                        const json::value route = route_of(file, entry.first);
                        for (const workflow::Step& to : nodes_of(file, entry.second, named))
                            for (const workflow::Step& from : before)
                                builder.route(from, route, to);
                    }
                    continue;
                }
                std::vector<workflow::Step> now = nodes_of(file, element, named);
                for (const workflow::Step& from : before)
                    for (const workflow::Step& to : now)
                        builder.edge(from, to);
                before = std::move(now);
            }
        }
        try {
            return builder.build();
        } catch (const Error& e) {
            throw Error(e.code(), where(file, edges.Mark()) + e.message());
        }
    }

    // An LlmAgent's `tools`: registered tools by name, and MCP toolsets ({name: McpToolset, args: ...}).
    void tools(const fs::path& file, const YAML::Node& list, LlmAgent::Builder& builder, const std::string& agent)
    {
        std::vector<std::string> names;
        if (!list.IsSequence())
            fail(file, list, "'tools' must be a list of {name: TOOL}");
        for (const auto& item : list) {
            if (item.IsMap() && !item["name"])
                fail(file, item, "'tools': an entry names its tool with name: TOOL");
            const YAML::Node name_node = item.IsMap() ? item["name"] : item;
            const std::string name = text(file, name_node, "tools: name");
            if (name == "McpToolset" || name == "MCPToolset") {
                builder.toolset(mcp_toolset(file, item));
                continue;
            }
            if (item.IsMap())
                for (const auto& field : item)
                    if (field.first.Scalar() != "name")
                        fail(file, field.first,
                             "'tools': the field '" + field.first.Scalar() +
                                 "' is not supported (a tool's arguments are set where it is registered, in C++)");
            if (!options_.tools.find(name) && options_.tools.validation_mode() == ValidationMode::strict)
                fail(file, name_node, "'tools': no tool named '" + name + "' is registered (known: " +
                                          options_.tools.known() + ")");
            names.push_back(name);
        }
        builder.tools(options_.tools.bind(names, agent));
    }

    // {name: McpToolset, args: {stdio_connection_params: {server_params: {command, args, env, cwd}, timeout},
    // tool_filter: [...]}}, as ADK Python spells it (stdio_server_params: {...} too, as its older files do); or
    // streamable_http_connection_params (sse_connection_params: the old transport, found from the same URL):
    // {url, headers, timeout, sse_read_timeout}, with OAuth's pre-registered client in auth_credential.
    std::shared_ptr<Toolset> mcp_toolset(const fs::path& file, const YAML::Node& item)
    {
        const YAML::Node args = item.IsMap() ? item["args"] : YAML::Node();
        if (!args || !args.IsMap())
            fail(file, item, "'tools': McpToolset needs its args: {stdio_connection_params: {server_params: "
                             "{command: ..., args: [...]}}}");
        for (const auto& field : item)
            if (field.first.Scalar() != "name" && field.first.Scalar() != "args")
                fail(file, field.first, "'tools': McpToolset takes name and args, not '" + field.first.Scalar() + "'");
        std::optional<mcp::StdioServerParams> stdio;
        std::optional<mcp::HttpServerParams> http;
        std::optional<std::chrono::milliseconds> timeout;
        std::vector<std::string> filter;
        bool filtered = false;
        std::optional<mcp::OAuthOptions> oauth_client;
        bool oauth_redirect_given = false;
        // auth_credential: {auth_type: oauth2, oauth2: {client_id, client_secret, redirect_uri}}: a client registered
        // at the server's authorization server beforehand (without it, one is registered dynamically).
        auto auth_credential = [&](const YAML::Node& map, bool& redirect_given) {
            const YAML::Node oauth2 = map.IsMap() ? map["oauth2"] : YAML::Node();
            if (!oauth2 || !oauth2.IsMap() || (map["auth_type"] && text(file, map["auth_type"], "auth_type") != "oauth2"))
                fail(file, map, "'auth_credential' must be {auth_type: oauth2, oauth2: {client_id: ..., client_secret: "
                                "..., redirect_uri: ...}}: MCP servers take OAuth 2.1");
            mcp::OAuthOptions o;
            for (const auto& f : oauth2) {
                const std::string name = f.first.Scalar();
                if (name == "client_id")
                    o.client_id = text(file, f.second, "client_id");
                else if (name == "client_secret")
                    o.client_secret = text(file, f.second, "client_secret");
                else if (name == "redirect_uri") {
                    o.redirect_uri = text(file, f.second, "redirect_uri");
                    redirect_given = true;
                } else
                    fail(file, f.first, "'auth_credential': unknown oauth2 field '" + name +
                                            "' (known: client_id, client_secret, redirect_uri)");
            }
            return o;
        };
        auto server_params = [&](const YAML::Node& map) {
            if (!map.IsMap() || !map["command"])
                fail(file, map, "'server_params' must be a map with a command (and args, env, cwd)");
            mcp::StdioServerParams p(text(file, map["command"], "command"));
            for (const auto& field : map) {
                const std::string key = field.first.Scalar();
                const YAML::Node& v = field.second;
                if (key == "command") {
                } else if (key == "args") {
                    if (!v.IsSequence())
                        fail(file, v, "'args' must be a list of strings");
                    for (const auto& a : v)
                        p.args.push_back(text(file, a, "args"));
                } else if (key == "env") {
                    if (!v.IsMap())
                        fail(file, v, "'env' must be a map of names to strings");
                    for (const auto& e : v)
                        p.env[e.first.Scalar()] = text(file, e.second, "env");
                } else if (key == "cwd") {
                    p.cwd = text(file, v, "cwd");
                } else {
                    fail(file, field.first, "'server_params': unknown field '" + key + "' (known: command, args, env, cwd)");
                }
            }
            return p;
        };
        auto seconds = [&](const YAML::Node& v) {
            const double s = number<double>(file, v, "timeout", "a number of seconds");
            if (!(s > 0 && s <= 86400))
                fail(file, v, "'timeout' must be a number of seconds above 0 and at most a day");
            return std::chrono::milliseconds(static_cast<std::int64_t>(s * 1000));
        };
        for (const auto& field : args) {
            const std::string key = field.first.Scalar();
            const YAML::Node& v = field.second;
            if (key == "stdio_connection_params") {
                if (!v.IsMap() || !v["server_params"])
                    fail(file, v, "'stdio_connection_params' must be a map with server_params (and timeout)");
                for (const auto& f : v)
                    if (f.first.Scalar() != "server_params" && f.first.Scalar() != "timeout")
                        fail(file, f.first, "'stdio_connection_params': unknown field '" + f.first.Scalar() +
                                                "' (known: server_params, timeout)");
                stdio = server_params(v["server_params"]);
                if (v["timeout"])
                    timeout = seconds(v["timeout"]);
            } else if (key == "stdio_server_params") {
                stdio = server_params(v);
            } else if (key == "tool_filter") {
                if (!v.IsSequence())
                    fail(file, v, "'tool_filter' must be a list of tool names");
                filtered = true;
                for (const auto& n : v)
                    filter.push_back(text(file, n, "tool_filter"));
            } else if (key == "streamable_http_connection_params" || key == "sse_connection_params") {
                if (!v.IsMap() || !v["url"])
                    fail(file, v, "'" + key + "' must be a map with a url (and headers, timeout, sse_read_timeout)");
                http.emplace(text(file, v["url"], "url"));
                try {
                    (void)net::parse_url(http->url);
                } catch (const Error& e) {
                    fail(file, v["url"], "'url': " + e.message());
                }
                for (const auto& f : v) {
                    const std::string name = f.first.Scalar();
                    if (name == "url") {
                    } else if (name == "headers") {
                        if (!f.second.IsMap())
                            fail(file, f.second, "'headers' must be a map of names to strings");
                        for (const auto& h : f.second) {
                            const std::string value = text(file, h.second, "headers");
                            try {
                                net::validate_header(h.first.Scalar(), value);
                            } catch (const Error& e) {
                                fail(file, h.first, "'headers': " + e.message());
                            }
                            http->headers.emplace_back(h.first.Scalar(), value);
                        }
                    } else if (name == "timeout") {
                        timeout = seconds(f.second);
                    } else if (name == "sse_read_timeout") {
                        http->http.idle_timeout = seconds(f.second);
                    } else {
                        fail(file, f.first, "'" + key + "': unknown field '" + name +
                                                "' (known: url, headers, timeout, sse_read_timeout)");
                    }
                }
            } else if (key == "auth_scheme") {
                // ADK's OpenAPI-style scheme: MCP servers name theirs (protected resource metadata), so it is read
                // only to be checked as a map.
                if (!v.IsMap())
                    fail(file, v, "'auth_scheme' must be a map (e.g. {type: oauth2})");
            } else if (key == "auth_credential") {
                oauth_client = auth_credential(v, oauth_redirect_given);
            } else {
                fail(file, field.first, "McpToolset: unknown arg '" + key +
                                            "' (known: stdio_connection_params, stdio_server_params, "
                                            "streamable_http_connection_params, sse_connection_params, tool_filter, "
                                            "auth_scheme, auth_credential)");
            }
        }
        if (bool(stdio) == bool(http))
            fail(file, args, "McpToolset: give one server: stdio_connection_params: {server_params: {command: ..., "
                             "args: [...]}}, or streamable_http_connection_params: {url: ...}");
        if (stdio && oauth_client)
            fail(file, args, "McpToolset: 'auth_credential' is for servers over HTTP; a stdio server takes its "
                             "credentials from its env");
        if (stdio && !options_.allow_mcp_stdio)
            fail(file, args, "McpToolset starts the process '" + stdio->command +
                                 "': a YAML file that starts processes is code, so this server runs it only when "
                                 "started with --allow_mcp_stdio");
        if (http && (options_.mcp_authorize || options_.mcp_oauth_per_user || oauth_client)) {
            mcp::OAuthOptions oauth = oauth_client.value_or(mcp::OAuthOptions());
            oauth.authorize = options_.mcp_authorize;
            oauth.per_user = !options_.mcp_authorize && options_.mcp_oauth_per_user;
            if (oauth.per_user && !options_.mcp_oauth_redirect_uri.empty() && !oauth_redirect_given)
                oauth.redirect_uri = options_.mcp_oauth_redirect_uri;
            http->oauth = std::move(oauth);
        }
        mcp::McpToolsetOptions toolset = stdio ? mcp::McpToolsetOptions(std::move(*stdio))
                                               : mcp::McpToolsetOptions(std::move(*http));
        toolset.on_elicitation = options_.mcp_elicitation;
        if (timeout) {
            toolset.timeout = *timeout;
            toolset.initialize_timeout = std::max(*timeout, toolset.initialize_timeout);
        }
        if (filtered)
            toolset.filter = ToolFilter(std::move(filter));
        return mcp::McpToolset::create(std::move(toolset));
    }

    static GenerateContentConfig generate_config(const fs::path& file, const YAML::Node& map)
    {
        GenerateContentConfig config;
        if (!map.IsMap())
            fail(file, map, "'generate_content_config' must be a map");
        for (const auto& field : map) {
            const std::string key = field.first.Scalar();
            const YAML::Node& v = field.second;
            if (key == "temperature")
                config.temperature = number<double>(file, v, key, "a number");
            else if (key == "top_p")
                config.top_p = number<double>(file, v, key, "a number");
            else if (key == "top_k")
                config.top_k = number<int>(file, v, key, "a whole number");
            else if (key == "max_output_tokens")
                config.max_output_tokens = number<int>(file, v, key, "a whole number");
            else if (key == "stop_sequences") {
                if (!v.IsSequence())
                    fail(file, v, "'stop_sequences' must be a list of strings");
                for (const auto& s : v)
                    config.stop_sequences.push_back(text(file, s, "stop_sequences"));
            } else
                fail(file, field.first, "'generate_content_config': unknown field '" + key +
                                            "' (known: temperature, top_p, top_k, max_output_tokens, stop_sequences)");
        }
        return config;
    }

    std::shared_ptr<Agent> build(const fs::path& file, const YAML::Node& root)
    {
        if (!root.IsMap())
            fail(file, root, "an agent config must be a map of fields (agent_class, name, ...)");
        std::string agent_class = "LlmAgent";
        if (root["agent_class"]) {
            agent_class = text(file, root["agent_class"], "agent_class");
            constexpr std::string_view python_prefix = "google.adk.agents.";
            if (agent_class.starts_with(python_prefix))
                agent_class = agent_class.substr(python_prefix.size());
            if (agent_class == "Agent")
                agent_class = "LlmAgent";
        }
        if (agent_class == "workflow.Workflow" || agent_class == "google.adk.workflow.Workflow")
            agent_class = "Workflow";
        const bool llm = agent_class == "LlmAgent";
        const bool loop = agent_class == "LoopAgent";
        const bool graph = agent_class == "Workflow";
        if (!llm && !loop && !graph && agent_class != "SequentialAgent" && agent_class != "ParallelAgent")
            fail(file, root["agent_class"], "'agent_class': '" + agent_class + "' is not one of LlmAgent, "
                                                "SequentialAgent, ParallelAgent, LoopAgent, Workflow");
        if (!root["name"])
            fail(file, root, "'name' is missing: every agent has a name");
        const std::string name = text(file, root["name"], "name");
        if (!is_identifier(name) || name == "user")
            fail(file, root["name"], "'name': '" + name + "' is not an identifier ([A-Za-z_][A-Za-z0-9_]*, not 'user')");

        static const std::set<std::string, std::less<>> common{"agent_class", "name", "description"};
        static const std::set<std::string, std::less<>> graph_fields{"edges", "max_concurrency"};
        static const std::set<std::string, std::less<>> llm_fields{
            "model", "instruction", "tools", "output_key", "include_contents", "generate_content_config",
            "disallow_transfer_to_parent", "disallow_transfer_to_peers", "global_instruction", "static_instruction"};
        for (const auto& field : root) {
            const std::string key = field.first.Scalar();
            if (common.contains(key) || (!graph && key == "sub_agents") || (llm && llm_fields.contains(key)) ||
                (loop && key == "max_iterations") || (graph && graph_fields.contains(key)))
                continue;
            if (key.ends_with("_callback") || key.ends_with("_callbacks") || key.ends_with("_schema"))
                fail(file, field.first, "'" + key + "' names Python code, which adk-cpp's YAML cannot load: give the "
                                        "agent its " + key + " in C++ (adk::LlmAgent::builder)");
            fail(file, field.first, "'" + key + "' is not a field of " + agent_class);
        }

        const std::string description = root["description"] ? text(file, root["description"], "description") : "";
        if (graph)
            return workflow(file, root, name, description);
        std::vector<std::shared_ptr<Agent>> subs;
        if (root["sub_agents"])
            subs = sub_agents(file, root["sub_agents"]);

        try {
            if (!llm) {
                if (agent_class == "SequentialAgent")
                    return std::make_shared<SequentialAgent>(name, description, std::move(subs));
                if (agent_class == "ParallelAgent")
                    return std::make_shared<ParallelAgent>(name, description, std::move(subs));
                int max_iterations = 0;
                if (root["max_iterations"]) {
                    max_iterations = number<int>(file, root["max_iterations"], "max_iterations", "a whole number");
                    if (max_iterations < 0)
                        fail(file, root["max_iterations"], "'max_iterations' must be 0 (no limit) or more");
                }
                return std::make_shared<LoopAgent>(name, description, std::move(subs), max_iterations);
            }
            auto builder = LlmAgent::builder(name);
            builder.description(description);
            std::string model_id = options_.model_override;
            if (model_id.empty()) {
                if (!root["model"])
                    fail(file, root, "'model' is missing: an LlmAgent names its model (e.g. gemini-2.5-flash)");
                model_id = text(file, root["model"], "model");
            }
            builder.model(model(model_id, name));
            if (root["instruction"])
                builder.instruction(text(file, root["instruction"], "instruction"));
            if (root["global_instruction"])
                builder.global_instruction(text(file, root["global_instruction"], "global_instruction"));
            if (root["static_instruction"])
                builder.static_instruction(text(file, root["static_instruction"], "static_instruction"));
            if (root["tools"])
                tools(file, root["tools"], builder, name);
            if (root["output_key"])
                builder.output_key(text(file, root["output_key"], "output_key"));
            if (root["include_contents"]) {
                const std::string mode = text(file, root["include_contents"], "include_contents");
                if (mode != "default" && mode != "none")
                    fail(file, root["include_contents"], "'include_contents' must be default or none");
                builder.include_contents(mode == "none" ? IncludeContents::none : IncludeContents::history);
            }
            if (root["generate_content_config"])
                builder.generate_content_config(generate_config(file, root["generate_content_config"]));
            if (root["disallow_transfer_to_parent"])
                builder.disallow_transfer_to_parent(
                    flag(file, root["disallow_transfer_to_parent"], "disallow_transfer_to_parent"));
            if (root["disallow_transfer_to_peers"])
                builder.disallow_transfer_to_peers(
                    flag(file, root["disallow_transfer_to_peers"], "disallow_transfer_to_peers"));
            for (auto& sub : subs)
                builder.sub_agent(std::move(sub));
            return builder.build();
        } catch (const Error& e) {
            if (e.message().starts_with(file.string() + ":"))
                throw;
            throw Error(e.code(), where(file, root["name"].Mark()) + e.message());
        }
    }

    const AgentConfigOptions& options_;
    fs::path app_dir_;
    std::set<fs::path> open_;
    std::map<std::string, std::shared_ptr<Model>> models_;
};

}  // namespace

std::shared_ptr<Agent> load_agent_config(const fs::path& yaml_file, const AgentConfigOptions& options)
{
    std::error_code ec;
    const fs::path dir = fs::canonical(yaml_file.parent_path().empty() ? fs::path(".") : yaml_file.parent_path(), ec);
    if (ec)
        throw Error(errc::invalid_argument, yaml_file.string() + ": its folder cannot be read (" + ec.message() + ")");
    Loader loader(options, dir);
    return loader.load(yaml_file);
}

std::vector<server::App> load_apps(const fs::path& agents_dir, const AgentConfigOptions& options)
{
    std::error_code ec;
    if (!fs::is_directory(agents_dir, ec))
        throw Error(errc::invalid_argument, agents_dir.string() + " is not a folder: give the folder that holds "
                                                                  "your apps, each a folder with a root_agent.yaml");
    std::vector<fs::path> app_dirs;  // in name order, so that the first error is always the same one
    for (const auto& entry : fs::directory_iterator(agents_dir, ec))
        if (entry.is_directory(ec) && fs::is_regular_file(entry.path() / "root_agent.yaml", ec))
            app_dirs.push_back(entry.path());
    if (ec)
        throw Error(errc::invalid_argument, agents_dir.string() + " cannot be read (" + ec.message() + ")");
    std::sort(app_dirs.begin(), app_dirs.end());
    std::vector<server::App> apps;
    for (const auto& dir : app_dirs) {
        const std::string name = dir.filename().string();
        if (!is_identifier(name))
            throw Error(errc::invalid_argument, dir.string() + ": an app's folder is named by an identifier "
                                                               "([A-Za-z_][A-Za-z0-9_]*), it names the app");
        apps.emplace_back(name, load_agent_config(dir / "root_agent.yaml", options));
    }
    if (apps.empty())
        throw Error(errc::invalid_argument, agents_dir.string() + " holds no app: an app is a folder with a "
                                                                  "root_agent.yaml (see adk --help)");
    return apps;
}

}  // namespace adk::cli
