// The load generator of the server benchmark (tools/bench/server.sh): ADK's HTTP API driven as the web UI
// drives it, the same against adk-cpp's server and @google/adk-devtools' `adk api_server`. C++ on adk-cpp's
// HTTP client, one thread, so that it costs little of the 2 cores beside the server and mock-llm.
//
//   http_bench --url BASE --app APP --server-pid PID invocations --concurrency N --invocations N [--warmup N]
//              [--delete-sessions]
//   http_bench --url BASE --app APP --server-pid PID streams --streams N
//   http_bench --url BASE --app APP --server-pid PID stuck --clients N [--seconds S] [--drain]
//   http_bench --url BASE --app APP --server-pid PID paced --concurrency N [--seconds S] [--settle S]
//              [--window-file PATH]
//
// invocations: each invocation creates a session (POST /apps/APP/users/u/sessions) and runs it (POST /run_sse,
// "streaming": true), reading every frame; `concurrency` at a time. Prints invocations/s, latency p50 and
// p99, frames per invocation, and the server's CPU per invocation (utime + stime of every thread of
// --server-pid over the measured run, from /proc/PID/stat) and its RSS. With --delete-sessions each session is
// deleted (DELETE /apps/APP/users/u/sessions/ID) once its run is read, as agent_bench deletes its own: the same
// work as the runtime in process, with the server's memory not growing by a session an invocation (ADK's routes
// only: an A2A task has no session to delete).
// With --a2a-rpc URL (an A2A JSON-RPC endpoint) each invocation is one A2A task instead: SendStreamingMessage
// (--a2a-version 1.0, the default) or 0.3's message/stream (--a2a-version 0.3), in a new context, its SSE stream
// read to the end, which must hold the task's COMPLETED status and no JSON-RPC error.
//
// streams: opens N /run_sse streams at once against a model that stalls after its first chunk (mock-llm
// --chunk-delay-ms), waits until each has its first partial frame, then reads the server's RSS: RSS per open
// stream is (RSS with N streams open - RSS before) / N. Then drops them all.
//
// paced: N /run_sse streams at once against a model that paces its chunks (mock-llm --chunk-delay-ms --stamp,
// each chunk's text "stamp:{t} ") and whose answer outlasts the measurement. When every stream has its first
// partial frame, and --settle seconds later, the window of --seconds starts: no invocation starts or ends in
// it, so what the server spends in it is what streaming costs. Prints the chunks delivered, the server's CPU
// per chunk (utime + stime over the window / partial frames read in it) and the kernel's part of it (stime), the
// streams one core holds at that cost and the chunk rate seen, the latency each chunk's frame adds after the
// model wrote it (the frame's arrival here minus the chunk's stamp: both the monotonic clock of this machine),
// p50 and p99, the server's RSS per open stream (and of it, the text each answer streamed so far), and how
// busy the machine was (/proc/stat): with the cores full, latency is queueing. With --window-file, PATH gets a line
// "start" when the window starts and "end" when it ends (a profiler beside the server counts just the window:
// tools/bench/chunk_misses.sh).
//
// stuck: N clients that never read. Each creates a session, then sends POST /run_sse ("streaming": true) on a
// socket of its own whose receive buffer is 4 KiB, and reads nothing. For S seconds (the runs finish within
// them) the server's RSS is sampled every 50 ms: what the runs and their stuck followers make the server hold
// is (peak - before) / N. With --drain the same clients read everything: the peak the runs make by themselves,
// which the stuck clients' figure is compared with.
#include <adk/net/http_client.hpp>

#include <adk/net/url.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace asio = boost::asio;
namespace json = boost::json;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
    std::string url;
    std::string app = "weather";
    int server_pid = 0;
    std::string mode;
    int concurrency = 50;
    int invocations = 1000;
    int warmup = 300;
    int streams = 1000;
    int clients = 60;
    int seconds = 20;
    int settle = 2;
    bool drain = false;
    bool delete_sessions = false;    // invocations: each session deleted after its run
    std::string window_file;         // paced: told when the window starts and ends
    std::string a2a_rpc;             // an A2A JSON-RPC endpoint: each invocation is an A2A task
    std::string a2a_version = "1.0";  // or "0.3"
};

