// Human in the loop: tool confirmation, credentials, long-running tools, pause and resume, rewind; and the
// answers a client gets wrong. Real Runner, real in-memory services, the scripted model.
#include <adk/adk.hpp>

#include "support/agents.hpp"
#include "support/run.hpp"
#include "support/runner_fixture.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>

namespace asio = boost::asio;
namespace json = boost::json;
using adk::Content;
using adk::Event;
using adk::LlmResponse;
using adk::Part;
using adk::testing::ScriptedModel;
using adk::test::drain;
using adk::test::error_of;
using adk::test::run;
using namespace std::chrono_literals;

namespace {

using Fixture = adk::test::RunnerFixture;
using adk::test::Ran;

std::shared_ptr<ScriptedModel> scripted(std::vector<ScriptedModel::Turn> turns)
{
    return std::make_shared<ScriptedModel>(std::move(turns));
}

// transfer_money(amount): counts its runs and remembers the confirmation it ran with.
struct Bank {
    int runs = 0;
    std::optional<adk::ToolConfirmation> seen;
    std::shared_ptr<adk::FunctionTool> tool()
    {
        return adk::FunctionTool::create(
            "transfer_money", "Sends money.",
            json::parse(R"({"type":"object","properties":{"amount":{"type":"number"}},"required":["amount"]})"),
            [this](adk::ToolContext& ctx, json::object args) -> asio::awaitable<json::value> {
                ++runs;
                seen = ctx.tool_confirmation();
                co_return json::object{{"sent", args.at("amount")}};
            });
    }
};

// "before": says "prepared", counting its runs.
std::shared_ptr<adk::test::FnAgent> preparing_agent(int& runs)
{
    return std::make_shared<adk::test::FnAgent>("before", [&runs](adk::InvocationContext& ctx, adk::EventSink& out) -> asio::awaitable<void> {
        ++runs;
        Event prepared = ctx.make_event(Content::model("prepared"));
        co_await out.emit(std::move(prepared));
    });
}

// The one adk_request_confirmation / adk_request_credential call of an event, or null.
const adk::FunctionCall* question_in(const Event& e, std::string_view name)
{
    if (e.content)
        for (const Part& p : e.content->parts)
            if (p.function_call && p.function_call->name == name)
                return &*p.function_call;
    return nullptr;
}

const adk::FunctionCall* find_question(const std::vector<Event>& events, std::string_view name)
{
    for (const Event& e : events)
        if (auto q = question_in(e, name))
            return q;
    return nullptr;
}

bool mentions(const std::vector<adk::Content>& contents, std::string_view text)
{
    for (const auto& c : contents)
        if (json::serialize(json::value_from(c)).find(text) != std::string::npos)
            return true;
    return false;
}

}  // namespace

TEST_CASE("confirmation: a tool that needs approval does not run, the agent asks and the invocation ends",
          "[hitl]")
{
    Bank bank;
    auto tool = bank.tool();
    tool->set_require_confirmation(true);
    auto model = scripted({LlmResponse::function_call("transfer_money", {{"amount", 100}}),
                           LlmResponse::text("Sent 100.")});
    Fixture f(adk::LlmAgent::builder("banker").model(model).tool(tool).build());

    Ran asked = f.say("send 100");
    REQUIRE(!asked.error);
    REQUIRE(asked.events.size() == 2);
    CHECK(bank.runs == 0);
    CHECK(model->requests().size() == 1);
    const adk::FunctionCall original = *asked.events[0].content->parts.at(0).function_call;
    const Event& question_event = asked.events[1];
    const adk::FunctionCall* question = question_in(question_event, adk::request_confirmation_function);
    REQUIRE(question);
    CHECK(question->id != original.id);
    CHECK(question_event.author == "banker");
    CHECK(question_event.long_running_tool_ids == std::vector<std::string>{question->id});
    CHECK(question->args.at("originalFunctionCall").at("id") == original.id.c_str());
    CHECK(question->args.at("originalFunctionCall").at("name") == "transfer_money");
    CHECK(question->args.at("originalFunctionCall").at("args").at("amount") == 100);
    CHECK(question->args.at("toolConfirmation").at("confirmed") == false);
    CHECK(question->args.at("toolConfirmation").at("hint").as_string().size() > 0);
    CHECK(question_event.actions.requested_tool_confirmations.at(original.id).at("confirmed") == false);
    // The wire form, as ADK's clients read it.
    json::value wire = json::value_from(question_event);
    CHECK(wire.at("longRunningToolIds").at(0) == question->id.c_str());
    CHECK(wire.at("actions").at("requestedToolConfirmations").as_object().contains(original.id));

    Ran approved = f.answer(question->id, "adk_request_confirmation", {{"confirmed", true}});
    REQUIRE(!approved.error);
    CHECK(bank.runs == 1);
    REQUIRE(bank.seen);
    CHECK(bank.seen->confirmed);
    REQUIRE(approved.events.size() == 2);
    const adk::FunctionResponse& response = *approved.events[0].content->parts.at(0).function_response;
    CHECK(response.id == original.id);
    CHECK(response.response.at("sent") == 100);
    CHECK(approved.events[1].text() == "Sent 100.");
    // The model sees its call and the tool's response, never the question or the answer.
    auto second = model->requests().at(1);
    CHECK(!mentions(second.contents, "adk_request_confirmation"));
    REQUIRE(second.contents.size() == 3);
    CHECK(second.contents[1].parts.at(0).function_call->name == "transfer_money");
    CHECK(second.contents[2].parts.at(0).function_response->response.at("sent") == 100);

    SECTION("a second answer to the same question changes nothing")
    {
        std::size_t before = f.session().events.size();
        Ran again = f.answer(question->id, "adk_request_confirmation", {{"confirmed", true}});
        REQUIRE(again.error);
        CHECK(again.error->code() == adk::errc::already_exists);
        CHECK_THAT(again.error->message(), Catch::Contains("already answered"));
        CHECK(f.session().events.size() == before);
        CHECK(bank.runs == 1);
    }
}

