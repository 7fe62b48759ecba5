// SandboxedCodeExecutor against the real bubblewrap and Debian's python3 (tools/setup.sh installs both): code runs,
// files go in and come back, and each way out is tried from inside and found closed.
#include <adk/sandbox/sandbox_report.hpp>
#include <adk/sandbox/sandboxed_code_executor.hpp>

#include "support/child_process.hpp"
#include "support/run.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

adk::SandboxOptions quick_options()
{
    adk::SandboxOptions o;
    o.limits.cpu_time = std::chrono::seconds(2);
    o.limits.wall_time = std::chrono::seconds(6);
    return o;
}

adk::CodeExecutionOutput run_code(const adk::SandboxedCodeExecutor& sandbox, std::string code,
                                  std::vector<adk::CodeFile> files = {})
{
    asio::io_context ioc;
    adk::CodeExecutionInput input(std::move(code), std::move(files));
    return adk::test::run(ioc, sandbox.run(std::move(input)), std::chrono::seconds(30));
}

const adk::CodeFile* file_named(const adk::CodeExecutionOutput& out, const std::string& name)
{
    for (const auto& f : out.output_files)
        if (f.name == name)
            return &f;
    return nullptr;
}

// A host folder of the test's own, removed at the end.
class HostFolder {
public:
    HostFolder()
    {
        std::string pattern = (fs::temp_directory_path() / "adk-sandbox-test-XXXXXX").string();
        path = ::mkdtemp(pattern.data());
    }
    ~HostFolder()
    {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    fs::path path;
};

}  // namespace

TEST_CASE("sandbox: code runs in python3, reads its input files and brings back the files it writes", "[sandbox]")
{
    adk::SandboxedCodeExecutor sandbox(quick_options());
    const std::string code = R"PY(
import csv, struct, zlib
rows = list(csv.DictReader(open("data.csv")))
total = sum(float(r["rain_mm"]) for r in rows)
print("days", len(rows), "rain", total)
with open("summary.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["days", "rain_mm"])
    w.writerow([len(rows), total])
# A bar chart of the rain, one bar per day, as a PNG written by hand (no plotting library needed).
width, height = 8 * len(rows), 40
pixels = bytearray()
for y in range(height):
    pixels.append(0)
    for r in rows:
        filled = height - y <= float(r["rain_mm"]) * 4
        pixels += (b"\x20\x60\xc0" if filled else b"\xff\xff\xff") * 8
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
png += chunk(b"IDAT", zlib.compress(bytes(pixels))) + chunk(b"IEND", b"")
import os
os.makedirs("plots", exist_ok=True)
open("plots/rain.png", "wb").write(png)
)PY";
    adk::CodeFile data("data.csv", "day,rain_mm\nmon,2.5\ntue,0\nwed,7.5\n", "text/csv");
    adk::CodeExecutionOutput out = run_code(sandbox, code, {data});
    INFO(out.stderr_text);
    CHECK(out.stdout_text == "days 3 rain 10.0\n");
    CHECK(out.stderr_text.empty());
    CHECK(out.limit_reached.empty());
    CHECK_FALSE(out.failed());
    REQUIRE(out.output_files.size() == 2);  // the input file, unchanged, does not come back
    const adk::CodeFile* summary = file_named(out, "summary.csv");
    REQUIRE(summary);
    CHECK(summary->content == "days,rain_mm\r\n3,10.0\r\n");
    CHECK(summary->mime_type == "text/csv");
    const adk::CodeFile* chart = file_named(out, "plots/rain.png");
    REQUIRE(chart);
    CHECK(chart->mime_type == "image/png");
    CHECK(chart->content.substr(0, 8) == std::string("\x89PNG\r\n\x1a\n", 8));
}

TEST_CASE("sandbox: an error in the code comes back as its traceback, the code's own lines only", "[sandbox]")
{
    adk::SandboxedCodeExecutor sandbox(quick_options());
    adk::CodeExecutionOutput out = run_code(sandbox, "print('before')\nx = 1 / 0\n");
    CHECK(out.stdout_text == "before\n");
    CHECK(out.stderr_text.find("ZeroDivisionError: division by zero") != std::string::npos);
    CHECK(out.stderr_text.find("code.py\", line 2") != std::string::npos);
    CHECK(out.stderr_text.find("main.py") == std::string::npos);
    CHECK(out.failed());
    CHECK(out.limit_reached.empty());
}

