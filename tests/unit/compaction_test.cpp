// Event compaction: ADK's JSON, which events a compaction takes, how summaries stand in for them in what the
// model is sent, and the Runner compacting long and concurrent conversations. Real Runner and services; the
// models are functions of their requests.
#include <adk/adk.hpp>
#include <adk/core/json_limits.hpp>

#include "../../libadk/src/compaction/plan.hpp"
#include "support/agents.hpp"
#include "support/run.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <future>
#include <set>
#include <thread>

namespace asio = boost::asio;
namespace json = boost::json;
using adk::Content;
using adk::Event;
using adk::EventsCompactionConfig;
using adk::LlmRequest;
using adk::LlmResponse;
using adk::Part;
using adk::test::run;

namespace {

Event said(std::string invocation, double time, std::string author, std::string text)
{
    const std::string role = author == "user" ? "user" : "model";
    Event e(std::move(author), Content(role, {Part::from_text(std::move(text))}));
    e.invocation_id = std::move(invocation);
    e.timestamp = time;
    e.id = "e" + std::to_string(time);
    return e;
}

Event called(std::string invocation, double time, std::string name, std::string id)
{
    Event e("agent", Content("model", {Part::from_function_call(std::move(name), json::object{}, id)}));
    e.invocation_id = std::move(invocation);
    e.timestamp = time;
    return e;
}

Event responded(std::string invocation, double time, std::string name, std::string id)
{
    Event e("agent", Content("user", {Part::from_function_response(std::move(name), json::object{{"ok", true}}, id)}));
    e.invocation_id = std::move(invocation);
    e.timestamp = time;
    return e;
}

Event compaction(double start, double end, std::string summary, double time)
{
    Event e;
    e.author = "user";
    e.invocation_id = "c" + std::to_string(time);
    e.timestamp = time;
    adk::EventCompaction c;
    c.start_timestamp = start;
    c.end_timestamp = end;
    c.compacted_content = Content("model", {Part::from_text(std::move(summary))});
    e.actions.compaction = std::move(c);
    return e;
}

std::vector<std::string> texts(const std::vector<Event>& events)
{
    std::vector<std::string> out;
    for (const Event& e : events)
        out.push_back(e.text());
    return out;
}

// All the text of a request's contents, one line a part.
std::string request_text(const LlmRequest& request)
{
    std::string out;
    for (const Content& c : request.contents)
        for (const Part& p : c.parts) {
            if (p.text)
                out += *p.text;
            if (p.function_call)
                out += "call " + p.function_call->name;
            if (p.function_response)
                out += "response " + p.function_response->name;
            out += '\n';
        }
    return out;
}

// A summarizer's model that keeps, from its prompt, every "fact #..." it finds (in events or in the summary
// before), and nothing else: a model that does what the prompt asks of the facts, deterministically.
std::shared_ptr<adk::test::FnModel> fact_keeper(std::atomic<int>& calls, std::vector<std::string>* prompts = nullptr)
{
    return std::make_shared<adk::test::FnModel>(
        [&calls, prompts](const LlmRequest& request) {
            ++calls;
            const std::string prompt = request.contents.at(0).parts.at(0).text.value();
            if (prompts)
                prompts->push_back(prompt);
            std::set<std::string> facts;
            for (std::size_t at = prompt.find("fact #"); at != std::string::npos; at = prompt.find("fact #", at + 1)) {
                std::size_t end = prompt.find_first_of(";\n", at);
                facts.insert(prompt.substr(at, end == std::string::npos ? std::string::npos : end - at));
            }
            std::string summary = "Facts so far";
            for (const auto& f : facts)
                summary += "; " + f;
            return LlmResponse::text(summary);
        },
        "summarizer-model");
}

// A Runner that compacts every `interval` invocations with one carried over, `summarizer` summarizing.
adk::RunnerOptions compacting(std::shared_ptr<adk::Agent> agent, std::shared_ptr<adk::SessionService> sessions,
                              std::shared_ptr<adk::Model> summarizer, int interval)
{
    return {.app_name = "app",
            .agent = std::move(agent),
            .session_service = std::move(sessions),
            .compaction = EventsCompactionConfig{
                .summarizer = std::make_shared<adk::LlmEventSummarizer>(std::move(summarizer)),
                .compaction_interval = interval,
                .overlap_size = 1}};
}

std::string fact(int k)
{
    return "fact #" + std::to_string(k) + " is that box " + std::to_string(k) + " holds code Z" +
           std::to_string(k * 7919);
}

}  // namespace