TEST_CASE("confirmation: a rejection tells the model, and the tool never runs", "[hitl]")
{
    Bank bank;
    auto tool = bank.tool();
    tool->set_require_confirmation(true);
    auto model = scripted({LlmResponse::function_call("transfer_money", {{"amount", 100}}),
                           LlmResponse::text("I did not send it.")});
    Fixture f(adk::LlmAgent::builder("banker").model(model).tool(tool).build());
    Ran asked = f.say("send 100");
    const adk::FunctionCall* question = find_question(asked.events, adk::request_confirmation_function);
    REQUIRE(question);
    // Sent the way some clients send it: the answer as a JSON string.
    Ran rejected = f.answer(question->id, "adk_request_confirmation", {{"response", R"({"confirmed": false})"}});
    REQUIRE(!rejected.error);
    CHECK(bank.runs == 0);
    REQUIRE(rejected.events.size() == 2);
    const adk::FunctionResponse& response = *rejected.events[0].content->parts.at(0).function_response;
    CHECK_THAT(std::string(response.response.at("error").as_string()), Catch::Contains("rejected"));
    CHECK(rejected.events[1].text() == "I did not send it.");
}

TEST_CASE("confirmation: by a predicate on the arguments, and asked by the tool at run time with a payload",
          "[hitl]")
{
    SECTION("a predicate: small amounts run at once")
    {
        Bank bank;
        auto tool = bank.tool();
        tool->set_require_confirmation_if([](const json::object& args) { return args.at("amount").to_number<double>() > 50; });
        auto model = scripted({LlmResponse::function_call("transfer_money", {{"amount", 10}}), LlmResponse::text("ok"),
                               LlmResponse::function_call("transfer_money", {{"amount", 500}})});
        Fixture f(adk::LlmAgent::builder("banker").model(model).tool(tool).build());
        Ran small = f.say("send 10");
        CHECK(bank.runs == 1);
        CHECK(!find_question(small.events, adk::request_confirmation_function));
        Ran big = f.say("send 500");
        CHECK(bank.runs == 1);
        CHECK(find_question(big.events, adk::request_confirmation_function));
    }
    SECTION("the tool asks itself; what it returned then is dropped, and it runs again with the answer")
    {
        int runs = 0;
        json::value payload_seen;
        auto tool = adk::FunctionTool::create(
            "book_flight", "Books a flight.", json::parse(R"({"type":"object","properties":{}})"),
            [&](adk::ToolContext& ctx, json::object) -> asio::awaitable<json::value> {
                ++runs;
                if (!ctx.tool_confirmation()) {
                    ctx.request_confirmation("Which seat?", json::object{{"seat", "any"}});
                    co_return json::object{{"booked", false}};
                }
                payload_seen = ctx.tool_confirmation()->payload;
                co_return json::object{{"booked", true}};
            });
        auto model = scripted({LlmResponse::function_call("book_flight", {}), LlmResponse::text("Booked.")});
        Fixture f(adk::LlmAgent::builder("agent").model(model).tool(tool).build());
        Ran asked = f.say("book");
        REQUIRE(asked.events.size() == 2);  // the call and the question: no response
        const adk::FunctionCall* question = find_question(asked.events, adk::request_confirmation_function);
        REQUIRE(question);
        CHECK(question->args.at("toolConfirmation").at("hint") == "Which seat?");
        CHECK(question->args.at("toolConfirmation").at("payload").at("seat") == "any");
        Ran approved = f.answer(question->id, "adk_request_confirmation",
                                {{"confirmed", true}, {"payload", {{"seat", "12A"}}}});
        REQUIRE(!approved.error);
        CHECK(runs == 2);
        CHECK(payload_seen.at("seat") == "12A");
        CHECK(approved.events.at(0).content->parts.at(0).function_response->response.at("booked") == true);
    }
}

TEST_CASE("bad answers get a clear error and change nothing", "[hitl]")
{
    Bank bank;
    auto tool = bank.tool();
    tool->set_require_confirmation(true);
    auto model = scripted({LlmResponse::function_call("transfer_money", {{"amount", 100}}), LlmResponse::text("done")});
    Fixture f(adk::LlmAgent::builder("banker").model(model).tool(tool).build());
    Ran asked = f.say("send 100");
    const adk::FunctionCall* question = find_question(asked.events, adk::request_confirmation_function);
    REQUIRE(question);
    const std::string qid = question->id;
    const std::size_t before = f.session().events.size();

    auto refused = [&](Ran ran, adk::errc code, std::string words) {
        REQUIRE(ran.error);
        CHECK(ran.error->code() == code);
        CHECK_THAT(ran.error->message(), Catch::Contains(words));
        CHECK(f.session().events.size() == before);
        CHECK(bank.runs == 0);
    };
    refused(f.answer("no-such-call", "adk_request_confirmation", {{"confirmed", true}}), adk::errc::invalid_argument,
            "has no function call 'no-such-call'");
    refused(f.answer(qid, "transfer_money", {{"confirmed", true}}), adk::errc::invalid_argument,
            "is a call of 'adk_request_confirmation'");
    refused(f.answer(qid, "adk_request_confirmation", {{"ok", true}}), adk::errc::invalid_argument,
            "\"confirmed\": true or false");
    refused(f.answer(qid, "adk_request_confirmation", {{"response", "not json"}}), adk::errc::invalid_argument,
            "not JSON");
    refused(f.answer("", "adk_request_confirmation", {{"confirmed", true}}), adk::errc::invalid_argument, "has no id");
    // Another user's session is not theirs to answer: it does not exist for them.
    refused(f.answer(qid, "adk_request_confirmation", {{"confirmed", true}}, "mallory"), adk::errc::not_found,
            "does not exist");
    // Resuming needs a resumable app.
    adk::RunRequest resume("u", "s");
    resume.invocation_id = asked.events[0].invocation_id;
    refused(f.send(resume), adk::errc::invalid_argument, "is not resumable");

    // The right answer still works after all that.
    Ran approved = f.answer(qid, "adk_request_confirmation", {{"confirmed", true}});
    REQUIRE(!approved.error);
    CHECK(bank.runs == 1);
}

