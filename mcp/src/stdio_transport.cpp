#include <adk/mcp/stdio_transport.hpp>

#include <adk/core/error.hpp>
#include <adk/core/log.hpp>

#include "log_limiter.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <sstream>
#include <mutex>
#include <optional>
#include <vector>

extern char** environ;

namespace adk::mcp {

namespace {

constexpr std::size_t max_stderr_line = 4096;
constexpr std::size_t stderr_lines_kept = 8;

class Pipe {
public:
    Pipe()
    {
        if (::pipe2(fds, O_CLOEXEC) != 0)
            throw Error(errc::invalid_argument, std::string("cannot make a pipe for an MCP server: ") + std::strerror(errno));
    }
    Pipe(const Pipe&) = delete;
    Pipe& operator=(const Pipe&) = delete;
    ~Pipe()
    {
        for (int& fd : fds)
            close_end(fd);
    }
    // Hands an end over (it is no longer closed here).
    int take(int i)
    {
        int fd = fds[i];
        fds[i] = -1;
        return fd;
    }
    static void close_end(int& fd)
    {
        if (fd >= 0)
            ::close(fd);
        fd = -1;
    }
    int fds[2] = {-1, -1};
};

// Whether a process of the group is still running. Zombies do not count: a grandchild that outlived its parent
// is reparented to PID 1, which in a container may never reap it, and a zombie holds nothing.
bool group_has_running(pid_t group)
{
    DIR* proc = ::opendir("/proc");
    if (!proc)
        return ::kill(-group, 0) == 0;
    bool found = false;
    while (dirent* entry = ::readdir(proc)) {
        if (entry->d_name[0] < '0' || entry->d_name[0] > '9')
            continue;
        std::ifstream stat(std::string("/proc/") + entry->d_name + "/stat");
        std::string text;
        std::getline(stat, text);
        auto close_paren = text.rfind(')');
        if (close_paren == std::string::npos)
            continue;
        std::istringstream fields(text.substr(close_paren + 2));  // state ppid pgrp ...
        char state = 0;
        long ppid = 0, pgrp = 0;
        if (fields >> state >> ppid >> pgrp && pgrp == group && state != 'Z' && state != 'X') {
            found = true;
            break;
        }
    }
    ::closedir(proc);
    return found;
}

// A process as /proc/<pid>/stat says: its state, parent and group, and when it started (a later process given the
// same pid starts later).
class ProcStat {
public:
    pid_t pid = 0;
    char state = 0;
    long ppid = 0;
    long pgrp = 0;
    unsigned long long start = 0;
    bool running() const { return state != 0 && state != 'Z' && state != 'X'; }
};

std::optional<ProcStat> proc_stat(pid_t pid)
{
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text;
    std::getline(stat, text);
    const auto close_paren = text.rfind(')');
    if (close_paren == std::string::npos || close_paren + 2 > text.size())
        return std::nullopt;
    std::istringstream fields(text.substr(close_paren + 2));  // state ppid pgrp ... (starttime is the 20th)
    ProcStat out;
    out.pid = pid;
    std::string skipped;
    if (!(fields >> out.state >> out.ppid >> out.pgrp))
        return std::nullopt;
    for (int i = 0; i < 16 && fields >> skipped; ++i) {
    }
    if (!(fields >> out.start))
        return std::nullopt;
    return out;
}

// The processes below `root` (its children, theirs, ...). One that left the server's group with setsid() is not
// reached by a signal to the group, but stays its parent's child until its parent exits: found here while the
// server runs.
std::vector<ProcStat> descendants_of(pid_t root)
{
    std::vector<ProcStat> all;
    if (DIR* proc = ::opendir("/proc")) {
        while (dirent* entry = ::readdir(proc))
            if (entry->d_name[0] >= '1' && entry->d_name[0] <= '9')
                if (std::optional<ProcStat> stat = proc_stat(static_cast<pid_t>(std::atol(entry->d_name))))
                    all.push_back(*stat);
        ::closedir(proc);
    }
    std::vector<ProcStat> below;
    std::vector<long> parents{root};
    while (!parents.empty()) {
        const long parent = parents.back();
        parents.pop_back();
        for (const ProcStat& p : all)
            if (p.ppid == parent && p.pid != root) {
                below.push_back(p);
                parents.push_back(p.pid);
            }
    }
    return below;
}

// Whether `p` still runs (the same process: its start time unchanged).
bool still_running(const ProcStat& p)
{
    const std::optional<ProcStat> now = proc_stat(p.pid);
    return now && now->start == p.start && now->running();
}

std::string describe_status(int status)
{
    if (WIFEXITED(status))
        return "exited with status " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status))
        return "killed by signal " + std::to_string(WTERMSIG(status));
    return "ended";
}

}  // namespace