TEST_CASE("compaction JSON: ADK's actions.compaction is read in seconds or milliseconds and written back as read",
          "[compaction]")
{
    const json::value wire = json::parse(R"({"author":"user","invocationId":"c1","timestamp":1700000100.5,
        "actions":{"compaction":{"startTimestamp":1700000000.25,"endTimestamp":1700000050123,
        "compactedContent":{"role":"model","parts":[{"text":"the user is Ada"}]},"laterField":[1]}}})");
    const Event e = json::value_to<Event>(wire);
    REQUIRE(e.actions.compaction);
    const adk::EventCompaction& c = *e.actions.compaction;
    CHECK(c.complete());
    CHECK(*c.start_timestamp == Approx(1700000000.25));
    CHECK(*c.end_timestamp == Approx(1700000050.123));  // the TypeScript ADK's milliseconds
    CHECK(c.compacted_content->text() == "the user is Ada");
    CHECK(c.extra.at("laterField") == json::array{1});
    const json::value written = json::value_from(e);
    CHECK(written.at("actions").at("compaction").at("compactedContent").at("parts").at(0).at("text") ==
          "the user is Ada");
    CHECK(json::value_to<Event>(json::parse(json::serialize(written))) == e);

    // ADK Python's snake_case, and a compaction missing a field: kept as read, ignored where it would apply.
    const Event partial = json::value_to<Event>(
        json::parse(R"({"author":"user","actions":{"compaction":{"start_timestamp":3,"end_timestamp":null}}})"));
    CHECK(*partial.actions.compaction->start_timestamp == 3);
    CHECK_FALSE(partial.actions.compaction->complete());
    CHECK(json::value_to<Event>(json::value_from(partial)) == partial);

    CHECK_THROWS_WITH(json::value_to<Event>(json::parse(R"({"actions":{"compaction":{"startTimestamp":"x"}}})")),
                      Catch::Contains("startTimestamp"));
}

TEST_CASE("compaction JSON: a summary nested deeper than JSON can be read back is refused on the way in",
          "[compaction]")
{
    json::value deep = 1;
    for (int i = 0; i < 60; ++i)  // 60 here, 10 more above it in the event
        deep = json::object{{"a", std::move(deep)}};
    Event e = compaction(1, 2, "s", 3);
    e.actions.compaction->compacted_content->parts.push_back(Part::from_function_call("f", deep.as_object()));
    CHECK_THROWS_WITH(adk::check_event_json(e), Catch::Contains("actions.compaction.compactedContent"));
}

TEST_CASE("compaction plan: every N invocations, with the invocations before them carried over", "[compaction]")
{
    // ADK's example: interval 2, overlap 1.
    const EventsCompactionConfig config{.compaction_interval = 2, .overlap_size = 1};
    std::vector<Event> events{said("i1", 1, "user", "one"), said("i1", 2, "agent", "ack one")};
    CHECK_FALSE(adk::detail::plan_compaction(adk::EventList(events), config, "i1"));  // one new invocation of two
    events.push_back(said("i2", 3, "user", "two"));
    events.push_back(said("i2", 4, "agent", "ack two"));
    auto first = adk::detail::plan_compaction(adk::EventList(events), config, "i2");
    REQUIRE(first);
    CHECK(texts(first->input) == std::vector<std::string>{"one", "ack one", "two", "ack two"});
    CHECK(first->start_timestamp == 1);
    CHECK(first->end_timestamp == 4);

    events.push_back(compaction(1, 4, "S1", 4.5));
    events.push_back(said("i3", 5, "user", "three"));
    events.push_back(said("i3", 6, "agent", "ack three"));
    CHECK_FALSE(adk::detail::plan_compaction(adk::EventList(events), config, "i3"));
    events.push_back(said("i4", 7, "user", "four"));
    events.push_back(said("i4", 8, "agent", "ack four"));
    // A later invocation's events are not this one's to compact.
    events.push_back(said("i5", 9, "user", "five, still running"));
    auto second = adk::detail::plan_compaction(adk::EventList(events), config, "i4");
    REQUIRE(second);
    // The summary before comes first, then the invocation carried over (i2), then the new ones.
    CHECK(texts(second->input) ==
          std::vector<std::string>{"S1", "two", "ack two", "three", "ack three", "four", "ack four"});
    CHECK(second->input.front().actions.compaction);
    CHECK(second->start_timestamp == 1);  // it covers what the summary before covered: it replaces it
    CHECK(second->end_timestamp == 8);
    const Event recorded = adk::detail::compaction_event(*second, adk::Summary(Content::model("S2")));
    CHECK(recorded.author == "user");
    CHECK(recorded.invocation_id != "i4");
    CHECK(recorded.actions.compaction->compacted_content->role == "model");
    CHECK(*recorded.actions.compaction->start_timestamp == 1);
    CHECK(*recorded.actions.compaction->end_timestamp == 8);
}