TEST_CASE("long-running tools: the invocation pauses, the client's updates and final answer resume the model",
          "[hitl]")
{
    int started = 0;
    auto approval = adk::FunctionTool::create(
        "ask_for_approval", "Asks a manager.", json::parse(R"({"type":"object","properties":{}})"),
        [&](adk::ToolContext&, json::object) -> asio::awaitable<json::value> {
            ++started;
            co_return nullptr;  // the answer comes later, from the client
        },
        /*is_long_running=*/true);
    auto model = scripted({LlmResponse::function_call("ask_for_approval", {}), LlmResponse::text("Still waiting."),
                           LlmResponse::text("Approved: booking it.")});
    Fixture f(adk::LlmAgent::builder("agent").model(model).tool(approval).build());

    Ran asked = f.say("please approve");
    REQUIRE(!asked.error);
    REQUIRE(asked.events.size() == 1);
    CHECK(started == 1);
    const std::string call_id = asked.events[0].content->parts.at(0).function_call->id;
    CHECK(asked.events[0].long_running_tool_ids == std::vector<std::string>{call_id});
    CHECK(model->requests().size() == 1);

    // An update: the model hears it, and the call stays open.
    Ran update = f.answer(call_id, "ask_for_approval", {{"status", "pending"}, {"ticket", 7}});
    REQUIRE(!update.error);
    REQUIRE(update.events.size() == 1);
    CHECK(update.events[0].text() == "Still waiting.");
    CHECK(started == 1);

    Ran final = f.answer(call_id, "ask_for_approval", {{"status", "approved"}});
    REQUIRE(!final.error);
    REQUIRE(final.events.size() == 1);
    CHECK(final.events[0].text() == "Approved: booking it.");
    CHECK(started == 1);
    // The model saw the final answer right after its call; the update it replaced is gone.
    auto third = model->requests().at(2);
    CHECK(mentions(third.contents, "approved"));
    CHECK(!mentions(third.contents, "\"ticket\""));

    Ran late = f.answer(call_id, "ask_for_approval", {{"status", "approved"}});
    REQUIRE(late.error);
    CHECK(late.error->code() == adk::errc::already_exists);
}

TEST_CASE("long-running tools: a call id the model used before names the new call, and its answer is taken",
          "[hitl]")
{
    auto lookup = adk::FunctionTool::create("lookup", "Looks up.", json::parse(R"({"type":"object","properties":{}})"),
                                            [](adk::ToolContext&, json::object) -> asio::awaitable<json::value> {
                                                co_return json::object{{"found", true}};
                                            });
    auto wait = adk::FunctionTool::create(
        "wait_for_human", "Asks a person.", json::parse(R"({"type":"object","properties":{}})"),
        [](adk::ToolContext&, json::object) -> asio::awaitable<json::value> { co_return nullptr; },
        /*is_long_running=*/true);
    // Providers that number calls per turn ("call_0") give two turns' calls the same id.
    auto model = scripted({LlmResponse::function_call("lookup", {}, "call_0"), LlmResponse::text("Found it."),
                           LlmResponse::function_call("wait_for_human", {}, "call_0"),
                           LlmResponse::text("The person said yes.")});
    Fixture f(adk::LlmAgent::builder("agent").model(model).tool(lookup).tool(wait).build());
    Ran first = f.say("look it up");
    REQUIRE(!first.error);
    CHECK(first.events.back().text() == "Found it.");
    Ran asked = f.say("now ask a person");
    REQUIRE(!asked.error);
    REQUIRE(asked.events.size() == 1);
    CHECK(asked.events[0].long_running_tool_ids == std::vector<std::string>{"call_0"});

    // The answer is for the newest call_0, the open one, not the lookup answered long ago.
    Ran answered = f.answer("call_0", "wait_for_human", {{"status", "yes"}});
    REQUIRE(!answered.error);
    REQUIRE(!answered.events.empty());
    CHECK(answered.events.back().text() == "The person said yes.");
    Ran again = f.answer("call_0", "wait_for_human", {{"status", "yes"}});
    REQUIRE(again.error);
    CHECK(again.error->code() == adk::errc::already_exists);
}

