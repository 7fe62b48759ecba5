// A process that runs invocations on one session of a session service picked by URL, for the tests that
// need several processes on one database, or one killed in the middle of a run.
//
//   adk_session_worker create URL SESSION
//   adk_session_worker count URL SESSION INVOCATIONS [EVENTS_PER_INVOCATION] [PAUSE_MS]
//   adk_session_worker write-sample URL SESSION      (then prints the session as `show` does)
//   adk_session_worker show URL SESSION
//
// `count` runs INVOCATIONS invocations (app "app", user "u") through a Runner, one after another. In each,
// an agent emits EVENTS_PER_INVOCATION events (default 1), each adding one to the state keys "counter" and
// "user:counter" as it read them, pausing PAUSE_MS milliseconds (default 0) before each. After each event
// is committed it prints "committed <event id>" and flushes, so that a parent that kills the process knows
// what must be in the database.
//
// `write-sample` creates a session with app:, user: and session state, and appends events of every kind
// (text, a function call and its response, state and artifact deltas, custom metadata with the user's own
// keys). `show` prints a session as one JSON line: its state, last update time in milliseconds and the
// events' ids, authors, invocation ids, times, content and actions, for tests/interop/adk_database to compare
// with what @google/adk reads.
#include <adk/adk.hpp>
#include <adk/services/service_url.hpp>

#include "support/agents.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_future.hpp>

#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>

namespace asio = boost::asio;

namespace {

std::int64_t count_of(const adk::InvocationContext& ctx, std::string_view key)
{
    auto v = ctx.state(key);
    return v ? v->as_int64() : 0;
}

asio::awaitable<void> count(std::shared_ptr<adk::SessionService> sessions, std::string session_id, int invocations,
                            int events, int pause_ms)
{
    auto agent = std::make_shared<adk::test::FnAgent>(
        "counter", [events, pause_ms](adk::InvocationContext& ctx, adk::EventSink& out) -> asio::awaitable<void> {
            asio::steady_timer pause(ctx.executor());
            for (int i = 0; i < events; ++i) {
                if (pause_ms > 0) {
                    pause.expires_after(std::chrono::milliseconds(pause_ms));
                    co_await pause.async_wait(asio::use_awaitable);
                }
                adk::Event ev = ctx.make_event(adk::Content::model("one more"));
                ev.actions.state_delta["counter"] = count_of(ctx, "counter") + 1;
                ev.actions.state_delta["user:counter"] = count_of(ctx, "user:counter") + 1;
                std::string id = ev.id;
                co_await out.emit(std::move(ev));
                std::printf("committed %s\n", id.c_str());
                std::fflush(stdout);
            }
        });
    adk::Runner runner({.app_name = "app", .agent = agent, .session_service = sessions});
    for (int n = 0; n < invocations; ++n) {
        adk::RunRequest request("u", session_id);
        auto stream = co_await runner.run(std::move(request));
        while (auto ev = co_await stream.next()) {
        }
    }
}

// Whole milliseconds, as a JavaScript Date holds a time stored to the microsecond.
long long whole_ms(double seconds)
{
    return std::llround(seconds * 1e6) / 1000;
}

// The parts of an event both ADKs keep the same way, and its time in milliseconds (adk_database.mjs does not
// compare it: @google/adk keeps an event's time in milliseconds where ADK Python and adk-cpp keep seconds).
boost::json::object comparable(const adk::Event& e)
{
    boost::json::value full = boost::json::value_from(e);
    boost::json::object out;
    for (const char* key : {"id", "author", "invocationId", "content", "customMetadata"})
        if (const auto* v = full.as_object().if_contains(key))
            out[key] = *v;
    out["timeMs"] = whole_ms(e.timestamp);
    boost::json::object actions;
    actions["stateDelta"] = e.actions.state_delta;
    actions["artifactDelta"] = boost::json::value_from(e.actions.artifact_delta);
    out["actions"] = std::move(actions);
    return out;
}

asio::awaitable<void> show(std::shared_ptr<adk::SessionService> sessions, std::string session_id)
{
    adk::GetSessionRequest request("app", "u", session_id);
    auto s = co_await sessions->get_session(std::move(request));
    if (!s)
        throw std::runtime_error("no session " + session_id);
    boost::json::array events;
    for (const auto& e : s->events)
        events.push_back(comparable(e));
    boost::json::object out{{"state", s->state},
                            {"lastUpdateTimeMs", whole_ms(s->last_update_time)},
                            {"events", std::move(events)}};
    std::cout << boost::json::serialize(out) << std::endl;
}

asio::awaitable<void> write_sample(std::shared_ptr<adk::SessionService> sessions, std::string session_id)
{
    boost::json::object state{{"app:theme", "dark"}, {"user:lang", "fr"}, {"topic", "weather"}};
    adk::CreateSessionRequest request("app", "u", session_id, state);
    adk::Session s = co_await sessions->create_session(std::move(request));
    auto append = [&](adk::Event e) -> asio::awaitable<void> { co_await sessions->append_event(s, e); };
    adk::Event question("user", adk::Content::user("What is the weather in Paris?"));
    question.invocation_id = "inv-1";
    question.actions.state_delta = {{"asked", 1}, {"user:questions", 1}};
    co_await append(std::move(question));
    adk::Content call_content("model", {adk::Part::from_function_call("get_weather", {{"city", "Paris"}, {"unitSystem", "metric"}}, "call-1")});
    adk::Event call("weather_agent", std::move(call_content));
    call.invocation_id = "inv-1";
    co_await append(std::move(call));
    adk::Content response_content("user", {adk::Part::from_function_response("get_weather", {{"tempC", 21}, {"sky_state", "clear"}}, "call-1")});
    adk::Event response("weather_agent", std::move(response_content));
    response.invocation_id = "inv-1";
    response.actions.state_delta = {{"app:calls", 1}, {"last_city", "Paris"}};
    co_await append(std::move(response));
    adk::Event answer("weather_agent", adk::Content::model("It is 21 degrees and clear in Paris."));
    answer.invocation_id = "inv-1";
    answer.actions.artifact_delta["report.txt"] = 0;
    answer.custom_metadata = {{"traceId", "t-1"}, {"nested_key", {{"innerKey", true}}}};
    co_await append(std::move(answer));
    asio::awaitable<void> shown = show(sessions, session_id);
    co_await std::move(shown);
}

}  // namespace