TEST_CASE("compaction plan: a call whose answer has not come ends the range before it", "[compaction]")
{
    const EventsCompactionConfig config{.compaction_interval = 2};
    std::vector<Event> events{said("i1", 1, "user", "one"), said("i1", 2, "agent", "ack one"),
                              said("i2", 3, "user", "pay"), called("i2", 4, "pay", "call-1")};
    auto plan = adk::detail::plan_compaction(adk::EventList(events), config, "i2");
    REQUIRE(plan);
    CHECK(texts(plan->input) == std::vector<std::string>{"one", "ack one", "pay"});
    CHECK(plan->end_timestamp == 3);

    // Answered: the call and its response go together.
    events.push_back(responded("i2", 5, "pay", "call-1"));
    plan = adk::detail::plan_compaction(adk::EventList(events), config, "i2");
    REQUIRE(plan);
    CHECK(plan->input.size() == 5);
    CHECK(plan->end_timestamp == 5);

    // Partial events are never summarized.
    Event chunk = said("i2", 6, "agent", "par");
    chunk.partial = true;
    events.push_back(chunk);
    plan = adk::detail::plan_compaction(adk::EventList(events), config, "i2");
    REQUIRE(plan);
    CHECK(plan->input.size() == 5);
}

TEST_CASE("compaction plan: a prompt over the token threshold compacts all but the latest events", "[compaction]")
{
    const EventsCompactionConfig config{.token_threshold = 1000, .event_retention_size = 2};
    std::vector<Event> events{said("i1", 1, "user", "one"), said("i1", 2, "agent", "ack one"),
                              said("i2", 3, "user", "two"), said("i2", 4, "agent", "ack two")};
    events.back().usage_metadata = adk::UsageMetadata();
    events.back().usage_metadata->prompt_token_count = 999;
    CHECK_FALSE(adk::detail::plan_compaction(adk::EventList(events), config, "i2"));
    events.back().usage_metadata->prompt_token_count = 1000;
    auto plan = adk::detail::plan_compaction(adk::EventList(events), config, "i2");
    REQUIRE(plan);
    CHECK(texts(plan->input) == std::vector<std::string>{"one", "ack one"});
    CHECK(plan->end_timestamp == 2);
}

TEST_CASE("compaction contents: the newest summary stands in place of what it covers, calls keep their answers",
          "[compaction]")
{
    std::vector<Event> events{said("i1", 1, "user", "my name is Ada"),
                              said("i1", 2, "agent", "hello Ada"),
                              compaction(1, 2, "OLD SUMMARY", 2.5),
                              said("i2", 3, "user", "start the export"),
                              called("i2", 3.5, "export", "x1"),
                              said("i2", 4, "agent", "the export runs"),
                              compaction(1, 4, "NEW SUMMARY", 4.5),
                              said("i3", 5, "user", "is it done?"),
                              responded("i3", 6, "export", "x1")};
    auto contents = adk::build_contents(adk::EventList(events), "agent", "", adk::IncludeContents::history);
    std::vector<std::string> shown;
    for (const Content& c : contents)
        for (const Part& p : c.parts)
            shown.push_back(c.role + ":" + (p.text ? *p.text : p.function_call ? "call" : "response"));
    // The older summary lies inside the newer: only the newer stands. The call's answer came after the range,
    // so its call comes back (at its time), followed by the answer.
    CHECK(shown == std::vector<std::string>{"model:call", "user:response", "model:NEW SUMMARY", "user:is it done?"});

    // Without compactions nothing changes.
    std::vector<Event> plain{said("i1", 1, "user", "hi"), said("i1", 2, "agent", "hello")};
    CHECK(adk::build_contents(adk::EventList(plain), "agent", "", adk::IncludeContents::history).size() == 2);
}