TEST_CASE("credentials: the tool asks once per user, the credential is kept by the service, not in the session",
          "[hitl]")
{
    int runs = 0;
    std::string token_seen;
    json::object auth_config{{"credentialKey", "bank_api"},
                             {"authScheme", {{"type", "http"}, {"scheme", "bearer"}}}};
    auto tool = adk::FunctionTool::create(
        "balance", "Reads the balance.", json::parse(R"({"type":"object","properties":{}})"),
        [&](adk::ToolContext& ctx, json::object) -> asio::awaitable<json::value> {
            ++runs;
            std::optional<json::object> kept = co_await ctx.load_credential(auth_config);
            token_seen = std::string(kept->at("rawAuthCredential").at("http").at("credentials").at("token").as_string());
            co_return json::object{{"balance", 42}};
        });
    tool->set_auth_config(auth_config);
    auto model = scripted({LlmResponse::function_call("balance", {}), LlmResponse::text("42."),
                           LlmResponse::function_call("balance", {}), LlmResponse::text("Still 42.")});
    Fixture f(adk::LlmAgent::builder("agent").model(model).tool(tool).build());

    Ran asked = f.say("balance?");
    REQUIRE(!asked.error);
    CHECK(runs == 0);
    const adk::FunctionCall* question = find_question(asked.events, adk::request_credential_function);
    REQUIRE(question);
    const std::string original = asked.events[0].content->parts.at(0).function_call->id;
    CHECK(question->args.at("functionCallId") == original.c_str());
    CHECK(question->args.at("authConfig").at("credentialKey") == "bank_api");
    CHECK(question->args.at("message").is_string());
    CHECK(asked.events.back().actions.requested_auth_configs.contains(original));

    SECTION("an answer without a credential is refused, and changes nothing")
    {
        const std::size_t before = f.session().events.size();
        Ran bad = f.answer(question->id, "adk_request_credential", auth_config);
        REQUIRE(bad.error);
        CHECK_THAT(bad.error->message(), Catch::Contains("holds no credential"));
        CHECK(f.session().events.size() == before);
        CHECK(runs == 0);
    }
    SECTION("the credential is used, kept, and not stored in the session")
    {
        json::object answer = auth_config;
        answer["rawAuthCredential"] = {{"authType", "http"}, {"http", {{"scheme", "bearer"}, {"credentials", {{"token", "s3cret"}}}}}};
        Ran answered = f.answer(question->id, "adk_request_credential", answer);
        REQUIRE(!answered.error);
        CHECK(runs == 1);
        CHECK(token_seen == "s3cret");
        CHECK(answered.events.back().text() == "42.");
        for (const Event& e : f.session().events)
            CHECK(json::serialize(json::value_from(e)).find("s3cret") == std::string::npos);

        Ran again = f.say("and now?");
        CHECK(!find_question(again.events, adk::request_credential_function));
        CHECK(runs == 2);
        CHECK(again.events.back().text() == "Still 42.");
    }
}

namespace {

// A toolset that cannot list its tools before the user gives a credential (as an MCP server behind OAuth).
class Vault final : public adk::Toolset {
public:
    Vault() : Toolset("vault", {}, adk::ToolListing::per_invocation) {}
    json::object auth_config{{"credentialKey", "vault"}, {"authScheme", {{"type", "oauth2"}}}};
    int listings = 0;

protected:
    asio::awaitable<std::vector<std::shared_ptr<adk::Tool>>> list_tools(const adk::ReadonlyContext& ctx) override
    {
        ++listings;
        const adk::InvocationContext& inv = ctx.invocation_context();
        adk::CredentialKey key(inv.app_name(), inv.user_id(), "vault");
        std::optional<json::object> kept = co_await inv.credential_service()->load_credential(std::move(key));
        if (!kept)
            throw adk::CredentialRequired(auth_config, "the vault needs a token");
        const std::string token(kept->at("exchangedAuthCredential").at("oauth2").at("accessToken").as_string());
        auto open = adk::FunctionTool::create("open_vault", "Opens the vault.", json::value(),
                                              [token](adk::ToolContext&, json::object) -> asio::awaitable<json::value> {
                                                  co_return json::object{{"opened_with", token}};
                                              });
        co_return std::vector<std::shared_ptr<adk::Tool>>{open};
    }
};

}  // namespace

TEST_CASE("credentials: InMemoryCredentialService keeps at most its bound, the one used longest ago going first",
          "[hitl]")
{
    asio::io_context ioc;
    adk::InMemoryCredentialService service(3);
    auto save = [&](const std::string& user, int n) {
        run(ioc, service.save_credential(adk::CredentialKey("app", user, "k"), json::object{{"n", n}}));
    };
    auto load = [&](const std::string& user) {
        return run(ioc, service.load_credential(adk::CredentialKey("app", user, "k")));
    };
    save("ann", 1);
    save("bob", 2);
    save("cy", 3);
    CHECK(load("ann").value().at("n") == 1);  // ann used again: bob is now the one used longest ago
    save("cy", 4);                             // saved again: replaced, not added
    CHECK(service.size() == 3);
    save("dee", 5);                            // a fourth: bob goes
    CHECK(service.size() == 3);
    CHECK_FALSE(load("bob"));
    CHECK(load("ann").value().at("n") == 1);
    CHECK(load("cy").value().at("n") == 4);
    CHECK(load("dee").value().at("n") == 5);
    // Thousands of users a client made up leave the bound as it is.
    for (int i = 0; i < 5000; ++i)
        save("made-up-" + std::to_string(i), i);
    CHECK(service.size() == 3);
    CHECK(load("made-up-4999").value().at("n") == 4999);
    CHECK_FALSE(load("ann"));
}