TEST_CASE("sandbox escape: a socket reaches nothing, not even the host's loopback", "[sandbox][escape]")
{
    asio::io_context ioc;
    asio::ip::tcp::acceptor listener(ioc, {asio::ip::make_address("127.0.0.1"), 0});
    listener.non_blocking(true);
    const unsigned short port = listener.local_endpoint().port();
    adk::SandboxedCodeExecutor sandbox(quick_options());
    const std::string code = "import socket\n"
                             "for host in ['127.0.0.1', '10.0.2.2', '1.1.1.1']:\n"
                             "    try:\n"
                             "        socket.create_connection((host, " + std::to_string(port) + "), timeout=1)\n"
                             "        print(host, 'connected')\n"
                             "    except OSError as e:\n"
                             "        print(host, 'refused:', type(e).__name__)\n"
                             "try:\n"
                             "    socket.getaddrinfo('example.com', 80)\n"
                             "    print('dns works')\n"
                             "except OSError as e:\n"
                             "    print('dns fails')\n"
                             "import os\n"
                             "print(sorted(os.listdir('/sys/class/net')) if os.path.exists('/sys/class/net') else 'no /sys')\n";
    adk::CodeExecutionOutput out = run_code(sandbox, code);
    INFO(out.stdout_text << out.stderr_text);
    CHECK(out.stdout_text.find("connected") == std::string::npos);
    CHECK(out.stdout_text.find("127.0.0.1 refused: ConnectionRefusedError") != std::string::npos);
    CHECK(out.stdout_text.find("1.1.1.1 refused") != std::string::npos);
    CHECK(out.stdout_text.find("dns fails") != std::string::npos);
    boost::system::error_code ec;
    asio::ip::tcp::socket accepted(ioc);
    listener.accept(accepted, ec);
    CHECK(ec == asio::error::would_block);  // nobody ever knocked
}

TEST_CASE("sandbox escape: nothing outside the working folder can be written, on the host or in the sandbox", "[sandbox][escape]")
{
    HostFolder host;
    const fs::path target = host.path / "escaped.txt";
    adk::SandboxedCodeExecutor sandbox(quick_options());
    const std::string code = "import os\n"
                             "for path in ['" + target.string() + "', '/escaped.txt', '/usr/escaped.txt', "
                             "'/proc/escaped.txt', '/dev/escaped.txt', '/dev/shm/escaped.txt', '/adk/code.py', '/work/../escaped.txt']:\n"
                             "    try:\n"
                             "        open(path, 'w').write('x')\n"
                             "        print(path, 'written')\n"
                             "    except OSError as e:\n"
                             "        print(path, 'refused:', e.strerror)\n"
                             "open('/work/fine.txt', 'w').write('inside')\n"
                             "open('/tmp/scratch.txt', 'w').write('scratch')\n"
                             "print('inside written')\n";
    adk::CodeExecutionOutput out = run_code(sandbox, code);
    INFO(out.stdout_text << out.stderr_text);
    CHECK(out.stdout_text.find("escaped.txt written") == std::string::npos);
    CHECK(out.stdout_text.find("code.py written") == std::string::npos);
    CHECK(out.stdout_text.find("/dev/escaped.txt refused: Read-only file system") != std::string::npos);
    CHECK(out.stdout_text.find("inside written") != std::string::npos);
    CHECK_FALSE(fs::exists(target));
    CHECK_FALSE(fs::exists("/escaped.txt"));
    CHECK_FALSE(fs::exists("/usr/escaped.txt"));
    REQUIRE(out.output_files.size() == 1);  // /tmp is the sandbox's scratch space, not brought back
    CHECK(out.output_files[0].name == "fine.txt");
}

