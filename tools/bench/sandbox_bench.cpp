// What the sandbox costs a run of the model's code: SandboxedCodeExecutor running `print(1)` (bwrap, its
// namespaces and folders, python3, the report), against python3 started bare with posix_spawn (no sandbox, which
// adk-cpp never does: the floor). Alternated rounds, the median of each.
//
//   build/release/tools/bench/sandbox_bench [runs per round, default 20] [rounds, default 3]
#include <adk/sandbox/sandboxed_code_executor.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fcntl.h>
#include <stdexcept>
#include <spawn.h>
#include <string>
#include <sys/wait.h>
#include <vector>

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

double sandboxed_ms(const adk::SandboxedCodeExecutor& sandbox, int runs)
{
    boost::asio::io_context ioc;
    const auto start = Clock::now();
    for (int i = 0; i < runs; ++i) {
        std::exception_ptr failure;
        boost::asio::co_spawn(ioc, sandbox.run(adk::CodeExecutionInput("print(1)")),
                              [&](std::exception_ptr e, adk::CodeExecutionOutput out) {
                                  failure = e;
                                  if (!e && out.stdout_text != "1\n")
                                      std::fprintf(stderr, "unexpected output: %s\n", out.stdout_text.c_str());
                              });
        ioc.restart();
        ioc.run();
        if (failure)
            std::rethrow_exception(failure);
    }
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count() / runs;
}

double bare_ms(int runs)
{
    const auto start = Clock::now();
    for (int i = 0; i < runs; ++i) {
        char python[] = "/usr/bin/python3", flag[] = "-c", code[] = "print(1)";
        char* argv[] = {python, flag, code, nullptr};
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
        pid_t pid = 0;
        if (posix_spawn(&pid, python, &actions, nullptr, argv, environ) != 0)
            throw std::runtime_error("cannot start python3");
        posix_spawn_file_actions_destroy(&actions);
        int status = 0;
        ::waitpid(pid, &status, 0);
    }
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count() / runs;
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv)
{
    const int runs = argc > 1 ? std::atoi(argv[1]) : 20;
    const int rounds = argc > 2 ? std::atoi(argv[2]) : 3;
    adk::SandboxedCodeExecutor sandbox;
    sandboxed_ms(sandbox, 2);  // warm-up: the page cache holds python3 and its modules
    bare_ms(2);
    std::vector<double> sandboxed, bare;
    for (int r = 0; r < rounds; ++r) {
        sandboxed.push_back(sandboxed_ms(sandbox, runs));
        bare.push_back(bare_ms(runs));
    }
    std::printf("print(1), %d runs x %d rounds, medians: sandboxed %.1f ms per run, bare python3 %.1f ms, "
                "the sandbox adds %.1f ms (x%.2f)\n",
                runs, rounds, median(sandboxed), median(bare), median(sandboxed) - median(bare),
                median(sandboxed) / median(bare));
}
