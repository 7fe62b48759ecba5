// The LlmAgent's code execution with scripted models: the model's code blocks run in the real sandbox (bubblewrap
// and python3), their results reach the model, the files they write become artifacts.
#include <adk/adk.hpp>
#include <adk/sandbox/sandboxed_code_executor.hpp>

#include "support/agents.hpp"
#include "support/run.hpp"

#include <catch2/catch.hpp>

#include <mutex>
#include <sys/wait.h>

namespace asio = boost::asio;
using adk::test::FnModel;

namespace {

adk::LlmResponse answer(std::string text)
{
    return adk::LlmResponse(adk::Content::model(std::move(text)));
}

std::shared_ptr<adk::SandboxedCodeExecutor> sandbox(int retries = 2, bool data_files = false)
{
    adk::SandboxOptions o;
    o.limits.wall_time = std::chrono::seconds(10);
    o.executor.error_retry_attempts = retries;
    o.executor.optimize_data_file = data_files;
    return std::make_shared<adk::SandboxedCodeExecutor>(o);
}

// The requests a scripted model saw, kept for the test to read.
class Seen {
public:
    std::vector<adk::LlmRequest> requests;
};

const adk::Part* code_part(const adk::Event& e)
{
    if (!e.content)
        return nullptr;
    for (const auto& p : e.content->parts)
        if (p.executable_code || p.code_execution_result)
            return &p;
    return nullptr;
}

}  // namespace

TEST_CASE("code execution: the model's code block runs, its output reaches the model, which then answers", "[code_execution]")
{
    auto seen = std::make_shared<Seen>();
    auto model = std::make_shared<FnModel>([seen](const adk::LlmRequest& r) {
        seen->requests.push_back(r);
        if (seen->requests.size() == 1)
            return answer("Let me compute it.\n```python\nprint(sum(range(1, 101)))\n```\nThat is all.");
        return answer("The sum is 5050.");
    });
    auto agent = adk::LlmAgent::builder("calc").model(model).code_executor(sandbox()).build();
    adk::test::Harness h;
    std::vector<adk::Event> events = h.send(agent, "What is 1 + 2 + ... + 100?");
    REQUIRE(events.size() == 3);  // the code, its result, the answer
    // The answer with the code: cut after the block, the code its own part.
    REQUIRE(events[0].content);
    REQUIRE(events[0].content->parts.size() == 2);
    CHECK(events[0].content->parts[0].text == "Let me compute it.\n");
    REQUIRE(events[0].content->parts[1].executable_code);
    CHECK(events[0].content->parts[1].executable_code->code == "print(sum(range(1, 101)))");
    CHECK(events[0].content->parts[1].executable_code->language == "PYTHON");
    // The result, by the agent, not final: the model is called again.
    REQUIRE(code_part(events[1]));
    REQUIRE(code_part(events[1])->code_execution_result);
    CHECK(code_part(events[1])->code_execution_result->outcome == "OUTCOME_OK");
    CHECK(code_part(events[1])->code_execution_result->output == "Code execution result:\n5050\n\n");
    CHECK(events[1].author == "calc");
    CHECK_FALSE(events[1].is_final_response());
    CHECK(events[2].content->text() == "The sum is 5050.");
    CHECK(events[2].is_final_response());

    REQUIRE(seen->requests.size() == 2);
    CHECK_THAT(seen->requests[0].system_text(), Catch::Contains("You can run Python code") &&
                                                    Catch::Contains("```tool_code\nprint(6 * 7)\n```"));
    CHECK_FALSE(seen->requests[0].code_execution);
    // The second request: the code and its result as text between the delimiters; the result a user turn.
    const auto& contents = seen->requests[1].contents;
    REQUIRE(contents.size() == 3);
    CHECK(contents[1].role == "model");
    REQUIRE(contents[1].parts.size() == 2);
    CHECK(contents[1].parts[1].text == "```tool_code\nprint(sum(range(1, 101)))\n```");
    CHECK(contents[2].role == "user");
    REQUIRE(contents[2].parts.size() == 1);
    INFO(contents[2].parts[0].text.value_or("(not text)"));
    CHECK(contents[2].parts[0].text == "```tool_output\nCode execution result:\n5050\n\n\n```");
}