TEST_CASE("credentials: a toolset that needs one before it lists its tools asks, pauses, and lists once answered",
          "[hitl]")
{
    auto vault = std::make_shared<Vault>();
    auto model = scripted({LlmResponse::function_call("open_vault", {}), LlmResponse::text("Opened.")});
    Fixture f(adk::LlmAgent::builder("agent").model(model).toolset(vault).build());

    Ran asked = f.say("open the vault");
    REQUIRE(!asked.error);
    CHECK(model->requests().empty());  // the model is not called without the toolset's tools
    REQUIRE(asked.events.size() == 1);
    const adk::FunctionCall* question = find_question(asked.events, adk::request_credential_function);
    REQUIRE(question);
    CHECK(question->args.at("authConfig").at("credentialKey") == "vault");
    CHECK_THAT(std::string(question->args.at("message").as_string()), Catch::Contains("Toolset 'vault'"));
    const std::string about(question->args.at("functionCallId").as_string());
    CHECK(asked.events[0].actions.requested_auth_configs.contains(about));
    CHECK(asked.events[0].long_running_tool_ids == std::vector<std::string>{question->id});

    json::object answer = vault->auth_config;
    answer["exchangedAuthCredential"] = {{"authType", "oauth2"}, {"oauth2", {{"accessToken", "t0ken"}}}};
    Ran answered = f.answer(question->id, "adk_request_credential", answer);
    REQUIRE(!answered.error);
    REQUIRE(model->requests().size() == 2);
    CHECK(model->requests()[0].tools.size() == 1);
    CHECK_FALSE(mentions(model->requests()[0].contents, "adk_request_credential"));  // asked of the client, not the model
    CHECK(mentions(model->requests()[0].contents, "open the vault"));
    const Event& opened = answered.events.at(1);
    REQUIRE(opened.content->parts.at(0).function_response);
    CHECK(opened.content->parts[0].function_response->response.at("opened_with") == "t0ken");
    CHECK(answered.events.back().text() == "Opened.");
    for (const Event& e : f.session().events)  // the credential is kept by the service, not in the session
        if (e.content)
            for (const Part& p : e.content->parts)
                if (p.function_response && p.function_response->name == adk::request_credential_function)
                    CHECK(json::serialize(p.function_response->response).find("t0ken") == std::string::npos);
}

TEST_CASE("resumable app: a paused workflow continues where it stopped, in the same invocation", "[hitl]")
{
    Bank bank;
    auto tool = bank.tool();
    tool->set_require_confirmation(true);
    auto model = scripted({LlmResponse::function_call("transfer_money", {{"amount", 5}}), LlmResponse::text("Sent.")});
    auto banker = adk::LlmAgent::builder("banker").model(model).tool(tool).build();
    int before_runs = 0;
    auto before = preparing_agent(before_runs);
    auto after = adk::test::counting_agent("after", 2);
    auto pipeline = std::make_shared<adk::SequentialAgent>("pipeline", "Steps.",
                                                           std::vector<std::shared_ptr<adk::Agent>>{before, banker, after});
    Fixture f(pipeline, /*resumable=*/true);

    Ran asked = f.say("pay");
    REQUIRE(!asked.error);
    const adk::FunctionCall* question = find_question(asked.events, adk::request_confirmation_function);
    REQUIRE(question);
    const std::string invocation = asked.events.front().invocation_id;
    // Where each agent stands is recorded: the pipeline started "before", which ended, then "banker".
    std::vector<std::string> marks;
    for (const Event& e : asked.events) {
        if (e.actions.agent_state && e.actions.agent_state->contains("current_sub_agent"))
            marks.push_back(e.author + ">" + std::string(e.actions.agent_state->at("current_sub_agent").as_string()));
        if (e.actions.end_of_agent)
            marks.push_back(e.author + " ended");
    }
    CHECK(marks == std::vector<std::string>{"pipeline>before", "before ended", "pipeline>banker"});

    Ran resumed = f.answer(question->id, "adk_request_confirmation", {{"confirmed", true}});
    REQUIRE(!resumed.error);
    for (const Event& e : resumed.events)
        CHECK(e.invocation_id == invocation);  // the same invocation, continued
    CHECK(before_runs == 1);                     // not run again
    CHECK(bank.runs == 1);
    std::vector<std::string> texts;
    for (const Event& e : resumed.events)
        if (!e.text().empty())
            texts.push_back(e.author + ":" + e.text());
    CHECK(texts == std::vector<std::string>{"banker:Sent.", "after:1", "after:2"});
    REQUIRE(resumed.events.back().actions.end_of_agent);
    CHECK(resumed.events.back().author == "pipeline");

    SECTION("resuming a finished invocation is refused")
    {
        adk::RunRequest again("u", "s");
        again.invocation_id = invocation;
        Ran refused = f.send(again);
        REQUIRE(refused.error);
        CHECK_THAT(refused.error->message(), Catch::Contains("has finished"));
    }
    SECTION("resuming an invocation the session does not hold is refused")
    {
        adk::RunRequest unknown("u", "s");
        unknown.invocation_id = "e-nope";
        Ran refused = f.send(unknown);
        REQUIRE(refused.error);
        CHECK(refused.error->code() == adk::errc::not_found);
    }
}