TEST_CASE("compaction: a 300-turn conversation stays bounded and keeps every fact it was told", "[compaction]")
{
    std::atomic<int> summaries{0};
    std::size_t largest = 0, last_size = 0;
    std::string last_request;
    auto model = std::make_shared<adk::test::FnModel>([&](const LlmRequest& request) {
        last_request = request_text(request);
        last_size = last_request.size();
        largest = std::max(largest, last_size);
        return LlmResponse::text("Noted.");
    });
    auto agent = adk::LlmAgent::builder("agent").model(model).build();
    asio::io_context ioc;
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::Runner runner(compacting(agent, sessions, fact_keeper(summaries), 5));
    run(ioc, [&]() -> asio::awaitable<void> {
        adk::CreateSessionRequest create("app", "u", "s");
        co_await sessions->create_session(std::move(create));
    }());
    std::size_t told = 0;
    for (int turn = 1; turn <= 300; ++turn) {
        std::string text = turn % 10 == 0 ? "Remember this: " + fact(turn / 10) + "."
                                          : "Small talk " + std::to_string(turn) + ": " + std::string(200, 'x');
        told += text.size();
        run(ioc, [&]() -> asio::awaitable<void> {
            Content message = Content::user(text);
            auto stream = co_await runner.run("u", "s", std::move(message));
            co_await adk::test::drain(stream);
        }());
    }
    run(ioc, [&]() -> asio::awaitable<void> {
        Content question = Content::user("Which codes do the boxes hold?");
        auto stream = co_await runner.run("u", "s", std::move(question));
        co_await adk::test::drain(stream);
    }());
    CHECK(told > 55000);
    CHECK(largest < 8000);  // the summary's 30 facts and the last few turns, not 60 kB of small talk
    for (int k = 1; k <= 30; ++k) {
        INFO(fact(k));
        CHECK(last_request.find(fact(k)) != std::string::npos);
    }
    CHECK(last_request.find("Small talk 2:") == std::string::npos);
    CHECK(summaries.load() == 60);

    auto session = run(ioc, [&]() -> asio::awaitable<std::optional<adk::Session>> {
        adk::GetSessionRequest get("app", "u", "s");
        co_return co_await sessions->get_session(std::move(get));
    }());
    REQUIRE(session);
    std::size_t compactions = 0;
    double first = session->events.front().timestamp;
    for (const Event& e : session->events)
        if (e.actions.compaction) {
            ++compactions;
            CHECK(*e.actions.compaction->start_timestamp == first);  // each takes in the one before
        }
    CHECK(compactions == 60);
    CHECK(session->events.size() == 301 * 2 + 60);  // nothing was deleted
}