TEST_CASE("code execution: files the code writes, a CSV and a chart, are saved as the session's artifacts", "[code_execution]")
{
    int calls = 0;
    auto model = std::make_shared<FnModel>([&calls](const adk::LlmRequest&) {
        if (++calls == 1)
            return answer("```tool_code\n"
                          "import csv, struct, zlib\n"
                          "rows = [('mon', 12.5), ('tue', 14.0), ('wed', 9.5)]\n"
                          "with open('forecast.csv', 'w', newline='') as f:\n"
                          "    csv.writer(f).writerows([('day', 'celsius')] + rows)\n"
                          "def chunk(kind, data):\n"
                          "    return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data))\n"
                          "raw = b''.join(b'\\x00' + bytes([200 if x < t * 4 else 255 for x in range(64)]) for _, t in rows)\n"
                          "png = b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', 64, 3, 8, 0, 0, 0, 0))\n"
                          "open('chart.png', 'wb').write(png + chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b''))\n"
                          "print('saved')\n"
                          "```");
        return answer("I saved forecast.csv and chart.png.");
    });
    auto agent = adk::LlmAgent::builder("charts").model(model).code_executor(sandbox()).build();
    adk::test::Harness h;
    std::vector<adk::Event> events = h.send(agent, "Chart the forecast.");
    REQUIRE(events.size() == 3);
    const adk::Event& result = events[1];
    REQUIRE(code_part(result));
    CHECK(code_part(result)->code_execution_result->output ==
          "Code execution result:\nsaved\n\n\n\nSaved artifacts:\n`chart.png`,`forecast.csv`");
    CHECK(result.actions.artifact_delta == std::map<std::string, std::int64_t>{{"chart.png", 0}, {"forecast.csv", 0}});

    asio::io_context ioc;
    auto load = [&](std::string name) {
        adk::ArtifactKey key("app", "user1", "s", std::move(name));
        return adk::test::run(ioc, h.artifacts->load_artifact(std::move(key)));
    };
    std::optional<adk::Part> csv = load("forecast.csv");
    REQUIRE(csv);
    REQUIRE(csv->inline_data);
    CHECK(csv->inline_data->mime_type == "text/csv");
    CHECK(csv->inline_data->data == "day,celsius\r\nmon,12.5\r\ntue,14.0\r\nwed,9.5\r\n");
    std::optional<adk::Part> png = load("chart.png");
    REQUIRE(png);
    CHECK(png->inline_data->mime_type == "image/png");
    CHECK(png->inline_data->data.substr(1, 3) == "PNG");
}

TEST_CASE("code execution: a file the code names user:... is not saved, not for the user's other sessions either",
          "[code_execution]")
{
    int calls = 0;
    auto model = std::make_shared<FnModel>([&calls](const adk::LlmRequest&) {
        if (++calls == 1)
            return answer("```tool_code\n"
                          "open('user:avatar.png', 'w').write('planted')\n"
                          "open('notes.txt', 'w').write('kept')\n"
                          "print('written')\n"
                          "```");
        return answer("Done.");
    });
    auto agent = adk::LlmAgent::builder("writer").model(model).code_executor(sandbox()).build();
    adk::test::Harness h;
    std::vector<adk::Event> events = h.send(agent, "Write the files.");
    REQUIRE(events.size() == 3);
    const adk::Event& result = events[1];
    REQUIRE(code_part(result));
    const std::string& output = code_part(result)->code_execution_result->output;
    CHECK_THAT(output, Catch::Contains("`user:avatar.png` was not saved: the code's files are the session's"));
    CHECK_THAT(output, Catch::Contains("`notes.txt`"));
    CHECK(result.actions.artifact_delta == std::map<std::string, std::int64_t>{{"notes.txt", 0}});
    asio::io_context ioc;
    adk::ArtifactKey planted("app", "user1", "another session", "user:avatar.png");
    CHECK_FALSE(adk::test::run(ioc, h.artifacts->load_artifact(std::move(planted))));
    adk::ArtifactKey kept("app", "user1", "s", "notes.txt");
    CHECK(adk::test::run(ioc, h.artifacts->load_artifact(std::move(kept))));
}

TEST_CASE("code execution: failing code is retried error_retry_attempts times, then the answer stands", "[code_execution]")
{
    auto seen = std::make_shared<Seen>();
    auto model = std::make_shared<FnModel>([seen](const adk::LlmRequest& r) {
        seen->requests.push_back(r);
        return answer("Try:\n```python\nimport no_such_module\n```");
    });
    auto agent = adk::LlmAgent::builder("stubborn").model(model).code_executor(sandbox(2)).build();
    adk::test::Harness h;
    std::vector<adk::Event> events = h.send(agent, "go");
    // Two runs that failed, then a third answer whose code is not run: it is the final answer.
    REQUIRE(events.size() == 5);
    CHECK(seen->requests.size() == 3);
    for (int i : {1, 3}) {
        REQUIRE(code_part(events[i]));
        REQUIRE(code_part(events[i])->code_execution_result);
        CHECK(code_part(events[i])->code_execution_result->outcome == "OUTCOME_FAILED");
        CHECK_THAT(code_part(events[i])->code_execution_result->output,
                   Catch::Contains("ModuleNotFoundError: No module named 'no_such_module'"));
    }
    CHECK(events[4].content->text() == "Try:\n```python\nimport no_such_module\n```");
    CHECK(events[4].is_final_response());
    // The model read the error before trying again.
    CHECK_THAT(seen->requests[1].contents.back().parts[0].text.value_or(""), Catch::Contains("ModuleNotFoundError"));
}

