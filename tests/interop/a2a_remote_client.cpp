// adk-cpp's RemoteA2aAgent against agents built with @a2a-js/sdk's server (interop/a2a/sdk_server.mjs), on each
// binding: an answer streamed in chunks and a second artifact, a question in text answered on the next turn (the
// same remote task), a failed task as an error event, and agents that take an API key (in a header, in the query)
// asked of the person and presented from the CredentialService.
//
// Then against an agent served over A2A 0.3 by @google/adk's toA2a (interop/a2a/adk_server.mjs): its answer streamed,
// a second turn in the same remote context.
//
//   a2a_remote_client BASE_URL ADK_BASE_URL
//
// Prints "PASS binding: check" or "FAIL binding: check: why" per check, then "a2a remote interop: PASS" when all pass.
#include <adk/a2a/remote_agent.hpp>
#include <adk/adk.hpp>

#include "support/session_runner.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/serialize.hpp>

#include <iostream>

namespace a2a = adk::a2a;
namespace asio = boost::asio;
using Local = adk::test::SessionRunner;

namespace {

int failures = 0;

void check(const std::string& binding, const std::string& name, bool ok, const std::string& why = {})
{
    if (ok) {
        std::cout << "PASS " << binding << ": " << name << "\n";
    } else {
        ++failures;
        std::cout << "FAIL " << binding << ": " << name << ": " << why << "\n";
    }
}

asio::awaitable<std::vector<adk::Event>> say(Local& local, std::string_view text)
{
    adk::Content message("user", {adk::Part::from_text(std::string(text))});
    co_return co_await local.say(std::move(message));
}

std::string texts(const std::vector<adk::Event>& events, bool partial)
{
    std::string out;
    for (const auto& e : events)
        if (e.partial == partial && e.content && !e.text().empty())
            out += "[" + e.text() + "]";
    return out;
}

std::string metadata(const adk::Event& e, const char* key)
{
    const boost::json::value* v = e.custom_metadata.if_contains(key);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

// The question for a credential (adk_request_credential) among `events`: its call; none when not asked.
std::optional<adk::FunctionCall> credential_question(const std::vector<adk::Event>& events)
{
    for (const auto& e : events)
        for (const auto& call : e.function_calls())
            if (call.name == "adk_request_credential")
                return call;
    return std::nullopt;
}

// The person's answer: the auth config asked with, the API key filled in.
adk::Content key_answer(const adk::FunctionCall& question, std::string key)
{
    boost::json::object config = question.args.at("authConfig").as_object();
    config["rawAuthCredential"] = boost::json::object{{"authType", "apiKey"}, {"apiKey", std::move(key)}};
    adk::Part answer;
    answer.function_response.emplace(question.id, question.name, std::move(config));
    return adk::Content("user", {answer});
}

asio::awaitable<std::shared_ptr<a2a::RemoteA2aAgent>> agent(std::string_view base, std::string_view name,
                                                           std::string_view binding)
{
    auto reader = a2a::RemoteA2aAgent::create(
        {.name = std::string(name), .card_url = std::string(base) + "/" + std::string(name)});
    a2a::AgentCard card = co_await reader->card();
    std::erase_if(card.supported_interfaces,
                  [&](const a2a::AgentInterface& i) { return i.protocol_binding != binding; });
    co_return a2a::RemoteA2aAgent::create({.card = card});
}

// @google/adk's A2A server (0.3 only: its card's url and protocolVersion).
asio::awaitable<void> run_adk(std::string base)
{
    const std::string binding = "@google/adk 0.3";
    Local local(a2a::RemoteA2aAgent::create({.name = "echo", .card_url = base + "/echo"}));
    const std::vector<adk::Event> events = co_await say(local, "Hello");
    const std::string streamed = texts(events, true);
    const std::string whole = texts(events, false);
    check(binding, "an answer streamed in chunks, then whole", streamed == "[Echo: ][Hello]" && whole == "[Echo: Hello]",
          streamed + " " + whole);
    const std::vector<adk::Event> again = co_await say(local, "Again");
    const bool same_context = !events.empty() && !again.empty() &&
                              metadata(events.back(), "a2a:context_id") == metadata(again.back(), "a2a:context_id") &&
                              !metadata(again.back(), "a2a:context_id").empty();
    check(binding, "a second turn, in the same remote context", texts(again, false) == "[Echo: Again]" && same_context,
          texts(again, false));
}

asio::awaitable<void> run_all(std::string base, std::string adk_base)
{
    co_await run_adk(std::move(adk_base));
    for (const std::string binding : {"JSONRPC", "HTTP+JSON"}) {
        {
            Local local(co_await agent(base, "itinerary", binding));
            const std::vector<adk::Event> events = co_await say(local, "Paris");
            const std::string streamed = texts(events, true);
            const std::string whole = texts(events, false);
            check(binding, "an answer streamed in chunks, then whole",
                  streamed == "[Flight AF123 ][leaves at 9:00 ][for: Paris]", streamed);
            check(binding, "its work, and every artifact",
                  whole == "[Looking for flights.][Flight AF123 leaves at 9:00 for: Paris][Receipt 42.]", whole);
        }
        {
            Local local(co_await agent(base, "booking", binding));
            const std::vector<adk::Event> asked = co_await say(local, "Book me a flight.");
            const std::string question = texts(asked, false);
            const bool waiting = !asked.empty() && metadata(asked.back(), "a2a:task_state") == "TASK_STATE_INPUT_REQUIRED";
            check(binding, "a question in text (INPUT_REQUIRED)", question == "[Which date?]" && waiting, question);
            const std::vector<adk::Event> booked = co_await say(local, "Friday");
            const std::string answer = texts(booked, false);
            const bool same_task = !asked.empty() && !booked.empty() &&
                                   metadata(asked.back(), "a2a:task_id") == metadata(booked.back(), "a2a:task_id");
            check(binding, "the answer goes to the same task, which completes", answer == "[Booked for Friday.]" && same_task,
                  answer);
        }
        {
            Local local(co_await agent(base, "sold_out", binding));
            const std::vector<adk::Event> events = co_await say(local, "Book me a flight.");
            const bool failed = !events.empty() && events.back().error_code == "A2A_TASK_FAILED" &&
                                events.back().error_message == "No seats left." && texts(events, false).empty();
            check(binding, "a failed task: an error event, no answer", failed,
                  events.empty() ? "no event" : events.back().error_message.value_or("no error"));
        }
        for (const std::string where : {"header", "query"}) {
            Local local(co_await agent(base, "keyed_" + where, binding));
            const std::vector<adk::Event> asked = co_await say(local, "Hello");
            const std::optional<adk::FunctionCall> question = credential_question(asked);
            const boost::json::value* scheme =
                question ? question->args.at("authConfig").as_object().if_contains("authScheme") : nullptr;
            check(binding, "an API key in the " + where + " asked of the person",
                  scheme && scheme->as_object().at("in") == where.c_str() && texts(asked, false).empty(),
                  scheme ? boost::json::serialize(*scheme) : "no question");
            if (!question)
                continue;
            adk::Content wrong = key_answer(*question, "wrong-key");
            const std::vector<adk::Event> refused = co_await local.say(std::move(wrong));
            const std::optional<adk::FunctionCall> again = credential_question(refused);
            const std::string message =
                again ? std::string(again->args.at("message").as_string()) : std::string("no question");
            check(binding, "a wrong key (" + where + ") refused, asked again",
                  message.find("refused the credential kept for it (HTTP 401") != std::string::npos, message);
            if (!again)
                continue;
            adk::Content right = key_answer(*again, "interop-key");
            const std::vector<adk::Event> welcomed = co_await local.say(std::move(right));
            const std::string answer = texts(welcomed, false);
            check(binding, "the key (" + where + ") presented, the turn answered",
                  answer == "[Welcome, key holder: Hello]", answer);
            const std::vector<adk::Event> later = co_await say(local, "Again");
            check(binding, "the key kept for the next turn (" + where + ")",
                  !credential_question(later) && texts(later, false) == "[Welcome, key holder: Again]",
                  texts(later, false));
        }
    }
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc != 3) {
        std::cerr << "usage: a2a_remote_client BASE_URL ADK_BASE_URL\n";
        return 2;
    }
    asio::io_context ioc;
    std::exception_ptr failed;
    asio::co_spawn(ioc, run_all(argv[1], argv[2]), [&](std::exception_ptr e) { failed = e; });
    ioc.run();
    if (failed) {
        try {
            std::rethrow_exception(failed);
        } catch (const std::exception& e) {
            std::cout << "FAIL: " << e.what() << "\n";
            return 1;
        }
    }
    if (failures) {
        std::cout << "a2a remote interop: " << failures << " failed\n";
        return 1;
    }
    std::cout << "a2a remote interop: PASS\n";
    return 0;
}