int main(int argc, char** argv)
{
    try {
        std::string command = argc > 1 ? argv[1] : "";
        bool two_args = command == "create" || command == "write-sample" || command == "show";
        if ((!two_args || argc != 4) && (command != "count" || argc < 5)) {
            std::cerr << "usage: adk_session_worker create URL SESSION\n"
                         "       adk_session_worker count URL SESSION INVOCATIONS [EVENTS] [PAUSE_MS]\n"
                         "       adk_session_worker write-sample URL SESSION\n"
                         "       adk_session_worker show URL SESSION\n";
            return 2;
        }
        auto sessions = adk::services::open_session_service(argv[2]);
        asio::io_context ioc;
        std::future<void> done;
        if (command == "create") {
            auto create = [sessions, id = std::string(argv[3])]() -> asio::awaitable<void> {
                adk::CreateSessionRequest request("app", "u", id);
                co_await sessions->create_session(std::move(request));
            };
            done = asio::co_spawn(ioc, create, asio::use_future);
        } else if (command == "write-sample") {
            done = asio::co_spawn(ioc, write_sample(sessions, argv[3]), asio::use_future);
        } else if (command == "show") {
            done = asio::co_spawn(ioc, show(sessions, argv[3]), asio::use_future);
        } else {
            int events = argc > 5 ? std::stoi(argv[5]) : 1;
            int pause_ms = argc > 6 ? std::stoi(argv[6]) : 0;
            done = asio::co_spawn(ioc, count(sessions, argv[3], std::stoi(argv[4]), events, pause_ms), asio::use_future);
        }
        ioc.run();
        done.get();
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "adk_session_worker: " << e.what() << "\n";
        return 1;
    }
}
