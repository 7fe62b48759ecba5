// The program of ../shared/docs/DESIGN.md ("User code that must compile and work unchanged"), built against the
// installed package. Prints the stream, then the session as stored.
#include <adk/adk.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <iostream>

namespace asio = boost::asio;

class Counter final : public adk::Agent {
public:
    explicit Counter(int n) : adk::Agent("counter", "Counts."), n_(n) {}

private:
    asio::awaitable<void> run_impl(adk::InvocationContext& ctx, adk::EventSink& out) override
    {
        for (int i = 1; i <= n_; ++i) {
            adk::Event ev = ctx.make_event(adk::Content::model(std::to_string(i)));
            ev.actions.state_delta["count"] = i;
            co_await out.emit(std::move(ev));
        }
    }
    int n_;
};

asio::awaitable<void> demo()
{
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::Runner runner({.app_name = "demo", .agent = std::make_shared<Counter>(3), .session_service = sessions});
    adk::Session s = co_await sessions->create_session({"demo", "u1"});
    auto events = co_await runner.run("u1", s.id, adk::Content::user("go"));
    while (auto ev = co_await events.next())
        std::cout << ev->author << ": " << ev->text() << "\n";
    std::optional<adk::Session> after = co_await sessions->get_session({"demo", "u1", s.id});
    std::cout << "events=" << after->events.size() << " count=" << after->state["count"].as_int64() << "\n";
}

int main()
{
    asio::io_context ioc;
    asio::co_spawn(ioc, demo(), [](std::exception_ptr e) {
        if (e)
            std::rethrow_exception(e);
    });
    ioc.run();
}