TEST_CASE("code execution: a limit that stops the code is named to the model", "[code_execution]")
{
    int calls = 0;
    auto model = std::make_shared<FnModel>([&calls](const adk::LlmRequest&) {
        if (++calls == 1)
            return answer("```python\nimport time\nprint('waiting', flush=True)\ntime.sleep(30)\n```");
        return answer("It took too long.");
    });
    adk::SandboxOptions o;
    o.limits.wall_time = std::chrono::milliseconds(800);
    auto agent = adk::LlmAgent::builder("slow").model(model)
                     .code_executor(std::make_shared<adk::SandboxedCodeExecutor>(o)).build();
    adk::test::Harness h;
    std::vector<adk::Event> events = h.send(agent, "go");
    REQUIRE(events.size() == 3);
    REQUIRE(code_part(events[1]));
    CHECK(code_part(events[1])->code_execution_result->outcome == "OUTCOME_DEADLINE_EXCEEDED");
    CHECK(code_part(events[1])->code_execution_result->output ==
          "Code execution result:\nwaiting\n\n\nStopped: the wall time limit of 800 ms was reached.");
}

TEST_CASE("code execution: the user's CSV becomes a file for the code, and the model sees its name", "[code_execution]")
{
    auto seen = std::make_shared<Seen>();
    auto model = std::make_shared<FnModel>([seen](const adk::LlmRequest& r) {
        seen->requests.push_back(r);
        if (seen->requests.size() == 1)
            return answer("```python\nimport csv\nprint(sum(float(r['mm']) for r in csv.DictReader(open('data_1_2.csv'))))\n```");
        return answer("It rained 10 mm.");
    });
    auto agent = adk::LlmAgent::builder("rain").model(model).code_executor(sandbox(2, true)).build();
    adk::test::Harness h;
    adk::Content message("user", {adk::Part::from_text("How much rain?"),
                                  adk::Part::from_bytes("day,mm\nmon,4\ntue,6\n", "text/csv")});
    std::vector<adk::Event> events = h.send(agent, message);
    REQUIRE(events.size() == 3);
    REQUIRE(code_part(events[1]));
    CHECK(code_part(events[1])->code_execution_result->output == "Code execution result:\n10.0\n\n");
    const adk::Content& sent = seen->requests[0].contents[0];
    REQUIRE(sent.parts.size() == 2);
    CHECK(sent.parts[1].text == "\nAvailable file: `data_1_2.csv`\n");
    CHECK_FALSE(sent.parts[1].inline_data);
    CHECK_THAT(seen->requests[0].system_text(), Catch::Contains("Files in the code's working folder: `data_1_2.csv`."));
    // The session keeps the user's message as it was sent.
    asio::io_context ioc;
    std::optional<adk::Session> session = adk::test::run(ioc, h.sessions->get_session({"app", "user1", "s"}));
    REQUIRE(session);
    REQUIRE(session->events.front().content->parts.size() == 2);
    CHECK(session->events.front().content->parts[1].inline_data);
}

TEST_CASE("code execution: a cancelled invocation kills the code at once", "[code_execution]")
{
    auto model = std::make_shared<FnModel>([](const adk::LlmRequest&) {
        return answer("```python\nimport time\ntime.sleep(60)\n```");
    });
    adk::SandboxOptions o;
    o.limits.wall_time = std::chrono::seconds(50);
    auto agent = adk::LlmAgent::builder("sleeper").model(model)
                     .code_executor(std::make_shared<adk::SandboxedCodeExecutor>(o)).build();
    asio::io_context ioc;
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::Runner runner({.app_name = "app", .agent = agent, .session_service = sessions});
    const auto start = std::chrono::steady_clock::now();
    adk::test::run(ioc, [&]() -> asio::awaitable<void> {
        adk::CreateSessionRequest create("app", "u", "s");
        co_await sessions->create_session(std::move(create));
        adk::Content message = adk::Content::user("sleep");
        auto stream = co_await runner.run("u", "s", std::move(message));
        while (auto ev = co_await stream.next()) {
            if (code_part(*ev) && code_part(*ev)->executable_code)
                break;  // the code is running now: the consumer leaves, which cancels the invocation
        }
    }());
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
    int status = 0;
    CHECK(::waitpid(-1, &status, WNOHANG) == -1);  // no sandbox of ours is left, running or unreaped
}

