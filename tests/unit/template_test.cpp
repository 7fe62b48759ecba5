// Instruction templating (ADK's rules) and the contents an LlmAgent sends.
#include <adk/adk.hpp>

#include "support/run.hpp"

#include <boost/asio/strand.hpp>

#include <catch2/catch.hpp>

namespace asio = boost::asio;
namespace json = boost::json;
using adk::test::run;

namespace {

struct TemplateFixture {
    asio::io_context ioc;
    std::shared_ptr<adk::InMemoryArtifactService> artifacts = std::make_shared<adk::InMemoryArtifactService>();
    adk::InvocationOptions options;

    TemplateFixture()
    {
        options.app_name = "app";
        options.user_id = "u";
        options.session = adk::Session("s", "app", "u");
        options.session.state = json::object{{"city", "Paris"},       {"count", 3},
                                             {"app:theme", "dark"},   {"user:name", "Ada"},
                                             {"temp:step", "two"},    {"prefs", json::object{{"units", "C"}}}};
        options.session_service = std::make_shared<adk::InMemorySessionService>();
        options.artifact_service = artifacts;
        options.executor = asio::make_strand(ioc);
    }

    std::string render(std::string_view text)
    {
        adk::InvocationContext ctx(options);
        adk::ReadonlyContext ro(ctx);
        return run(ioc, adk::inject_session_state(text, ro));
    }

    std::string error_of(std::string_view text)
    {
        try {
            render(text);
        } catch (const adk::Error& e) {
            return e.message();
        }
        return "no error";
    }
};

}  // namespace

TEST_CASE("templating: {key}, {key?}, prefixed keys, JSON values", "[template]")
{
    TemplateFixture f;
    CHECK(f.render("Weather in {city}.") == "Weather in Paris.");
    CHECK(f.render("{count} times") == "3 times");
    CHECK(f.render("Theme {app:theme}, name {user:name}, step {temp:step}.") == "Theme dark, name Ada, step two.");
    CHECK(f.render("Prefs: {prefs}") == R"(Prefs: {"units":"C"})");
    CHECK(f.render("Optional [{missing?}] and [{user:missing?}]") == "Optional [] and []");
    CHECK(f.render("{ city }") == "Paris");          // spaces inside the braces are trimmed
    CHECK(f.render("{{city}}") == "Paris");          // ADK's pattern takes doubled braces whole
    CHECK(f.render("no placeholders") == "no placeholders");
    CHECK(f.render("") == "");
}

TEST_CASE("templating: what is not a state name stays as written", "[template]")
{
    TemplateFixture f;
    CHECK(f.render(R"(Answer as {"a": 1} for {city}.)") == R"(Answer as {"a": 1} for Paris.)");
    CHECK(f.render("a set {1, 2}") == "a set {1, 2}");
    CHECK(f.render("empty { } braces") == "empty { } braces");
    CHECK(f.render("{other:prefix}") == "{other:prefix}");
    CHECK(f.render("{1abc}") == "{1abc}");
    CHECK(f.render("unclosed {city") == "unclosed {city");
    CHECK(f.render("nested {a {city}}") == "nested {a Paris");
}

TEST_CASE("templating: a missing required key is an error that says how to fix it", "[template]")
{
    TemplateFixture f;
    CHECK_THAT(f.error_of("Hello {nobody}"), Catch::Contains("`nobody`") && Catch::Contains("{nobody?}"));
    CHECK_THAT(f.error_of("{user:nobody}"), Catch::Contains("`user:nobody`"));
}

TEST_CASE("templating: {artifact.name} inserts text, other parts as JSON", "[template]")
{
    TemplateFixture f;
    run(f.ioc, [&]() -> asio::awaitable<void> {
        co_await f.artifacts->save_artifact({"app", "u", "s", "notes.txt"}, adk::Part::from_text("v0"));
        co_await f.artifacts->save_artifact({"app", "u", "s", "notes.txt"}, adk::Part::from_text("remember milk"));
        co_await f.artifacts->save_artifact({"app", "u", "s", "logo.png"}, adk::Part::from_bytes("PNG", "image/png"));
    }());
    CHECK(f.render("Notes: {artifact.notes.txt}") == "Notes: remember milk");  // the latest version
    CHECK(f.render("{artifact.logo.png}") == R"({"inlineData":{"mimeType":"image/png","data":"UE5H"}})");
    CHECK(f.render("[{artifact.none.txt?}]") == "[]");
    CHECK_THAT(f.error_of("{artifact.none.txt}"), Catch::Contains("artifact 'none.txt'"));
    f.options.artifact_service = nullptr;
    CHECK_THAT(f.error_of("{artifact.notes.txt}"), Catch::Contains("no artifact service"));
}

