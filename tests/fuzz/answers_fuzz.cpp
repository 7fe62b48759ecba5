// A client's answers to an agent's function calls (the newMessage of a run that answers a confirmation, a
// credential request, a workflow's question (adk_request_input, its answer checked against its response_schema)
// or a long-running tool): any JSON read as the message either is refused with adk::Error or passes the Runner's
// checks; a message that passes answers only calls the session holds, once each, that an agent made here (the
// newest call of each id, never one of an imported history), and no credential is left in it. The input is the
// message, or {"history": [events imported before the agent's], "message": ...}.
#include <adk/core/error.hpp>
#include <adk/core/event.hpp>
#include <adk/tools/json_schema.hpp>
#include <adk/tools/tool_confirmation.hpp>

#include "runner/answers.hpp"

#include "fuzz.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_to.hpp>

#include <set>

namespace json = boost::json;

namespace {

// The schema the workflow's question gives its answer.
json::value input_schema()
{
    return json::parse(R"({"type":"object","properties":{"ok":{"type":"boolean"},"note":{"type":"string"}},"required":["ok"]})");
}

// A session whose agent made a call that waits for approval, one that waits for a credential, and a
// long-running call; the questions' ids are "q-confirm" and "q-credential", the long-running call's "c-long".
adk::Session waiting_session()
{
    adk::Session s;
    s.app_name = "app";
    s.user_id = "u";
    s.id = "s";
    adk::Event calls("agent", adk::Content("model", {adk::Part::from_function_call("pay", {{"amount", 5}}, "c-pay"),
                                                     adk::Part::from_function_call("read", {}, "c-read"),
                                                     adk::Part::from_function_call("wait", {}, "c-long")}));
    calls.invocation_id = "e-1";
    calls.long_running_tool_ids = {"c-long"};
    s.events.push_back(calls);
    json::object original{{"id", "c-pay"}, {"name", "pay"}, {"args", {{"amount", 5}}}};
    adk::Event questions(
        "agent",
        adk::Content("user", {adk::Part::from_function_call(
                                  "adk_request_confirmation",
                                  {{"originalFunctionCall", original}, {"toolConfirmation", {{"confirmed", false}}}},
                                  "q-confirm"),
                              adk::Part::from_function_call(
                                  "adk_request_credential",
                                  {{"functionCallId", "c-read"}, {"authConfig", {{"credentialKey", "k"}}}},
                                  "q-credential")}));
    questions.invocation_id = "e-1";
    questions.long_running_tool_ids = {"q-confirm", "q-credential"};
    s.events.push_back(questions);
    adk::Event input("ask", adk::Content("model", {adk::Part::from_function_call(
                                                      "adk_request_input",
                                                      {{"interruptId", "q-input"}, {"message", "Ship it?"},
                                                       {"response_schema", input_schema()}},
                                                      "q-input")}));
    input.invocation_id = "e-1";
    input.long_running_tool_ids = {"q-input"};
    s.events.push_back(input);
    return s;
}

bool holds_secret(const json::value& v)
{
    if (const json::object* o = v.if_object()) {
        if (o->contains("rawAuthCredential") || o->contains("exchangedAuthCredential"))
            return true;
        for (const auto& kv : *o)
            if (holds_secret(kv.value()))
                return true;
    }
    if (const json::array* a = v.if_array())
        for (const auto& item : *a)
            if (holds_secret(item))
                return true;
    return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size)
{
    boost::system::error_code ec;
    json::value v = json::parse(adk::fuzz::as_text(data, size), ec);
    if (ec)
        return 0;
    adk::Session session = waiting_session();
    if (json::object* o = v.if_object(); o && o->contains("history") && o->contains("message")) {
        // A history imported as the server imports it: each event read, then marked, before the agent's own.
        std::vector<adk::Event> imported;
        if (const json::array* history = o->at("history").if_array()) {
            for (const json::value& e : *history) {
                adk::Event event;
                if (adk::fuzz::only_adk_errors([&] { event = json::value_to<adk::Event>(e); })) {
                    event.custom_metadata[adk::imported_event_key] = true;
                    imported.push_back(std::move(event));
                }
            }
        }
        session.events.insert(session.events.begin(), imported.begin(), imported.end());
        json::value message = std::move(o->at("message"));
        v = std::move(message);
    }
    if (const json::object* o = v.if_object()) {
        adk::fuzz::only_adk_errors([&] { (void)adk::read_confirmation_answer(*o); });
        // A workflow's question: an answer that is read fits the schema; without one, anything is an answer.
        const json::value schema = input_schema();
        json::value answer;
        if (adk::fuzz::only_adk_errors([&] { answer = adk::read_input_answer(*o, &schema); }))
            adk::fuzz::check(!adk::schema_mismatch(schema, answer), "an answer that is read fits the schema");
        adk::fuzz::check(adk::fuzz::only_adk_errors([&] { (void)adk::read_input_answer(*o, nullptr); }),
                         "without a schema every answer is read");
    }
    adk::Content message;
    if (!adk::fuzz::only_adk_errors([&] { message = json::value_to<adk::Content>(v); }))
        return 0;
    adk::detail::Answers answers;
    if (!adk::fuzz::only_adk_errors([&] { answers = adk::detail::check_answers(session, message, "app"); }))
        return 0;
    std::set<std::string> seen;
    for (const adk::Part& p : message.parts) {
        if (!p.function_response)
            continue;
        const adk::FunctionResponse& r = *p.function_response;
        adk::fuzz::check(seen.insert(r.id).second, "a call is answered once per message");
        adk::fuzz::check(r.id == "c-pay" || r.id == "c-read" || r.id == "c-long" || r.id == "q-confirm" ||
                             r.id == "q-credential" || r.id == "q-input",
                         "an answer names a call of the session");
        if (r.name == adk::request_input_function) {
            const json::value schema = input_schema();
            adk::fuzz::check(adk::fuzz::only_adk_errors([&] { (void)adk::read_input_answer(r.response, &schema); }),
                             "an answer the Runner takes fits the question's schema");
        }
        // The call answered is the newest of its id (a model may reuse an id); an imported one is never answered.
        const adk::Event* maker = nullptr;
        for (const adk::Event& e : session.events)
            for (const adk::FunctionCall& call : e.function_calls())
                if (call.id == r.id && e.author != "user")
                    maker = &e;
        adk::fuzz::check(maker && !adk::is_imported(*maker), "no answer is taken for a call that was imported");
        if (r.name == adk::request_credential_function)
            adk::fuzz::check(!holds_secret(json::value(r.response)), "no credential is left in the stored answer");
    }
    adk::fuzz::check(!answers.invocation_id || *answers.invocation_id == "e-1", "the answers' invocation is the calls'");
    return 0;
}
