// SandboxedCodeExecutor: runs the model's Python with Debian's python3 inside Debian's bubblewrap (bwrap).
//
//   auto agent = adk::LlmAgent::builder("analyst").model(model)
//       .code_executor(std::make_shared<adk::SandboxedCodeExecutor>()).build();
//
// Each run gets a sandbox of its own: new user, PID, network, IPC, UTS and cgroup namespaces (no network at
// all: only a loopback of its own, down), a root that holds only the read-only system folders
// (SandboxOptions::read_only_paths, /usr by default), a fresh /proc and a minimal /dev, and a private
// working folder /work (a tmpfs of limits.folder_bytes) that holds the input files. It inherits no descriptor
// and no environment of the server's. When the server runs as root, each run has a user id of its own.
// The limits, each named in CodeExecutionOutput::limit_reached when hit: CPU time, address space, processes,
// stdout and stderr bytes, wall time. Files the code writes in /work come back as output files.
//
// Where bubblewrap cannot make its namespaces (no unprivileged user namespaces, a seccomp profile that forbids
// them), execute_code throws adk::Error (errc::unavailable) with bwrap's reason: code never runs unsandboxed.
// The code is not stateful: each run starts a new interpreter in a new folder.
#pragma once

#include <adk/code_execution/code_executor.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

namespace adk {

class SandboxLimits {
public:
    SandboxLimits() = default;
    std::chrono::seconds cpu_time{10};           // CPU time of each process (RLIMIT_CPU)
    std::chrono::milliseconds wall_time{30'000};  // the whole run, from start to the last process's end
    std::size_t memory_bytes = 512u << 20;       // address space of each process (RLIMIT_AS)
    int processes = 32;                          // processes and threads of the sandbox at once
    std::size_t output_bytes = 1u << 20;         // stdout and stderr together; the rest is cut and the run stopped
    std::size_t folder_bytes = 32u << 20;        // the working folder /work (a tmpfs), input files included
    std::size_t code_bytes = 1u << 20;           // the code itself
    int output_files = 16;                       // files brought back from /work; the rest are named and left
    std::size_t file_bytes = 10'000'000;         // each file brought back (an artifact holds at most 10 MB)
};

class SandboxOptions {
public:
    SandboxOptions() = default;
    std::string bwrap = "/usr/bin/bwrap";
    std::string python = "/usr/bin/python3";  // inside the sandbox: it must be under a read-only path
    // Host folders bound read-only at the same place. /bin, /lib, /lib64 and /sbin follow the host: symbolic
    // links into /usr (a merged /usr, as Debian 12 has) or bound read-only when they are folders.
    std::vector<std::string> read_only_paths{"/usr"};
    SandboxLimits limits;
    CodeExecutorOptions executor;
    // When the server runs as root, each run takes a user and group id of its own from [run_as_first_id,
    // run_as_first_id + run_as_id_count): ids that no account uses, so that root's files are out of its reach
    // through any path bound into it, and its process limit counts its own processes only (RLIMIT_NPROC counts
    // every process of a user). In a user namespace that maps fewer ids, pick a range it maps.
    unsigned run_as_first_id = 1'800'000'000;
    unsigned run_as_id_count = 65'536;
};

class SandboxedCodeExecutor final : public CodeExecutor {
public:
    explicit SandboxedCodeExecutor(SandboxOptions options = {});

    const SandboxOptions& sandbox_options() const noexcept { return sandbox_; }

    asio::awaitable<CodeExecutionOutput> execute_code(InvocationContext& ctx, CodeExecutionInput input) override;

    // Runs code outside any agent, on the calling coroutine's executor. Throws adk::Error: invalid_argument for
    // input it refuses (code or files over the limits, a file name that is not a plain name), unavailable when
    // the sandbox cannot be made. Cancelling the caller kills the sandbox.
    asio::awaitable<CodeExecutionOutput> run(CodeExecutionInput input) const;

private:
    SandboxOptions sandbox_;
};

static_assert(!std::is_aggregate_v<SandboxLimits> && !std::is_aggregate_v<SandboxOptions>);

}  // namespace adk
