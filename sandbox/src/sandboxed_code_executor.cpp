// The sandbox, step by step: the input is checked; the code, the Python side and each input file go into memory
// files; a child is forked that takes its descriptors (and no other), its limits and, under root, an
// unprivileged user, then executes bwrap, which builds the namespaces and the folders and starts python3. The
// parent reads stdout, stderr and the report until they end or the wall time runs out, then reaps the child.
#include <adk/sandbox/sandboxed_code_executor.hpp>

#include "sandbox_main.py.hpp"

#include <adk/core/error.hpp>
#include <adk/net/sse_parser.hpp>
#include <adk/sandbox/sandbox_report.hpp>

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>

namespace adk {

namespace {

using namespace asio::experimental::awaitable_operators;

constexpr int max_input_files = 64;
constexpr std::size_t max_stderr_shown = 600;
constexpr std::size_t tmp_bytes = 16u << 20;  // /tmp inside the sandbox

// Descriptors inside the child, as bwrap's arguments name them.
constexpr int report_fd = 3;
constexpr int main_py_fd = 4;
constexpr int code_fd = 5;
constexpr int first_file_fd = 6;

class Fd {
public:
    Fd() = default;
    explicit Fd(int fd) : fd_(fd) {}
    Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
    Fd& operator=(Fd&& other) noexcept
    {
        reset(std::exchange(other.fd_, -1));
        return *this;
    }
    ~Fd() { reset(); }
    int get() const noexcept { return fd_; }
    int release() noexcept { return std::exchange(fd_, -1); }
    void reset(int fd = -1) noexcept
    {
        if (fd_ >= 0)
            ::close(fd_);
        fd_ = fd;
    }

private:
    int fd_ = -1;
};

[[noreturn]] void fail_system(const std::string& what)
{
    throw Error(errc::unavailable, "the code sandbox could not be prepared: " + what + ": " + std::strerror(errno));
}

// A descriptor at `at` or above (close-on-exec), so that none collides with the numbers the child gives them.
Fd above(Fd fd, int at)
{
    const int moved = ::fcntl(fd.get(), F_DUPFD_CLOEXEC, at);
    if (moved < 0)
        fail_system("fcntl");
    return Fd(moved);
}

Fd memory_file(const char* name, std::string_view bytes)
{
    Fd fd(::memfd_create(name, MFD_CLOEXEC));
    if (fd.get() < 0)
        fail_system("memfd_create");
    while (!bytes.empty()) {
        const ssize_t n = ::write(fd.get(), bytes.data(), bytes.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            fail_system("writing a memory file");
        bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    if (::lseek(fd.get(), 0, SEEK_SET) != 0)
        fail_system("lseek");
    return fd;
}

void check_input(const CodeExecutionInput& input, const SandboxLimits& limits)
{
    auto refuse = [](const std::string& why) { throw Error(errc::invalid_argument, "the code sandbox refused the run: " + why); };
    if (input.code.size() > limits.code_bytes)
        refuse("the code is over " + std::to_string(limits.code_bytes) + " bytes (SandboxLimits::code_bytes)");
    if (input.code.find('\0') != std::string::npos)
        refuse("the code holds a NUL byte");
    if (input.input_files.size() > static_cast<std::size_t>(max_input_files))
        refuse("more than " + std::to_string(max_input_files) + " input files");
    std::set<std::string, std::less<>> names;
    std::size_t total = 0;
    for (const CodeFile& f : input.input_files) {
        bool plain = !f.name.empty() && f.name.size() <= 255 && f.name != "." && f.name != "..";
        for (char c : f.name)
            plain = plain && static_cast<unsigned char>(c) >= 0x20 && c != 0x7f && c != '/' && c != '\\';
        if (!plain)
            refuse("an input file's name must be a plain file name (no '/', no control characters, not '.' or "
                   "'..'), got '" + f.name.substr(0, 80) + "'");
        if (!names.insert(f.name).second)
            refuse("two input files are named '" + f.name + "'");
        total += f.content.size();
    }
    if (total > limits.folder_bytes)
        refuse("the input files hold " + std::to_string(total) + " bytes, over the working folder's " +
               std::to_string(limits.folder_bytes) + " (SandboxLimits::folder_bytes)");
}

// bwrap's command line: the namespaces, an environment of its own, the read-only system folders, /proc and
// /dev, the two tmpfs folders, the Python side, the code and the input files, then python3.
std::vector<std::string> bwrap_command(const SandboxOptions& o, const std::vector<CodeFile>& files)
{
    const SandboxLimits& l = o.limits;
    std::vector<std::string> a{o.bwrap,
                               "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
                               "--new-session", "--clearenv",
                               "--setenv", "PATH", "/usr/bin:/bin",
                               "--setenv", "HOME", "/work",
                               "--setenv", "TMPDIR", "/tmp",
                               "--setenv", "LANG", "C.UTF-8",
                               "--setenv", "PYTHONUNBUFFERED", "1",
                               "--setenv", "MPLBACKEND", "Agg",
                               "--setenv", "MPLCONFIGDIR", "/tmp",
                               "--setenv", "OPENBLAS_NUM_THREADS", "1"};
    for (const std::string& path : o.read_only_paths)
        a.insert(a.end(), {"--ro-bind", path, path});
    for (const char* top : {"/bin", "/lib", "/lib64", "/sbin"}) {
        if (std::find(o.read_only_paths.begin(), o.read_only_paths.end(), top) != o.read_only_paths.end())
            continue;
        struct stat st {};
        if (::lstat(top, &st) != 0)
            continue;
        if (S_ISLNK(st.st_mode)) {
            std::array<char, 256> target{};
            const ssize_t n = ::readlink(top, target.data(), target.size() - 1);
            if (n > 0)
                a.insert(a.end(), {"--symlink", std::string(target.data(), static_cast<std::size_t>(n)), top});
        } else if (S_ISDIR(st.st_mode)) {
            a.insert(a.end(), {"--ro-bind", top, top});
        }
    }
    a.insert(a.end(), {"--proc", "/proc", "--dev", "/dev",
                       "--size", std::to_string(l.folder_bytes), "--tmpfs", "/work",
                       "--size", std::to_string(tmp_bytes), "--tmpfs", "/tmp",
                       "--ro-bind-data", std::to_string(main_py_fd), "/adk/main.py",
                       "--ro-bind-data", std::to_string(code_fd), "/adk/code.py"});
    for (std::size_t i = 0; i < files.size(); ++i)
        a.insert(a.end(), {"--file", std::to_string(first_file_fd + static_cast<int>(i)), "/work/" + files[i].name});
    // The root and /dev (a tmpfs bwrap fills with device nodes) read-only: /work and /tmp alone take writes.
    a.insert(a.end(), {"--remount-ro", "/dev", "--remount-ro", "/", "--chdir", "/work", o.python, "-u", "-B", "-s", "/adk/main.py",
                       std::to_string(l.output_files), std::to_string(l.file_bytes)});
    return a;
}

// Tasks (processes and threads) that `uid` runs now: RLIMIT_NPROC counts them all, the sandbox's own among them.
long tasks_of(uid_t uid)
{
    long count = 0;
    DIR* proc = ::opendir("/proc");
    if (!proc)
        return 0;
    while (dirent* entry = ::readdir(proc)) {
        if (entry->d_name[0] < '0' || entry->d_name[0] > '9')
            continue;
        std::ifstream status(std::string("/proc/") + entry->d_name + "/status");
        std::string line;
        long threads = 0;
        bool same_user = false;
        while (std::getline(status, line)) {
            if (line.rfind("Uid:", 0) == 0)
                same_user = std::strtoul(line.c_str() + 4, nullptr, 10) == uid;
            else if (line.rfind("Threads:", 0) == 0)
                threads = std::strtol(line.c_str() + 8, nullptr, 10);
        }
        if (same_user)
            count += std::max(1L, threads);
    }
    ::closedir(proc);
    return count;
}

// What the forked child does, prepared before the fork: after it, only system calls.
class ChildPlan {
public:
    std::vector<std::pair<int, int>> moves;  // descriptor -> its number in the child
    int first_free = 0;                      // descriptors from here on are closed
    std::vector<std::pair<int, rlim_t>> limits;
    bool switch_user = false;
    uid_t uid = 0;
    gid_t gid = 0;
    std::vector<std::string> command;
    std::vector<char*> argv;
    std::string limit_failed, switch_failed, exec_failed;  // what the child says when a step fails
};

// A message of the child's on its stderr (the parent reads it): write(2) only, after a fork.
void say(const std::string& message) noexcept
{
    [[maybe_unused]] const ssize_t n = ::write(2, message.data(), message.size());
}

[[noreturn]] void become_sandbox(const ChildPlan& plan) noexcept
{
    ::setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig = 1; sig < NSIG; ++sig)
        ::signal(sig, SIG_DFL);  // a server ignores SIGPIPE; the code gets the defaults
    for (const auto& [from, to] : plan.moves)
        if (::dup2(from, to) < 0)
            ::_exit(126);
    if (::syscall(SYS_close_range, plan.first_free, ~0U, 0) != 0) {
        rlimit files{};
        ::getrlimit(RLIMIT_NOFILE, &files);
        const rlim_t last = std::min<rlim_t>(files.rlim_cur, 1u << 20);
        for (rlim_t fd = static_cast<rlim_t>(plan.first_free); fd < last; ++fd)
            ::close(static_cast<int>(fd));
    }
    for (const auto& [resource, value] : plan.limits) {
        // CPU: SIGXCPU at the limit, SIGKILL a second later.
        const rlimit r{value, resource == RLIMIT_CPU ? value + 1 : value};
        if (::setrlimit(resource, &r) != 0) {
            say(plan.limit_failed);
            ::_exit(126);
        }
    }
    if (plan.switch_user) {
        if (::setgroups(0, nullptr) != 0 || ::setresgid(plan.gid, plan.gid, plan.gid) != 0 ||
            ::setresuid(plan.uid, plan.uid, plan.uid) != 0) {
            say(plan.switch_failed);
            ::_exit(126);
        }
    }
    char* no_environment[] = {nullptr};
    ::execve(plan.argv[0], plan.argv.data(), no_environment);
    say(plan.exec_failed);
    ::_exit(127);
}

// A user id of its own for each run (under root): a counter from a start that differs between processes.
unsigned next_run_id(const SandboxOptions& o)
{
    static std::atomic<unsigned> next{static_cast<unsigned>(::getpid()) * 7919u +
                                      static_cast<unsigned>(std::chrono::steady_clock::now().time_since_epoch().count())};
    return o.run_as_first_id + next.fetch_add(1) % o.run_as_id_count;
}

// The forked child (bwrap): killed and reaped when the run ends early (an error, a cancelled caller).
class Child {
public:
    explicit Child(pid_t pid) : pid_(pid) {}
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;
    ~Child()
    {
        if (reaped_)
            return;
        kill();
        ::waitpid(pid_, nullptr, 0);
    }
    // bwrap's --die-with-parent takes the sandbox's processes with it.
    void kill() noexcept
    {
        if (!reaped_)
            ::kill(pid_, SIGKILL);
    }
    // Waits for the child's exit until `deadline`, then kills it; its wait status, and whether it was killed.
    asio::awaitable<std::pair<int, bool>> wait(std::chrono::steady_clock::time_point deadline)
    {
        asio::steady_timer tick(co_await asio::this_coro::executor);
        auto pause = std::chrono::milliseconds(1);
        bool killed = false;
        for (;;) {
            int status = 0;
            const pid_t done = ::waitpid(pid_, &status, WNOHANG);
            if (done == pid_ || (done < 0 && errno != EINTR)) {
                reaped_ = true;
                co_return std::pair(status, killed);
            }
            if (!killed && std::chrono::steady_clock::now() >= deadline) {
                kill();
                killed = true;
            }
            tick.expires_after(pause);
            co_await tick.async_wait(asio::use_awaitable);
            pause = std::min(pause * 2, std::chrono::milliseconds(20));
        }
    }

private:
    pid_t pid_;
    bool reaped_ = false;
};

// What the run's three pipes bring, and what was cut.
class Capture {
public:
    explicit Capture(const SandboxLimits& limits)
        : output_limit(limits.output_bytes), report_limit(limits.folder_bytes / 3 * 4 + (1u << 20))
    {
    }
    std::size_t output_limit;
    std::size_t report_limit;
    std::size_t output_used = 0;
    bool output_over = false;
    bool report_over = false;
    std::string out, err, report;
};

// Reads a pipe to its end. Output past the limit is dropped and the sandbox killed.
asio::awaitable<void> drain(asio::posix::stream_descriptor& pipe, std::string& into, std::size_t& used,
                            std::size_t limit, bool& over, Child& child)
{
    std::array<char, 16384> chunk;
    for (;;) {
        boost::system::error_code ec;
        const std::size_t n =
            co_await pipe.async_read_some(asio::buffer(chunk), asio::redirect_error(asio::use_awaitable, ec));
        if (ec)
            co_return;  // its end, or the wall time ran out
        const std::size_t room = used < limit ? limit - used : 0;
        into.append(chunk.data(), std::min(n, room));
        used += n;
        if (used > limit && !over) {
            over = true;
            child.kill();
        }
    }
}

std::string duration_text(std::chrono::milliseconds d)
{
    if (d.count() % 1000 == 0)
        return std::to_string(d.count() / 1000) + " s";
    return std::to_string(d.count()) + " ms";
}

std::string describe(int status)
{
    if (WIFEXITED(status))
        return "exit status " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status))
        return "signal " + std::to_string(WTERMSIG(status));
    return "status " + std::to_string(status);
}

// The limit that stopped the run, in words; empty when the code ended by itself.
std::string limit_reached(const SandboxLimits& l, const Capture& cap, const SandboxReport& report, bool timed_out,
                          int status)
{
    if (timed_out)
        return "the wall time limit of " + duration_text(l.wall_time) + " was reached";
    if (cap.output_over)
        return "the output limit of " + std::to_string(l.output_bytes) + " bytes (stdout and stderr) was reached";
    if (cap.report_over)
        return "the files it wrote were over " + std::to_string(cap.report_limit) + " bytes in all";
    if (report.limit == "memory")
        return "the memory limit of " + std::to_string(l.memory_bytes >> 20) + " MB was reached";
    if (report.limit == "processes")
        return "the process limit of " + std::to_string(l.processes) + " was reached";
    // bwrap exits with 128 + the signal that ended the code.
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    if (!report.exit_status && code == 128 + SIGXCPU)
        return "the CPU time limit of " + std::to_string(l.cpu_time.count()) + " s was reached";
    if (!report.exit_status && code == 128 + SIGKILL)
        return "it was killed: the CPU time limit of " + std::to_string(l.cpu_time.count()) +
               " s was reached, or the machine ran out of memory";
    if (!report.exit_status && code > 128)
        return "";  // another signal: its traceback or message is in stderr
    return "";
}

}  // namespace