class StdioTransport::Impl : public std::enable_shared_from_this<Impl> {
public:
    Impl(asio::any_io_executor executor, StdioServerParams params)
        : executor_(executor), params_(std::move(params)), name_("stdio server " + params_.command), stdin_(executor),
          stdout_(executor), stderr_(executor)
    {
    }

    // The transport goes away without close(): the group ends at once (SIGKILL), so that nothing it started
    // outlives it, and the child is reaped. Its stderr then ends, and with it the reader that holds this Impl.
    void kill_now()
    {
        if (pid_ <= 0)
            return;
        for (const ProcStat& p : descendants_of(pid_))
            ::kill(p.pid, SIGKILL);
        signal_group(SIGKILL);
        if (!reaped_)
            ::waitpid(pid_, nullptr, 0);
        reaped_ = true;
        pid_ = 0;
    }

    void spawn()
    {
        if (pid_ > 0)
            return;
        Pipe in, out, err;
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, in.fds[0], 0);
        posix_spawn_file_actions_adddup2(&actions, out.fds[1], 1);
        posix_spawn_file_actions_adddup2(&actions, err.fds[1], 2);
        // Nothing else of this process reaches the server: not the HTTP server's listening socket (which would
        // keep the port bound while the server lives) nor a client's connection, whose descriptors Asio does not
        // mark close-on-exec.
        posix_spawn_file_actions_addclosefrom_np(&actions, 3);
        if (!params_.cwd.empty())
            posix_spawn_file_actions_addchdir_np(&actions, params_.cwd.c_str());
        posix_spawnattr_t attr;
        posix_spawnattr_init(&attr);
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
        posix_spawnattr_setpgroup(&attr, 0);  // a group of its own, led by the child
        sigset_t none, all;
        sigemptyset(&none);
        sigfillset(&all);
        posix_spawnattr_setsigmask(&attr, &none);
        posix_spawnattr_setsigdefault(&attr, &all);

        std::vector<std::string> argv_text{params_.command};
        argv_text.insert(argv_text.end(), params_.args.begin(), params_.args.end());
        std::vector<char*> argv;
        for (auto& a : argv_text)
            argv.push_back(a.data());
        argv.push_back(nullptr);
        std::vector<std::string> env_text = environment();
        std::vector<char*> envp;
        for (auto& e : env_text)
            envp.push_back(e.data());
        envp.push_back(nullptr);

