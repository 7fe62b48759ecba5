// What event compaction saves: the bytes of the request an LlmAgent sends its model, turn by turn, in a 100-turn
// session, without compaction and with it (every 5 invocations, 1 carried over), in process. The models answer
// from their requests: the agent's with 600 bytes, the summarizer's with the last 800 bytes of its prompt (a
// stand-in for a summary of bounded size; its wording does not change the bytes saved). Each user message is
// 300 bytes. Prints one JSON object: the request bytes at turns 10, 20, ... 100 each way, and the CPU per turn.
//
//   compaction_bench [--turns N]
#include <adk/adk.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>

#include <sys/resource.h>

#include <iostream>
#include <string>

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

class AnsweringModel final : public adk::Model {
public:
    using Answer = std::function<adk::LlmResponse(const adk::LlmRequest&)>;
    explicit AnsweringModel(Answer answer) : answer_(std::move(answer)) {}
    std::string_view name() const override { return "bench-model"; }
    asio::awaitable<adk::Stream<adk::LlmResponse>> generate(adk::LlmRequest request, bool) override
    {
        auto producer = [answer = answer_(request)](adk::Sink<adk::LlmResponse> sink) mutable -> asio::awaitable<void> {
            co_await sink.emit(std::move(answer));
        };
        co_return adk::spawn_stream<adk::LlmResponse>(co_await asio::this_coro::executor, std::move(producer));
    }

private:
    Answer answer_;
};

double cpu_seconds()
{
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

struct Run {
    json::array bytes_at;  // every 10th turn
    double cpu_us_per_turn = 0;
    int summaries = 0;
};

Run session(int turns, bool compact)
{
    Run out;
    std::size_t last_bytes = 0;
    auto model = std::make_shared<AnsweringModel>([&](const adk::LlmRequest& request) {
        json::array contents;
        for (const adk::Content& c : request.contents)
            contents.push_back(json::value_from(c));
        last_bytes = json::serialize(contents).size() + request.system_text().size();
        return adk::LlmResponse::text("Answer: " + std::string(592, 'a'));
    });
    auto summarizer = std::make_shared<AnsweringModel>([&](const adk::LlmRequest& request) {
        ++out.summaries;
        const std::string& prompt = *request.contents.at(0).parts.at(0).text;
        return adk::LlmResponse::text(prompt.substr(prompt.size() > 800 ? prompt.size() - 800 : 0));
    });
    auto agent = adk::LlmAgent::builder("assistant").model(model).instruction("You help with travel plans.").build();
    asio::io_context ioc(1);
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    std::optional<adk::EventsCompactionConfig> compaction;
    if (compact)
        compaction = adk::EventsCompactionConfig{.summarizer = std::make_shared<adk::LlmEventSummarizer>(summarizer),
                                                 .compaction_interval = 5,
                                                 .overlap_size = 1};
    adk::Runner runner({.app_name = "bench",
                        .agent = agent,
                        .session_service = sessions,
                        .compaction = compaction,
                        .single_threaded = true});
    const double cpu0 = cpu_seconds();
    asio::co_spawn(
        ioc,
        [&]() -> asio::awaitable<void> {
            adk::CreateSessionRequest create("bench", "u", "s");
            co_await sessions->create_session(std::move(create));
            for (int turn = 1; turn <= turns; ++turn) {
                std::string text = "Turn " + std::to_string(turn) + ": " + std::string(290, 'q');
                adk::Content message = adk::Content::user(std::move(text));
                auto stream = co_await runner.run("u", "s", std::move(message));
                while (co_await stream.next()) {
                }
                co_await runner.wait_for_compactions();
                if (turn % 10 == 0)
                    out.bytes_at.push_back(last_bytes);
            }
        },
        [](std::exception_ptr e) {
            if (e)
                std::rethrow_exception(e);
        });
    ioc.run();
    out.cpu_us_per_turn = (cpu_seconds() - cpu0) * 1e6 / turns;
    return out;
}

}  // namespace

int main(int argc, char** argv)
{
    int turns = 100;
    if (argc == 3 && std::string(argv[1]) == "--turns")
        turns = std::stoi(argv[2]);
    const Run plain = session(turns, false);
    const Run compacted = session(turns, true);
    json::object result{{"turns", turns},
                        {"request_bytes_every_10_turns_without", plain.bytes_at},
                        {"request_bytes_every_10_turns_with", compacted.bytes_at},
                        {"cpu_us_per_turn_without", plain.cpu_us_per_turn},
                        {"cpu_us_per_turn_with", compacted.cpu_us_per_turn},
                        {"summaries", compacted.summaries}};
    std::cout << json::serialize(result) << "\n";
}