TEST_CASE("resumable app: an interrupted invocation resumes, what finished does not run again", "[hitl]")
{
    int tool_runs = 0;
    auto count = adk::FunctionTool::create("count", "Counts.", json::parse(R"({"type":"object","properties":{}})"),
                                           [&](adk::ToolContext&, json::object) -> asio::awaitable<json::value> {
                                               ++tool_runs;
                                               co_return json::object{{"n", tool_runs}};
                                           });
    auto model = scripted({LlmResponse::function_call("count", {}), LlmResponse::text("counted")});
    auto counter = adk::LlmAgent::builder("counter").model(model).tool(count).build();
    int slow_runs = 0;
    auto slow = std::make_shared<adk::test::FnAgent>("slow", [&](adk::InvocationContext& ctx, adk::EventSink& out) -> asio::awaitable<void> {
        ++slow_runs;
        Event started = ctx.make_event(Content::model("slow started"));
        co_await out.emit(std::move(started));
        if (slow_runs == 1) {  // the first time it hangs, and is cancelled
            asio::steady_timer wait(co_await asio::this_coro::executor, 1h);
            co_await wait.async_wait(asio::use_awaitable);
        }
        Event done = ctx.make_event(Content::model("slow done"));
        co_await out.emit(std::move(done));
    });
    auto loop = std::make_shared<adk::LoopAgent>("loop", "Twice.", std::vector<std::shared_ptr<adk::Agent>>{slow}, 2);
    auto pipeline = std::make_shared<adk::SequentialAgent>("pipeline", "Steps.",
                                                           std::vector<std::shared_ptr<adk::Agent>>{counter, loop});
    Fixture f(pipeline, /*resumable=*/true);

    std::string invocation;
    auto stopped = run(f.ioc, error_of([&]() -> asio::awaitable<void> {
        adk::RunRequest request("u", "s", Content::user("go"));
        auto stream = co_await f.runner->run(std::move(request));
        while (auto ev = co_await stream.next()) {
            invocation = ev->invocation_id;
            if (ev->text() == "slow started")
                f.runner->cancel(invocation);
        }
    }()));
    REQUIRE(stopped);
    CHECK(stopped->code() == adk::errc::cancelled);
    CHECK(tool_runs == 1);
    CHECK(slow_runs == 1);
    // The session says where it stopped.
    const Event last = f.session().events.back();
    CHECK(last.interrupted);
    CHECK(last.invocation_id == invocation);
    CHECK(last.error_code == "INTERRUPTED");

    adk::RunRequest resume("u", "s");
    resume.invocation_id = invocation;
    Ran resumed = f.send(resume);
    REQUIRE(!resumed.error);
    CHECK(tool_runs == 1);                      // its response was stored: it never runs again
    CHECK(model->requests().size() == 2);       // nor is the model asked again
    CHECK(slow_runs == 3);                      // round 0 again (custom agents start over), then round 1
    std::vector<std::string> texts;
    for (const Event& e : resumed.events)
        if (!e.text().empty())
            texts.push_back(e.text());
    CHECK(texts == std::vector<std::string>{"slow started", "slow done", "slow started", "slow done"});
    CHECK(resumed.events.back().author == "pipeline");
    CHECK(resumed.events.back().actions.end_of_agent);
}

TEST_CASE("resumable app: each round of a loop is a node of its own, paused and resumed in either round", "[hitl]")
{
    Bank bank;
    auto tool = bank.tool();
    tool->set_require_confirmation(true);
    auto model = scripted({LlmResponse::function_call("transfer_money", {{"amount", 5}}), LlmResponse::text("Sent 5."),
                           LlmResponse::function_call("transfer_money", {{"amount", 7}}), LlmResponse::text("Sent 7.")});
    auto banker = adk::LlmAgent::builder("banker").model(model).tool(tool).build();
    auto loop = std::make_shared<adk::LoopAgent>("loop", "Twice.", std::vector<std::shared_ptr<adk::Agent>>{banker}, 2);
    Fixture f(loop, /*resumable=*/true);

    Ran first = f.say("pay twice");
    REQUIRE(!first.error);
    const adk::FunctionCall* question = find_question(first.events, adk::request_confirmation_function);
    REQUIRE(question);
    Ran second = f.answer(question->id, "adk_request_confirmation", {{"confirmed", true}});
    REQUIRE(!second.error);
    question = find_question(second.events, adk::request_confirmation_function);
    REQUIRE(question);  // the second round asks again, for its own call
    CHECK(question->args.at("originalFunctionCall").at("args").at("amount") == 7);
    Ran third = f.answer(question->id, "adk_request_confirmation", {{"confirmed", true}});
    REQUIRE(!third.error);
    CHECK(bank.runs == 2);
    CHECK(model->requests().size() == 4);

    // One invocation; each event names its node: the loop, and the banker on the round it ran in.
    const adk::Session s = f.session();
    const std::string invocation = first.events.front().invocation_id;
    std::vector<std::string> nodes;
    for (const Event& e : s.events) {
        CHECK(e.invocation_id == invocation);
        if (e.author == "user")
            continue;
        std::string node(e.node_path());
        if (nodes.empty() || nodes.back() != node)
            nodes.push_back(node);
    }
    CHECK(nodes == std::vector<std::string>{"loop@1", "loop@1/banker@1", "loop@1", "loop@1/banker@2", "loop@1"});
    std::vector<std::string> texts;
    for (const Event& e : s.events)
        if (!e.text().empty() && e.author == "banker")
            texts.push_back(std::string(e.node_path()) + ":" + e.text());
    CHECK(texts == std::vector<std::string>{"loop@1/banker@1:Sent 5.", "loop@1/banker@2:Sent 7."});
    REQUIRE(s.events.back().actions.end_of_agent);
    CHECK(s.events.back().node_path() == "loop@1");
}