TEST_CASE("sandbox escape: another user's files, the host's secrets and the server's environment are out of sight", "[sandbox][escape]")
{
    HostFolder host;
    const fs::path secret = host.path / "other-user-secret.txt";
    std::ofstream(secret) << "the-other-users-secret";
    ::chmod(secret.c_str(), 0644);  // readable by anyone who can reach it
    ::setenv("ADK_SANDBOX_TEST_SECRET", "server-environment-secret", 1);
    adk::SandboxedCodeExecutor sandbox(quick_options());
    const std::string code = "import os\n"
                             "for path in ['" + secret.string() + "', '/etc/shadow', '/etc/passwd', '/root/.bashrc', "
                             "'/home', '/proc/1/environ']:\n"
                             "    try:\n"
                             "        print(path, 'read:', open(path).read()[:40])\n"
                             "    except OSError as e:\n"
                             "        print(path, 'refused:', e.strerror)\n"
                             "print('env', sorted(os.environ))\n"
                             "print('uid', os.getuid(), 'pids', sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))\n"
                             "print('fds', sorted(os.listdir('/proc/self/fd')))\n";
    adk::CodeExecutionOutput out = run_code(sandbox, code);
    INFO(out.stdout_text << out.stderr_text);
    CHECK(out.stdout_text.find("the-other-users-secret") == std::string::npos);
    CHECK(out.stdout_text.find(secret.string() + " refused: No such file or directory") != std::string::npos);
    CHECK(out.stdout_text.find("/etc/shadow refused") != std::string::npos);
    CHECK(out.stdout_text.find("/root/.bashrc refused") != std::string::npos);
    CHECK(out.stdout_text.find("server-environment-secret") == std::string::npos);
    CHECK(out.stdout_text.find("ADK_SANDBOX_TEST_SECRET") == std::string::npos);
    CHECK(out.stdout_text.find("uid 0 ") == std::string::npos);
    // Its own PID namespace: bwrap's reaper (1) and the interpreter (2). Descriptors: stdin, stdout, stderr, the
    // report, and the one listdir holds open; none of the server's.
    CHECK(out.stdout_text.find("pids [1, 2]") != std::string::npos);
    CHECK(out.stdout_text.find("fds ['0', '1', '2', '3', '4']") != std::string::npos);
    ::unsetenv("ADK_SANDBOX_TEST_SECRET");
}

TEST_CASE("sandbox escape: a fork bomb stops at the process limit and leaves nothing behind", "[sandbox][escape]")
{
    adk::SandboxOptions o = quick_options();
    o.limits.processes = 16;
    adk::SandboxedCodeExecutor sandbox(o);
    const std::string code = "import os, time\n"
                             "while True:\n"
                             "    os.fork()\n";
    adk::CodeExecutionOutput out = run_code(sandbox, code);
    INFO(out.stdout_text << out.stderr_text);
    CHECK(out.limit_reached == "the process limit of 16 was reached");
    CHECK(out.stderr_text.find("BlockingIOError") != std::string::npos);
    // The run's PID namespace died with it: no process of the sandbox's is left (any bwrap or python3 of ours
    // would be our child, or our grandchild reparented).
    int status = 0;
    CHECK(::waitpid(-1, &status, WNOHANG) == -1);
}

TEST_CASE("sandbox escape: an endless loop stops at the CPU time limit, a sleeper at the wall time limit", "[sandbox][escape]")
{
    adk::SandboxOptions o = quick_options();
    o.limits.cpu_time = std::chrono::seconds(1);
    o.limits.wall_time = std::chrono::seconds(20);
    adk::SandboxedCodeExecutor busy(o);
    adk::CodeExecutionOutput spun = run_code(busy, "print('spinning')\nwhile True:\n    pass\n");
    CHECK(spun.stdout_text == "spinning\n");
    CHECK(spun.limit_reached == "the CPU time limit of 1 s was reached");

    o.limits.wall_time = std::chrono::milliseconds(1500);
    adk::SandboxedCodeExecutor sleepy(o);
    const auto start = std::chrono::steady_clock::now();
    adk::CodeExecutionOutput slept = run_code(sleepy, "import time\nprint('sleeping')\ntime.sleep(600)\n");
    CHECK(slept.stdout_text == "sleeping\n");
    CHECK(slept.limit_reached == "the wall time limit of 1500 ms was reached");
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(60));  // far below the 600 s asked for
}

TEST_CASE("sandbox escape: allocating 4 GB stops at the memory limit", "[sandbox][escape]")
{
    adk::SandboxedCodeExecutor sandbox(quick_options());
    adk::CodeExecutionOutput out = run_code(sandbox, "print('asking')\nx = bytearray(4 * 1024**3)\nprint('got it')\n");
    INFO(out.stderr_text);
    CHECK(out.stdout_text == "asking\n");
    CHECK(out.limit_reached == "the memory limit of 512 MB was reached");
    CHECK(out.stderr_text.find("MemoryError") != std::string::npos);
}

