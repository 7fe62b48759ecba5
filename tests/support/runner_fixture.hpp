// A Runner over in-memory services with session "s" of user "u" in app "app", run message by message: what the
// tests of pausing, answering and resuming share.
#pragma once

#include <adk/adk.hpp>

#include "support/agents.hpp"
#include "support/manual_time.hpp"
#include "support/run.hpp"

#include <boost/asio/io_context.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace adk::test {

// What one run gave back: the events it streamed, or the error it ended with (the events of a run that failed are
// in the session: RunnerFixture::session()).
struct Ran {
    std::vector<Event> events;
    std::optional<Error> error;
};

struct RunnerFixture {
    asio::io_context ioc;
    std::shared_ptr<InMemorySessionService> sessions = std::make_shared<InMemorySessionService>();
    std::shared_ptr<InMemoryArtifactService> artifacts = std::make_shared<InMemoryArtifactService>();
    std::unique_ptr<Runner> runner;
    // Set by a test of time: each run's timers on the test's clock, moved by `time_step` at each turn
    // (manual_time.hpp's passing_time).
    testing::ManualClock* clock = nullptr;
    Clock::duration time_step = std::chrono::milliseconds(100);

    explicit RunnerFixture(std::shared_ptr<Agent> agent, bool resumable = false)
    {
        runner = std::make_unique<Runner>(RunnerOptions{.app_name = "app",
                                                        .agent = std::move(agent),
                                                        .session_service = sessions,
                                                        .artifact_service = artifacts,
                                                        .resumability = {.is_resumable = resumable}});
        run(ioc, [this]() -> asio::awaitable<void> {
            CreateSessionRequest create("app", "u", "s");
            co_await sessions->create_session(std::move(create));
        }());
    }

    Ran send(RunRequest request)
    {
        auto running = [&]() -> asio::awaitable<Ran> {
            Ran ran;
            try {
                auto stream = co_await runner->run(std::move(request));
                ran.events = co_await drain(stream);
            } catch (const Error& e) {
                ran.error = e;
            }
            co_return ran;
        };
        if (clock)
            return run(ioc, passing_time(*clock, time_step, running()));
        return run(ioc, running());
    }
    Ran say(std::string text) { return send(RunRequest("u", "s", Content::user(std::move(text)))); }
    Ran answer(std::string id, std::string name, json::object response, std::string user = "u")
    {
        Content message("user", {Part::from_function_response(std::move(name), std::move(response), std::move(id))});
        return send(RunRequest(std::move(user), "s", std::move(message)));
    }
    // Continues invocation `invocation` (RunRequest::invocation_id).
    Ran resume(std::string invocation)
    {
        RunRequest request("u", "s");
        request.invocation_id = std::move(invocation);
        return send(std::move(request));
    }
    Session session()
    {
        return run(ioc, [this]() -> asio::awaitable<Session> {
            GetSessionRequest get("app", "u", "s");
            auto s = co_await sessions->get_session(std::move(get));
            co_return std::move(*s);
        }());
    }
};

}  // namespace adk::test
