// adk::a2a's data model in A2A 1.0's JSON: what the specification's examples read as, what is written back,
// what is refused (and why), and that unknown members survive.
#include <adk/a2a/types.hpp>
#include <adk/a2a/v03.hpp>
#include <adk/core/error.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <catch2/catch.hpp>

namespace a2a = adk::a2a;
namespace json = boost::json;

namespace {

template <class T>
T read(std::string_view text)
{
    return json::value_to<T>(json::parse(text));
}

template <class T>
void reads_back(const T& v)
{
    const json::value written = json::value_from(v);
    INFO(json::serialize(written));
    CHECK(json::value_to<T>(json::parse(json::serialize(written))) == v);
}

template <class T>
std::string refusal(std::string_view text)
{
    try {
        (void)read<T>(text);
    } catch (const adk::Error& e) {
        CHECK(e.code() == adk::errc::invalid_argument);
        return e.message();
    }
    FAIL("accepted: " << text);
    return {};
}

}  // namespace

TEST_CASE("A2A: a message of every kind of part reads as the specification writes it, and back", "[a2a]")
{
    // specification.md 6.7 and 6.8: a file as bytes, a URL, structured data.
    const auto m = read<a2a::Message>(R"({
        "messageId": "msg-1", "contextId": "ctx-1", "role": "ROLE_USER",
        "parts": [
          {"text": "Analyze this image"},
          {"raw": "iVBORw0KGgo=", "filename": "input.png", "mediaType": "image/png"},
          {"url": "https://example.com/report.pdf", "mediaType": "application/pdf"},
          {"data": {"rows": [1, 2.5, "x"]}, "metadata": {"schema": "table"}}
        ],
        "metadata": {"k": "v"}, "extensions": ["https://ext"], "referenceTaskIds": ["t-0"]
    })");
    CHECK(m.message_id == "msg-1");
    CHECK(m.context_id == "ctx-1");
    CHECK(m.role == a2a::Role::user);
    REQUIRE(m.parts.size() == 4);
    CHECK(*m.parts[0].text() == "Analyze this image");
    CHECK(std::get<a2a::Part::Raw>(m.parts[1].content).bytes == std::string("\x89PNG\r\n\x1a\n", 8));
    CHECK(m.parts[1].filename == "input.png");
    CHECK(std::get<a2a::Part::Url>(m.parts[2].content).url == "https://example.com/report.pdf");
    CHECK(std::get<a2a::Part::Data>(m.parts[3].content).value.at("rows").as_array().size() == 3);
    CHECK(m.parts[3].metadata.at("schema") == "table");
    CHECK(m.text() == "Analyze this image");
    CHECK(m.reference_task_ids == std::vector<std::string>{"t-0"});
    reads_back(m);
    const json::value written = json::value_from(m);
    CHECK(written.at("role") == "ROLE_USER");
    CHECK(written.at("parts").at(1).at("raw") == "iVBORw0KGgo=");
    CHECK(!written.as_object().contains("taskId"));  // empty: omitted, as ProtoJSON omits defaults
}