SandboxedCodeExecutor::SandboxedCodeExecutor(SandboxOptions sandbox)
    : CodeExecutor(sandbox.executor), sandbox_(std::move(sandbox))
{
    const SandboxLimits& l = sandbox_.limits;
    auto check = [](bool ok, const char* what) {
        if (!ok)
            throw Error(errc::invalid_argument, std::string("SandboxOptions: ") + what);
    };
    check(l.cpu_time.count() > 0, "limits.cpu_time must be positive");
    check(l.wall_time.count() > 0, "limits.wall_time must be positive");
    check(l.memory_bytes >= (32u << 20), "limits.memory_bytes must be at least 32 MB (python3 needs about 20)");
    check(l.processes >= 1, "limits.processes must be at least 1");
    check(l.output_bytes > 0 && l.folder_bytes > 0 && l.code_bytes > 0 && l.file_bytes > 0,
          "limits.output_bytes, folder_bytes, code_bytes and file_bytes must be positive");
    check(l.output_files >= 0, "limits.output_files must not be negative");
    check(!sandbox_.bwrap.empty() && sandbox_.bwrap.front() == '/', "bwrap must be an absolute path");
    check(!sandbox_.python.empty() && sandbox_.python.front() == '/', "python must be an absolute path");
    for (const std::string& path : sandbox_.read_only_paths)
        check(!path.empty() && path.front() == '/' && path.find("..") == std::string::npos && path != "/",
              "each of read_only_paths must be an absolute path, not '/', without '..'");
    check(!options().stateful, "the sandbox is not stateful: each run starts a new interpreter");
    check(sandbox_.run_as_id_count > 0 && sandbox_.run_as_first_id > 0 &&
              sandbox_.run_as_id_count <= 0xFFFFFFFEu - sandbox_.run_as_first_id,
          "run_as_first_id and run_as_id_count must name ids above 0 and below 4294967295");
}