TEST_CASE("sandbox escape: 100 MB on stdout is cut at the output limit and the run stopped", "[sandbox][escape]")
{
    adk::SandboxedCodeExecutor sandbox(quick_options());
    adk::CodeExecutionOutput out =
        run_code(sandbox, "import sys\nfor i in range(1000):\n    sys.stdout.write('x' * 100000)\nprint('finished')\n");
    CHECK(out.limit_reached == "the output limit of 1048576 bytes (stdout and stderr) was reached");
    CHECK(out.stdout_text.size() == 1048576);
    CHECK(out.stdout_text.find("finished") == std::string::npos);
}

TEST_CASE("sandbox: two runs at once each see only their own folder and processes", "[sandbox]")
{
    using namespace asio::experimental::awaitable_operators;
    adk::SandboxedCodeExecutor sandbox(quick_options());
    auto code = [](const std::string& who) {
        return "import os, time\n"
               "start = time.monotonic()\n"
               "open('mine.txt', 'w').write('" + who + "')\n"
               "time.sleep(1.5)\n"
               "print(open('mine.txt').read(), sorted(os.listdir('.')), len([p for p in os.listdir('/proc') if p.isdigit()]))\n"
               "print(start, time.monotonic())\n";
    };
    asio::io_context ioc;
    adk::CodeExecutionOutput a, b;
    auto both = [&]() -> asio::awaitable<void> {
        adk::CodeExecutionInput first(code("first")), second(code("second"));
        asio::awaitable<adk::CodeExecutionOutput> run_a = sandbox.run(std::move(first));
        asio::awaitable<adk::CodeExecutionOutput> run_b = sandbox.run(std::move(second));
        asio::awaitable<std::tuple<adk::CodeExecutionOutput, adk::CodeExecutionOutput>> together =
            std::move(run_a) && std::move(run_b);
        std::tie(a, b) = co_await std::move(together);
    };
    adk::test::run(ioc, both(), std::chrono::seconds(30));
    INFO(a.stdout_text << a.stderr_text << b.stdout_text << b.stderr_text);
    CHECK(a.stdout_text.rfind("first ['mine.txt'] 2\n", 0) == 0);
    CHECK(b.stdout_text.rfind("second ['mine.txt'] 2\n", 0) == 0);
    REQUIRE(a.output_files.size() == 1);
    REQUIRE(b.output_files.size() == 1);
    CHECK(a.output_files[0].content == "first");
    CHECK(b.output_files[0].content == "second");
    // They ran side by side on one thread (the monotonic clock is the host's): each began before the other ended.
    auto times = [](const std::string& out) {
        std::istringstream lines(out.substr(out.find('\n') + 1));
        double start = 0, end = 0;
        lines >> start >> end;
        return std::pair(start, end);
    };
    const auto [a_start, a_end] = times(a.stdout_text);
    const auto [b_start, b_end] = times(b.stdout_text);
    CHECK(a_start < b_end);
    CHECK(b_start < a_end);
}

TEST_CASE("sandbox: input it cannot take is refused before anything runs", "[sandbox]")
{
    adk::SandboxOptions o = quick_options();
    o.limits.code_bytes = 100;
    adk::SandboxedCodeExecutor sandbox(o);
    asio::io_context ioc;
    auto refused = [&](adk::CodeExecutionInput input, const std::string& says) {
        try {
            adk::test::run(ioc, sandbox.run(std::move(input)));
            FAIL("accepted");
        } catch (const adk::Error& e) {
            CHECK(e.code() == adk::make_error_code(adk::errc::invalid_argument));
            CHECK_THAT(e.what(), Catch::Contains(says));
        }
    };
    refused(adk::CodeExecutionInput(std::string(101, '#')), "over 100 bytes");
    refused(adk::CodeExecutionInput("print(1)", {adk::CodeFile("../up.csv", "x")}), "plain file name");
    refused(adk::CodeExecutionInput("print(1)", {adk::CodeFile("a/b.csv", "x")}), "plain file name");
    refused(adk::CodeExecutionInput("print(1)", {adk::CodeFile("a.csv", "x"), adk::CodeFile("a.csv", "y")}),
            "two input files");
    CHECK_THROWS_WITH(adk::SandboxedCodeExecutor([] {
                          adk::SandboxOptions bad;
                          bad.limits.memory_bytes = 1 << 20;
                          return bad;
                      }()),
                      Catch::Contains("memory_bytes"));
}