TEST_CASE("A2A: tasks, status and artifact updates, and the stream's oneof", "[a2a]")
{
    const auto task = read<a2a::Task>(R"({
        "id": "task-1", "contextId": "ctx-1",
        "status": {"state": "TASK_STATE_INPUT_REQUIRED", "timestamp": "2025-10-28T10:30:00.000Z",
                   "message": {"messageId": "m-2", "role": "ROLE_AGENT", "parts": [{"text": "Which city?"}]}},
        "artifacts": [{"artifactId": "a-1", "name": "plan", "parts": [{"text": "..."}]}],
        "history": [{"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "Book a flight"}]}]
    })");
    CHECK(task.status.state == a2a::TaskState::input_required);
    CHECK(a2a::is_interrupted(task.status.state));
    CHECK(!a2a::is_terminal(task.status.state));
    REQUIRE(task.status.message);
    CHECK(task.status.message->role == a2a::Role::agent);
    CHECK(task.artifacts.at(0).name == "plan");
    CHECK(task.history.at(0).text() == "Book a flight");
    reads_back(task);

    a2a::TaskArtifactUpdateEvent update;
    update.task_id = "task-1";
    update.context_id = "ctx-1";
    update.artifact.artifact_id = "a-1";
    update.artifact.parts.push_back(a2a::Part::text_part("more"));
    update.append = true;
    update.last_chunk = true;
    reads_back(update);

    a2a::TaskStatusUpdateEvent status;
    status.task_id = "task-1";
    status.context_id = "ctx-1";
    status.status.state = a2a::TaskState::completed;
    status.status.timestamp = a2a::format_timestamp(1764325800.25);
    CHECK(status.status.timestamp == "2025-11-28T10:30:00.250Z");
    reads_back(status);

    for (const a2a::StreamResponse& r : {a2a::StreamResponse(task), a2a::StreamResponse(update),
                                         a2a::StreamResponse(status), a2a::StreamResponse(*task.status.message)}) {
        const json::value v = a2a::to_json(r);
        CHECK(v.as_object().size() == 1);
        CHECK(a2a::stream_response_from_json(json::parse(json::serialize(v))) == r);
    }
    CHECK(a2a::to_json(a2a::StreamResponse(status)).as_object().contains("statusUpdate"));
    CHECK(a2a::to_json(a2a::StreamResponse(update)).as_object().contains("artifactUpdate"));
}

TEST_CASE("A2A: snake_case names are read as ProtoJSON reads them, unknown members kept and written back", "[a2a]")
{
    const auto m = read<a2a::Message>(
        R"({"message_id": "m-1", "role": "ROLE_AGENT", "parts": [{"text": "hi", "x-part": 1}], "x-new": {"a": [1]}})");
    CHECK(m.message_id == "m-1");
    const json::value written = json::value_from(m);
    CHECK(written.at("messageId") == "m-1");
    CHECK(written.at("x-new").at("a").at(0) == 1);
    CHECK(written.at("parts").at(0).at("x-part") == 1);
    reads_back(m);
}

TEST_CASE("A2A: what is not the protocol is refused with the member and what it must be", "[a2a]")
{
    CHECK_THAT(refusal<a2a::Message>(R"({"role": "ROLE_USER", "parts": []})"), Catch::Contains("messageId"));
    CHECK_THAT(refusal<a2a::Message>(R"({"messageId": "m", "role": "user", "parts": []})"),
               Catch::Contains("ROLE_USER"));  // 0.3's spelling is not 1.0's
    CHECK_THAT(refusal<a2a::Message>(R"({"messageId": "m", "role": "ROLE_USER"})"), Catch::Contains("parts"));
    CHECK_THAT(refusal<a2a::Message>(R"({"messageId": "a b", "role": "ROLE_USER", "parts": []})"),
               Catch::Contains("printable"));
    CHECK_THAT(refusal<a2a::Message>(R"({"messageId": ")" + std::string(300, 'x') +
                                     R"(", "role": "ROLE_USER", "parts": []})"),
               Catch::Contains("256"));
    CHECK_THAT(refusal<a2a::Part>(R"({"text": "a", "url": "b"})"), Catch::Contains("exactly one"));
    CHECK_THAT(refusal<a2a::Part>(R"({"mediaType": "text/plain"})"), Catch::Contains("exactly one"));
    CHECK_THAT(refusal<a2a::Part>(R"({"raw": "not base64!"})"), Catch::Contains("Part.raw"));
    CHECK_THAT(refusal<a2a::Part>(R"({"text": 5})"), Catch::Contains("text"));
    CHECK_THAT(refusal<a2a::TaskStatus>(R"({"state": "working"})"), Catch::Contains("TASK_STATE_WORKING"));
    CHECK_THAT(refusal<a2a::TaskStatus>(R"({"state": "TASK_STATE_WORKING", "timestamp": "yesterday"})"),
               Catch::Contains("ISO 8601"));
    CHECK_THAT(refusal<a2a::Task>(R"({"id": "t"})"), Catch::Contains("status"));
    CHECK_THAT(refusal<a2a::SendMessageConfiguration>(R"({"historyLength": -1})"), Catch::Contains("historyLength"));
    CHECK_THAT(refusal<a2a::SendMessageRequest>(R"({"configuration": {}})"), Catch::Contains("message"));
    CHECK_THAT(refusal<a2a::Task>("[1]"), Catch::Contains("JSON object"));
    CHECK_THROWS_AS(a2a::stream_response_from_json(json::parse(R"({"task": {"id": "t", "status": {"state":
        "TASK_STATE_WORKING"}}, "message": {}})")), adk::Error);
}

