// A small MCP server over stdio for the lifecycle tests of adk::mcp (tests/integration/mcp_stdio_test.cpp): what a
// process can do to its client (write to stderr, crash mid-call, start a grandchild, ignore SIGTERM, take its
// time with progress, ask the user, change its tools). The protocol itself is judged by the official conformance
// suite and the servers from npm (tests/interop); this one speaks just enough of it.
//
//   adk_mcp_test_server [--version V] [--ignore-term] [--stay-after-eof] [--stderr TEXT] [--chatter N]
//
// --chatter N: N lines to stderr at start, and N notifications/message after its answer to initialize.
//
// Tools: echo {text}; add {a, b} (structured); slow {steps} (a progress notification per step, 20 ms apart,
// then "done"; a notifications/cancelled for it stops it and is noted on stderr); crash (exits with status 3
// at once); spawn (starts a grandchild in the group that sleeps an hour; returns its pid); detach (the same, out
// of the group with setsid()); ask (asks the
// client for a name with elicitation/create and returns the answer); sample (asks the client's model, with
// sampling/createMessage, and returns the answer); roots (asks the client's roots, and returns them); grow (adds the tool "extra" and sends
// notifications/tools/list_changed); big {bytes} (a text that long).
#include <adk/mcp/jsonrpc.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace json = boost::json;
namespace rpc = adk::mcp::jsonrpc;

namespace {

void send(const rpc::Message& m)
{
    std::string line = rpc::encode(m) + "\n";
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fflush(stdout);
}

json::object text_result(const std::string& text)
{
    return {{"content", json::array{json::object{{"type", "text"}, {"text", text}}}}};
}

json::object tool(const char* name, const char* description, json::object properties = {})
{
    return {{"name", name},
            {"description", description},
            {"inputSchema", {{"type", "object"}, {"properties", std::move(properties)}}}};
}

class Server {
public:
    std::string version = "2025-11-25";
    int chatter = 0;  // --chatter
    bool grown = false;
    std::int64_t next_id = 100;
    // slow calls under way: id -> steps left
    std::map<rpc::Id, int> slow;
    std::set<rpc::Id> cancelled;
    std::optional<rpc::Id> asking;  // the tools/call that waits for the answer to a request of the server's
    rpc::Id asked_id;

    json::array tools() const
    {
        json::array out{tool("echo", "Echoes the text.", {{"text", {{"type", "string"}}}}),
                        tool("add", "Adds two numbers.", {{"a", {{"type", "number"}}}, {"b", {{"type", "number"}}}}),
                        tool("slow", "Takes steps, with progress.", {{"steps", {{"type", "integer"}}}}),
                        tool("crash", "Exits at once."),
                        tool("spawn", "Starts a grandchild."),
                        tool("detach", "Starts a grandchild in a session of its own (setsid)."),
                        tool("ask", "Asks the user for a name."),
                        tool("sample", "Asks the client's model."),
                        tool("roots", "Asks the client's roots."),
                        tool("grow", "Adds a tool."),
                        tool("big", "Returns a long text.", {{"bytes", {{"type", "integer"}}}}),
                        tool("meta", "Returns the _meta the call carried.")};
        if (grown)
            out.push_back(tool("extra", "The tool grow added."));
        return out;
    }

    void on_request(const rpc::Request& r)
    {
        const json::object params = r.params && r.params->is_object() ? r.params->get_object() : json::object{};
        if (r.method == "initialize") {
            send(rpc::Response::success(
                r.id, json::object{{"protocolVersion", version},
                                   {"capabilities", {{"tools", {{"listChanged", true}}}, {"logging", json::object{}}}},
                                   {"serverInfo", {{"name", "adk-test-server"}, {"version", "1.0"}}}}));
            for (int i = 0; i < chatter; ++i)
                send(rpc::Notification("notifications/message",
                                       json::object{{"level", "info"}, {"data", "log line " + std::to_string(i)}}));
        } else if (r.method == "ping") {
            send(rpc::Response::success(r.id, json::object{}));
        } else if (r.method == "tools/list") {
            send(rpc::Response::success(r.id, json::object{{"tools", tools()}}));
        } else if (r.method == "tools/call") {
            call(r, params);
        } else {
            send(rpc::Response::failure(r.id, rpc::RpcError(rpc::code::method_not_found, "Method not found: " + r.method)));
        }
    }

