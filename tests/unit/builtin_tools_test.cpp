// The tools that come with adk-cpp (adk/tools/builtin_tools.hpp), run by a real LlmAgent and Runner against
// a ScriptedModel, and RunConfig::save_input_blobs_as_artifacts.
#include <adk/adk.hpp>
#include <adk/core/log.hpp>

#include "support/agents.hpp"
#include "support/run.hpp"

#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

#include <algorithm>

namespace asio = boost::asio;
namespace json = boost::json;
using adk::LlmAgent;
using adk::LlmResponse;
using adk::test::run;
using adk::testing::ScriptedModel;
using Turns = std::vector<ScriptedModel::Turn>;

namespace {

bool declares(const adk::LlmRequest& request, std::string_view name)
{
    return std::any_of(request.tools.begin(), request.tools.end(), [&](const auto& d) { return d.name == name; });
}

const adk::FunctionResponse& response_in(const adk::Event& event)
{
    return event.content.value().parts.at(0).function_response.value();
}

// Remembers one past conversation of user1 in app "app": two events at known times.
void remember_lisbon(adk::test::Harness& h)
{
    run(h.ioc, [&]() -> asio::awaitable<void> {
        adk::Session past("past", "app", "user1");
        adk::Event asked("user", adk::Content::user("I am flying to Lisbon in May."));
        asked.timestamp = 1764063000.25;  // 2025-11-25 09:30:00.25 UTC
        adk::Event answered("planner", adk::Content::model("Lisbon is warm in May."));
        answered.timestamp = 1764063001;
        past.events = {asked, answered};
        co_await h.memory->add_session_to_memory(past);
    }());
}

// A memory service whose searches fail, as a database that went away would.
class FailingMemory final : public adk::MemoryService {
protected:
    asio::awaitable<void> do_add_session(adk::Session) override { co_return; }
    asio::awaitable<adk::SearchMemoryResponse> do_search(adk::SearchMemoryRequest) override
    {
        throw adk::Error(adk::errc::storage_failed, "the memory database is gone");
        co_return adk::SearchMemoryResponse();
    }
};

}  // namespace

TEST_CASE("load_memory: the model searches the user's memory and gets text, author and time", "[tools][memory]")
{
    adk::test::Harness h;
    h.memory = std::make_shared<adk::InMemoryMemoryService>();
    remember_lisbon(h);
    auto model = std::make_shared<ScriptedModel>(
        Turns{LlmResponse::function_call("load_memory", {{"query", "Lisbon trip"}}), LlmResponse::text("In May.")});
    auto agent = LlmAgent::builder("assistant").model(model).tool(adk::load_memory_tool()).build();
    auto events = h.send(agent, "When do I fly?");

    REQUIRE(events.size() == 3);
    const adk::FunctionResponse& found = response_in(events[1]);
    CHECK(found.name == "load_memory");
    CHECK(json::value(found.response) == json::parse(R"({"memories": [
        {"content": "I am flying to Lisbon in May.", "author": "user", "timestamp": "2025-11-25T09:30:00.250000Z"},
        {"content": "Lisbon is warm in May.", "author": "planner", "timestamp": "2025-11-25T09:30:01.000000Z"}]})"));
    auto first = model->requests().at(0);
    CHECK(declares(first, "load_memory"));
    CHECK_THAT(first.system_text(), Catch::Contains("You have memory."));
    CHECK_THAT(first.system_text(), Catch::Contains("call load_memory function with a query"));
    CHECK(events[2].text() == "In May.");

    // Arguments that do not fit: the model is told, and no search runs.
    auto bad = std::make_shared<ScriptedModel>(
        Turns{LlmResponse::function_call("load_memory", {{"q", "x"}}), LlmResponse::text("ok")});
    auto bad_agent = LlmAgent::builder("assistant").model(bad).tool(adk::load_memory_tool()).build();
    auto bad_events = h.send(bad_agent, "again", {}, "s2");
    REQUIRE(bad_events.size() == 3);
    CHECK_THAT(std::string(response_in(bad_events[1]).response.at("error").as_string()),
               Catch::Contains("needs a string argument 'query'"));
}

TEST_CASE("load_memory without a memory service: no memory instruction, and the model is told why", "[tools][memory]")
{
    adk::test::Harness h;
    auto model = std::make_shared<ScriptedModel>(
        Turns{LlmResponse::function_call("load_memory", {{"query", "Lisbon"}}), LlmResponse::text("Sorry.")});
    auto agent = LlmAgent::builder("assistant").model(model).tool(adk::load_memory_tool()).build();
    auto events = h.send(agent, "When do I fly?");
    REQUIRE(events.size() == 3);
    CHECK_THAT(std::string(response_in(events[1]).response.at("error").as_string()),
               Catch::Contains("no memory service"));
    CHECK_THAT(model->requests().at(0).system_text(), !Catch::Contains("You have memory"));
}

