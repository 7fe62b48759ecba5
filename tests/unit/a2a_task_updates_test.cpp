// adk::a2a::TaskUpdates: an invocation's ADK events as the updates of an A2A task, and the task they add up to.
#include <adk/a2a/task_updates.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

namespace a2a = adk::a2a;
namespace json = boost::json;

namespace {

adk::Event agent_event(adk::Content content, bool partial = false)
{
    adk::Event e("weather_agent", std::move(content));
    e.id = "ev-" + std::to_string(reinterpret_cast<std::uintptr_t>(&e) % 1000);
    e.invocation_id = "e-1";
    e.partial = partial;
    return e;
}

a2a::Message user_message()
{
    a2a::Message m;
    m.message_id = "m-0";
    m.role = a2a::Role::user;
    m.parts.push_back(a2a::Part::text_part("Weather in Paris?"));
    return m;
}

// Every update reads back from its JSON as the same update.
void read_back(const std::vector<a2a::StreamResponse>& updates)
{
    for (const auto& u : updates)
        CHECK(a2a::stream_response_from_json(json::parse(json::serialize(a2a::to_json(u)))) == u);
}

}  // namespace

TEST_CASE("A2A task updates: a streamed answer is one artifact, appended chunk by chunk, then whole", "[a2a]")
{
    a2a::TaskUpdates t("e-1", "ctx-1");
    const a2a::Task first = t.submitted(user_message());
    CHECK(first.status.state == a2a::TaskState::submitted);
    REQUIRE(first.history.size() == 1);
    CHECK(first.history[0].task_id == "e-1");
    CHECK(first.history[0].context_id == "ctx-1");

    std::vector<a2a::StreamResponse> out;
    t.add(agent_event(adk::Content::model("It "), true), out);
    t.add(agent_event(adk::Content::model("is sunny."), true), out);
    t.add(agent_event(adk::Content::model("It is sunny.")), out);
    t.end(std::nullopt, false, out);
    REQUIRE(out.size() == 4);
    const auto& chunk1 = std::get<a2a::TaskArtifactUpdateEvent>(out[0]);
    const auto& chunk2 = std::get<a2a::TaskArtifactUpdateEvent>(out[1]);
    const auto& whole = std::get<a2a::TaskArtifactUpdateEvent>(out[2]);
    CHECK(chunk1.artifact.artifact_id == "response-1");
    CHECK(!chunk1.append);
    CHECK(chunk2.append);
    CHECK(*chunk2.artifact.parts.at(0).text() == "is sunny.");
    CHECK(chunk1.artifact.metadata.at("adk_partial") == true);
    CHECK(whole.artifact.artifact_id == "response-1");
    CHECK(!whole.append);
    CHECK(whole.last_chunk);
    CHECK(*whole.artifact.parts.at(0).text() == "It is sunny.");
    CHECK(whole.artifact.metadata.at("adk_author") == "weather_agent");
    CHECK(whole.artifact.metadata.at("adk_invocation_id") == "e-1");
    CHECK(std::get<a2a::TaskStatusUpdateEvent>(out[3]).status.state == a2a::TaskState::completed);
    CHECK(a2a::valid_timestamp(std::get<a2a::TaskStatusUpdateEvent>(out[3]).status.timestamp));
    read_back(out);

    CHECK(t.task().status.state == a2a::TaskState::completed);
    REQUIRE(t.task().artifacts.size() == 1);
    CHECK(*t.task().artifacts[0].parts.at(0).text() == "It is sunny.");
}