    void call(const rpc::Request& r, const json::object& params)
    {
        const std::string name = params.contains("name") ? std::string(params.at("name").as_string()) : "";
        const json::object args = params.contains("arguments") && params.at("arguments").is_object()
                                      ? params.at("arguments").get_object()
                                      : json::object{};
        if (name == "meta") {
            const json::value* meta = params.if_contains("_meta");
            send(rpc::Response::success(r.id, text_result(meta ? json::serialize(*meta) : "{}")));
        } else if (name == "echo") {
            send(rpc::Response::success(r.id, text_result(args.contains("text") ? std::string(args.at("text").as_string()) : "")));
        } else if (name == "add") {
            const double sum = args.at("a").to_number<double>() + args.at("b").to_number<double>();
            json::object result = text_result(json::serialize(json::value(sum)));
            result["structuredContent"] = json::object{{"sum", sum}};
            send(rpc::Response::success(r.id, std::move(result)));
        } else if (name == "slow") {
            slow[r.id] = static_cast<int>(args.contains("steps") ? args.at("steps").to_number<std::int64_t>() : 3);
            progress_token[r.id] = params.contains("_meta") ? params.at("_meta").as_object().at("progressToken") : json::value();
            total[r.id] = slow[r.id];
        } else if (name == "crash") {
            std::fprintf(stderr, "crashing as asked\n");
            std::fflush(stderr);
            std::_Exit(3);
        } else if (name == "detach") {
            pid_t child = ::fork();
            if (child == 0) {
                ::setsid();  // out of the server's process group, as a daemon leaves it
                ::execlp("sleep", "sleep", "3600", static_cast<char*>(nullptr));
                std::_Exit(127);
            }
            send(rpc::Response::success(r.id, text_result(std::to_string(child))));
        } else if (name == "spawn") {
            pid_t child = ::fork();
            if (child == 0) {
                ::execlp("sleep", "sleep", "3600", static_cast<char*>(nullptr));
                std::_Exit(127);
            }
            send(rpc::Response::success(r.id, text_result(std::to_string(child))));
        } else if (name == "sample") {
            asking = r.id;
            asked_id = rpc::Id(++next_id);
            send(rpc::Request(asked_id, "sampling/createMessage",
                              json::object{{"messages", json::array{json::object{
                                                            {"role", "user"},
                                                            {"content", {{"type", "text"}, {"text", "Say hi"}}}}}},
                                           {"systemPrompt", "Be brief."},
                                           {"maxTokens", 50}}));
        } else if (name == "roots") {
            asking = r.id;
            asked_id = rpc::Id(++next_id);
            send(rpc::Request(asked_id, "roots/list", json::object{}));
        } else if (name == "ask") {
            asking = r.id;
            asked_id = rpc::Id(++next_id);
            send(rpc::Request(asked_id, "elicitation/create",
                              json::object{{"message", "Your name?"},
                                           {"requestedSchema",
                                            {{"type", "object"},
                                             {"properties", {{"name", {{"type", "string"}, {"default", "Ann"}}}}}}}}));
        } else if (name == "grow") {
            grown = true;
            send(rpc::Response::success(r.id, text_result("grown")));
            send(rpc::Notification("notifications/tools/list_changed"));
        } else if (name == "big") {
            send(rpc::Response::success(r.id, text_result(std::string(static_cast<std::size_t>(args.at("bytes").to_number<std::int64_t>()), 'x'))));
        } else if (name == "extra" && grown) {
            send(rpc::Response::success(r.id, text_result("extra")));
        } else {
            json::object result = text_result("Unknown tool: " + name);
            result["isError"] = true;
            send(rpc::Response::success(r.id, std::move(result)));
        }
    }

    void on_response(const rpc::Response& r)
    {
        if (!asking || r.id != asked_id)
            return;
        std::string answer = r.ok() ? json::serialize(*r.result) : "error " + r.error->message;
        send(rpc::Response::success(*asking, text_result(answer)));
        asking.reset();
    }

    void on_notification(const rpc::Notification& n)
    {
        if (n.method != "notifications/cancelled" || !n.params)
            return;
        const json::value& id = n.params->at("requestId");
        rpc::Id which = id.is_string() ? rpc::Id(std::string(id.get_string())) : rpc::Id(id.to_number<std::int64_t>());
        if (slow.erase(which)) {
            std::fprintf(stderr, "cancelled %s\n", which.to_string().c_str());
            std::fflush(stderr);
        }
    }

    // One step of every slow call.
    void tick()
    {
        for (auto it = slow.begin(); it != slow.end();) {
            const rpc::Id id = it->first;
            const int done = total[id] - it->second + 1;
            if (!progress_token[id].is_null())
                send(rpc::Notification("notifications/progress",
                                       json::object{{"progressToken", progress_token[id]},
                                                    {"progress", done},
                                                    {"total", total[id]},
                                                    {"message", "step " + std::to_string(done)}}));
            if (--it->second == 0) {
                send(rpc::Response::success(id, text_result("done")));
                it = slow.erase(it);
            } else {
                ++it;
            }
        }
    }

    std::map<rpc::Id, json::value> progress_token;
    std::map<rpc::Id, int> total;
};

}  // namespace

int main(int argc, char** argv)
{
    Server server;
    bool stay_after_eof = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--version" && i + 1 < argc)
            server.version = argv[++i];
        else if (a == "--ignore-term")
            ::signal(SIGTERM, SIG_IGN);
        else if (a == "--stay-after-eof")
            stay_after_eof = true;
        else if (a == "--stderr" && i + 1 < argc)
            std::fprintf(stderr, "%s\n", argv[++i]);
        else if (a == "--chatter" && i + 1 < argc) {
            server.chatter = std::atoi(argv[++i]);
            for (int line = 0; line < server.chatter; ++line)
                std::fprintf(stderr, "stderr line %d\n", line);
        }
    }
    std::fflush(stderr);
    std::string buffer;
    bool eof = false;
    for (;;) {
        pollfd in{0, POLLIN, 0};
        const int ready = eof ? 0 : ::poll(&in, 1, server.slow.empty() ? 1000 : 20);
        if (eof && !stay_after_eof)
            return 0;
        if (eof) {
            ::sleep(1);
            continue;
        }
        if (ready > 0) {
            char chunk[65536];
            const ssize_t n = ::read(0, chunk, sizeof chunk);
            if (n <= 0) {
                eof = true;
                continue;
            }
            buffer.append(chunk, static_cast<std::size_t>(n));
            for (auto nl = buffer.find('\n'); nl != std::string::npos; nl = buffer.find('\n')) {
                const std::string line = buffer.substr(0, nl);
                buffer.erase(0, nl + 1);
                for (const rpc::Item& item : rpc::decode(line).items) {
                    if (const auto* r = std::get_if<rpc::Request>(&item))
                        server.on_request(*r);
                    else if (const auto* res = std::get_if<rpc::Response>(&item))
                        server.on_response(*res);
                    else if (const auto* note = std::get_if<rpc::Notification>(&item))
                        server.on_notification(*note);
                }
            }
        } else {
            server.tick();
        }
    }
}
