// Appends to session services, by URL (adk::services::open_session_service): how many per second, the
// latency of each (p50, p99), the CPU each costs the thread that runs the io_context (the runtime's thread;
// a backend's own threads and its server are not counted there), and the CPU of the whole process (the
// backend's threads too; a database server's own CPU is not counted). ts/session_bench.mjs runs the same
// workloads on @google/adk's DatabaseSessionService.
//
//   session_bench [--appends N] URL...        e.g. memory:// sqlite:////tmp/bench.db postgresql://...
//
// Two workloads per URL: one session, appends one after another; 100 sessions, one writer each, all at once.
// Each event is a model text of 200 bytes with a one-key state delta, as an agent's reply commits it.
// tools/bench/sessions.sh runs it on the three backends, PostgreSQL started for it.
#include <adk/adk.hpp>
#include <adk/services/service_url.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

namespace asio = boost::asio;

namespace {

double cpu_seconds(clockid_t clock)
{
    timespec t{};
    clock_gettime(clock, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

struct Figures {
    std::vector<double> latencies_ms;
    double wall_s = 0;
    double cpu_s = 0;          // the io_context's thread
    double process_cpu_s = 0;  // every thread of the process
};

asio::awaitable<void> writer(std::shared_ptr<adk::SessionService> sessions, std::string session_id, int appends,
                             std::vector<double>& latencies)
{
    adk::CreateSessionRequest request("bench", "u", session_id);
    adk::Session s = co_await sessions->create_session(std::move(request));
    for (int i = 0; i < appends; ++i) {
        adk::Event e("bench_agent", adk::Content::model(std::string(200, 'x')));
        e.invocation_id = "inv";
        e.actions.state_delta["turn"] = i;
        auto t0 = std::chrono::steady_clock::now();
        co_await sessions->append_event(s, e);
        latencies.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
}

// `sessions` writers at once, each on a session of its own, on one thread.
Figures measure(const std::string& url, int sessions_count, int appends_each, const std::string& tag)
{
    auto sessions = adk::services::open_session_service(url);
    asio::io_context ioc(1);
    std::vector<std::vector<double>> latencies(static_cast<std::size_t>(sessions_count));
    auto wall0 = std::chrono::steady_clock::now();
    double cpu0 = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
    double process_cpu0 = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID);
    for (int n = 0; n < sessions_count; ++n)
        asio::co_spawn(ioc, writer(sessions, tag + "-" + std::to_string(n), appends_each, latencies[static_cast<std::size_t>(n)]),
                       [](std::exception_ptr e) {
                           if (e)
                               std::rethrow_exception(e);
                       });
    ioc.run();
    Figures f;
    f.cpu_s = cpu_seconds(CLOCK_THREAD_CPUTIME_ID) - cpu0;
    f.process_cpu_s = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID) - process_cpu0;
    f.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    for (auto& l : latencies)
        f.latencies_ms.insert(f.latencies_ms.end(), l.begin(), l.end());
    std::sort(f.latencies_ms.begin(), f.latencies_ms.end());
    return f;
}

double percentile(const std::vector<double>& sorted, double p)
{
    if (sorted.empty())
        return 0;
    auto i = static_cast<std::size_t>(p * static_cast<double>(sorted.size() - 1));
    return sorted[i];
}

std::string printable_url(const std::string& url)
{
    return url.substr(0, url.find('?'));
}

}  // namespace

int main(int argc, char** argv)
{
    int appends = 2000;
    std::vector<std::string> urls;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg == "--appends" && i + 1 < argc)
            appends = std::stoi(argv[++i]);
        else
            urls.push_back(arg);
    }
    if (urls.empty()) {
        std::fprintf(stderr, "usage: session_bench [--appends N] URL...\n");
        return 2;
    }
    std::printf("%-44s %-26s %9s %9s %9s %14s %15s\n", "backend", "workload", "appends/s", "p50 ms", "p99 ms",
                "caller CPU us", "process CPU us");
    for (const auto& url : urls) {
        struct Workload {
            const char* name;
            int sessions;
            int each;
        };
        const Workload workloads[] = {{"1 session, one by one", 1, appends}, {"100 sessions at once", 100, appends / 100}};
        int round = 0;
        for (const auto& w : workloads) {
            // A warm-up run of a tenth, then the measured one, on sessions of their own.
            measure(url, w.sessions, std::max(1, w.each / 10), "warm" + std::to_string(round));
            Figures f = measure(url, w.sessions, w.each, "run" + std::to_string(round++));
            double count = static_cast<double>(f.latencies_ms.size());
            std::printf("%-44s %-26s %9.0f %9.3f %9.3f %14.1f %15.1f\n", printable_url(url).c_str(), w.name,
                        count / f.wall_s, percentile(f.latencies_ms, 0.5), percentile(f.latencies_ms, 0.99),
                        f.cpu_s / count * 1e6, f.process_cpu_s / count * 1e6);
        }
    }
    return 0;
}
