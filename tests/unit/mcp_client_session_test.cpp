// adk::mcp's client session without I/O: the handshake and its version negotiation, requests and their
// answers, progress, cancellation, and what the server may ask of the client.
#include <adk/mcp/client_session.hpp>

#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

namespace json = boost::json;
namespace rpc = adk::mcp::jsonrpc;
namespace event = adk::mcp::event;
using adk::mcp::ClientSession;

namespace {

rpc::Item read(std::string_view text)
{
    rpc::Decoded d = rpc::decode(text);
    REQUIRE(d.items.size() == 1);
    return d.items[0];
}

std::string answer_to(const rpc::Id& id, std::string_view result)
{
    return R"({"jsonrpc":"2.0","id":)" + id.to_string() + R"(,"result":)" + std::string(result) + "}";
}

// A session through its handshake with a server of `version`.
ClientSession ready(std::string_view version = "2025-11-25", adk::mcp::ClientSessionOptions options = {})
{
    ClientSession s(std::move(options));
    rpc::Request init = s.initialize();
    std::vector<rpc::Message> out;
    auto e = s.receive(read(answer_to(init.id, R"({"protocolVersion":")" + std::string(version) +
                                                   R"(","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"everything","version":"1.0"}})")),
                       out);
    REQUIRE(std::holds_alternative<event::Ready>(e));
    return s;
}

}  // namespace

TEST_CASE("MCP session: the handshake asks for 2025-11-25, offers what the options say, and ends with initialized",
          "[mcp]")
{
    adk::mcp::ClientSessionOptions options;
    options.capabilities.elicitation = true;
    options.capabilities.roots = true;
    ClientSession s(options);
    CHECK(s.phase() == ClientSession::Phase::idle);
    rpc::Request init = s.initialize();
    CHECK(s.phase() == ClientSession::Phase::initializing);
    CHECK(init.method == "initialize");
    const json::object& p = init.params->as_object();
    CHECK(p.at("protocolVersion") == "2025-11-25");
    CHECK(p.at("clientInfo").at("name") == "adk-cpp");
    CHECK(p.at("capabilities") == json::parse(R"({"elicitation":{"form":{}},"roots":{"listChanged":false}})"));

    std::vector<rpc::Message> out;
    auto e = s.receive(read(answer_to(init.id, R"({"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true},"logging":{}},
        "serverInfo":{"name":"everything","version":"2026.8.31"},"instructions":"Use echo."})")),
                       out);
    CHECK(std::holds_alternative<event::Ready>(e));
    CHECK(s.phase() == ClientSession::Phase::ready);
    REQUIRE(out.size() == 1);
    CHECK(std::get<rpc::Notification>(out[0]).method == "notifications/initialized");
    CHECK(s.server().protocol_version == "2025-11-25");
    CHECK(s.server().name == "everything");
    CHECK(s.server().instructions == "Use echo.");
    CHECK(s.server().tools_list_changed());
    CHECK(s.server().has("logging"));
    CHECK(s.pending() == 0);
    CHECK_FALSE(s.abandon(init.id, "too late"));  // initialize is never cancelled, nor answered twice
}

TEST_CASE("MCP session: servers of 2025-06-18 and 2025-03-26 are spoken to, other versions fail the handshake",
          "[mcp]")
{
    CHECK(ready("2025-06-18").server().protocol_version == "2025-06-18");
    CHECK(ready("2025-03-26").server().protocol_version == "2025-03-26");

    for (const char* version : {"2024-11-05", "2099-01-01"}) {
        ClientSession s;
        rpc::Request init = s.initialize();
        std::vector<rpc::Message> out;
        auto e = s.receive(read(answer_to(init.id, R"({"protocolVersion":")" + std::string(version) +
                                                       R"(","capabilities":{}})")),
                           out);
        REQUIRE(std::holds_alternative<event::Failed>(e));
        CHECK_THAT(std::get<event::Failed>(e).why, Catch::Contains(version) && Catch::Contains("2025-06-18"));
        CHECK(s.phase() == ClientSession::Phase::failed);
        CHECK(out.empty());  // no initialized
    }
    ClientSession refused;
    rpc::Request init = refused.initialize();
    std::vector<rpc::Message> out;
    auto e = refused.receive(
        read(R"({"jsonrpc":"2.0","id":)" + init.id.to_string() + R"(,"error":{"code":-32602,"message":"Unsupported protocol version"}})"),
        out);
    CHECK_THAT(std::get<event::Failed>(e).why, Catch::Contains("Unsupported protocol version"));
    ClientSession no_version;
    init = no_version.initialize();
    e = no_version.receive(read(answer_to(init.id, R"({"capabilities":{}})")), out);
    CHECK_THAT(std::get<event::Failed>(e).why, Catch::Contains("no protocolVersion"));

    // An older client version is asked for as given, and elicitation is offered in that version's form.
    adk::mcp::ClientSessionOptions old;
    old.protocol_version = "2025-06-18";
    old.capabilities.elicitation = true;
    ClientSession s(old);
    rpc::Request asked = s.initialize();
    CHECK(asked.params->at("protocolVersion") == "2025-06-18");
    CHECK(asked.params->at("capabilities").at("elicitation") == json::object{});
}