TEST_CASE("preload_memory: what memory holds about the user's message is in the instructions of each call",
          "[tools][memory]")
{
    adk::test::Harness h;
    auto memory = std::make_shared<adk::InMemoryMemoryService>();
    h.memory = memory;
    remember_lisbon(h);
    auto model = std::make_shared<ScriptedModel>(Turns{LlmResponse::function_call("noop", {}), LlmResponse::text("May.")});
    auto noop = adk::FunctionTool::create("noop", "Does nothing.", json::value(),
                                          [](adk::ToolContext&, json::object) -> asio::awaitable<json::value> {
                                              co_return json::object{};
                                          });
    auto agent = LlmAgent::builder("assistant").model(model).tool(adk::preload_memory_tool()).tool(noop).build();
    auto events = h.send(agent, "Remind me about lisbon");
    REQUIRE(events.size() == 3);
    const std::string expected = "The following content is from your previous conversations with the user.\n"
                                 "They may be useful for answering the user's current query.\n"
                                 "<PAST_CONVERSATIONS>\n"
                                 "Time: 2025-11-25T09:30:00.250000Z\n"
                                 "user: I am flying to Lisbon in May.\n"
                                 "Time: 2025-11-25T09:30:01.000000Z\n"
                                 "planner: Lisbon is warm in May.\n"
                                 "</PAST_CONVERSATIONS>\n";
    for (const auto& request : model->requests()) {  // both model calls of the invocation
        CHECK_THAT(request.system_text(), Catch::Contains(expected));
        CHECK(!declares(request, "preload_memory"));  // the model never sees it as a function
        CHECK(declares(request, "noop"));
    }

    // Nothing remembered about the message: nothing added.
    auto quiet = std::make_shared<ScriptedModel>(Turns{LlmResponse::text("Hello.")});
    auto quiet_agent = LlmAgent::builder("assistant").model(quiet).tool(adk::preload_memory_tool()).build();
    h.send(quiet_agent, "good morning", {}, "s2");
    CHECK_THAT(quiet->requests().at(0).system_text(), !Catch::Contains("PAST_CONVERSATIONS"));

    // A memory search that fails is logged, and the model is called without memories.
    h.memory = std::make_shared<FailingMemory>();
    std::vector<std::string> logged;
    adk::set_log_handler([&](adk::LogLevel, std::string_view m) { logged.emplace_back(m); });
    auto failing = std::make_shared<ScriptedModel>(Turns{LlmResponse::text("Hello.")});
    auto failing_agent = LlmAgent::builder("assistant").model(failing).tool(adk::preload_memory_tool()).build();
    auto answered = h.send(failing_agent, "Remind me about lisbon", {}, "s3");
    adk::set_log_handler(nullptr);
    REQUIRE(answered.size() == 1);
    CHECK(answered[0].text() == "Hello.");
    REQUIRE(logged.size() == 1);
    CHECK_THAT(logged[0], Catch::Contains("the memory database is gone"));
}

TEST_CASE("load_artifacts: listed in the instructions, and the ones the model asks for in its next request",
          "[tools][artifacts]")
{
    adk::test::Harness h;
    run(h.ioc, [&]() -> asio::awaitable<void> {
        adk::CreateSessionRequest create("app", "user1");
        create.session_id = "s";
        co_await h.sessions->create_session(std::move(create));
        adk::ArtifactKey notes("app", "user1", "s", "notes.txt");
        adk::Part notes_part = adk::Part::from_bytes("buy milk\n", "text/plain; charset=utf-8");
        co_await h.artifacts->save_artifact(std::move(notes), std::move(notes_part));
        adk::ArtifactKey photo("app", "user1", "s", "user:photo.png");
        adk::Part photo_part = adk::Part::from_bytes(std::string("\x89PNG\r\n", 6), "image/png");
        co_await h.artifacts->save_artifact(std::move(photo), std::move(photo_part));
        adk::ArtifactKey blob("app", "user1", "s", "data.bin");
        adk::Part blob_part = adk::Part::from_bytes(std::string(2048, '\x01'), "application/octet-stream");
        co_await h.artifacts->save_artifact(std::move(blob), std::move(blob_part));
    }());
    auto model = std::make_shared<ScriptedModel>(Turns{
        LlmResponse::function_call(
            "load_artifacts", {{"artifact_names", json::array{"notes.txt", "photo.png", "data.bin", "missing.txt", "../x"}}}),
        LlmResponse::text("You need milk.")});
    auto agent = LlmAgent::builder("assistant").model(model).tool(adk::load_artifacts_tool()).build();
    auto events = h.send(agent, "What is on my list?");
    REQUIRE(events.size() == 3);
    CHECK(json::value(response_in(events[1]).response).at("artifact_names") ==
          json::parse(R"(["notes.txt", "photo.png", "data.bin", "missing.txt", "../x"])"));

    auto first = model->requests().at(0);
    CHECK(declares(first, "load_artifacts"));
    CHECK_THAT(first.system_text(), Catch::Contains("You have a list of artifacts:\n  [\"data.bin\",\"notes.txt\",\"user:photo.png\"]"));
    CHECK_THAT(first.system_text(), Catch::Contains("call the\n  `load_artifacts` function"));
    const std::size_t history = first.contents.size();

    auto second = model->requests().at(1);
    REQUIRE(second.contents.size() == history + 2 + 3);  // the call, its response, then three artifacts
    const adk::Content& notes = second.contents[history + 2];
    CHECK(notes.role == "user");
    CHECK(notes.parts.at(0).text == std::optional<std::string>("Artifact notes.txt is:"));
    CHECK(notes.parts.at(1).text == std::optional<std::string>("buy milk\n"));  // text files as text
    const adk::Content& photo = second.contents[history + 3];
    CHECK(photo.parts.at(0).text == std::optional<std::string>("Artifact photo.png is:"));  // found as user:photo.png
    REQUIRE(photo.parts.at(1).inline_data);
    CHECK(photo.parts.at(1).inline_data->data == std::string("\x89PNG\r\n", 6));  // images as they are
    const adk::Content& blob = second.contents[history + 4];
    CHECK(blob.parts.at(1).text ==
          std::optional<std::string>("[Binary artifact: data.bin, type: application/octet-stream, size: 2.0 KB. "
                                     "Content cannot be displayed inline.]"));

    // The contents were for that request only: the session holds the call and its response, no artifact.
    run(h.ioc, [&]() -> asio::awaitable<void> {
        adk::GetSessionRequest read(adk::SessionKey("app", "user1", "s"));
        auto session = co_await h.sessions->get_session(std::move(read));
        REQUIRE(session);
        for (const auto& e : session->events)
            for (const auto& p : e.content.value().parts)
                CHECK(!p.inline_data);
    }());
}