TEST_CASE("code execution: a stateful executor of the user's own gets the session's id on every run", "[code_execution]")
{
    // An executor that keeps variables between runs, as a notebook kernel would: here, a sum per execution id.
    class Accumulator final : public adk::CodeExecutor {
    public:
        Accumulator() : adk::CodeExecutor([] {
                            adk::CodeExecutorOptions o;
                            o.stateful = true;
                            return o;
                        }())
        {
        }
        asio::awaitable<adk::CodeExecutionOutput> execute_code(adk::InvocationContext&,
                                                               adk::CodeExecutionInput input) override
        {
            adk::CodeExecutionOutput out;
            REQUIRE(input.execution_id);
            totals[*input.execution_id] += std::stoi(input.code);
            out.stdout_text = std::to_string(totals[*input.execution_id]);
            co_return out;
        }
        std::map<std::string, int> totals;
    };
    auto executor = std::make_shared<Accumulator>();
    int calls = 0;
    auto model = std::make_shared<FnModel>([&calls](const adk::LlmRequest&) {
        ++calls;
        return calls % 2 == 1 ? answer("```tool_code\n" + std::to_string(calls) + "\n```") : answer("done");
    });
    auto agent = adk::LlmAgent::builder("kernel").model(model).code_executor(executor).build();
    adk::test::Harness h;
    h.send(agent, "one");
    std::vector<adk::Event> second = h.send(agent, "two");
    CHECK(executor->totals == std::map<std::string, int>{{"s", 4}});  // 1 + 3, both in session "s"
    REQUIRE(code_part(second[1]));
    CHECK(code_part(second[1])->code_execution_result->output == "Code execution result:\n4\n");
}

TEST_CASE("code execution: BuiltInCodeExecutor asks the model to run code, and its parts pass through unchanged", "[code_execution]")
{
    auto seen = std::make_shared<Seen>();
    auto model = std::make_shared<FnModel>([seen](const adk::LlmRequest& r) {
        seen->requests.push_back(r);
        adk::Part code, result;
        code.executable_code = adk::ExecutableCode("PYTHON", "print(2 ** 10)");
        result.code_execution_result = adk::CodeExecutionResult("OUTCOME_OK", "1024\n");
        return adk::LlmResponse(adk::Content("model", {adk::Part::from_text("Computing."), code, result,
                                                       adk::Part::from_text("It is 1024.")}));
    });
    auto agent = adk::LlmAgent::builder("gemini_runs_it").model(model)
                     .code_executor(std::make_shared<adk::BuiltInCodeExecutor>()).build();
    adk::test::Harness h;
    std::vector<adk::Event> events = h.send(agent, "2 ** 10?");
    REQUIRE(events.size() == 1);
    CHECK(events[0].content->parts.size() == 4);
    CHECK(events[0].is_final_response());
    REQUIRE(seen->requests.size() == 1);
    CHECK(seen->requests[0].code_execution);
    CHECK(seen->requests[0].system_text().find("You can run Python code") == std::string::npos);
    h.send(agent, "again");
    // Gemini reads its own code parts back as they were.
    REQUIRE(seen->requests.size() == 2);
    CHECK(seen->requests[1].contents[1].parts[1].executable_code);
}

TEST_CASE("code execution: an agent's code executor is checked when it is built", "[code_execution]")
{
    auto model = std::make_shared<FnModel>([](const adk::LlmRequest&) { return answer("x"); });
    adk::SandboxOptions o;
    o.executor.error_retry_attempts = -1;
    auto negative = std::make_shared<adk::SandboxedCodeExecutor>(o);
    CHECK_THROWS_WITH(adk::LlmAgent::builder("a").model(model).code_executor(negative).build(),
                      Catch::Contains("error_retry_attempts must not be negative"));
    o.executor.error_retry_attempts = 1;
    o.executor.code_block_delimiters = {{"```py\n", ""}};
    auto empty = std::make_shared<adk::SandboxedCodeExecutor>(o);
    CHECK_THROWS_WITH(adk::LlmAgent::builder("a").model(model).code_executor(empty).build(),
                      Catch::Contains("delimiter of the code executor is empty"));
}