TEST_CASE("compaction: a summary past 2,000 bytes and a long turn reach the next summary whole, and a tool's result is cut",
          "[compaction]")
{
    std::atomic<int> summaries{0};
    std::vector<std::string> prompts;
    auto summarizer = fact_keeper(summaries, &prompts);
    std::string last_request;
    auto model = std::make_shared<adk::test::FnModel>([&](const LlmRequest& request) {
        last_request = request_text(request);
        const Content& last = request.contents.back();
        if (last.parts.back().text && last.parts.back().text->starts_with("look up"))
            return LlmResponse::function_call("lookup", json::object{});
        return LlmResponse::text("Noted.");
    });
    auto lookup = adk::FunctionTool::create(
        "lookup", "Looks up.", json::parse(R"({"type":"object","properties":{}})"),
        [](adk::ToolContext&, json::object) -> asio::awaitable<json::value> {
            co_return json::object{{"found", std::string(5000, 'r') + "TAIL_OF_RESULT"}};
        });
    auto agent = adk::LlmAgent::builder("agent").model(model).tool(lookup).build();
    asio::io_context ioc;
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::Runner runner(compacting(agent, sessions, summarizer, 5));
    run(ioc, [&]() -> asio::awaitable<void> {
        adk::CreateSessionRequest create("app", "u", "s");
        co_await sessions->create_session(std::move(create));
    }());
    auto send = [&](std::string text) {
        run(ioc, [&]() -> asio::awaitable<void> {
            Content message = Content::user(std::move(text));
            auto stream = co_await runner.run("u", "s", std::move(message));
            co_await adk::test::drain(stream);
        }());
    };
    // One fact a turn: the summary passes 2,000 bytes after about 30 of them.
    for (int k = 1; k <= 120; ++k)
        send(k == 60 ? std::string(3000, 'y') + " and " + fact(k) : "Remember " + fact(k));
    send("look up the records");
    for (int k = 0; k < 4; ++k)
        send("And then?");
    send("Which codes do the boxes hold?");
    REQUIRE(summaries.load() >= 24);
    for (int k = 1; k <= 120; ++k) {
        INFO(fact(k));
        CHECK(last_request.find(fact(k)) != std::string::npos);
    }
    CHECK(last_request.size() > 4000);  // the summary itself, well past the old cut of 2,000 bytes
    // The tool's result went to a summary cut at max_value_bytes.
    const auto with_result = std::find_if(prompts.begin(), prompts.end(), [](const std::string& p) {
        return p.find("tool `lookup` returned") != std::string::npos;
    });
    REQUIRE(with_result != prompts.end());
    CHECK(with_result->find("TAIL_OF_RESULT") == std::string::npos);
    CHECK(with_result->find(std::string(1900, 'r')) != std::string::npos);
}

TEST_CASE("compaction: a summarizer that fails is logged and changes nothing", "[compaction]")
{
    std::atomic<int> calls{0};
    auto failing = std::make_shared<adk::test::FnModel>([&](const LlmRequest&) {
        ++calls;
        return LlmResponse::error("RESOURCE_EXHAUSTED", "quota");
    });
    auto agent = adk::LlmAgent::builder("agent")
                     .model(std::make_shared<adk::test::FnModel>([](const LlmRequest&) { return LlmResponse::text("ok"); }))
                     .build();
    adk::test::Harness h;
    // The harness's runner has no compaction: this one does, over the same services.
    adk::Runner runner({.app_name = "app",
                        .agent = agent,
                        .session_service = h.sessions,
                        .compaction = EventsCompactionConfig{
                            .summarizer = std::make_shared<adk::LlmEventSummarizer>(failing),
                            .compaction_interval = 1}});
    run(h.ioc, [&]() -> asio::awaitable<void> {
        adk::CreateSessionRequest create("app", "u", "s");
        co_await h.sessions->create_session(std::move(create));
        for (int i = 0; i < 3; ++i) {
            Content hello = Content::user("hello");
            auto stream = co_await runner.run("u", "s", std::move(hello));
            auto events = co_await adk::test::drain(stream);
            CHECK(events.back().text() == "ok");
        }
        co_await runner.wait_for_compactions();
    }());
    CHECK(calls.load() == 3);
    auto session = run(h.ioc, [&]() -> asio::awaitable<std::optional<adk::Session>> {
        adk::GetSessionRequest get("app", "u", "s");
        co_return co_await h.sessions->get_session(std::move(get));
    }());
    CHECK(session->events.size() == 6);
    CHECK_THROWS_WITH(adk::Runner({.app_name = "app",
                                   .agent = agent,
                                   .session_service = h.sessions,
                                   .compaction = EventsCompactionConfig{}}),
                      Catch::Contains("no trigger"));
}