// The CPU time a process has used, in seconds, every thread's: in all, from the process's CPU clock (to the
// nanosecond), and the kernel's part, from /proc/PID/stat's stime (in ticks of 10 ms: coarse over a short window).
class CpuTime {
public:
    double all = 0;
    double system = 0;
    double total() const { return all; }
    CpuTime operator-(const CpuTime& o) const { return {all - o.all, system - o.system}; }
};

CpuTime process_cpu(int pid)
{
    CpuTime t;
    clockid_t clock{};
    timespec now{};
    if (clock_getcpuclockid(pid, &clock) == 0 && clock_gettime(clock, &now) == 0)
        t.all = static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::istringstream fields(text.substr(text.rfind(')') + 2));  // after the command name
    std::string field;
    const double tick = 1.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
    for (int i = 3; fields >> field; ++i)
        if (i == 15) {
            t.system = std::stod(field) * tick;
            break;
        }
    return t;
}

double process_cpu_seconds(int pid)
{
    return process_cpu(pid).total();
}

// Busy and total jiffies of the whole machine (/proc/stat's first line): busy is all but idle and iowait.
std::pair<double, double> machine_jiffies()
{
    std::ifstream in("/proc/stat");
    std::string cpu;
    in >> cpu;
    double busy = 0, total = 0, v = 0;
    for (int i = 0; i < 10 && in >> v; ++i) {
        total += v;
        if (i != 3 && i != 4)
            busy += v;
    }
    return {busy, total};
}

long rss_kib(int pid)
{
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("VmRSS:", 0) == 0)
            return std::stol(line.substr(6));
    return 0;
}

// The length of the first "text" string of an SSE frame's event (a delta's text), an escape counted as one.
std::size_t delta_text_bytes(std::string_view frame)
{
    constexpr std::string_view key = "\"text\":\"";
    const auto at = frame.find(key);
    if (at == std::string_view::npos)
        return 0;
    std::size_t n = 0;
    for (std::size_t i = at + key.size(); i < frame.size() && frame[i] != '"'; ++i, ++n)
        if (frame[i] == '\\')
            ++i;
    return n;
}

double percentile(std::vector<double> v, double p)
{
    if (v.empty())
        return 0;
    const auto k = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1));
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
    return v[k];
}

class Bench {
public:
    Bench(Options o) : o_(std::move(o)), client_(client_options(o_)) {}

    asio::awaitable<std::string> create_session()
    {
        adk::net::HttpRequest req("POST", o_.url + "/apps/" + o_.app + "/users/u/sessions");
        req.set("content-type", "application/json");
        req.body = "{}";
        adk::net::HttpResponse res = co_await client_.send(std::move(req));
        std::string body = co_await res.read_all();
        if (res.status() != 200)
            throw std::runtime_error("create session: " + std::to_string(res.status()) + " " + body.substr(0, 200));
        co_return std::string(json::parse(body).at("id").as_string());
    }

    asio::awaitable<void> delete_session(const std::string& session)
    {
        adk::net::HttpRequest req("DELETE", o_.url + "/apps/" + adk::net::encode_path_segment(o_.app) +
                                                "/users/u/sessions/" + adk::net::encode_path_segment(session));
        adk::net::HttpResponse res = co_await client_.send(std::move(req));
        std::string body = co_await res.read_all();
        if (res.status() != 200 && res.status() != 204)
            throw std::runtime_error("delete session: " + std::to_string(res.status()) + " " + body.substr(0, 200));
    }

