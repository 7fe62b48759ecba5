#include "support/agents.hpp"
#include "support/run.hpp"

#include <boost/asio/use_future.hpp>

#include <thread>

namespace adk::test {

std::vector<Event> Harness::send(std::shared_ptr<Agent> agent, std::string text, RunConfig config,
                                 std::string session_id)
{
    Runner runner({.app_name = "app", .agent = std::move(agent), .session_service = sessions,
                   .artifact_service = artifacts, .plugins = plugins});
    auto body = [&]() -> asio::awaitable<std::vector<Event>> {
        auto existing = co_await sessions->get_session({"app", "user1", session_id});
        if (!existing)
            co_await sessions->create_session({"app", "user1", session_id});
        auto stream = co_await runner.run("user1", session_id, Content::user(text), config);
        co_return co_await drain(stream);
    };
    if (threads <= 1)
        return run(ioc, body());
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
