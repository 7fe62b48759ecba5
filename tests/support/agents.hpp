// Agents for tests: a custom agent whose body is a lambda, and helpers that run and collect.
#pragma once

#include <adk/adk.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/this_coro.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace adk::test {

namespace asio = boost::asio;

class FnAgent final : public Agent {
public:
    using Body = std::function<asio::awaitable<void>(InvocationContext&, EventSink&)>;

    FnAgent(std::string name, Body body, std::vector<std::shared_ptr<Agent>> sub_agents = {})
        : Agent(std::move(name), "A test agent.", std::move(sub_agents)), body_(std::move(body))
    {
    }

private:
    asio::awaitable<void> run_impl(InvocationContext& ctx, EventSink& out) override { co_await body_(ctx, out); }
    Body body_;
};

// A model whose one answer to each request a function computes (called on the invocation's strand; a function
// shared by invocations on several threads guards what it keeps).
class FnModel final : public Model {
public:
    using Answer = std::function<LlmResponse(const LlmRequest&)>;

    explicit FnModel(Answer answer, std::string name = "fn-model") : answer_(std::move(answer)), name_(std::move(name))
    {
    }
    std::string_view name() const override { return name_; }
    asio::awaitable<Stream<LlmResponse>> generate(LlmRequest request, bool) override
    {
        auto producer = [answer = answer_(request)](Sink<LlmResponse> sink) mutable -> asio::awaitable<void> {
            co_await sink.emit(std::move(answer));
        };
        co_return spawn_stream<LlmResponse>(co_await asio::this_coro::executor, std::move(producer));
    }

private:
    Answer answer_;
    std::string name_;
};

// An agent that emits `n` text events "1".."n", each setting state "count".
inline std::shared_ptr<FnAgent> counting_agent(std::string name, int n)
{
    return std::make_shared<FnAgent>(std::move(name), [n](InvocationContext& ctx, EventSink& out) -> asio::awaitable<void> {
        for (int i = 1; i <= n; ++i) {
            Event ev = ctx.make_event(Content::model(std::to_string(i)));
            ev.actions.state_delta["count"] = i;
            co_await out.emit(std::move(ev));
        }
    });
}

// Reads a stream to its end.
inline asio::awaitable<std::vector<Event>> drain(EventStream& stream)
{
    std::vector<Event> events;
    while (auto ev = co_await stream.next())
        events.push_back(std::move(*ev));
    co_return events;
}

// Creates a session and runs one message through a Runner, collecting every event.
inline asio::awaitable<std::vector<Event>> run_once(Runner& runner, std::string session_id, std::string text,
                                                    RunConfig config = {})
{
    auto stream = co_await runner.run("user1", std::move(session_id), Content::user(std::move(text)), config);
    co_return co_await drain(stream);
}

}  // namespace adk::test

namespace adk::test {

// A Runner over in-memory services, for running one agent message by message. With threads > 1 the
// io_context runs on that many threads while the message is handled.
struct Harness {
    explicit Harness(int threads_ = 1) : threads(threads_) {}
    int threads;
    asio::io_context ioc;
    std::shared_ptr<InMemorySessionService> sessions = std::make_shared<InMemorySessionService>();
    std::shared_ptr<ArtifactService> artifacts = std::make_shared<InMemoryArtifactService>();
    std::shared_ptr<MemoryService> memory;  // none unless a test sets one
    std::vector<std::shared_ptr<Plugin>> plugins;
    // Set by a test of time (one thread): each run's timers on the test's clock, moved by `time_step` at each turn
    // (manual_time.hpp's passing_time).
    testing::ManualClock* clock = nullptr;
    Clock::duration time_step = std::chrono::milliseconds(100);

    // Sends `text` to `agent` in session `session_id` (created when missing) and collects every event.
    std::vector<Event> send(std::shared_ptr<Agent> agent, std::string text, RunConfig config = {},
                            std::string session_id = "s");
    // The same with a message of any parts.
    std::vector<Event> send(std::shared_ptr<Agent> agent, Content message, RunConfig config = {},
                            std::string session_id = "s");
};

}  // namespace adk::test