TEST_CASE("A2A: an agent card as the specification's sample writes it reads and writes back", "[a2a]")
{
    const auto card = read<a2a::AgentCard>(R"({
      "name": "GeoSpatial Route Planner Agent", "description": "Route planning.",
      "supportedInterfaces": [
        {"url": "https://georoute-agent.example.com/a2a/v1", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": "https://georoute-agent.example.com/a2a/json", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}
      ],
      "provider": {"organization": "Example Geo Services Inc.", "url": "https://www.examplegeoservices.com"},
      "iconUrl": "https://georoute-agent.example.com/icon.png", "version": "1.2.0",
      "capabilities": {"streaming": true, "pushNotifications": true, "extendedAgentCard": true},
      "securitySchemes": {"google": {"openIdConnectSecurityScheme": {"openIdConnectUrl": "https://accounts.google.com/.well-known/openid-configuration"}}},
      "securityRequirements": [{"schemes": {"google": {"list": ["openid", "profile", "email"]}}}],
      "defaultInputModes": ["application/json", "text/plain"], "defaultOutputModes": ["application/json", "image/png"],
      "skills": [{"id": "route-optimizer-traffic", "name": "Traffic-Aware Route Optimizer", "description": "Routes.",
                  "tags": ["maps", "routing"], "examples": ["Plan a route"], "inputModes": ["text/plain"],
                  "outputModes": ["application/json"]}],
      "signatures": [{"protected": "eyJ", "signature": "QFd"}]
    })");
    CHECK(card.capabilities.streaming == true);
    CHECK(card.capabilities.extended_agent_card == true);
    REQUIRE(card.find_interface("HTTP+JSON", "1.0"));
    CHECK(card.find_interface("HTTP+JSON", "1.0")->url == "https://georoute-agent.example.com/a2a/json");
    CHECK(!card.find_interface("GRPC", "1.0"));
    CHECK(card.skills.at(0).tags.size() == 2);
    CHECK(card.security_schemes.contains("google"));
    CHECK(card.icon_url == "https://georoute-agent.example.com/icon.png");
    reads_back(card);
}

TEST_CASE("A2A: timestamps are ISO 8601 in UTC, ids printable and bounded", "[a2a]")
{
    CHECK(a2a::valid_timestamp("2025-10-28T10:30:00Z"));
    CHECK(a2a::valid_timestamp("2025-10-28T10:30:00.123456789Z"));
    CHECK(!a2a::valid_timestamp("2025-10-28T10:30:00.1234567890Z"));
    CHECK(!a2a::valid_timestamp("2025-10-28T10:30:00+01:00"));
    CHECK(!a2a::valid_timestamp("2025-10-28 10:30:00Z"));
    CHECK(!a2a::valid_timestamp("2025-10-28T10:30:00.Z"));
    CHECK(a2a::format_timestamp(0) == "1970-01-01T00:00:00.000Z");
    CHECK(a2a::valid_timestamp(a2a::format_timestamp(1e10)));
    CHECK(a2a::format_timestamp(-5) == "1970-01-01T00:00:00.000Z");  // out of range: the epoch, never garbage
    CHECK(a2a::valid_id("task-1"));
    CHECK(!a2a::valid_id(""));
    CHECK(!a2a::valid_id("a\nb"));
    CHECK(!a2a::valid_id(std::string(257, 'a')));
    CHECK(a2a::parse_task_state("TASK_STATE_AUTH_REQUIRED") == a2a::TaskState::auth_required);
    CHECK(a2a::to_string(a2a::TaskState::canceled) == "TASK_STATE_CANCELED");
    CHECK(!a2a::parse_role("agent"));
}

TEST_CASE("A2A: timestamps read as seconds since the epoch, impossible dates refused", "[a2a]")
{
    CHECK(a2a::parse_timestamp("1970-01-01T00:00:00Z") == 0.0);
    CHECK(a2a::parse_timestamp("2000-03-01T00:00:00Z") == 951868800.0);  // after a leap day
    CHECK(a2a::parse_timestamp("2026-11-28T10:30:00.250Z") == 1795861800.25);
    CHECK(a2a::parse_timestamp(a2a::format_timestamp(1795861800.5)) == 1795861800.5);
    CHECK(!a2a::parse_timestamp("2026-02-30T00:00:00Z"));
    CHECK(!a2a::parse_timestamp("2026-11-28T24:00:00Z"));
    CHECK(!a2a::parse_timestamp("yesterday"));
}