        pid_t pid = 0;
        const bool search = params_.command.find('/') == std::string::npos;
        int rc = search ? ::posix_spawnp(&pid, params_.command.c_str(), &actions, &attr, argv.data(), envp.data())
                        : ::posix_spawn(&pid, params_.command.c_str(), &actions, &attr, argv.data(), envp.data());
        posix_spawn_file_actions_destroy(&actions);
        posix_spawnattr_destroy(&attr);
        if (rc != 0)
            throw Error(errc::invalid_argument, "cannot start the " + name_ + ": " + std::strerror(rc) +
                                                    (search ? " (looked up in PATH)" : "") +
                                                    ": check the command, its PATH and its working folder");
        pid_ = pid;
        reaped_ = false;
        group_gone_ = false;
        status_text_.clear();
        stdin_.assign(in.take(1));
        stdout_.assign(out.take(0));
        stderr_.assign(err.take(0));
        for (auto* d : {&stdin_, &stdout_, &stderr_})
            d->non_blocking(true);
        asio::co_spawn(executor_, read_stderr(shared_from_this()), asio::detached);
    }

    asio::awaitable<void> send(std::string message)
    {
        if (!stdin_.is_open())
            throw Error(errc::unavailable, "the " + name_ + " is not running");
        message.push_back('\n');
        boost::system::error_code ec;
        co_await asio::async_write(stdin_, asio::buffer(message), asio::redirect_error(asio::use_awaitable, ec));
        if (ec)
            throw Error(errc::unavailable, "the " + name_ + " stopped reading its input (" + ec.message() + ")" +
                                                 suffix());
    }

    asio::awaitable<std::optional<std::string>> receive()
    {
        for (;;) {
            if (!stdout_.is_open())
                co_return std::nullopt;
            boost::system::error_code ec;
            std::size_t n = co_await asio::async_read_until(
                stdout_, asio::dynamic_buffer(buffer_, params_.max_message_bytes + 1), '\n',
                asio::redirect_error(asio::use_awaitable, ec));
            if (ec == asio::error::not_found)
                throw Error(errc::too_large, "the " + name_ + " wrote a message over " +
                                                 std::to_string(params_.max_message_bytes) +
                                                 " bytes (StdioServerParams::max_message_bytes)");
            if (ec == asio::error::operation_aborted)
                throw boost::system::system_error(ec);
            if (ec) {
                // End of its output: it exited, or closed stdout. A moment for its exit, so that errors can say
                // how it ended.
                co_await wait_for_child(std::chrono::milliseconds(200));
                co_return std::nullopt;
            }
            std::string line = buffer_.substr(0, n - 1);
            buffer_.erase(0, n);
            if (!line.empty() && line.back() == '\r')
                line.pop_back();
            if (!line.empty())
                co_return line;
        }
    }

    asio::awaitable<void> close()
    {
        if (pid_ <= 0)
            co_return;
        boost::system::error_code ignored;
        // What the server started, found while it runs: a process that left its group ends with it too.
        std::vector<ProcStat> below = descendants_of(pid_);
        stdin_.close(ignored);
        // The spec's order: stdin closed, the server given term_after to exit, then SIGTERM and SIGKILL, each
        // after a wait. The signals go to the whole group: what the server started ends with it.
        co_await wait_for_child(params_.term_after);
        if (!co_await wait_for_group(std::chrono::milliseconds(0))) {
            signal_group(SIGTERM);
            if (!co_await wait_for_group(params_.kill_after)) {
                signal_group(SIGKILL);
                if (!co_await wait_for_group(params_.kill_after))
                    log(LogLevel::warning, "the " + name_ + " (process group " + std::to_string(pid_) +
                                               ") still has processes after SIGKILL");
            }
        }
        co_await end_detached(std::move(below));
        stdout_.close(ignored);
        stderr_.close(ignored);
        if (!reaped_) {
            int status = 0;
            if (::waitpid(pid_, &status, 0) == pid_)
                status_text_ = describe_status(status);
            reaped_ = true;
        }
        pid_ = 0;
        buffer_.clear();
    }

    std::string diagnostics() const
    {
        std::string out = status_text_;
        std::lock_guard lock(stderr_mutex_);
        if (!stderr_lines_.empty()) {
            out += out.empty() ? "its last stderr lines: " : "; its last stderr lines: ";
            for (std::size_t i = 0; i < stderr_lines_.size(); ++i)
                out += (i ? " | " : "") + stderr_lines_[i];
        }
        return out;
    }

    void check_exit()
    {
        if (pid_ <= 0 || reaped_)
            return;
        int status = 0;
        if (::waitpid(pid_, &status, WNOHANG) == pid_) {
            reaped_ = true;
            status_text_ = describe_status(status);
        }
    }

    const std::string& name() const { return name_; }
    int pid() const { return pid_; }