asio::awaitable<CodeExecutionOutput> SandboxedCodeExecutor::execute_code(InvocationContext&, CodeExecutionInput input)
{
    co_return co_await run(std::move(input));
}

asio::awaitable<CodeExecutionOutput> SandboxedCodeExecutor::run(CodeExecutionInput input) const
{
    const SandboxLimits& limits = sandbox_.limits;
    check_input(input, limits);
    const auto deadline = std::chrono::steady_clock::now() + limits.wall_time;

    // Every descriptor the child gets, numbered above the numbers it gives them.
    const int high = first_file_fd + static_cast<int>(input.input_files.size()) + 8;
    std::array<int, 2> out_pipe{}, err_pipe{}, report_pipe{};
    for (auto* p : {&out_pipe, &err_pipe, &report_pipe})
        if (::pipe2(p->data(), O_CLOEXEC) != 0)
            fail_system("pipe2");
    Fd out_read(out_pipe[0]), err_read(err_pipe[0]), report_read(report_pipe[0]);
    Fd out_write = above(Fd(out_pipe[1]), high), err_write = above(Fd(err_pipe[1]), high),
       report_write = above(Fd(report_pipe[1]), high);
    Fd null_in = above(Fd(::open("/dev/null", O_RDONLY | O_CLOEXEC)), high);
    Fd main_py = above(memory_file("adk-main.py", sandbox_detail::sandbox_main_py), high);
    Fd code = above(memory_file("adk-code.py", input.code), high);
    std::vector<Fd> files;
    for (const CodeFile& f : input.input_files)
        files.push_back(above(memory_file("adk-input", f.content), high));

    ChildPlan plan;
    plan.moves = {{null_in.get(), 0}, {out_write.get(), 1}, {err_write.get(), 2}, {report_write.get(), report_fd},
                  {main_py.get(), main_py_fd}, {code.get(), code_fd}};
    for (std::size_t i = 0; i < files.size(); ++i)
        plan.moves.emplace_back(files[i].get(), first_file_fd + static_cast<int>(i));
    plan.first_free = first_file_fd + static_cast<int>(files.size());
    plan.switch_user = ::geteuid() == 0;
    plan.uid = plan.switch_user ? next_run_id(sandbox_) : ::getuid();
    plan.gid = plan.switch_user ? plan.uid : ::getgid();
    // Under its own id the run's processes are the only ones its limit counts; else the user's count too.
    const long running = plan.switch_user ? 0 : tasks_of(plan.uid);
    const auto cpu = static_cast<rlim_t>(limits.cpu_time.count());
    plan.limits = {{RLIMIT_CPU, cpu},
                   {RLIMIT_AS, static_cast<rlim_t>(limits.memory_bytes)},
                   {RLIMIT_NPROC, static_cast<rlim_t>(running + limits.processes)},
                   {RLIMIT_CORE, 0},
                   {RLIMIT_FSIZE, static_cast<rlim_t>(limits.folder_bytes)}};
    plan.limit_failed = "adk sandbox: could not set the sandbox's limits (setrlimit)\n";
    plan.switch_failed = "adk sandbox: could not switch to user id " + std::to_string(plan.uid) +
                         " (setresuid): the user namespace may not map it; set SandboxOptions::run_as_first_id to "
                         "an id range it maps\n";
    plan.exec_failed = "adk sandbox: could not execute " + sandbox_.bwrap + ": is bubblewrap installed?\n";
    plan.command = bwrap_command(sandbox_, input.input_files);
    for (std::string& arg : plan.command)
        plan.argv.push_back(arg.data());
    plan.argv.push_back(nullptr);

    const pid_t pid = ::fork();
    if (pid == 0)
        become_sandbox(plan);
    if (pid < 0)
        fail_system("fork");
    Child child(pid);
    for (Fd* fd : {&out_write, &err_write, &report_write, &null_in, &main_py, &code})
        fd->reset();
    files.clear();

    auto executor = co_await asio::this_coro::executor;
    asio::posix::stream_descriptor out(executor, out_read.release()), err(executor, err_read.release()),
        report(executor, report_read.release());
    Capture cap(limits);
    asio::awaitable<void> outputs = drain(out, cap.out, cap.output_used, cap.output_limit, cap.output_over, child) &&
                                    drain(err, cap.err, cap.output_used, cap.output_limit, cap.output_over, child);
    std::size_t report_used = 0;
    asio::awaitable<void> readers =
        std::move(outputs) && drain(report, cap.report, report_used, cap.report_limit, cap.report_over, child);
    asio::steady_timer wall(executor);
    wall.expires_at(deadline);
    asio::awaitable<std::variant<std::monostate, std::monostate>> race =
        std::move(readers) || wall.async_wait(asio::use_awaitable);
    const bool timed_out = (co_await std::move(race)).index() == 1;
    if (timed_out)
        child.kill();
    const auto [status, killed_at_deadline] = co_await child.wait(deadline);

    SandboxReport parsed = parse_sandbox_report(cap.report, limits);
    if (!parsed.started) {
        std::string said = net::to_valid_utf8(cap.err.substr(0, max_stderr_shown));
        while (!said.empty() && (said.back() == '\n' || said.back() == ' '))
            said.pop_back();
        throw Error(errc::unavailable,
                    "the code sandbox did not start (" + sandbox_.bwrap + ", " + describe(status) + ")" +
                        (said.empty() ? std::string() : ": " + said) +
                        ". SandboxedCodeExecutor runs code only inside bubblewrap, and never without it: install "
                        "bubblewrap (Debian: apt install bubblewrap) and let it make user namespaces (the sysctls "
                        "kernel.unprivileged_userns_clone and user.max_user_namespaces; a container's seccomp "
                        "profile may forbid them)");
    }
    CodeExecutionOutput output;
    output.stdout_text = net::to_valid_utf8(cap.out);
    output.stderr_text = net::to_valid_utf8(cap.err);
    output.limit_reached = limit_reached(limits, cap, parsed, timed_out || killed_at_deadline, status);
    output.output_files = std::move(parsed.files);
    for (const std::string& note : parsed.notes)
        output.stderr_text += (output.stderr_text.empty() || output.stderr_text.back() == '\n' ? "" : "\n") +
                              net::to_valid_utf8(note) + "\n";
    co_return output;
}

}  // namespace adk