TEST_CASE("resumable app: an invocation recorded before node paths (by author, as ADK 1.x) resumes where it stopped",
          "[hitl]")
{
    int before_runs = 0;
    auto before = preparing_agent(before_runs);
    auto after = adk::test::counting_agent("after", 2);
    auto pipeline = std::make_shared<adk::SequentialAgent>("pipeline", "Steps.",
                                                           std::vector<std::shared_ptr<adk::Agent>>{before, after});
    Fixture f(pipeline, /*resumable=*/true);
    // What an interrupted invocation left before paths: "before" ended, "after" had started.
    run(f.ioc, [&]() -> asio::awaitable<void> {
        adk::GetSessionRequest get("app", "u", "s");
        adk::Session s = *co_await f.sessions->get_session(std::move(get));
        // Each event is built, then named, before it is awaited (g++ 12 and class-type temporaries in co_await).
        auto legacy = [](std::string author) {
            Event e(std::move(author), Content::model(""));
            e.content.reset();
            e.invocation_id = "e-legacy";
            e.timestamp = adk::now_seconds();
            return e;
        };
        std::vector<Event> events;
        events.push_back(legacy("user"));
        events.back().content = Content::user("go");
        events.push_back(legacy("pipeline"));
        events.back().actions.agent_state = json::object{{"current_sub_agent", "before"}};
        events.push_back(legacy("before"));
        events.back().content = Content::model("prepared");
        events.push_back(legacy("before"));
        events.back().actions.end_of_agent = true;
        events.push_back(legacy("pipeline"));
        events.back().actions.agent_state = json::object{{"current_sub_agent", "after"}};
        for (Event& e : events)
            co_await f.sessions->append_event(s, e);
    }());

    adk::RunRequest resume("u", "s");
    resume.invocation_id = "e-legacy";
    Ran resumed = f.send(resume);
    REQUIRE(!resumed.error);
    CHECK(before_runs == 0);  // it ended before: not run again
    std::vector<std::string> texts;
    for (const Event& e : resumed.events)
        if (!e.text().empty())
            texts.push_back(e.author + ":" + e.text());
    CHECK(texts == std::vector<std::string>{"after:1", "after:2"});
    REQUIRE(resumed.events.back().actions.end_of_agent);
    CHECK(resumed.events.back().node_path() == "pipeline@1");
}

TEST_CASE("rewind: the state and artifacts as they were, the history kept, the model no longer sees it", "[hitl]")
{
    // Each run writes the user's text to state and to an artifact.
    auto writer = std::make_shared<adk::test::FnAgent>("writer", [](adk::InvocationContext& ctx, adk::EventSink& out) -> asio::awaitable<void> {
        std::string text = ctx.user_content()->parts.at(0).text.value();
        adk::ArtifactKey key(ctx.app_name(), ctx.user_id(), ctx.session_id(), "notes.txt");
        Part content = Part::from_bytes(text, "text/plain");
        std::int64_t version = co_await ctx.artifact_service()->save_artifact(std::move(key), std::move(content));
        Event e = ctx.make_event(Content::model("wrote " + text));
        e.actions.state_delta["answer"] = text;
        e.actions.artifact_delta["notes.txt"] = version;
        co_await out.emit(std::move(e));
    });
    Fixture f(writer);
    f.say("one");
    Ran second = f.say("two");
    const std::string second_id = second.events.front().invocation_id;
    f.say("three");
    CHECK(f.session().state.at("answer") == "three");

    run(f.ioc, f.runner->rewind("u", "s", second_id));
    adk::Session s = f.session();
    CHECK(s.state.at("answer") == "one");
    REQUIRE(s.events.back().actions.rewind_before_invocation_id == second_id);
    CHECK(s.events.back().author == "user");
    CHECK(s.events.size() == 7);  // the history is kept
    auto notes = run(f.ioc, [&]() -> asio::awaitable<std::optional<Part>> {
        adk::ArtifactKey key("app", "u", "s", "notes.txt");
        co_return co_await f.artifacts->load_artifact(std::move(key));
    }());
    REQUIRE(notes);
    CHECK(notes->inline_data->data == "one");
    CHECK(s.events.back().actions.artifact_delta.at("notes.txt") == 3);

    // What an LlmAgent would send its model: the rewound invocations are gone.
    auto contents = adk::build_contents(s.events, "writer", "", adk::IncludeContents::history);
    CHECK(mentions(contents, "one"));
    CHECK(!mentions(contents, "two"));
    CHECK(!mentions(contents, "three"));

    auto missing = run(f.ioc, error_of(f.runner->rewind("u", "s", "e-unknown")));
    REQUIRE(missing);
    CHECK(missing->code() == adk::errc::not_found);
}

TEST_CASE("contents: responses join their call, a final answer replaces an update, unanswered calls are left out",
          "[hitl]")
{
    auto event = [](std::string author, std::vector<Part> parts) {
        Event e(std::move(author), Content(author == "agent" ? "model" : "user", std::move(parts)));
        return e;
    };
    std::vector<Event> events;
    events.push_back(event("user", {Part::from_text("go")}));
    events.push_back(event("agent", {Part::from_function_call("a", {}, "call-a"), Part::from_function_call("b", {}, "call-b"),
                                     Part::from_function_call("c", {}, "call-c")}));
    events.back().long_running_tool_ids = {"call-b"};
    Event responses = event("agent", {Part::from_function_response("a", {{"r", "a1"}}, "call-a"),
                                      Part::from_function_response("b", {{"status", "started"}}, "call-b")});
    responses.content->role = "user";
    events.push_back(responses);
    events.push_back(event("agent", {Part::from_text("waiting for b")}));
    events.push_back(event("user", {Part::from_function_response("b", {{"status", "done"}}, "call-b")}));

    auto contents = adk::build_contents(adk::EventList(events), "agent", "", adk::IncludeContents::history);
    REQUIRE(contents.size() == 4);
    CHECK(contents[1].parts.size() == 2);  // call-c never got a response: left out
    REQUIRE(contents[2].parts.size() == 2);
    CHECK(contents[2].role == "user");
    CHECK(contents[2].parts[0].function_response->response.at("r") == "a1");
    CHECK(contents[2].parts[1].function_response->response.at("status") == "done");  // replaced the update
    CHECK(contents[3].parts[0].text == "waiting for b");
}