private:
    std::vector<std::string> environment() const
    {
        std::map<std::string, std::string> env;
        if (params_.inherit_env) {
            for (char** e = environ; e && *e; ++e) {
                std::string_view kv(*e);
                auto eq = kv.find('=');
                if (eq != std::string_view::npos)
                    env.emplace(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
            }
        } else {
            for (const char* key : {"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"})
                if (const char* v = std::getenv(key))
                    env.emplace(key, v);
        }
        for (const auto& [k, v] : params_.env)
            env[k] = v;
        std::vector<std::string> out;
        for (const auto& [k, v] : env)
            out.push_back(k + "=" + v);
        return out;
    }

    std::string suffix() const
    {
        std::string d = diagnostics();
        return d.empty() ? "" : " (" + d + ")";
    }

    void signal_group(int sig)
    {
        if (!group_gone_ && ::kill(-pid_, sig) != 0 && errno == ESRCH)
            group_gone_ = true;
    }

    // Waits until the child has exited (and reaps it), for at most `limit`.
    asio::awaitable<void> wait_for_child(std::chrono::milliseconds limit)
    {
        const auto deadline = std::chrono::steady_clock::now() + limit;
        asio::steady_timer tick(executor_);
        for (check_exit(); !reaped_ && std::chrono::steady_clock::now() < deadline; check_exit()) {
            tick.expires_after(std::chrono::milliseconds(5));
            co_await tick.async_wait(asio::use_awaitable);
        }
    }

    // Waits until no process of the group runs (the child is reaped as soon as it exits), for at most `limit`;
    // whether the group is gone.
    // Ends the processes of `below` that left the server's group and still run: SIGTERM, then SIGKILL after
    // kill_after.
    asio::awaitable<void> end_detached(std::vector<ProcStat> below)
    {
        std::erase_if(below, [&](const ProcStat& p) { return p.pgrp == pid_ || !still_running(p); });
        if (below.empty())
            co_return;
        log(LogLevel::warning, "the " + name_ + " left " + std::to_string(below.size()) +
                                   " process(es) outside its process group (setsid); ending them too");
        for (int sig : {SIGTERM, SIGKILL}) {
            for (const ProcStat& p : below)
                if (still_running(p))
                    ::kill(p.pid, sig);
            const auto deadline = std::chrono::steady_clock::now() + params_.kill_after;
            asio::steady_timer tick(executor_);
            while (std::any_of(below.begin(), below.end(), still_running) &&
                   std::chrono::steady_clock::now() < deadline) {
                tick.expires_after(std::chrono::milliseconds(10));
                co_await tick.async_wait(asio::use_awaitable);
            }
        }
    }

    asio::awaitable<bool> wait_for_group(std::chrono::milliseconds limit)
    {
        const auto deadline = std::chrono::steady_clock::now() + limit;
        asio::steady_timer tick(executor_);
        for (;;) {
            check_exit();
            if (!group_gone_ && !group_has_running(pid_))
                group_gone_ = true;
            if (group_gone_)
                co_return true;
            if (std::chrono::steady_clock::now() >= deadline)
                co_return false;
            tick.expires_after(std::chrono::milliseconds(10));
            co_await tick.async_wait(asio::use_awaitable);
        }
    }

    static asio::awaitable<void> read_stderr(std::shared_ptr<Impl> self)
    {
        std::string buffer;
        bool skipping = false;  // the rest of a line past max_stderr_line
        std::array<char, 4096> chunk;
        for (;;) {
            boost::system::error_code ec;
            std::size_t n = co_await self->stderr_.async_read_some(asio::buffer(chunk),
                                                                   asio::redirect_error(asio::use_awaitable, ec));
            if (ec)
                break;
            for (std::size_t i = 0; i < n; ++i) {
                const char c = chunk[i];
                if (c == '\n') {
                    if (!skipping || !buffer.empty())
                        self->keep_stderr_line(std::move(buffer));
                    buffer.clear();
                    skipping = false;
                } else if (buffer.size() < max_stderr_line) {
                    buffer.push_back(c);
                } else if (!skipping) {
                    buffer += "...";
                    self->keep_stderr_line(std::move(buffer));
                    buffer.clear();
                    skipping = true;
                }
            }
        }
        if (!buffer.empty())
            self->keep_stderr_line(std::move(buffer));
        if (std::string held = self->stderr_limiter_.take_held_back(self->name_); !held.empty())
            log(LogLevel::warning, held);
    }

    void keep_stderr_line(std::string line)
    {
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        // A server that floods its stderr is written at most detail::max_log_lines each detail::log_window.
        if (stderr_limiter_.admit(adk::Clock::now())) {
            if (std::string held = stderr_limiter_.take_held_back(name_); !held.empty())
                log(LogLevel::warning, held);
            log(LogLevel::info, name_ + ": " + line);
        }
        std::lock_guard lock(stderr_mutex_);
        stderr_lines_.push_back(std::move(line));
        if (stderr_lines_.size() > stderr_lines_kept)
            stderr_lines_.pop_front();
    }

    asio::any_io_executor executor_;
    StdioServerParams params_;
    std::string name_;
    asio::posix::stream_descriptor stdin_, stdout_, stderr_;
    std::string buffer_;  // stdout read past the last line
    detail::LogLimiter stderr_limiter_;  // read_stderr's alone
    pid_t pid_ = 0;
    bool reaped_ = false;
    bool group_gone_ = false;
    std::string status_text_;
    mutable std::mutex stderr_mutex_;
    std::deque<std::string> stderr_lines_;
};

StdioTransport::StdioTransport(asio::any_io_executor executor, StdioServerParams params)
    : impl_(std::make_shared<Impl>(std::move(executor), std::move(params)))
{
}

StdioTransport::~StdioTransport()
{
    impl_->kill_now();
}

asio::awaitable<void> StdioTransport::open()
{
    impl_->spawn();
    co_return;
}

asio::awaitable<void> StdioTransport::send(std::string message)
{
    co_await impl_->send(std::move(message));
}

asio::awaitable<std::optional<std::string>> StdioTransport::receive()
{
    co_return co_await impl_->receive();
}

asio::awaitable<void> StdioTransport::close()
{
    co_await impl_->close();
}

const std::string& StdioTransport::name() const
{
    return impl_->name();
}

std::string StdioTransport::diagnostics() const
{
    impl_->check_exit();
    return impl_->diagnostics();
}

int StdioTransport::pid() const noexcept
{
    return impl_->pid();
}

}  // namespace adk::mcp