TEST_CASE("sandbox: where bubblewrap is missing it refuses, saying why, and runs nothing", "[sandbox]")
{
    HostFolder host;
    adk::SandboxOptions o = quick_options();
    o.bwrap = (host.path / "no-bwrap-here").string();
    adk::SandboxedCodeExecutor sandbox(o);
    try {
        run_code(sandbox, "open('" + (host.path / "ran").string() + "', 'w')\n");
        FAIL("ran without a sandbox");
    } catch (const adk::Error& e) {
        CHECK(e.code() == adk::make_error_code(adk::errc::unavailable));
        CHECK_THAT(e.what(), Catch::Contains("did not start") && Catch::Contains("is bubblewrap installed?") &&
                                 Catch::Contains("never without it"));
    }
    CHECK_FALSE(fs::exists(host.path / "ran"));
}

TEST_CASE("sandbox: where bubblewrap cannot make its namespaces it refuses with bwrap's reason, and runs nothing", "[sandbox]")
{
    // In a user namespace that maps no user (unshare --user), as unprivileged users are where the kernel forbids
    // them (Ubuntu's AppArmor, a container's seccomp profile), bwrap cannot make the namespaces it needs.
    HostFolder host;
    ::chmod(host.path.c_str(), 0777);
    const fs::path marker = host.path / "ran";
    adk::test::ChildProcess probe({"/usr/bin/unshare", "--user", "--", adk::test::paths::sandbox_probe(),
                                   "open('" + marker.string() + "', 'w').write('ran')\nprint('ran')"});
    std::string said;
    while (auto line = probe.read_line())
        said += *line + "\n";
    INFO(said);
    CHECK(probe.wait() == 3);
    CHECK(said.rfind("refused: the code sandbox did not start", 0) == 0);
    CHECK_THAT(said, Catch::Contains("bwrap: No permissions to create new namespace") &&
                         Catch::Contains("runs code only inside bubblewrap, and never without it"));
    CHECK(said.find("stdout:") == std::string::npos);
    CHECK_FALSE(fs::exists(marker));
}

TEST_CASE("sandbox report: hostile lines become notes, names are checked, limits hold", "[sandbox]")
{
    adk::SandboxLimits limits;
    limits.output_files = 2;
    limits.file_bytes = 10;
    const std::string text = "{\"started\": true}\n"
                             "not json\n"
                             "{\"file\": \"../../etc/passwd\", \"inlineData\": {\"mimeType\": \"text/plain\", \"data\": \"eA==\"}}\n"
                             "{\"file\": \"/abs\", \"inlineData\": {\"mimeType\": \"text/plain\", \"data\": \"eA==\"}}\n"
                             "{\"file\": \"big.bin\", \"inlineData\": {\"mimeType\": \"application/octet-stream\", \"data\": \"eHh4eHh4eHh4eHh4\"}}\n"
                             "{\"file\": \"bad64.txt\", \"inlineData\": {\"mimeType\": \"text/plain\", \"data\": \"!!!\"}}\n"
                             "{\"file\": \"a.txt\", \"inlineData\": {\"mimeType\": \"text/plain\", \"data\": \"YQ==\"}}\n"
                             "{\"file\": \"b.txt\", \"inlineData\": {\"mimeType\": \"\", \"data\": \"Yg==\"}}\n"
                             "{\"file\": \"c.txt\", \"inlineData\": {\"mimeType\": \"text/plain\", \"data\": \"Yw==\"}}\n"
                             "{\"limit\": \"everything\"}\n"
                             "{\"limit\": \"memory\"}\n"
                             "{\"exit\": 99999}\n";
    adk::SandboxReport r = adk::parse_sandbox_report(text, limits);
    CHECK(r.started);
    CHECK(r.limit == "memory");
    CHECK(r.exit_status == 255);
    REQUIRE(r.files.size() == 2);
    CHECK(r.files[0].name == "a.txt");
    CHECK(r.files[0].content == "a");
    CHECK(r.files[1].mime_type == "application/octet-stream");
    REQUIRE(r.notes.size() == 6);
    CHECK_THAT(r.notes[0], Catch::Contains("not understood"));
    CHECK_THAT(r.notes[1], Catch::Contains("'..' segment"));
    CHECK_THAT(r.notes[2], Catch::Contains("absolute path"));
    CHECK_THAT(r.notes[3], Catch::Contains("over 10 bytes"));
    CHECK_THAT(r.notes[4], Catch::Contains("bad64.txt"));
    CHECK_THAT(r.notes[5], Catch::Contains("only 2 files"));
}