TEST_CASE("A2A: ListTasks' request and answer read and write back, bad filters refused", "[a2a]")
{
    const auto request = read<a2a::ListTasksRequest>(
        R"({"contextId": "c-1", "status": "TASK_STATE_WORKING", "pageSize": 20, "pageToken": "17:t-1",
            "historyLength": 0, "statusTimestampAfter": "2026-11-28T10:30:00Z", "includeArtifacts": true,
            "future": 1})");
    CHECK(request.context_id == "c-1");
    CHECK(request.status == a2a::TaskState::working);
    CHECK(request.page_size == 20);
    CHECK(request.history_length == 0);
    CHECK(request.include_artifacts == true);
    CHECK(request.extra.contains("future"));
    reads_back(request);
    // An unset status as @a2a-js/sdk 1.3.0 writes it (ts-proto's UNRECOGNIZED): no filter.
    CHECK(read<a2a::ListTasksRequest>(R"({"status": "UNRECOGNIZED"})").status == a2a::TaskState::unspecified);
    reads_back(read<a2a::ListTasksRequest>("{}"));
    CHECK_THAT(refusal<a2a::ListTasksRequest>(R"({"pageSize": 0})"), Catch::Contains("pageSize"));
    CHECK_THAT(refusal<a2a::ListTasksRequest>(R"({"pageSize": 101})"), Catch::Contains("pageSize"));
    CHECK_THAT(refusal<a2a::ListTasksRequest>(R"({"status": "DONE"})"), Catch::Contains("status"));
    CHECK_THAT(refusal<a2a::ListTasksRequest>(R"({"statusTimestampAfter": "now"})"),
               Catch::Contains("statusTimestampAfter"));

    const auto response = read<a2a::ListTasksResponse>(
        R"({"tasks": [{"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_COMPLETED"}}],
            "nextPageToken": "", "pageSize": 50, "totalSize": 1})");
    REQUIRE(response.tasks.size() == 1);
    CHECK(response.total_size == 1);
    reads_back(response);
    // The last page says so with an empty token, written all the same.
    CHECK(json::value_from(response).at("nextPageToken") == "");
    CHECK_THAT(refusal<a2a::ListTasksResponse>(R"({"tasks": [], "totalSize": -1})"), Catch::Contains("totalSize"));
}

