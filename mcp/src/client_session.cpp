#include <adk/mcp/client_session.hpp>

#include <boost/json/serialize.hpp>

#include <algorithm>
#include <array>

namespace adk::mcp {

namespace {

constexpr std::array<std::string_view, 3> versions{"2025-11-25", "2025-06-18", "2025-03-26"};

std::string string_or(const json::object& o, std::string_view key, std::string fallback = {})
{
    const json::value* v = o.if_contains(key);
    return v && v->is_string() ? std::string(v->get_string()) : std::move(fallback);
}

std::optional<double> number_of(const json::value* v)
{
    if (!v || !v->is_number())
        return std::nullopt;
    return v->to_number<double>();
}

// A progress token as sent: the request's id (a string or an integer).
std::optional<jsonrpc::Id> token_of(const json::value* v)
{
    if (!v)
        return std::nullopt;
    if (v->is_string())
        return jsonrpc::Id(std::string(v->get_string()));
    if (v->is_int64())
        return jsonrpc::Id(v->get_int64());
    return std::nullopt;
}

}  // namespace

std::span<const std::string_view> protocol_versions()
{
    return versions;
}

bool ServerInfo::tools_list_changed() const
{
    const json::value* tools = capabilities.if_contains("tools");
    const json::value* changed = tools && tools->is_object() ? tools->get_object().if_contains("listChanged") : nullptr;
    return changed && changed->is_bool() && changed->get_bool();
}

ClientSession::ClientSession(ClientSessionOptions options) : options_(std::move(options)) {}

jsonrpc::Request ClientSession::initialize()
{
    json::object capabilities;
    if (options_.capabilities.elicitation)
        capabilities["elicitation"] = options_.protocol_version >= "2025-11-25" ? json::object{{"form", json::object{}}}
                                                                                 : json::object{};
    if (options_.capabilities.sampling)
        capabilities["sampling"] = json::object{};
    if (options_.capabilities.roots)
        capabilities["roots"] = json::object{{"listChanged", false}};
    json::object params{{"protocolVersion", options_.protocol_version},
                        {"capabilities", std::move(capabilities)},
                        {"clientInfo", {{"name", options_.client_name}, {"version", options_.client_version}}}};
    initialize_id_ = jsonrpc::Id(++next_id_);
    pending_.emplace(*initialize_id_, "initialize");
    phase_ = Phase::initializing;
    server_ = ServerInfo();
    return jsonrpc::Request(*initialize_id_, "initialize", json::value(std::move(params)));
}

jsonrpc::Request ClientSession::request(std::string method, json::object params, bool progress)
{
    jsonrpc::Id id(++next_id_);
    if (progress) {
        json::value& meta = params["_meta"];
        if (!meta.is_object())
            meta = json::object{};
        meta.get_object()["progressToken"] = id.to_json();
    }
    pending_.emplace(id, method);
    return jsonrpc::Request(std::move(id), std::move(method), json::value(std::move(params)));
}

std::optional<jsonrpc::Notification> ClientSession::abandon(const jsonrpc::Id& id, std::string reason)
{
    if (initialize_id_ && id == *initialize_id_)
        return std::nullopt;
    if (pending_.erase(id) == 0)
        return std::nullopt;
    json::object params{{"requestId", id.to_json()}};
    if (!reason.empty())
        params["reason"] = std::move(reason);
    return jsonrpc::Notification("notifications/cancelled", json::value(std::move(params)));
}

SessionEvent ClientSession::receive(const jsonrpc::Item& item, std::vector<jsonrpc::Message>& out)
{
    if (const auto* response = std::get_if<jsonrpc::Response>(&item))
        return receive_response(*response, out);
    if (const auto* request = std::get_if<jsonrpc::Request>(&item))
        return receive_request(*request, out);
    if (const auto* note = std::get_if<jsonrpc::Notification>(&item))
        return receive_notification(*note);
    const auto& invalid = std::get<jsonrpc::Invalid>(item);
    // A malformed request that named its id gets the error; anything else cannot be answered.
    if (!invalid.id.is_null())
        out.emplace_back(jsonrpc::Response::failure(invalid.id, invalid.error));
    return event::Ignored{"the server sent what is not JSON-RPC: " + invalid.error.message};
}

SessionEvent ClientSession::receive_response(const jsonrpc::Response& response, std::vector<jsonrpc::Message>& out)
{
    auto at = pending_.find(response.id);
    if (at == pending_.end())
        return event::Ignored{"an answer to " + response.id.to_string() + ", which is not waiting (abandoned, or never sent)"};
    std::string method = std::move(at->second);
    pending_.erase(at);
    if (initialize_id_ && response.id == *initialize_id_) {
        initialize_id_.reset();
        return initialized(response, out);
    }
    return event::Answer{response, std::move(method)};
}

SessionEvent ClientSession::initialized(const jsonrpc::Response& response, std::vector<jsonrpc::Message>& out)
{
    phase_ = Phase::failed;
    if (!response.ok())
        return event::Failed{"the server refused to initialize: " + response.error->message + " (JSON-RPC error " +
                             std::to_string(response.error->code) + ")"};
    const json::object* result = response.result->if_object();
    if (!result)
        return event::Failed{"the server's answer to initialize is not an object"};
    const json::value* version = result->if_contains("protocolVersion");
    if (!version || !version->is_string())
        return event::Failed{"the server's answer to initialize has no protocolVersion"};
    const std::string_view v = version->get_string();
    if (std::find(versions.begin(), versions.end(), v) == versions.end()) {
        std::string known;
        for (auto k : versions)
            known += (known.empty() ? "" : ", ") + std::string(k);
        return event::Failed{"the server speaks MCP " + json::serialize(*version) + ", which adk-cpp does not (it speaks " +
                             known + "): use a server of one of those versions"};
    }
    server_.protocol_version = std::string(v);
    if (const json::value* caps = result->if_contains("capabilities"); caps && caps->is_object())
        server_.capabilities = caps->get_object();
    if (const json::value* info = result->if_contains("serverInfo"); info && info->is_object()) {
        server_.name = string_or(info->get_object(), "name");
        server_.version = string_or(info->get_object(), "version");
    }
    server_.instructions = string_or(*result, "instructions");
    phase_ = Phase::ready;
    out.emplace_back(jsonrpc::Notification("notifications/initialized"));
    return event::Ready{};
}

SessionEvent ClientSession::receive_request(const jsonrpc::Request& request, std::vector<jsonrpc::Message>& out)
{
    if (request.method == "ping") {
        out.emplace_back(jsonrpc::Response::success(request.id, json::object{}));
        return event::Ignored{"ping answered"};
    }
    const ClientCapabilities& offered = options_.capabilities;
    const bool served = (request.method == "elicitation/create" && offered.elicitation) ||
                        (request.method == "sampling/createMessage" && offered.sampling) ||
                        (request.method == "roots/list" && offered.roots);
    if (!served) {
        out.emplace_back(jsonrpc::Response::failure(
            request.id, jsonrpc::RpcError(jsonrpc::code::method_not_found,
                                          "Method not found: this client does not serve " + request.method)));
        return event::Ignored{"the server asked for " + request.method + ", which this client does not serve"};
    }
    return event::Incoming{request};
}

SessionEvent ClientSession::receive_notification(const jsonrpc::Notification& note)
{
    static const json::object none;
    const json::object& params = note.params && note.params->is_object() ? note.params->get_object() : none;
    if (note.method == "notifications/progress") {
        std::optional<jsonrpc::Id> token = token_of(params.if_contains("progressToken"));
        std::optional<double> progress = number_of(params.if_contains("progress"));
        if (!token || !progress)
            return event::Ignored{"a progress notification without a token or a progress"};
        if (!pending_.contains(*token))
            return event::Ignored{"progress for " + token->to_string() + ", which is not waiting"};
        return event::Progress{*token, *progress, number_of(params.if_contains("total")),
                               string_or(params, "message")};
    }
    if (note.method == "notifications/message") {
        const json::value* data = params.if_contains("data");
        return event::Log{string_or(params, "level", "info"), string_or(params, "logger"),
                          data ? *data : json::value()};
    }
    if (note.method == "notifications/tools/list_changed")
        return event::ToolsChanged{};
    if (note.method == "notifications/cancelled") {
        std::optional<jsonrpc::Id> id = token_of(params.if_contains("requestId"));
        if (!id)
            return event::Ignored{"a cancellation without a requestId"};
        return event::ServerCancelled{*id, string_or(params, "reason")};
    }
    return event::Ignored{"a notification this client does not use: " + note.method};
}

}  // namespace adk::mcp