TEST_CASE("state names: identifiers, optionally after app:, user: or temp:", "[template]")
{
    for (const char* ok : {"a", "_a1", "app:x", "user:name", "temp:step"})
        CHECK(adk::is_valid_state_name(ok));
    for (const char* bad : {"", "1a", "a-b", "app:", "other:x", "app:1", "a:b:c", "a b"})
        CHECK(!adk::is_valid_state_name(bad));
}

namespace {
adk::Event event(std::string author, adk::Content content, std::string branch = "")
{
    adk::Event e(std::move(author), std::move(content));
    e.branch = std::move(branch);
    return e;
}
}  // namespace

TEST_CASE("contents: own and user turns as they are, other agents as context, branches filtered", "[template]")
{
    std::vector<adk::Event> events;
    events.push_back(event("user", adk::Content::user("hi")));
    adk::Event call = event("me", adk::Content("model", {adk::Part::from_function_call("f", {{"x", 1}}, "adk-123")}));
    events.push_back(call);
    events.push_back(event("me", adk::Content("user", {adk::Part::from_function_response("f", {{"y", 2}}, "adk-123")})));
    events.push_back(event("me", adk::Content("model", {adk::Part::from_function_call("g", {}, "server-id")})));
    events.push_back(event("me", adk::Content("user", {adk::Part::from_function_response("g", {{"z", 3}}, "server-id")})));
    // A call that never got a response: models refuse it, so it is left out.
    events.push_back(event("me", adk::Content("model", {adk::Part::from_function_call("h", {}, "unanswered")})));
    events.push_back(event("helper", adk::Content("model", {adk::Part::from_thought("hidden"), adk::Part::from_text("I can help"),
                                                           adk::Part::from_function_call("lookup", {{"q", "a"}})})));
    events.push_back(event("helper", adk::Content("user", {adk::Part::from_function_response("lookup", {{"r", 1}})})));
    events.push_back(event("other", adk::Content::model("on another branch"), "fan.other"));
    events.push_back(event("me", adk::Content::model("on my branch"), "fan"));
    adk::Event partial = event("me", adk::Content::model("partial"));
    partial.partial = true;
    events.push_back(partial);
    events.push_back(event("me", adk::Content("model", {adk::Part::from_text("")})));  // empty: left out
    adk::Event no_content("me", adk::Content());
    no_content.content.reset();
    events.push_back(no_content);

    auto contents = adk::build_contents(adk::EventList(events), "me", "fan.me", adk::IncludeContents::history);
    REQUIRE(contents.size() == 8);
    CHECK(contents[0].role == "user");
    CHECK(contents[0].text() == "hi");
    CHECK(contents[1].parts[0].function_call->id.empty());      // adk- ids are the client's own
    CHECK(contents[2].parts[0].function_response->id.empty());
    CHECK(contents[3].parts[0].function_call->id == "server-id");  // the model's ids stay
    CHECK(contents[4].parts[0].function_response->id == "server-id");
    CHECK(contents[5].role == "user");
    REQUIRE(contents[5].parts.size() == 3);
    CHECK(*contents[5].parts[0].text == "For context:");
    CHECK(*contents[5].parts[1].text == "[helper] said: I can help");
    CHECK(*contents[5].parts[2].text == R"([helper] called tool `lookup` with parameters: {"q":"a"})");
    CHECK(*contents[6].parts[1].text == R"([helper] `lookup` tool returned result: {"r":1})");
    CHECK(contents[7].text() == "on my branch");  // "fan" is an ancestor of "fan.me"; "fan.other" is not

    auto current = adk::build_contents(adk::EventList(events), "me", "fan.me", adk::IncludeContents::none);
    REQUIRE(current.size() == 2);  // from the latest other agent's event on
    CHECK(*current[0].parts[1].text == R"([helper] `lookup` tool returned result: {"r":1})");
}