TEST_CASE("A2A task updates: tool calls are WORKING statuses, and every answer is an artifact of its own", "[a2a]")
{
    a2a::TaskUpdates t("e-1", "ctx-1");
    (void)t.submitted(user_message());
    std::vector<a2a::StreamResponse> out;
    t.add(agent_event(adk::Content("model", {adk::Part::from_function_call("get_weather", json::object{{"city", "Paris"}}, "c-1")})), out);
    adk::Event response("weather_agent", adk::Content("user", {adk::Part::from_function_response("get_weather", json::object{{"sky", "sunny"}}, "c-1")}));
    t.add(response, out);
    t.add(agent_event(adk::Content::model("Sunny in Paris.")), out);
    adk::Event second("packing_agent", adk::Content::model("Take sunglasses."));
    t.add(second, out);
    t.end(std::nullopt, false, out);
    REQUIRE(out.size() == 5);
    const auto& call = std::get<a2a::TaskStatusUpdateEvent>(out[0]);
    CHECK(call.status.state == a2a::TaskState::working);
    REQUIRE(call.status.message);
    CHECK(call.status.message->parts.at(0).metadata.at("adk_type") == "function_call");
    CHECK(std::get<a2a::TaskStatusUpdateEvent>(out[1]).status.message->parts.at(0).metadata.at("adk_type") ==
          "function_response");
    CHECK(std::get<a2a::TaskArtifactUpdateEvent>(out[2]).artifact.artifact_id == "response-1");
    CHECK(std::get<a2a::TaskArtifactUpdateEvent>(out[3]).artifact.artifact_id == "response-2");
    CHECK(std::get<a2a::TaskArtifactUpdateEvent>(out[3]).artifact.name == "packing_agent");
    read_back(out);
    CHECK(t.task().artifacts.size() == 2);  // none lost
    CHECK(t.task().history.size() == 3);    // the client's message, the call, its result
}

TEST_CASE("A2A task updates: a call that waits for the client ends the run INPUT_REQUIRED, a credential request "
          "AUTH_REQUIRED",
          "[a2a]")
{
    const bool auth = GENERATE(false, true);
    a2a::TaskUpdates t("e-1", "ctx-1");
    (void)t.submitted(user_message());
    std::vector<a2a::StreamResponse> out;
    adk::Event waits = agent_event(adk::Content("model", {adk::Part::from_function_call("approve", json::object{}, "c-9")}));
    if (auth)
        waits.actions.requested_auth_configs["c-9"] = json::object{{"authScheme", "oauth2"}};
    else
        waits.long_running_tool_ids.push_back("c-9");
    t.add(waits, out);
    t.end(std::nullopt, false, out);
    REQUIRE(out.size() == 2);
    const auto& last = std::get<a2a::TaskStatusUpdateEvent>(out[1]);
    CHECK(last.status.state == (auth ? a2a::TaskState::auth_required : a2a::TaskState::input_required));
    REQUIRE(last.status.message);
    const a2a::Part& call = last.status.message->parts.at(0);
    CHECK(call.metadata.at("adk_type") == "function_call");
    if (!auth)
        CHECK(call.metadata.at("adk_is_long_running") == true);
    else
        CHECK(last.status.message->metadata.at("adk_actions").at("requestedAuthConfigs").as_object().contains("c-9"));
    CHECK(t.task().artifacts.empty());  // a call is not an answer
    read_back(out);
}

TEST_CASE("A2A task updates: a failure is a FAILED status with its text, never an answer, and a cancel is CANCELED",
          "[a2a]")
{
    {
        a2a::TaskUpdates t("e-1", "ctx-1");
        std::vector<a2a::StreamResponse> out;
        t.end(std::string("the model answered 503"), false, out);
        REQUIRE(out.size() == 1);
        const auto& s = std::get<a2a::TaskStatusUpdateEvent>(out[0]);
        CHECK(s.status.state == a2a::TaskState::failed);
        CHECK(s.status.message->text() == "the model answered 503");
        CHECK(t.task().artifacts.empty());
    }
    {
        a2a::TaskUpdates t("e-1", "ctx-1");
        std::vector<a2a::StreamResponse> out;
        adk::Event error("weather_agent", adk::Content());
        error.content.reset();
        error.error_code = "RESOURCE_EXHAUSTED";
        error.error_message = "quota exceeded";
        t.add(error, out);
        t.end(std::nullopt, false, out);
        REQUIRE(out.size() == 1);
        CHECK(std::get<a2a::TaskStatusUpdateEvent>(out[0]).status.state == a2a::TaskState::failed);
        CHECK(std::get<a2a::TaskStatusUpdateEvent>(out[0]).status.message->text() == "quota exceeded");
    }
    {
        a2a::TaskUpdates t("e-1", "ctx-1");
        std::vector<a2a::StreamResponse> out;
        t.end(std::string("cancelled by the client"), true, out);
        REQUIRE(out.size() == 1);
        CHECK(std::get<a2a::TaskStatusUpdateEvent>(out[0]).status.state == a2a::TaskState::canceled);
    }
}
