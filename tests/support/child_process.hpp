// A child process for the tests that need several processes: started with posix_spawn, its standard
// output read line by line through a pipe, waited for or killed. Killed (SIGKILL) if still running when the
// object goes.
#pragma once

#include <csignal>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace adk::test {

// Whether process `pid` runs: it exists and is not a zombie (a zombie is over, whoever reaps it; in a container
// PID 1 may never reap the orphans it inherits).
inline bool process_running(int pid)
{
    std::FILE* stat = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
    if (!stat)
        return false;
    char text[512] = {};
    const std::size_t n = std::fread(text, 1, sizeof text - 1, stat);
    std::fclose(stat);
    const std::string line(text, n);
    const auto close_paren = line.rfind(')');
    return close_paren != std::string::npos && line.size() > close_paren + 2 && line[close_paren + 2] != 'Z';
}

class ChildProcess {
public:
    explicit ChildProcess(const std::vector<std::string>& args)
    {
        int fds[2];
        if (::pipe(fds) != 0)
            throw std::runtime_error("pipe failed");
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
        posix_spawn_file_actions_addclose(&actions, fds[0]);
        posix_spawn_file_actions_addclose(&actions, fds[1]);
        std::vector<char*> argv;
        for (const auto& a : args)
            argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        int rc = posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
        posix_spawn_file_actions_destroy(&actions);
        ::close(fds[1]);
        if (rc != 0) {
            ::close(fds[0]);
            throw std::runtime_error("cannot start " + args[0]);
        }
        out_ = ::fdopen(fds[0], "r");
    }
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;
    ~ChildProcess()
    {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
        if (out_)
            std::fclose(out_);
    }

    // The next line of its output without the newline, or nullopt at its end.
    std::optional<std::string> read_line()
    {
        std::string line;
        int c;
        while ((c = std::fgetc(out_)) != EOF && c != '\n')
            line.push_back(static_cast<char>(c));
        if (c == EOF && line.empty())
            return std::nullopt;
        return line;
    }

    // Its exit status (128 + the signal when a signal ended it).
    int wait()
    {
        int status = 0;
        ::waitpid(pid_, &status, 0);
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }

    // Its exit status when it has ended, without waiting; nullopt while it runs.
    std::optional<int> try_wait()
    {
        int status = 0;
        if (::waitpid(pid_, &status, WNOHANG) != pid_)
            return std::nullopt;
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }

    void kill_now() { ::kill(pid_, SIGKILL); }

private:
    pid_t pid_ = -1;
    std::FILE* out_ = nullptr;
};

}  // namespace adk::test