TEST_CASE("save_input_blobs_as_artifacts: uploads become artifacts named in the message and the event", "[runner][artifacts]")
{
    adk::test::Harness h;
    auto model = std::make_shared<ScriptedModel>(Turns{LlmResponse::text("Got them.")});
    auto agent = LlmAgent::builder("assistant").model(model).build();
    adk::Part named = adk::Part::from_bytes("a,b\n1,2\n", "text/csv");
    named.inline_data->display_name = "report.csv";
    adk::Part unnamed = adk::Part::from_bytes(std::string("\x89PNG", 4), "image/png");
    adk::Part sneaky = adk::Part::from_bytes("x", "text/plain");
    sneaky.inline_data->display_name = "../../etc/passwd";
    adk::Content message("user", {adk::Part::from_text("Here are my files"), named, unnamed, sneaky});
    adk::RunConfig config;
    config.save_input_blobs_as_artifacts = true;
    auto events = h.send(agent, message, config);
    REQUIRE(events.size() == 1);

    run(h.ioc, [&]() -> asio::awaitable<void> {
        adk::GetSessionRequest read(adk::SessionKey("app", "user1", "s"));
        auto session = co_await h.sessions->get_session(std::move(read));
        REQUIRE(session);
        REQUIRE(session->events.size() == 2);
        const adk::Event& user = session->events[0];
        const std::string inv = user.invocation_id;
        const std::vector<std::string> names{"report.csv", "artifact_" + inv + "_2", "artifact_" + inv + "_3"};
        REQUIRE(user.content.value().parts.size() == 4);
        CHECK(user.content->parts[0].text == std::optional<std::string>("Here are my files"));
        for (std::size_t i = 0; i < names.size(); ++i) {
            CHECK(user.content->parts[i + 1].text ==
                  std::optional<std::string>("Uploaded file: " + names[i] + ". It is saved into artifacts"));
            CHECK(user.actions.artifact_delta.at(names[i]) == 0);
        }
        CHECK(user.actions.artifact_delta.size() == 3);
        adk::ArtifactKey report("app", "user1", "s", "report.csv");
        auto saved = co_await h.artifacts->load_artifact(std::move(report));
        REQUIRE(saved);
        CHECK(*saved == named);  // bytes, type and name exactly
        adk::ArtifactKey image("app", "user1", "s", names[1]);
        auto saved_image = co_await h.artifacts->load_artifact(std::move(image));
        REQUIRE(saved_image);
        CHECK(saved_image->inline_data->data == std::string("\x89PNG", 4));
    }());
    // The model saw the message as stored: names, no bytes.
    const adk::Content seen = model->requests().at(0).contents.back();
    CHECK(std::none_of(seen.parts.begin(), seen.parts.end(), [](const adk::Part& p) { return bool(p.inline_data); }));
}

TEST_CASE("save_input_blobs_as_artifacts without an artifact service is refused, and nothing is stored", "[runner][artifacts]")
{
    adk::test::Harness h;
    h.artifacts = nullptr;
    auto agent = LlmAgent::builder("assistant").model(std::make_shared<ScriptedModel>(Turns{})).build();
    adk::Content message("user", {adk::Part::from_bytes("x", "text/plain")});
    adk::RunConfig config;
    config.save_input_blobs_as_artifacts = true;
    CHECK_THROWS_WITH(h.send(agent, message, config), Catch::Contains("has no artifact service"));
    run(h.ioc, [&]() -> asio::awaitable<void> {
        adk::GetSessionRequest read(adk::SessionKey("app", "user1", "s"));
        auto session = co_await h.sessions->get_session(std::move(read));
        REQUIRE(session);
        CHECK(session->events.empty());
    }());
}