    adk::net::HttpRequest run_request(const std::string& session) const
    {
        adk::net::HttpRequest req("POST", o_.url + "/run_sse");
        req.set("content-type", "application/json");
        req.set("accept", "text/event-stream");
        json::value body = json::object{
            {"appName", o_.app}, {"userId", "u"}, {"sessionId", session}, {"streaming", true},
            {"newMessage", {{"role", "user"}, {"parts", json::array{json::object{{"text", "Weather in Paris?"}}}}}}};
        req.body = json::serialize(body);
        return req;
    }

    // Reads an SSE response to its end: `each` sees every frame's text (up to its blank line); the frames read.
    template <class Each>
    static asio::awaitable<long> read_frames(adk::net::HttpResponse& res, Each each)
    {
        long frames = 0;
        std::string tail;
        for (;;) {
            std::string_view chunk = co_await res.read_some();
            if (chunk.empty())
                break;
            tail += chunk;
            for (auto at = tail.find("\n\n"); at != std::string::npos; at = tail.find("\n\n")) {
                each(std::string_view(tail).substr(0, at));
                ++frames;
                tail.erase(0, at + 2);
            }
        }
        co_return frames;
    }

    // A2A: SendStreamingMessage (1.0) or message/stream (0.3) with the workload's question, in a new context.
    adk::net::HttpRequest a2a_request()
    {
        const bool v03 = o_.a2a_version == "0.3";
        const std::string id = "bench-" + std::to_string(++a2a_ids_);
        json::object message =
            v03 ? json::object{{"kind", "message"}, {"messageId", id}, {"role", "user"},
                               {"parts", json::array{json::object{{"kind", "text"}, {"text", "Weather in Paris?"}}}}}
                : json::object{{"messageId", id}, {"role", "ROLE_USER"},
                               {"parts", json::array{json::object{{"text", "Weather in Paris?"}}}}};
        adk::net::HttpRequest req("POST", o_.a2a_rpc);
        req.set("content-type", "application/json");
        req.set("accept", "text/event-stream");
        req.set("a2a-version", o_.a2a_version);
        req.body = json::serialize(json::object{{"jsonrpc", "2.0"},
                                                {"id", id},
                                                {"method", v03 ? "message/stream" : "SendStreamingMessage"},
                                                {"params", json::object{{"message", std::move(message)}}}});
        return req;
    }

    // One A2A task read to the end; the SSE events it got.
    asio::awaitable<long> invoke_a2a()
    {
        adk::net::HttpResponse res = co_await client_.send(a2a_request());
        if (res.status() != 200)
            throw std::runtime_error("A2A: HTTP " + std::to_string(res.status()));
        bool completed = false;
        auto check = [&completed](std::string_view frame) {  // named: no class temporary in a co_await (g++ 12)
            if (frame.find("\"error\":{") != std::string_view::npos)
                throw std::runtime_error("an error frame: " + std::string(frame.substr(0, 300)));
            completed = completed || frame.find("TASK_STATE_COMPLETED") != std::string_view::npos ||
                        frame.find("\"state\":\"completed\"") != std::string_view::npos;
        };
        const long frames = co_await read_frames(res, check);
        if (!completed)
            throw std::runtime_error("the task's stream ended without its COMPLETED status");
        co_return frames;
    }

    // One invocation: a session, then its run read to the end; the frames it got.
    asio::awaitable<long> invoke()
    {
        if (!o_.a2a_rpc.empty())
            co_return co_await invoke_a2a();
        const std::string session = co_await create_session();
        adk::net::HttpResponse res = co_await client_.send(run_request(session));
        if (res.status() != 200)
            throw std::runtime_error("run_sse: " + std::to_string(res.status()));
        auto check = [](std::string_view frame) {
            if (frame.find("data: {\"error\"") != std::string_view::npos)
                throw std::runtime_error("an error frame: " + std::string(frame));
        };
        const long frames = co_await read_frames(res, check);
        if (o_.delete_sessions)
            co_await delete_session(session);
        co_return frames;
    }

