// A Runner over one agent and one in-memory session: say() sends a message (streaming) and gathers the events of
// its run. What tests and test programs use to drive an agent turn by turn.
#pragma once

#include <adk/adk.hpp>

#include <vector>

namespace adk::test {

class SessionRunner {
public:
    explicit SessionRunner(std::shared_ptr<adk::Agent> root)
        : runner(adk::RunnerOptions{.app_name = "local",
                                    .agent = std::move(root),
                                    .session_service = sessions,
                                    .credential_service = credentials})
    {
    }

    // Makes the session ("local", user "u", id "s") when it is not made yet.
    asio::awaitable<void> create()
    {
        if (!created) {
            adk::CreateSessionRequest request("local", "u", "s");
            (void)co_await sessions->create_session(std::move(request));
            created = true;
        }
    }

    asio::awaitable<std::vector<adk::Event>> say(adk::Content message)
    {
        co_await create();
        adk::RunRequest request("u", "s", std::move(message));
        request.run_config = config;
        request.run_config.streaming_mode = adk::StreamingMode::sse;
        adk::EventStream stream = co_await runner.run(std::move(request));
        std::vector<adk::Event> events;
        while (auto e = co_await stream.next())
            events.push_back(std::move(*e));
        co_return events;
    }

    adk::RunConfig config;  // each run's (streamed)
    std::shared_ptr<adk::InMemorySessionService> sessions = std::make_shared<adk::InMemorySessionService>();
    std::shared_ptr<adk::InMemoryCredentialService> credentials = std::make_shared<adk::InMemoryCredentialService>();
    adk::Runner runner;
    bool created = false;
};

}  // namespace adk::test
