// A process that runs invocations on one session of a session service picked by URL, for the tests that
// need several processes on one database, or one killed in the middle of a run.
//
//   adk_session_worker create URL SESSION
//   adk_session_worker count URL SESSION INVOCATIONS [EVENTS_PER_INVOCATION] [PAUSE_MS]
//
// `count` runs INVOCATIONS invocations (app "app", user "u") through a Runner, one after another. In each,
// an agent emits EVENTS_PER_INVOCATION events (default 1), each adding one to the state keys "counter" and
// "user:counter" as it read them, pausing PAUSE_MS milliseconds (default 0) before each. After each event
// is committed it prints "committed <event id>" and flushes, so that a parent that kills the process knows
// what must be in the database.
#include <adk/adk.hpp>
#include <adk/services/service_url.hpp>

#include "support/agents.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_future.hpp>

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

}  // namespace

int main(int argc, char** argv)
{
    try {
        std::string command = argc > 1 ? argv[1] : "";
        if ((command != "create" || argc != 4) && (command != "count" || argc < 5)) {
            std::cerr << "usage: adk_session_worker create URL SESSION\n"
                         "       adk_session_worker count URL SESSION INVOCATIONS [EVENTS] [PAUSE_MS]\n";
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