    void invocations()
    {
        // Phases: the warm-up (a JIT server compiles itself now), then the measured run.
        auto phase = [&](int count, int concurrency, bool measured) {
            int next = 0;
            auto worker = [&]() -> asio::awaitable<void> {
                while (next < count) {
                    ++next;
                    const auto t0 = Clock::now();
                    try {
                        const long f = co_await invoke();
                        if (measured) {
                            frames_ += f;
                            ++done_;
                        }
                    } catch (const std::exception& e) {
                        ++failed_;
                        if (first_error_.empty())
                            first_error_ = e.what();
                    }
                    if (measured)
                        latencies_ms_.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
                }
            };
            for (int i = 0; i < concurrency; ++i)
                asio::co_spawn(ioc_, worker(), asio::detached);
            ioc_.run();
            ioc_.restart();
        };
        phase(1, 1, false);  // a first request alone: a server that prepares an agent on first use does it once
        phase(o_.warmup, std::min(o_.concurrency, 50), false);
        const int warmup_failed = failed_;
        failed_ = 0;
        const double cpu0 = process_cpu_seconds(o_.server_pid);
        const auto t0 = Clock::now();
        phase(o_.invocations, o_.concurrency, true);
        const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
        const double cpu = process_cpu_seconds(o_.server_pid) - cpu0;
        json::object out{{"mode", "invocations"},
                         {"protocol", o_.a2a_rpc.empty() ? std::string("adk") : "a2a " + o_.a2a_version},
                         {"concurrency", o_.concurrency},
                         {"invocations", o_.invocations},
                         {"completed", done_},
                         {"failed", failed_},
                         {"warmup_failed", warmup_failed},
                         {"seconds", seconds},
                         {"invocations_per_s", done_ / seconds},
                         {"latency_ms_p50", percentile(latencies_ms_, 0.50)},
                         {"latency_ms_p90", percentile(latencies_ms_, 0.90)},
                         {"latency_ms_p99", percentile(latencies_ms_, 0.99)},
                         {"latency_ms_max", percentile(latencies_ms_, 1.0)},
                         {"frames_per_invocation", done_ ? static_cast<double>(frames_) / done_ : 0.0},
                         {"server_cpu_ms_per_invocation", done_ ? cpu * 1000 / done_ : 0.0},
                         {"server_rss_mib", static_cast<double>(rss_kib(o_.server_pid)) / 1024}};
        if (!first_error_.empty())
            out["first_error"] = first_error_.substr(0, 300);
        std::cout << json::serialize(out) << std::endl;
    }

    void streams()
    {
        // A few sessions first, so that the server's pools and arenas are what a working server has.
        phase_streams_warmup();
        const long before = rss_kib(o_.server_pid);
        int open = 0;
        int failed = 0;
        int started = 0;
        std::vector<adk::net::HttpResponse> held;
        held.reserve(static_cast<std::size_t>(o_.streams));
        const auto t0 = Clock::now();
        // When every stream is open (or failed): the server's RSS now, then every stream dropped. The held
        // responses keep timers of their own, so the io_context is stopped rather than left to run out.
        auto done = [&] {
            if (open + failed < o_.streams)
                return;
            const double open_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
            const long with = rss_kib(o_.server_pid);
            json::object out{{"mode", "streams"},
                             {"streams", o_.streams},
                             {"open", open},
                             {"failed", failed},
                             {"seconds_to_open", open_seconds},
                             {"server_rss_mib_before", static_cast<double>(before) / 1024},
                             {"server_rss_mib_open", static_cast<double>(with) / 1024},
                             {"server_kib_per_stream", open ? static_cast<double>(with - before) / open : 0.0}};
            if (!first_error_.empty())
                out["first_error"] = first_error_.substr(0, 300);
            std::cout << json::serialize(out) << std::endl;
            failed_ += failed;
            for (auto& r : held)
                r.abort();
            ioc_.stop();
        };
        auto opener = [&]() -> asio::awaitable<void> {
            try {
                const std::string session = co_await create_session();
                adk::net::HttpResponse res = co_await client_.send(run_request(session));
                std::string seen;
                while (seen.find("\"partial\":true") == std::string::npos) {
                    std::string_view chunk = co_await res.read_some();
                    if (chunk.empty())
                        throw std::runtime_error("the stream ended before its first partial frame, after: " +
                                                 seen.substr(seen.size() > 300 ? seen.size() - 300 : 0));
                    seen += chunk;
                }
                held.push_back(std::move(res));
                ++open;
            } catch (const std::exception& e) {
                ++failed;
                if (first_error_.empty())
                    first_error_ = e.what();
            }
            done();
        };
        // At most 200 being opened at once: a server's accept queue is not what is measured.
        auto launcher = [&]() -> asio::awaitable<void> {
            while (started < o_.streams) {
                ++started;
                co_await opener();
            }
        };
        for (int i = 0; i < std::min(200, o_.streams); ++i)
            asio::co_spawn(ioc_, launcher(), asio::detached);
        ioc_.run();
        ioc_.restart();
    }