TEST_CASE("A2A 0.3: messages, tasks and updates in 0.3's JSON, read and written", "[a2a]")
{
    const auto m = a2a::v03::message_from_json(json::parse(R"({
        "kind": "message", "messageId": "m-1", "role": "user", "contextId": "c-1",
        "parts": [{"kind": "text", "text": "Hi"},
                  {"kind": "data", "data": {"id": "call-1", "name": "f", "response": {}}, "metadata": {"adk_type": "function_response"}},
                  {"kind": "file", "file": {"bytes": "aGVsbG8=", "mimeType": "text/plain", "name": "a.txt"}},
                  {"kind": "file", "file": {"uri": "https://example.com/b.png", "mimeType": "image/png"}}]})"));
    CHECK(m.role == a2a::Role::user);
    CHECK(m.context_id == "c-1");
    REQUIRE(m.parts.size() == 4);
    CHECK(*m.parts[0].text() == "Hi");
    CHECK(m.parts[1].metadata.at("adk_type") == "function_response");
    CHECK(std::get<a2a::Part::Raw>(m.parts[2].content).bytes == "hello");
    CHECK(m.parts[2].filename == "a.txt");
    CHECK(std::get<a2a::Part::Url>(m.parts[3].content).url == "https://example.com/b.png");
    CHECK(a2a::v03::message_from_json(a2a::v03::to_json(m)) == m);  // and back

    a2a::Task t;
    t.id = "t-1";
    t.context_id = "c-1";
    t.status.state = a2a::TaskState::input_required;
    t.history.push_back(m);
    const json::value task_json = a2a::v03::to_json(t);
    CHECK(task_json.at("kind") == "task");
    CHECK(task_json.at("status").at("state") == "input-required");
    CHECK(task_json.at("history").at(0).at("role") == "user");

    a2a::TaskStatusUpdateEvent done;
    done.task_id = "t-1";
    done.status.state = a2a::TaskState::completed;
    const json::value done_json = a2a::v03::to_json(a2a::StreamResponse(done));
    CHECK(done_json.at("kind") == "status-update");
    CHECK(done_json.at("final") == true);
    a2a::TaskArtifactUpdateEvent chunk;
    chunk.artifact.artifact_id = "a";
    chunk.artifact.parts.push_back(a2a::Part::data_part(json::array{1, 2}));
    chunk.append = true;
    const json::value chunk_json = a2a::v03::to_json(a2a::StreamResponse(chunk));
    CHECK(chunk_json.at("kind") == "artifact-update");
    CHECK(chunk_json.at("append") == true);
    CHECK(chunk_json.at("artifact").at("parts").at(0).at("data").at("value") == json::array{1, 2});  // an object

    const auto send = a2a::v03::send_params_from_json(json::parse(R"({
        "message": {"kind": "message", "messageId": "m-2", "role": "user", "parts": [{"kind": "text", "text": "Go"}]},
        "configuration": {"blocking": false, "historyLength": 2,
                          "pushNotificationConfig": {"url": "https://hooks.example.com/a", "token": "t"}}})"));
    REQUIRE(send.configuration);
    CHECK(send.configuration->return_immediately);
    CHECK(send.configuration->history_length == 2);
    CHECK(send.configuration->push_notification_config->url == "https://hooks.example.com/a");

    CHECK_THROWS_WITH(a2a::v03::message_from_json(json::parse(R"({"messageId": "m", "role": "ROLE_USER", "parts": []})")),
                      Catch::Contains("role"));
    CHECK_THROWS_WITH(a2a::v03::part_from_json(json::parse(R"({"kind": "video"})")), Catch::Contains("kind"));
    CHECK_THROWS_WITH(a2a::v03::part_from_json(json::parse(R"({"kind": "file", "file": {}})")), Catch::Contains("bytes"));
    // 0.3's results read as 1.0's stream responses, and written back the same.
    for (const char* text : {
             R"({"kind": "task", "id": "t-1", "contextId": "c-1", "status": {"state": "input-required",
                 "message": {"kind": "message", "messageId": "m-3", "role": "agent", "parts": [{"kind": "text", "text": "Which date?"}]}},
                 "artifacts": [{"artifactId": "a-1", "parts": [{"kind": "text", "text": "x"}]}]})",
             R"({"kind": "status-update", "taskId": "t-1", "contextId": "c-1", "status": {"state": "completed"}, "final": true})",
             R"({"kind": "artifact-update", "taskId": "t-1", "contextId": "c-1", "append": true, "lastChunk": true,
                 "artifact": {"artifactId": "a-1", "parts": [{"kind": "text", "text": "y"}]}})"}) {
        INFO(text);
        const a2a::StreamResponse r = a2a::v03::stream_response_from_json(json::parse(text));
        CHECK(a2a::v03::to_json(r) == a2a::v03::to_json(a2a::v03::stream_response_from_json(a2a::v03::to_json(r))));
    }
    const auto asked = std::get<a2a::Task>(a2a::v03::stream_response_from_json(json::parse(
        R"({"kind": "task", "id": "t-1", "contextId": "c-1", "status": {"state": "input-required"}})")));
    CHECK(asked.status.state == a2a::TaskState::input_required);
    CHECK_THROWS_WITH(a2a::v03::stream_response_from_json(json::parse(R"({"kind": "status-update", "taskId": "t"})")),
                      Catch::Contains("contextId"));
    CHECK_THROWS_WITH(a2a::v03::stream_response_from_json(json::parse(R"({"kind": "other"})")), Catch::Contains("kind"));
    CHECK(a2a::v03::parse_task_state("auth-required") == a2a::TaskState::auth_required);
    CHECK(!a2a::v03::parse_task_state("TASK_STATE_WORKING"));
}

TEST_CASE("A2A 0.3: a webhook in 0.3's JSON reads and writes back, one without a URL or scheme refused", "[a2a]")
{
    const auto c = a2a::v03::push_config_from_json(json::parse(
        R"({"id": "c1", "url": "https://hooks/a", "token": "t",
            "authentication": {"schemes": ["Bearer", "Basic"], "credentials": "s"}})"));
    CHECK(c.id == "c1");
    CHECK(c.url == "https://hooks/a");
    CHECK(c.token == "t");
    REQUIRE(c.authentication);
    CHECK(c.authentication->scheme == "Bearer");  // the first
    CHECK(c.authentication->credentials == "s");
    a2a::PushNotificationConfig with_task = c;
    with_task.task_id = "task-1";
    const json::value written = a2a::v03::to_json(with_task);
    CHECK(written.at("taskId") == "task-1");
    CHECK(a2a::v03::push_config_from_json(written.at("pushNotificationConfig")).authentication == c.authentication);
    CHECK_THROWS_WITH(a2a::v03::push_config_from_json(json::parse(R"({"token": "t"})")), Catch::Contains("url"));
    CHECK_THROWS_WITH(a2a::v03::push_config_from_json(
                          json::parse(R"({"url": "https://h", "authentication": {"schemes": []}})")),
                      Catch::Contains("schemes"));
}