TEST_CASE("cancellation: a tool waiting on a timer and a slowly streaming model stop, the invocation is marked "
          "interrupted", "[hitl]")
{
    SECTION("a tool in flight")
    {
        std::atomic<bool> aborted{false};
        std::atomic<bool> waiting{false};
        auto wait = adk::FunctionTool::create("wait", "Waits.", json::parse(R"({"type":"object","properties":{}})"),
                                              [&](adk::ToolContext&, json::object) -> asio::awaitable<json::value> {
                                                  asio::steady_timer timer(co_await asio::this_coro::executor, 1h);
                                                  waiting = true;
                                                  auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
                                                  aborted = ec == asio::error::operation_aborted;
                                                  co_return json::object{{"waited", true}};
                                              });
        auto model = scripted({LlmResponse::function_call("wait", {}), LlmResponse::text("never")});
        Fixture f(adk::LlmAgent::builder("agent").model(model).tool(wait).build());
        std::optional<adk::Error> error;
        run(f.ioc, [&]() -> asio::awaitable<void> {
            adk::RunRequest request("u", "s", Content::user("wait"));
            auto stream = co_await f.runner->run(std::move(request));
            auto first = co_await stream.next();  // the call: it reaches us before the tool runs
            auto ex = co_await asio::this_coro::executor;
            while (!waiting)
                co_await asio::post(ex, asio::use_awaitable);
            f.runner->cancel(first->invocation_id);
            asio::awaitable<std::vector<Event>> rest = drain(stream);
            error = co_await error_of(std::move(rest));
        }());
        REQUIRE(error);
        CHECK(error->code() == adk::errc::cancelled);
        CHECK(aborted);
        CHECK(model->requests().size() == 1);
        CHECK(f.session().events.back().interrupted);
    }
    SECTION("a model streaming slowly, its consumer gone")
    {
        auto model = scripted({ScriptedModel::chunks({"It ", "is "}).then_hang()});
        Fixture f(adk::LlmAgent::builder("agent").model(model).build());
        run(f.ioc, [&]() -> asio::awaitable<void> {
            adk::RunRequest request("u", "s", Content::user("talk"));
            request.run_config.streaming_mode = adk::StreamingMode::sse;
            auto stream = co_await f.runner->run(std::move(request));
            auto first = co_await stream.next();
            CHECK(first->partial);
            stream.cancel();
        }());
        adk::Session s = f.session();
        REQUIRE(s.events.size() == 2);  // the message, and the mark: no partial text is stored
        CHECK(s.events.back().interrupted);
        CHECK(s.events.back().author == "agent");
    }
}

TEST_CASE("resumable app on 4 threads: a parallel branch pauses for approval, the others finish, and the answer "
          "resumes only what is left",
          "[hitl][threads]")
{
    std::atomic<int> transfers{0};
    auto tool = adk::FunctionTool::create("transfer_money", "Sends money.",
                                          json::parse(R"({"type":"object","properties":{}})"),
                                          [&](adk::ToolContext&, json::object) -> asio::awaitable<json::value> {
                                              ++transfers;
                                              co_return json::object{{"sent", true}};
                                          });
    tool->set_require_confirmation(true);
    auto model = scripted({LlmResponse::function_call("transfer_money", {}), LlmResponse::text("Sent.")});
    auto banker = adk::LlmAgent::builder("banker").model(model).tool(tool).build();
    std::atomic<int> counter_runs{0};
    auto counter = std::make_shared<adk::test::FnAgent>("counter", [&](adk::InvocationContext& ctx, adk::EventSink& out) -> asio::awaitable<void> {
        ++counter_runs;
        for (int i = 0; i < 50; ++i) {
            Event count = ctx.make_event(Content::model(std::to_string(i)));
            co_await out.emit(std::move(count));
        }
    });
    auto fanout = std::make_shared<adk::ParallelAgent>("fanout", "Both at once.",
                                                       std::vector<std::shared_ptr<adk::Agent>>{banker, counter});
    asio::io_context ioc;
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::Runner runner({.app_name = "app", .agent = fanout, .session_service = sessions,
                        .resumability = {.is_resumable = true}});
    auto on_threads = [&](auto work) {
        auto result = asio::co_spawn(ioc, std::move(work), asio::use_future);
        ioc.restart();
        std::vector<std::thread> threads;
        for (int i = 0; i < 4; ++i)
            threads.emplace_back([&] { ioc.run(); });
        for (auto& t : threads)
            t.join();
        return result.get();
    };
    on_threads([&]() -> asio::awaitable<void> {
        adk::CreateSessionRequest create("app", "u", "s");
        co_await sessions->create_session(std::move(create));
    });
    std::vector<Event> asked = on_threads([&]() -> asio::awaitable<std::vector<Event>> {
        adk::RunRequest request("u", "s", Content::user("go"));
        auto stream = co_await runner.run(std::move(request));
        co_return co_await drain(stream);
    });
    const adk::FunctionCall* question = find_question(asked, adk::request_confirmation_function);
    REQUIRE(question);
    const std::string qid = question->id;
    CHECK(transfers == 0);
    std::vector<Event> resumed = on_threads([&]() -> asio::awaitable<std::vector<Event>> {
        Content message("user", {Part::from_function_response("adk_request_confirmation", {{"confirmed", true}}, qid)});
        adk::RunRequest request("u", "s", std::move(message));
        auto stream = co_await runner.run(std::move(request));
        co_return co_await drain(stream);
    });
    CHECK(transfers == 1);
    CHECK(counter_runs == 1);  // it finished before the pause: not run again
    REQUIRE(!resumed.empty());
    CHECK(resumed.back().author == "fanout");
    CHECK(resumed.back().actions.end_of_agent);
    for (const Event& e : resumed)
        CHECK(e.invocation_id == asked.front().invocation_id);
}