    // paced's --window-file: a line appended (and closed, so flushed) as the window starts or ends.
    void tell_window(std::string_view what) const
    {
        if (o_.window_file.empty())
            return;
        std::ofstream file(o_.window_file, std::ios::app);
        file << what << '\n';
    }

    void paced()
    {
        phase_streams_warmup();
        const long before = rss_kib(o_.server_pid);
        const int n = o_.concurrency;
        int open = 0;
        int failed = 0;
        int ended = 0;
        int started = 0;
        bool measuring = false;
        long chunks = 0;
        long long answer_bytes = 0;  // the text of the answers streamed so far, every stream's
        std::vector<float> added_us;
        std::vector<adk::net::HttpResponse*> streams(static_cast<std::size_t>(n), nullptr);
        std::vector<char> begun(static_cast<std::size_t>(n), 0);  // the stream's first partial frame came, or it failed
        std::vector<asio::steady_timer*> waker(static_cast<std::size_t>(n), nullptr);  // the launcher waiting for it
        auto begin = [&](int slot) {
            begun[static_cast<std::size_t>(slot)] = 1;
            ++open;
            if (auto* w = waker[static_cast<std::size_t>(slot)])
                w->cancel();
        };
        asio::steady_timer window(ioc_);
        // One stream: opened, then read frame by frame until the window is over. A partial frame carries its
        // chunk's stamp: the time mock-llm wrote the chunk.
        auto stream = [&](int slot) -> asio::awaitable<void> {
            bool counted = false;
            try {
                const std::string session = co_await create_session();
                adk::net::HttpResponse res = co_await client_.send(run_request(session));
                if (res.status() != 200)
                    throw std::runtime_error("run_sse: " + std::to_string(res.status()));
                streams[static_cast<std::size_t>(slot)] = &res;
                std::string tail;
                for (;;) {
                    std::string_view chunk = co_await res.read_some();
                    if (chunk.empty())
                        break;
                    const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                         Clock::now().time_since_epoch()).count();
                    tail += chunk;
                    for (auto at = tail.find("\n\n"); at != std::string::npos; at = tail.find("\n\n")) {
                        const std::string_view frame = std::string_view(tail).substr(0, at);
                        if (frame.find("data: {\"error\"") != std::string_view::npos)
                            throw std::runtime_error("an error frame: " + std::string(frame.substr(0, 300)));
                        const auto stamp = frame.find("stamp:");
                        if (stamp != std::string_view::npos && frame.find("\"partial\":true") != std::string_view::npos) {
                            if (!counted) {
                                counted = true;
                                begin(slot);
                            }
                            answer_bytes += static_cast<long long>(delta_text_bytes(frame));
                            if (measuring) {
                                ++chunks;
                                long long t = 0;
                                for (std::size_t i = stamp + 6; i < frame.size() && frame[i] >= '0' && frame[i] <= '9'; ++i)
                                    t = t * 10 + (frame[i] - '0');
                                added_us.push_back(static_cast<float>(now - t) / 1000.0f);
                            }
                        }
                        tail.erase(0, at + 2);
                    }
                }
                streams[static_cast<std::size_t>(slot)] = nullptr;
                if (!counted)
                    throw std::runtime_error("the stream ended before its first partial frame");
                ++ended;  // the answer ended before the window did: the script's answer is too short
            } catch (const std::exception& e) {
                streams[static_cast<std::size_t>(slot)] = nullptr;
                ++failed;
                if (!counted)
                    begin(slot);  // counted as begun, so that the window still starts
                if (first_error_.empty())
                    first_error_ = e.what();
            }
        };
        // At most 200 being opened at once: a server's accept queue is not what is measured.
        // Each stream is its own coroutine; its launcher sleeps until the stream begins (which cancels the
        // launcher's timer), then opens the next.
        auto launcher = [&]() -> asio::awaitable<void> {
            asio::steady_timer sleep(ioc_);
            while (started < n) {
                const auto slot = static_cast<std::size_t>(started++);
                waker[slot] = &sleep;
                asio::co_spawn(ioc_, stream(static_cast<int>(slot)), asio::detached);
                while (!begun[slot]) {
                    sleep.expires_after(std::chrono::hours(1));
                    co_await sleep.async_wait(asio::as_tuple(asio::use_awaitable));
                }
                waker[slot] = nullptr;
            }
        };
        const auto t_open = Clock::now();
        double open_seconds = 0;
        json::object out{{"mode", "paced"}, {"concurrency", n}, {"seconds", o_.seconds}};
        auto conductor = [&]() -> asio::awaitable<void> {
            while (open < n) {
                window.expires_after(std::chrono::milliseconds(20));
                co_await window.async_wait(asio::as_tuple(asio::use_awaitable));
            }
            open_seconds = std::chrono::duration<double>(Clock::now() - t_open).count();
            window.expires_after(std::chrono::seconds(o_.settle));
            co_await window.async_wait(asio::as_tuple(asio::use_awaitable));
            const long rss_open = rss_kib(o_.server_pid);
            const long long answer_bytes_open = answer_bytes;
            const int ended_before = ended;
            const auto [busy0, total0] = machine_jiffies();
            const CpuTime cpu0 = process_cpu(o_.server_pid);
            const auto t0 = Clock::now();
            measuring = true;
            tell_window("start");
            window.expires_after(std::chrono::seconds(o_.seconds));
            co_await window.async_wait(asio::as_tuple(asio::use_awaitable));
            measuring = false;
            tell_window("end");
            const CpuTime used = process_cpu(o_.server_pid) - cpu0;
            const double cpu = used.total();
            const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
            const auto [busy1, total1] = machine_jiffies();
            const double per_chunk_us = chunks ? cpu * 1e6 / static_cast<double>(chunks) : 0.0;
            const double rate = static_cast<double>(chunks) / seconds / std::max(1, n);
            std::vector<double> lat(added_us.begin(), added_us.end());
            out["streams_open"] = open - failed;
            out["failed"] = failed;
            out["ended_in_window"] = ended - ended_before;
            out["seconds_to_open"] = open_seconds;
            out["chunks"] = chunks;
            out["chunks_per_s_per_stream"] = rate;
            out["server_cpu_cores"] = cpu / seconds;
            out["server_cpu_us_per_chunk"] = per_chunk_us;
            // Of it, the kernel's (the system calls that receive a chunk and send its frame, and what they wake).
            out["server_system_us_per_chunk"] = chunks ? used.system * 1e6 / static_cast<double>(chunks) : 0.0;
            out["streams_per_core"] = per_chunk_us > 0 && rate > 0 ? 1e6 / (per_chunk_us * rate) : 0.0;
            out["added_latency_ms_p50"] = percentile(lat, 0.50) / 1000;
            out["added_latency_ms_p99"] = percentile(lat, 0.99) / 1000;
            out["machine_busy_cores"] =
                total1 > total0 ? (busy1 - busy0) / (total1 - total0) * static_cast<double>(std::thread::hardware_concurrency()) : 0.0;
            out["server_rss_mib_before"] = static_cast<double>(before) / 1024;
            out["server_rss_mib_open"] = static_cast<double>(rss_open) / 1024;
            out["server_kib_per_stream"] = open ? static_cast<double>(rss_open - before) / (open - failed) : 0.0;
            // Of it, the text each answer streamed so far (the server holds it until the answer's final event,
            // which carries it): it grows at the model's pace, so it depends on how long the streams took to open.
            out["answer_kib_per_stream"] =
                open > failed ? static_cast<double>(answer_bytes_open) / 1024 / (open - failed) : 0.0;
            if (!first_error_.empty())
                out["first_error"] = first_error_.substr(0, 300);
            std::cout << json::serialize(out) << std::endl;
            failed_ += failed;
            for (auto* r : streams)
                if (r)
                    r->abort();
            ioc_.stop();
        };
        for (int i = 0; i < std::min(200, n); ++i)
            asio::co_spawn(ioc_, launcher(), asio::detached);
        asio::co_spawn(ioc_, conductor(), asio::detached);
        ioc_.run();
        ioc_.restart();
    }

    void stuck()
    {
        phase_streams_warmup();
        std::vector<std::string> sessions;
        auto creator = [&]() -> asio::awaitable<void> {
            for (int i = 0; i < o_.clients; ++i)
                sessions.push_back(co_await create_session());
        };
        asio::co_spawn(ioc_, creator(), asio::detached);
        ioc_.run();
        ioc_.restart();
        const long before = rss_kib(o_.server_pid);
        const adk::net::Url url = adk::net::parse_url(o_.url);
        asio::ip::tcp::resolver resolver(ioc_);
        const auto endpoints = resolver.resolve(url.host, url.port);
        std::vector<asio::ip::tcp::socket> sockets;
        for (const auto& session : sessions) {
            auto& socket = sockets.emplace_back(ioc_);
            socket.open(endpoints.begin()->endpoint().protocol());
            socket.set_option(asio::socket_base::receive_buffer_size(4096));  // before connect: the window
            asio::connect(socket, endpoints);
            const adk::net::HttpRequest req = run_request(session);
            const std::string text = "POST /run_sse HTTP/1.1\r\nHost: " + url.authority() +
                                     "\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\n"
                                     "Content-Length: " +
                                     std::to_string(req.body.size()) + "\r\n\r\n" + req.body;
            asio::write(socket, asio::buffer(text));
        }
        // --drain: the same clients read every byte, for the peak that the runs themselves make.
        std::atomic<long> drained{0};
        std::thread reader;
        if (o_.drain) {
            for (auto& socket : sockets)
                asio::co_spawn(
                    ioc_,
                    [&socket, &drained]() -> asio::awaitable<void> {
                        std::vector<char> scratch(64 * 1024);
                        for (;;) {
                            auto [ec, n] = co_await socket.async_read_some(asio::buffer(scratch),
                                                                           asio::as_tuple(asio::use_awaitable));
                            drained += static_cast<long>(n);
                            if (ec)
                                break;
                        }
                    },
                    asio::detached);
            reader = std::thread([this] { ioc_.run(); });
        }
        long peak = before;
        const auto t0 = Clock::now();
        while (Clock::now() - t0 < std::chrono::seconds(o_.seconds)) {
            peak = std::max(peak, rss_kib(o_.server_pid));
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        if (reader.joinable()) {
            ioc_.stop();
            reader.join();
            ioc_.restart();
        }
        const long end = rss_kib(o_.server_pid);
        json::object out{{"mode", o_.drain ? "drained" : "stuck"},
                         {"clients", o_.clients},
                         {"bytes_read", drained.load()},
                         {"seconds", o_.seconds},
                         {"server_rss_mib_before", static_cast<double>(before) / 1024},
                         {"server_rss_mib_peak", static_cast<double>(peak) / 1024},
                         {"server_rss_mib_end", static_cast<double>(end) / 1024},
                         {"server_mib_per_client_peak",
                          static_cast<double>(peak - before) / 1024 / std::max(1, o_.clients)}};
        std::cout << json::serialize(out) << std::endl;
        for (auto& socket : sockets) {
            boost::system::error_code ignored;
            socket.close(ignored);
        }
    }

    int failures() const { return failed_; }

private:
    static adk::net::HttpClientOptions client_options(const Options& o)
    {
        adk::net::HttpClientOptions h;
        h.retry.max_retries = 0;
        h.max_idle_per_origin = static_cast<std::size_t>(std::max({o.concurrency, o.streams, 1}));
        return h;
    }

    void phase_streams_warmup()
    {
        // Runs against the stalled model would hold their streams: create sessions only.
        auto worker = [&]() -> asio::awaitable<void> {
            for (int i = 0; i < 20; ++i)
                co_await create_session();
        };
        for (int i = 0; i < 10; ++i)
            asio::co_spawn(ioc_, worker(), asio::detached);
        ioc_.run();
        ioc_.restart();
    }

    Options o_;
    asio::io_context ioc_{1};
    adk::net::HttpClient client_;
    std::vector<double> latencies_ms_;
    long frames_ = 0;
    int done_ = 0;
    int failed_ = 0;
    std::string first_error_;
    long a2a_ids_ = 0;
};

}  // namespace

