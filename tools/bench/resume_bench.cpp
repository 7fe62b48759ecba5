// Resume time of a resumable invocation with many agents and events (issue 32's seam): a SequentialAgent of
// `agents` sub-agents, each emitting `events` events; the last pauses the first time it runs. Measured: the
// first run up to the pause, and the resume (RunRequest::invocation_id) to the end. Before the run state was
// read once per invocation, every agent that started replayed the invocation's events (agents x events).
// Prints the median of several rounds, on one thread, in-memory sessions.
//
//   build/release/tools/bench/resume_bench [agents] [events per agent] [rounds]
#include <adk/adk.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace asio = boost::asio;

namespace {

class Step final : public adk::Agent {
public:
    Step(std::string name, int events, bool pauses) : adk::Agent(std::move(name), "A step."), events_(events), pauses_(pauses) {}

private:
    asio::awaitable<void> run_impl(adk::InvocationContext& ctx, adk::EventSink& out) override
    {
        if (pauses_ && !ctx.resumed()) {
            ctx.pause();
            co_return;
        }
        for (int i = 0; i < events_; ++i) {
            adk::Event ev = ctx.make_event(adk::Content::model("step"));
            co_await out.emit(std::move(ev));
        }
    }
    int events_;
    bool pauses_;
};

struct Round {
    double first_ms = 0;
    double resume_ms = 0;
    long events = 0;
};

Round one_round(int agents, int events)
{
    std::vector<std::shared_ptr<adk::Agent>> steps;
    for (int i = 0; i < agents; ++i)
        steps.push_back(std::make_shared<Step>("step_" + std::to_string(i), events, i == agents - 1));
    auto pipeline = std::make_shared<adk::SequentialAgent>("pipeline", "Steps.", std::move(steps));
    asio::io_context ioc(1);
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::Runner runner({.app_name = "bench",
                        .agent = pipeline,
                        .session_service = sessions,
                        .resumability = {.is_resumable = true},
                        .single_threaded = true});
    Round r;
    auto body = [&]() -> asio::awaitable<void> {
        adk::Session s = co_await sessions->create_session({"bench", "u"});
        auto t0 = std::chrono::steady_clock::now();
        std::string invocation;
        adk::Content message = adk::Content::user("go");
        auto first = co_await runner.run("u", s.id, std::move(message));
        while (auto ev = co_await first.next())
            invocation = ev->invocation_id;
        auto t1 = std::chrono::steady_clock::now();
        adk::RunRequest resume("u", s.id);
        resume.invocation_id = invocation;
        auto second = co_await runner.run(std::move(resume));
        while (auto ev = co_await second.next())
            ++r.events;
        auto t2 = std::chrono::steady_clock::now();
        r.first_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
        r.resume_ms = std::chrono::duration<double, std::milli>(t2 - t1).count();
    };
    asio::co_spawn(ioc, body(), [](std::exception_ptr e) {
        if (e)
            std::rethrow_exception(e);
    });
    ioc.run();
    return r;
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv)
{
    const int agents = argc > 1 ? std::atoi(argv[1]) : 100;
    const int events = argc > 2 ? std::atoi(argv[2]) : 10;
    const int rounds = argc > 3 ? std::atoi(argv[3]) : 7;
    if (agents < 1 || events < 0 || rounds < 1) {
        std::fprintf(stderr, "usage: resume_bench [agents >= 1] [events per agent] [rounds >= 1]\n");
        return 2;
    }
    one_round(agents, events);  // warm-up
    std::vector<double> first, resume;
    long resumed_events = 0;
    for (int i = 0; i < rounds; ++i) {
        Round r = one_round(agents, events);
        first.push_back(r.first_ms);
        resume.push_back(r.resume_ms);
        resumed_events = r.events;
    }
    std::printf("%d agents x %d events: first run to the pause %.2f ms, resume to the end %.2f ms "
                "(%ld events after resuming), median of %d\n",
                agents, events, median(first), median(resume), resumed_events, rounds);
}