TEST_CASE("compaction: invocations of one session on four threads, compacted as they go", "[compaction][threads]")
{
    std::atomic<int> summaries{0};
    auto model = std::make_shared<adk::test::FnModel>([](const LlmRequest&) { return LlmResponse::text("Noted."); });
    auto agent = adk::LlmAgent::builder("agent").model(model).build();
    asio::io_context ioc;
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::Runner runner(compacting(agent, sessions, fact_keeper(summaries), 3));
    auto work = asio::make_work_guard(ioc);
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i)
        threads.emplace_back([&ioc] { ioc.run(); });
    asio::co_spawn(ioc, sessions->create_session(adk::CreateSessionRequest("app", "u", "s")), asio::use_future).get();
    std::vector<std::future<void>> clients;
    for (int c = 0; c < 4; ++c)
        clients.push_back(asio::co_spawn(
            ioc,
            [&runner, c]() -> asio::awaitable<void> {
                for (int i = 0; i < 10; ++i) {
                    Content message = Content::user("Remember " + fact(c * 10 + i));
                    auto stream = co_await runner.run("u", "s", std::move(message));
                    co_await adk::test::drain(stream);
                }
            },
            asio::use_future));
    for (auto& c : clients)
        c.get();
    asio::co_spawn(ioc, runner.wait_for_compactions(), asio::use_future).get();
    auto session = asio::co_spawn(ioc, sessions->get_session(adk::GetSessionRequest("app", "u", "s")), asio::use_future).get();
    work.reset();
    for (auto& t : threads)
        t.join();
    REQUIRE(session);
    CHECK(summaries.load() >= 5);
    // What the model would be sent next holds every fact, from the summary or from the events after it.
    std::string sent;
    const auto contents = adk::build_contents(session->events, "agent", "", adk::IncludeContents::history);
    for (const Content& c : contents)
        for (const Part& p : c.parts)
            sent += p.text.value_or("") + "\n";
    for (int k = 0; k < 40; ++k) {
        INFO(fact(k));
        CHECK(sent.find(fact(k)) != std::string::npos);
    }
    CHECK(contents.size() < 16);  // a summary and the turns after it, not the 80 events of 40 turns
}

// A summarizer's model that waits, each call, until the test opens its gate.
class GatedModel final : public adk::Model {
public:
    GatedModel(asio::io_context& ioc, std::shared_ptr<adk::Model> inner) : gate_(ioc), inner_(std::move(inner))
    {
        gate_.expires_at(asio::steady_timer::time_point::max());
    }
    std::string_view name() const override { return inner_->name(); }
    asio::awaitable<adk::Stream<LlmResponse>> generate(LlmRequest request, bool stream) override
    {
        ++waiting;
        if (!open_)
            co_await gate_.async_wait(asio::as_tuple(asio::use_awaitable));
        --waiting;
        co_return co_await inner_->generate(std::move(request), stream);
    }
    void open()
    {
        open_ = true;
        gate_.cancel();
    }
    int waiting = 0;

private:
    asio::steady_timer gate_;
    bool open_ = false;
    std::shared_ptr<adk::Model> inner_;
};

TEST_CASE("compaction: invocations that end while a compaction runs are compacted after it, not left for later",
          "[compaction]")
{
    std::atomic<int> summaries{0};
    auto model = std::make_shared<adk::test::FnModel>([](const LlmRequest&) { return LlmResponse::text("Noted."); });
    auto agent = adk::LlmAgent::builder("agent").model(model).build();
    asio::io_context ioc;
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    auto summarizer = std::make_shared<GatedModel>(ioc, fact_keeper(summaries));
    adk::Runner runner(compacting(agent, sessions, summarizer, 3));
    auto say = [&runner](int k) -> asio::awaitable<void> {
        Content message = Content::user("Remember " + fact(k));
        auto stream = co_await runner.run("u", "s", std::move(message));
        co_await adk::test::drain(stream);
    };
    const auto session = run(ioc, [&]() -> asio::awaitable<std::optional<adk::Session>> {
        adk::CreateSessionRequest create("app", "u", "s");
        co_await sessions->create_session(std::move(create));
        for (int k = 0; k < 3; ++k)
            co_await say(k);  // the third's end starts a compaction, held at the gate
        const auto executor = co_await asio::this_coro::executor;
        for (int turn = 0; turn < 100 && summarizer->waiting == 0; ++turn)
            co_await asio::post(executor, asio::use_awaitable);
        REQUIRE(summarizer->waiting == 1);
        for (int k = 3; k < 6; ++k)
            co_await say(k);  // each ends while it runs
        CHECK(summarizer->waiting == 1);
        summarizer->open();
        co_await runner.wait_for_compactions();
        adk::GetSessionRequest get("app", "u", "s");
        co_return co_await sessions->get_session(std::move(get));
    }());
    REQUIRE(session);
    std::vector<std::string> compacted;
    for (const Event& e : session->events)
        if (e.actions.compaction)
            compacted.push_back(e.actions.compaction->compacted_content->parts.at(0).text.value());
    // The first covers the first three; the second, planned once the first ended, the three that ended meanwhile.
    REQUIRE(compacted.size() == 2);
    CHECK(summaries.load() == 2);
    CHECK(compacted[0].find(fact(2)) != std::string::npos);
    CHECK(compacted[0].find(fact(3)) == std::string::npos);
    for (int k = 0; k < 6; ++k) {
        INFO(fact(k));
        CHECK(compacted[1].find(fact(k)) != std::string::npos);
    }
    const auto contents = adk::build_contents(session->events, "agent", "", adk::IncludeContents::history);
    CHECK(contents.size() == 1);  // the second summary stands for all six
}