int main(int argc, char** argv)
{
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "invocations" || a == "streams" || a == "stuck" || a == "paced") {
            o.mode = a;
            continue;
        }
        if (a == "--drain") {
            o.drain = true;
            continue;
        }
        if (a == "--delete-sessions") {
            o.delete_sessions = true;
            continue;
        }
        if (i + 1 >= argc) {
            std::cerr << "http_bench: " << a << " needs a value\n";
            return 2;
        }
        const std::string v = argv[++i];
        if (a == "--url") o.url = v;
        else if (a == "--app") o.app = v;
        else if (a == "--server-pid") o.server_pid = std::stoi(v);
        else if (a == "--concurrency") o.concurrency = std::stoi(v);
        else if (a == "--invocations") o.invocations = std::stoi(v);
        else if (a == "--warmup") o.warmup = std::stoi(v);
        else if (a == "--streams") o.streams = std::stoi(v);
        else if (a == "--clients") o.clients = std::stoi(v);
        else if (a == "--seconds") o.seconds = std::stoi(v);
        else if (a == "--settle") o.settle = std::stoi(v);
        else if (a == "--window-file") o.window_file = v;
        else if (a == "--a2a-rpc") o.a2a_rpc = v;
        else if (a == "--a2a-version") o.a2a_version = v;
        else {
            std::cerr << "http_bench: unknown argument " << a << "\n";
            return 2;
        }
    }
    if (o.url.empty() || o.server_pid <= 0 || o.mode.empty()) {
        std::cerr << "usage: http_bench --url BASE --app APP --server-pid PID invocations --concurrency N "
                     "--invocations N [--warmup N] [--delete-sessions]\n"
                     "       [--a2a-rpc URL [--a2a-version 1.0|0.3]]\n"
                     "       http_bench --url BASE --app APP --server-pid PID streams --streams N\n"
                     "       http_bench --url BASE --app APP --server-pid PID stuck --clients N [--seconds S] [--drain]\n"
                     "       http_bench --url BASE --app APP --server-pid PID paced --concurrency N [--seconds S] "
                     "[--settle S] [--window-file PATH]\n";
        return 2;
    }
    Bench bench(o);
    if (o.mode == "invocations")
        bench.invocations();
    else if (o.mode == "stuck")
        bench.stuck();
    else if (o.mode == "paced")
        bench.paced();
    else
        bench.streams();
    return bench.failures() ? 1 : 0;
}
