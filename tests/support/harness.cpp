#include "support/agents.hpp"
#include "support/manual_time.hpp"
#include "support/run.hpp"

#include <boost/asio/use_future.hpp>

#include <thread>

namespace adk::test {

std::vector<Event> Harness::send(std::shared_ptr<Agent> agent, std::string text, RunConfig config,
                                 std::string session_id)
{
    return send(std::move(agent), Content::user(std::move(text)), std::move(config), std::move(session_id));
}

std::vector<Event> Harness::send(std::shared_ptr<Agent> agent, Content message, RunConfig config,
                                 std::string session_id)
{
    Runner runner({.app_name = "app", .agent = std::move(agent), .session_service = sessions,
                   .artifact_service = artifacts, .memory_service = memory, .plugins = plugins});
    auto body = [&]() -> asio::awaitable<std::vector<Event>> {
        auto existing = co_await sessions->get_session({"app", "user1", session_id});
        if (!existing)
            co_await sessions->create_session({"app", "user1", session_id});
        auto started = runner.run("user1", session_id, std::move(message), std::move(config));
        auto stream = co_await std::move(started);
        co_return co_await drain(stream);
    };
    if (threads <= 1)
        return clock ? run(ioc, passing_time(*clock, time_step, body())) : run(ioc, body());
    ioc.restart();
    auto result = asio::co_spawn(ioc, body(), asio::use_future);
    std::vector<std::thread> pool;
    for (int i = 0; i < threads; ++i)
        pool.emplace_back([this] { ioc.run(); });
    for (auto& t : pool)
        t.join();  // returns once nothing is left running
    return result.get();
}

}  // namespace adk::test