TEST_CASE("compaction: an invocation paused on a question is resumed across a compaction that came meanwhile",
          "[compaction]")
{
    int transfers = 0;
    std::vector<LlmRequest> requests;
    auto model = std::make_shared<adk::test::FnModel>([&](const LlmRequest& request) {
        requests.push_back(request);
        const Content& last = request.contents.back();
        if (last.parts.back().function_response)
            return LlmResponse::text("sent");
        if (last.parts.back().text && last.parts.back().text->starts_with("pay"))
            return LlmResponse::function_call("transfer", json::object{{"amount", 5}});
        return LlmResponse::text("Noted.");
    });
    auto transfer = adk::FunctionTool::create(
        "transfer", "Sends money.", json::parse(R"({"type":"object","properties":{"amount":{"type":"number"}}})"),
        [&](adk::ToolContext&, json::object) -> asio::awaitable<json::value> {
            ++transfers;
            co_return json::object{{"sent", 5}};
        });
    transfer->set_require_confirmation(true);
    auto agent = adk::LlmAgent::builder("agent").model(model).tool(transfer).build();
    std::atomic<int> summaries{0};
    asio::io_context ioc;
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::Runner runner({.app_name = "app",
                        .agent = agent,
                        .session_service = sessions,
                        .resumability = {.is_resumable = true},
                        .compaction = EventsCompactionConfig{
                            .summarizer = std::make_shared<adk::LlmEventSummarizer>(fact_keeper(summaries)),
                            .compaction_interval = 2}});
    auto send = [&](Content message) {
        return run(ioc, [&]() -> asio::awaitable<std::vector<Event>> {
            auto stream = co_await runner.run("u", "s", std::move(message));
            co_return co_await adk::test::drain(stream);
        }());
    };
    run(ioc, [&]() -> asio::awaitable<void> {
        adk::CreateSessionRequest create("app", "u", "s");
        co_await sessions->create_session(std::move(create));
    }());
    send(Content::user("Remember " + fact(1)));
    auto paused = send(Content::user("pay 5 to Bob"));
    const adk::FunctionCall* question = nullptr;
    for (const Event& e : paused)
        for (const auto& call : e.function_calls())
            if (call.name == "adk_request_confirmation")
                question = &e.content->parts.back().function_call.value();
    REQUIRE(question);
    // Two invocations ended (one paused): the compaction took the first and the message of the second, and
    // stopped before the call that waits for its answer.
    CHECK(summaries.load() == 1);

    auto resumed = send(Content("user", {Part::from_function_response("adk_request_confirmation",
                                                                      json::object{{"confirmed", true}},
                                                                      question->id)}));
    REQUIRE(resumed.size() == 3);  // the tool's response, the answer, the agent's end (a resumable app)
    CHECK(resumed[1].text() == "sent");
    CHECK(resumed[2].actions.end_of_agent);
    CHECK(resumed.back().invocation_id == paused.front().invocation_id);
    CHECK(transfers == 1);
    const std::string last = request_text(requests.back());
    CHECK(last.starts_with("Facts so far; " + fact(1)));  // the summary, as the agent's own words
    CHECK(last.find("call transfer\nresponse transfer\n") != std::string::npos);
    CHECK(last.find("pay 5 to Bob") == std::string::npos);  // summarized with the first invocation
}
