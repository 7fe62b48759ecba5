// Micro-benchmark: events per second through Runner + InMemorySessionService with a custom agent, on one
// thread. Two workloads:
//   committed: invocations of 100 events, each stored in the session before the agent goes on, a new
//              session per invocation (the cost of run(), the user's message and the commits included);
//   partial:   one invocation streaming partial events (a model's tokens): never stored.
// Prints the best and the median of several rounds.
//
//   build/release/tools/bench/adk_bench [rounds]
#include <adk/adk.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace asio = boost::asio;

namespace {

class Emitter final : public adk::Agent {
public:
    Emitter(int n, bool partial) : adk::Agent("emitter", "Emits events."), n_(n), partial_(partial) {}

private:
    asio::awaitable<void> run_impl(adk::InvocationContext& ctx, adk::EventSink& out) override
    {
        for (int i = 0; i < n_; ++i) {
            adk::Event ev = ctx.make_event(adk::Content::model("token"));
            ev.partial = partial_;
            co_await out.emit(std::move(ev));
        }
    }
    int n_;
    bool partial_;
};

// Events per second for one round of `invocations` runs of `per_invocation` events.
double round_rate(int invocations, int per_invocation, bool partial)
{
    asio::io_context ioc(1);
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::Runner runner({.app_name = "bench",
                        .agent = std::make_shared<Emitter>(per_invocation, partial),
                        .session_service = sessions});
    double seconds = 0;
    long received = 0;
    auto body = [&]() -> asio::awaitable<void> {
        auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < invocations; ++i) {
            adk::Session s = co_await sessions->create_session({"bench", "u"});
            auto events = co_await runner.run("u", s.id, adk::Content::user("go"));
            while (auto ev = co_await events.next())
                ++received;
        }
        seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    asio::co_spawn(ioc, body(), [](std::exception_ptr e) {
        if (e)
            std::rethrow_exception(e);
    });
    ioc.run();
    if (received != static_cast<long>(invocations) * per_invocation) {
        std::fprintf(stderr, "expected %d events, got %ld\n", invocations * per_invocation, received);
        std::exit(1);
    }
    return received / seconds;
}

void report(const char* label, int invocations, int per_invocation, bool partial, int rounds)
{
    std::vector<double> rates;
    for (int r = 0; r < rounds; ++r)
        rates.push_back(round_rate(invocations, per_invocation, partial));
    std::sort(rates.begin(), rates.end());
    std::printf("%-58s best %9.0f events/s   median %9.0f events/s   (%d x %d events, %d rounds)\n", label,
                rates.back(), rates[rates.size() / 2], invocations, per_invocation, rounds);
}

}  // namespace

int main(int argc, char** argv)
{
    int rounds = argc > 1 ? std::atoi(argv[1]) : 5;
    report("Runner + in-memory session, committed events", 2000, 100, false, rounds);
    report("Runner + in-memory session, partial events", 1, 1000000, true, rounds);
}