TEST_CASE("MCP session: requests get fresh ids, answers find them, abandoned ones are cancelled and their answers "
          "ignored",
          "[mcp]")
{
    ClientSession s = ready();
    rpc::Request list = s.request("tools/list", {{"cursor", "next"}});
    rpc::Request call = s.request("tools/call", {{"name", "echo"}}, true);
    CHECK(list.id != call.id);
    CHECK(call.params->at("_meta").at("progressToken") == call.id.to_json());
    CHECK(s.pending() == 2);

    std::vector<rpc::Message> out;
    auto progress = s.receive(read(R"({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":)" +
                                   call.id.to_string() + R"(,"progress":2,"total":5,"message":"step 2"}})"),
                              out);
    REQUIRE(std::holds_alternative<event::Progress>(progress));
    const auto& p = std::get<event::Progress>(progress);
    CHECK(p.request == call.id);
    CHECK(p.progress == 2);
    CHECK(p.total == 5);
    CHECK(p.message == "step 2");

    auto answer = s.receive(read(answer_to(list.id, R"({"tools":[]})")), out);
    REQUIRE(std::holds_alternative<event::Answer>(answer));
    CHECK(std::get<event::Answer>(answer).method == "tools/list");
    CHECK(std::get<event::Answer>(answer).response.ok());

    auto cancelled = s.abandon(call.id, "the invocation was cancelled");
    REQUIRE(cancelled);
    CHECK(cancelled->method == "notifications/cancelled");
    CHECK(cancelled->params->at("requestId") == call.id.to_json());
    CHECK(cancelled->params->at("reason") == "the invocation was cancelled");
    CHECK_FALSE(s.abandon(call.id, "twice"));
    CHECK(s.pending() == 0);
    auto late = s.receive(read(answer_to(call.id, R"({"content":[]})")), out);
    CHECK(std::holds_alternative<event::Ignored>(late));
    auto late_progress = s.receive(read(R"({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":)" +
                                        call.id.to_string() + R"(,"progress":3}})"),
                                   out);
    CHECK(std::holds_alternative<event::Ignored>(late_progress));
    CHECK(out.empty());

    // An error answer is an answer: code, message and data for the caller.
    rpc::Request failing = s.request("tools/call", {{"name", "nope"}});
    auto error = s.receive(read(R"({"jsonrpc":"2.0","id":)" + failing.id.to_string() +
                                R"(,"error":{"code":-32602,"message":"Unknown tool: nope"}})"),
                           out);
    CHECK(std::get<event::Answer>(error).response.error->code == rpc::code::invalid_params);
}

TEST_CASE("MCP session: what the server asks of the client: ping, offered capabilities, and what is not served",
          "[mcp]")
{
    adk::mcp::ClientSessionOptions options;
    options.capabilities.elicitation = true;
    ClientSession s = ready("2025-11-25", options);
    std::vector<rpc::Message> out;

    auto ping = s.receive(read(R"({"jsonrpc":"2.0","id":"p1","method":"ping"})"), out);
    CHECK(std::holds_alternative<event::Ignored>(ping));
    REQUIRE(out.size() == 1);
    CHECK(std::get<rpc::Response>(out[0]) == rpc::Response::success("p1", json::object{}));
    out.clear();

    auto elicit = s.receive(read(R"({"jsonrpc":"2.0","id":4,"method":"elicitation/create","params":{"message":"Name?"}})"), out);
    REQUIRE(std::holds_alternative<event::Incoming>(elicit));
    CHECK(std::get<event::Incoming>(elicit).request.id == rpc::Id(4));
    CHECK(out.empty());  // the handler answers

    auto sampling = s.receive(read(R"({"jsonrpc":"2.0","id":5,"method":"sampling/createMessage","params":{}})"), out);
    CHECK(std::holds_alternative<event::Ignored>(sampling));
    REQUIRE(out.size() == 1);
    CHECK(std::get<rpc::Response>(out[0]).error->code == rpc::code::method_not_found);
    out.clear();

    auto broken = s.receive(read(R"({"jsonrpc":"2.0","id":6,"method":7})"), out);
    CHECK(std::holds_alternative<event::Ignored>(broken));
    REQUIRE(out.size() == 1);
    CHECK(std::get<rpc::Response>(out[0]).error->code == rpc::code::invalid_request);
    CHECK(std::get<rpc::Response>(out[0]).id == rpc::Id(6));
    out.clear();

    auto cancelled = s.receive(read(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4,"reason":"timeout"}})"), out);
    CHECK(std::get<event::ServerCancelled>(cancelled).request == rpc::Id(4));
    CHECK(std::get<event::ServerCancelled>(cancelled).reason == "timeout");

    auto log = s.receive(read(R"({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","logger":"fs","data":{"path":"/x"}}})"), out);
    CHECK(std::get<event::Log>(log).level == "warning");
    CHECK(std::get<event::Log>(log).logger == "fs");
    CHECK(std::get<event::Log>(log).data.at("path") == "/x");

    auto changed = s.receive(read(R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})"), out);
    CHECK(std::holds_alternative<event::ToolsChanged>(changed));
    auto unknown = s.receive(read(R"({"jsonrpc":"2.0","method":"notifications/resources/updated"})"), out);
    CHECK(std::holds_alternative<event::Ignored>(unknown));
    auto stray = s.receive(read(answer_to(99, "{}")), out);
    CHECK(std::holds_alternative<event::Ignored>(stray));
    CHECK(out.empty());
}
