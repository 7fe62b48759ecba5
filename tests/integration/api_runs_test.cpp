// ApiServer's runs over real loopback HTTP: /run and /run_sse against a real LlmAgent (ScriptedModel below
// it), the frames and their ids, deltas when streaming, the errors before and after the stream's head; and
// runs that belong to the server: a client that reconnects with Last-Event-ID gets what it missed and no
// second run, a run whose client left is cancelled after the grace period (at once with 0), the cancel route,
// and a log past its bound.
#include <adk/adk.hpp>
#include <adk/server/api_server.hpp>

#include <adk/server/runs.hpp>
#include "support/api_client.hpp"
#include "support/run.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_to.hpp>

#include <catch2/catch.hpp>

#include <future>
#include <thread>

namespace asio = boost::asio;
namespace json = boost::json;
using namespace std::chrono_literals;
using adk::test::call;
using adk::test::Frame;
using adk::test::FrameReader;
using adk::test::Reply;
using adk::testing::ScriptedModel;

namespace {

// get_weather waits `delay` before it answers, so that a run goes on while its client is away.
std::shared_ptr<adk::FunctionTool> weather_tool(std::chrono::milliseconds delay = 0ms)
{
    return adk::FunctionTool::create(
        "get_weather", "Returns the weather for a city.",
        json::parse(R"({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]})"),
        [delay](adk::ToolContext&, json::object args) -> asio::awaitable<json::value> {
            asio::steady_timer timer(co_await asio::this_coro::executor, delay);
            co_await timer.async_wait(asio::use_awaitable);
            co_return json::object{{"city", args.at("city")}, {"sky", "sunny"}};
        });
}

std::shared_ptr<adk::Agent> weather_agent(std::shared_ptr<ScriptedModel> model, std::chrono::milliseconds delay = 0ms)
{
    return adk::LlmAgent::builder("weather_agent").model(std::move(model)).tool(weather_tool(delay)).build();
}

std::string run_body(std::string_view session, bool streaming, std::string_view text = "Weather in Paris?")
{
    json::value body = json::object{{"appName", "weather"},
                                    {"userId", "u"},
                                    {"sessionId", session},
                                    {"newMessage", json::object{{"role", "user"}, {"parts", json::array{json::object{{"text", text}}}}}},
                                    {"streaming", streaming}};
    return json::serialize(body);
}

// POST /run_sse (with Last-Event-ID when given); the response, head read.
asio::awaitable<adk::net::HttpResponse> post_sse(adk::net::HttpClient& client, const adk::server::ApiServer& server,
                                                 std::string_view body, std::string_view last_event_id = {})
{
    adk::net::HttpRequest req("POST", server.base_url() + "/run_sse");
    req.set("content-type", "application/json");
    req.set("accept", "text/event-stream");
    if (!last_event_id.empty())
        req.set("last-event-id", std::string(last_event_id));
    req.body = std::string(body);
    co_return co_await client.send(std::move(req));
}

asio::awaitable<adk::net::HttpResponse> get_sse(adk::net::HttpClient& client, const adk::server::ApiServer& server,
                                                std::string_view path, std::string_view last_event_id = {})
{
    adk::net::HttpRequest req("GET", server.base_url() + std::string(path));
    if (!last_event_id.empty())
        req.set("last-event-id", std::string(last_event_id));
    co_return co_await client.send(std::move(req));
}

// Starts a run over /run_sse, reads its first frame, and goes away (the connection closes).
class Left {
public:
    std::string run_id;
    std::vector<Frame> first;  // one frame, unless the stream ended before it
};

asio::awaitable<Left> start_and_leave(adk::net::HttpClient& client, const adk::server::ApiServer& server,
                                      std::string_view body)
{
    adk::net::HttpResponse res = co_await post_sse(client, server, body);
    Left left;
    left.run_id = std::string(res.header("x-adk-run-id"));
    FrameReader reader(res);
    left.first = co_await reader.read(1);
    co_return left;
}

asio::awaitable<void> sleep_for(std::chrono::milliseconds d)
{
    asio::steady_timer timer(co_await asio::this_coro::executor, d);
    co_await timer.async_wait(asio::use_awaitable);
}

// Polls the session's runs until the run is finished or no longer held (or 10 s pass); returns its entry, or
// {"gone": true}.
// The run's entry once it has finished, or {"gone": true} once it is no longer held. With `until_gone`, a finished
// run is waited for until it is forgotten too (a run finished with no grace period is forgotten by a timer of 0 ms,
// which a loaded machine may run a moment after the run is seen finished).
// With `clock`, each poll moves the test's clock a second instead of waiting real time.
asio::awaitable<json::value> wait_finished(adk::net::HttpClient& client, const adk::server::ApiServer& server,
                                           std::string_view session, std::string_view run_id, bool until_gone = false,
                                           adk::testing::ManualClock* clock = nullptr)
{
    const std::string path = "/apps/weather/users/u/sessions/" + std::string(session) + "/runs";
    for (int i = 0; i < 200; ++i) {
        Reply runs = co_await call(client, server, "GET", path);
        bool held = false;
        const json::value list = runs.json();
        for (const auto& r : list.as_array()) {
            const bool same = r.at("runId").as_string() == run_id;
            held = held || same;
            if (same && r.at("finished").as_bool() && !until_gone)
                co_return r;
        }
        if (!held)
            co_return json::object{{"gone", true}};
        if (clock)
            co_await clock->elapse(1s);
        else
            co_await sleep_for(50ms);
    }
    co_return json::value();
}

asio::awaitable<std::size_t> stored_events(adk::SessionService& sessions, std::string_view session)
{
    adk::GetSessionRequest read(adk::SessionKey("weather", "u", std::string(session)));
    std::optional<adk::Session> s = co_await sessions.get_session(std::move(read));
    co_return s ? s->events.size() : 0;
}

class Fixture {
public:
    explicit Fixture(std::vector<ScriptedModel::Turn> turns, std::chrono::milliseconds tool_delay = 0ms,
                     std::function<void(adk::server::ApiServerOptions&)> configure = {})
        : model(std::make_shared<ScriptedModel>(std::move(turns))),
          sessions(std::make_shared<adk::InMemorySessionService>())
    {
        adk::server::ApiServerOptions options = adk::test::options_with(sessions);
        if (configure)
            configure(options);
        server = std::make_unique<adk::server::ApiServer>(
            ioc.get_executor(), std::vector<adk::server::App>{{"weather", weather_agent(model, tool_delay)}}, options);
        server->start();
    }

    asio::awaitable<void> create_session(std::string_view id)
    {
        const std::string path = "/apps/weather/users/u/sessions/" + std::string(id);
        Reply created = co_await call(client, *server, "POST", path);
        REQUIRE(created.status == 200);
    }

    asio::io_context ioc;
    std::shared_ptr<ScriptedModel> model;
    std::shared_ptr<adk::InMemorySessionService> sessions;
    std::unique_ptr<adk::server::ApiServer> server;
    adk::net::HttpClient client{adk::test::no_retries()};
};

bool partial(const Frame& frame)
{
    const json::value event = frame.json();
    const json::value* p = event.as_object().if_contains("partial");
    return p && p->as_bool();
}

json::object paris()
{
    return json::object{{"city", "Paris"}};
}

}  // namespace

TEST_CASE("ApiServer: /run answers the events as an array, /run_sse as one frame each with an id, deltas when "
          "streaming",
          "[server][runs]")
{
    const bool one_thread = GENERATE(false, true);  // on one thread, the run writes a waiting client's frames itself
    Fixture f({adk::LlmResponse::function_call("get_weather", paris()), adk::LlmResponse::text("It is sunny in Paris."),
               adk::LlmResponse::function_call("get_weather", paris()), ScriptedModel::chunks({"It is ", "sunny."})},
              0ms, [one_thread](adk::server::ApiServerOptions& o) { o.http.single_threaded = one_thread; });
    adk::test::run(f.ioc, [&]() -> asio::awaitable<void> {
        co_await f.create_session("s1");
        const std::string unary_body = run_body("s1", false);
        Reply unary = co_await call(f.client, *f.server, "POST", "/run", unary_body);
        REQUIRE(unary.status == 200);
        json::array events = unary.json().as_array();
        REQUIRE(events.size() == 3);
        CHECK(events[0].at("content").at("parts").at(0).at("functionCall").at("name") == "get_weather");
        CHECK(events[1].at("content").at("parts").at(0).at("functionResponse").at("response").at("sky") == "sunny");
        CHECK(events[2].at("content").at("parts").at(0).at("text") == "It is sunny in Paris.");
        CHECK(events[2].at("author") == "weather_agent");
        CHECK(events[2].at("timestamp").as_double() < 1e11);  // seconds

        const std::string sse_body = run_body("s1", true);
        adk::net::HttpResponse res = co_await post_sse(f.client, *f.server, sse_body);
        CHECK(res.status() == 200);
        CHECK(res.header("content-type") == "text/event-stream");
        CHECK(res.header("cache-control") == "no-cache");
        const std::string run_id(res.header("x-adk-run-id"));
        REQUIRE(!run_id.empty());
        FrameReader reader(res);
        std::vector<Frame> frames = co_await reader.read_all();
        REQUIRE(frames.size() == 5);  // call, response, two deltas, the whole answer
        for (std::size_t i = 0; i < frames.size(); ++i)
            CHECK(frames[i].id == run_id + ":" + std::to_string(i + 1));
        CHECK(partial(frames[2]));
        CHECK(frames[2].json().at("content").at("parts").at(0).at("text") == "It is ");
        CHECK(frames[3].json().at("content").at("parts").at(0).at("text") == "sunny.");
        CHECK(!partial(frames[4]));
        CHECK(frames[4].json().at("content").at("parts").at(0).at("text") == "It is sunny.");
        CHECK(frames[4].data.find('\n') == std::string::npos);  // one line of JSON per frame
        // The second delta is written from the first one's pieces: the answer's identity, as the first has it.
        for (const char* member : {"id", "invocationId", "author", "timestamp"}) {
            REQUIRE(frames[2].json().as_object().contains(member));
            CHECK(frames[3].json().at(member) == frames[2].json().at(member));
        }
        CHECK(frames[3].json().at("id") == frames[4].json().at("id"));  // a UI replaces the deltas by the answer
        CHECK(json::value_to<adk::Event>(frames[3].json()).partial);

        Reply session = co_await call(f.client, *f.server, "GET", "/apps/weather/users/u/sessions/s1");
        CHECK(session.json().at("events").as_array().size() == 8);  // two turns of user, call, response, answer
        json::value finished = co_await wait_finished(f.client, *f.server, "s1", run_id);
        REQUIRE(finished.is_object());
        CHECK(finished.at("lastEventId").as_string() == run_id + ":5");
        CHECK(finished.at("invocationId") == frames[0].json().at("invocationId"));
        f.server->stop();
    }());
}

TEST_CASE("ApiServer: bad run requests get a 4xx before the stream, a failing model an error frame after it",
          "[server][runs]")
{
    Fixture f({ScriptedModel::Turn::raise(adk::Error(adk::errc::bad_response, "the model broke down"))}, 0ms,
              [](adk::server::ApiServerOptions& o) { o.max_inline_data_bytes = 10; });
    adk::test::run(f.ioc, [&]() -> asio::awaitable<void> {
        co_await f.create_session("s1");
        const std::string nope = run_body("nope", false);
        Reply no_session = co_await call(f.client, *f.server, "POST", "/run_sse", nope);
        CHECK(no_session.status == 404);
        CHECK(no_session.json() == json::parse(R"({"error": "Session not found: nope"})"));
        Reply no_app = co_await call(f.client, *f.server, "POST", "/run",
                                     R"({"appName": "x", "userId": "u", "sessionId": "s1"})");
        CHECK(no_app.status == 404);
        CHECK_THAT(no_app.body, Catch::Contains("App not found: x"));
        Reply not_json = co_await call(f.client, *f.server, "POST", "/run_sse", "{\"appName\": ");
        CHECK(not_json.status == 400);
        CHECK_THAT(not_json.body, Catch::Contains("not JSON"));
        Reply no_id = co_await call(f.client, *f.server, "POST", "/run_sse", R"({"appName": "weather", "userId": "u"})");
        CHECK(no_id.status == 400);
        CHECK_THAT(no_id.body, Catch::Contains("\\\"sessionId\\\" is required"));
        Reply bad_flag = co_await call(f.client, *f.server, "POST", "/run_sse",
                                       R"({"appName": "weather", "userId": "u", "sessionId": "s1", "streaming": "yes"})");
        CHECK(bad_flag.status == 400);
        Reply bad_message = co_await call(f.client, *f.server, "POST", "/run_sse",
                                          R"({"appName": "weather", "userId": "u", "sessionId": "s1", "newMessage": {"parts": 3}})");
        CHECK(bad_message.status == 400);
        CHECK_THAT(bad_message.body, Catch::Contains("newMessage"));
        Reply big_file = co_await call(f.client, *f.server, "POST", "/run_sse",
                                       R"({"appName": "weather", "userId": "u", "sessionId": "s1", "newMessage": {"role": "user",
                                           "parts": [{"inlineData": {"mimeType": "text/plain", "data": "MDEyMzQ1Njc4OWFi"}}]}})");
        CHECK(big_file.status == 413);
        CHECK_THAT(big_file.body, Catch::Contains("holds 12 bytes"));
        Reply resume = co_await call(f.client, *f.server, "POST", "/run_sse",
                                     R"({"appName": "weather", "userId": "u", "sessionId": "s1", "invocationId": "e-1"})");
        CHECK(resume.status == 400);
        const std::string good = run_body("s1", false);
        Reply failed = co_await call(f.client, *f.server, "POST", "/run_sse", good);
        CHECK(failed.status == 200);  // the model's failure comes after the head, as a frame
        CHECK_THAT(failed.body, Catch::Contains(R"(data: {"error":"the model broke down"})"));
        const std::size_t stored = co_await stored_events(*f.sessions, "s1");
        CHECK(stored == 1);  // only the user's message
        f.server->stop();
    }());
}

TEST_CASE("ApiServer: a client that reconnects with Last-Event-ID gets the frames it missed, and no second run",
          "[server][runs]")
{
    const bool one_thread = GENERATE(false, true);
    Fixture f({adk::LlmResponse::function_call("get_weather", paris()), adk::LlmResponse::text("Sunny.")}, 300ms,
              [one_thread](adk::server::ApiServerOptions& o) { o.http.single_threaded = one_thread; });
    adk::test::run(f.ioc, [&]() -> asio::awaitable<void> {
        co_await f.create_session("s1");
        const std::string body = run_body("s1", false);
        Left left = co_await start_and_leave(f.client, *f.server, body);  // it goes while the tool runs
        const std::string run_id = left.run_id;
        REQUIRE(left.first.size() == 1);
        CHECK(left.first[0].id == run_id + ":1");
        const std::string last = run_id + ":1";
        adk::net::HttpResponse again = co_await post_sse(f.client, *f.server, body, last);
        CHECK(again.status() == 200);
        FrameReader reader(again);
        std::vector<Frame> rest = co_await reader.read_all();
        REQUIRE(rest.size() == 2);
        CHECK(rest[0].id == run_id + ":2");
        CHECK(rest[0].json().at("content").at("parts").at(0).as_object().contains("functionResponse"));
        CHECK(rest[1].json().at("content").at("parts").at(0).at("text") == "Sunny.");
        const std::size_t stored = co_await stored_events(*f.sessions, "s1");
        CHECK(stored == 4);  // one user message: the reconnect ran nothing
        CHECK(f.model->turns_left() == 0);

        // The whole log again, from the start, on the run's own route; and errors for what is not there.
        const std::string events_path = "/apps/weather/users/u/sessions/s1/runs/" + run_id + "/events";
        adk::net::HttpResponse replay = co_await get_sse(f.client, *f.server, events_path);
        FrameReader replay_reader(replay);
        std::vector<Frame> all = co_await replay_reader.read_all();
        CHECK(all.size() == 3);
        const std::string other_path = "/apps/weather/users/u/sessions/s2/runs/" + run_id + "/events";
        Reply other_session = co_await call(f.client, *f.server, "GET", other_path);
        CHECK(other_session.status == 404);
        CHECK_THAT(other_session.body, Catch::Contains("Run not found"));
        adk::net::HttpResponse unknown = co_await post_sse(f.client, *f.server, body, "no-such-run:3");
        CHECK(unknown.status() == 404);
        adk::net::HttpResponse malformed = co_await post_sse(f.client, *f.server, body, "garbage");
        CHECK(malformed.status() == 400);
        f.server->stop();
    }());
}

TEST_CASE("ApiServer: a run whose client left is cancelled when the grace period ends, and the session keeps only "
          "what was committed",
          "[server][runs]")
{
    const auto grace = GENERATE(0ms, 30000ms);  // 30 s on the test's clock
    const bool one_thread = GENERATE(false, true);
    adk::testing::ManualClock clock;
    Fixture f({ScriptedModel::chunks({"Thinking"}).then_hang()}, 0ms, [grace, one_thread](adk::server::ApiServerOptions& o) {
        o.run_grace = grace;
        o.http.single_threaded = one_thread;
    });
    adk::test::run(f.ioc, [&]() -> asio::awaitable<void> {
        co_await f.create_session("s1");
        const std::string body = run_body("s1", true);
        Left left = co_await start_and_leave(f.client, *f.server, body);
        const std::string run_id = left.run_id;
        REQUIRE(left.first.size() == 1);
        CHECK(partial(left.first[0]));
        if (grace > 0ms) {
            Reply runs = co_await call(f.client, *f.server, "GET", "/apps/weather/users/u/sessions/s1/runs");
            REQUIRE(runs.json().as_array().size() == 1);
        }
        json::value finished = co_await wait_finished(f.client, *f.server, "s1", run_id, grace == 0ms, &clock);
        REQUIRE(finished.is_object());  // the hanging model was cancelled (with no grace, forgotten at once)
        CHECK(finished.as_object().contains("gone") == (grace == 0ms));
        adk::GetSessionRequest read(adk::SessionKey("weather", "u", "s1"));
        std::optional<adk::Session> stored = co_await f.sessions->get_session(std::move(read));
        REQUIRE(stored->events.size() == 2);  // the user's message and the mark of the interruption
        CHECK(stored->events[1].interrupted);  // never the partial text
        CHECK(!stored->events[1].content);
        f.server->stop();
    }());
}

namespace {

// Big distinct deltas, many socket buffers' worth: chunk i is 32 KiB of one letter after "<i>".
std::vector<std::string> big_chunks(int count)
{
    std::vector<std::string> chunks;
    for (int i = 0; i < count; ++i)
        chunks.push_back("<" + std::to_string(i) + ">" + std::string(32 << 10, static_cast<char>('a' + i % 26)));
    return chunks;
}

std::string text_of(const Frame& frame)
{
    return std::string(frame.json().at("content").at("parts").at(0).at("text").as_string());
}

}  // namespace

TEST_CASE("ApiServer on one thread: a client that stops reading mid-answer gets each frame it is sent whole and in "
          "order, then the answer",
          "[server][runs]")
{
    const std::vector<std::string> chunks = big_chunks(300);  // about 10 MB of deltas: more than loopback holds
    Fixture f({ScriptedModel::chunks(chunks)}, 0ms, [](adk::server::ApiServerOptions& o) { o.http.single_threaded = true; });
    adk::test::run(f.ioc, [&]() -> asio::awaitable<void> {
        co_await f.create_session("s1");
        const std::string body = run_body("s1", true);
        adk::net::HttpResponse res = co_await post_sse(f.client, *f.server, body);
        const std::string run_id(res.header("x-adk-run-id"));
        // The client reads nothing for a while: the run writes until the socket takes no more, the connection keeps
        // the rest of that write, and the follower writes it when the client reads again.
        co_await sleep_for(300ms);
        FrameReader reader(res);
        std::vector<Frame> frames = co_await reader.read_all();
        REQUIRE(frames.size() >= 2);
        std::uint64_t last = 0;
        std::size_t told = 0;
        for (std::size_t i = 0; i + 1 < frames.size(); ++i) {
            if (frames[i].id.empty()) {  // the deltas the log dropped before this client read them, counted
                CHECK_THAT(frames[i].data, Catch::Contains("streamed deltas of run " + run_id + " were dropped"));
                ++told;
                continue;
            }
            const auto id = adk::server::parse_frame_id(frames[i].id);
            REQUIRE(id);
            CHECK(id->first == run_id);
            CHECK(id->second > last);  // in order; deltas the log dropped meanwhile are skipped, never reordered
            last = id->second;
            REQUIRE(partial(frames[i]));
            REQUIRE(id->second <= chunks.size());
            CHECK(text_of(frames[i]) == chunks[id->second - 1]);  // delta n is chunk n, whole
        }
        CHECK(told >= 1);  // 10 MB of deltas against a log of 1 MiB: this client read too slowly, and was told
        CHECK(frames.back().id == run_id + ":301");
        CHECK(!partial(frames.back()));
        std::string answer;
        for (const auto& c : chunks)
            answer += c;
        CHECK(text_of(frames.back()) == answer);
        f.server->stop();
    }());
}

TEST_CASE("ApiServer on one thread: a client that joins a run mid-answer gets the frames the first one gets, in the "
          "same order",
          "[server][runs]")
{
    std::vector<std::string> chunks;
    for (int i = 0; i < 50; ++i)
        chunks.push_back("w" + std::to_string(i) + " ");
    // The scripted model streams its 50 deltas at once: the log keeps them all (past the partial frames' bound, a
    // follower that reads late misses the oldest deltas, never the answer).
    Fixture f({adk::LlmResponse::function_call("get_weather", paris()), ScriptedModel::chunks(chunks)}, 300ms,
              [](adk::server::ApiServerOptions& o) {
                  o.http.single_threaded = true;
                  o.max_run_partial_bytes = std::size_t{1} << 20;
              });
    adk::test::run(f.ioc, [&]() -> asio::awaitable<void> {
        co_await f.create_session("s1");
        const std::string body = run_body("s1", true);
        adk::net::HttpResponse first = co_await post_sse(f.client, *f.server, body);
        const std::string run_id(first.header("x-adk-run-id"));
        FrameReader first_reader(first);
        std::vector<Frame> first_frames = co_await first_reader.read(1);  // the call; the tool runs 300 ms
        REQUIRE(first_frames.size() == 1);
        adk::net::HttpClient other(adk::test::no_retries());
        const std::string events_path = "/apps/weather/users/u/sessions/s1/runs/" + run_id + "/events";
        adk::net::HttpResponse second = co_await get_sse(other, *f.server, events_path, run_id + ":1");
        REQUIRE(second.status() == 200);
        std::vector<Frame> rest = co_await first_reader.read_all();
        FrameReader second_reader(second);
        std::vector<Frame> joined = co_await second_reader.read_all();
        REQUIRE(rest.size() == 52);  // the tool's response, 50 deltas, the answer
        REQUIRE(joined.size() == rest.size());
        for (std::size_t i = 0; i < rest.size(); ++i) {
            CHECK(rest[i].id == run_id + ":" + std::to_string(i + 2));
            CHECK(joined[i].id == rest[i].id);
            CHECK(joined[i].data == rest[i].data);
        }
        for (std::size_t i = 0; i < chunks.size(); ++i)
            CHECK(text_of(rest[i + 1]) == chunks[i]);
        f.server->stop();
    }());
}

TEST_CASE("ApiServer on one thread: a client that leaves mid-answer, megabytes still to write, does not stop the run",
          "[server][runs]")
{
    const std::vector<std::string> chunks = big_chunks(100);
    Fixture f({ScriptedModel::chunks(chunks)}, 0ms, [](adk::server::ApiServerOptions& o) {
        o.http.single_threaded = true;
        o.run_grace = std::chrono::hours(1);
    });
    adk::test::run(f.ioc, [&]() -> asio::awaitable<void> {
        co_await f.create_session("s1");
        const std::string body = run_body("s1", true);
        Left left = co_await start_and_leave(f.client, *f.server, body);
        REQUIRE(left.first.size() == 1);
        json::value finished = co_await wait_finished(f.client, *f.server, "s1", left.run_id);
        REQUIRE(finished.is_object());
        CHECK(!finished.as_object().contains("gone"));
        CHECK(finished.at("lastEventId").as_string() == left.run_id + ":101");  // 100 deltas, the answer, no failure
        adk::GetSessionRequest read(adk::SessionKey("weather", "u", "s1"));
        std::optional<adk::Session> stored = co_await f.sessions->get_session(std::move(read));
        REQUIRE(stored->events.size() == 2);  // the user's message and the whole answer
        std::string answer;
        for (const auto& c : chunks)
            answer += c;
        CHECK(stored->events[1].text() == answer);
        f.server->stop();
    }());
}

TEST_CASE("ApiServer: the cancel route stops a run that another connection follows", "[server][runs]")
{
    Fixture f({ScriptedModel::chunks({"Thinking"}).then_hang()});
    adk::test::run(f.ioc, [&]() -> asio::awaitable<void> {
        co_await f.create_session("s1");
        const std::string body = run_body("s1", true);
        adk::net::HttpResponse res = co_await post_sse(f.client, *f.server, body);
        const std::string run_id(res.header("x-adk-run-id"));
        FrameReader reader(res);
        std::vector<Frame> first = co_await reader.read(1);
        REQUIRE(first.size() == 1);
        const std::string cancel_path = "/apps/weather/users/u/sessions/s1/runs/" + run_id + "/cancel";
        adk::net::HttpClient other(adk::test::no_retries());
        Reply cancelled = co_await call(other, *f.server, "POST", cancel_path);
        CHECK(cancelled.json() == json::parse(R"({"runId": ")" + run_id + R"(", "cancelled": true})"));
        std::vector<Frame> rest = co_await reader.read_all();
        REQUIRE(rest.size() == 1);
        CHECK_THAT(rest[0].data, Catch::Contains("cancelled by a client"));
        Reply twice = co_await call(other, *f.server, "POST", cancel_path);
        CHECK(twice.json().at("cancelled") == false);
        Reply unknown = co_await call(other, *f.server, "POST", "/apps/weather/users/u/sessions/s1/runs/nope/cancel");
        CHECK(unknown.status == 404);
        f.server->stop();
    }());
}

TEST_CASE("ApiServer: past the log's bound partial frames go first, and a reader that missed whole events is told",
          "[server][runs]")
{
    const bool streamed = GENERATE(true, false);
    std::vector<std::string> chunks;
    for (int i = 0; i < 10; ++i)
        chunks.push_back(std::string(30, static_cast<char>('a' + i)));
    // Streamed: ten deltas and the answer (about 1.4 KB each as the log counts them: adk::approximate_bytes), in
    // a log of 6000 bytes. Not: a call, its response and the answer (three whole frames) in a log of 100 bytes,
    // which keeps only the newest frame.
    std::vector<ScriptedModel::Turn> script;
    if (streamed)
        script.push_back(ScriptedModel::chunks(chunks));
    else
        script = {adk::LlmResponse::function_call("get_weather", paris()), adk::LlmResponse::text("Sunny.")};
    Fixture f(std::move(script), 0ms,
              [streamed](adk::server::ApiServerOptions& o) { o.max_run_log_bytes = streamed ? 6000 : 100; });
    adk::test::run(f.ioc, [&]() -> asio::awaitable<void> {
        co_await f.create_session("s1");
        const std::string body = run_body("s1", streamed);
        std::string run_id;
        {
            adk::net::HttpResponse res = co_await post_sse(f.client, *f.server, body);
            run_id = std::string(res.header("x-adk-run-id"));
            FrameReader reader(res);
            std::vector<Frame> live = co_await reader.read_all();
            CHECK(!partial(live.back()));
        }
        const std::string events_path = "/apps/weather/users/u/sessions/s1/runs/" + run_id + "/events";
        adk::net::HttpResponse replay = co_await get_sse(f.client, *f.server, events_path);
        FrameReader reader(replay);
        std::vector<Frame> kept = co_await reader.read_all();
        REQUIRE(!kept.empty());
        if (streamed) {
            CHECK(kept.size() < 11);
            CHECK(kept.back().id == run_id + ":11");
            CHECK(kept.back().json().at("content").at("parts").at(0).at("text").as_string().size() == 300);
            CHECK(kept.front().id != run_id + ":1");  // partial frames were dropped, silently: the answer holds them
            CHECK(partial(kept.front()));
        } else {
            REQUIRE(kept.size() == 2);  // the reader is told what it missed, then gets the newest frame
            CHECK(kept.front().id.empty());
            CHECK_THAT(kept.front().data, Catch::Contains("no longer held by the server"));
            CHECK(kept.back().id == run_id + ":3");
        }
        f.server->stop();
    }());
}

TEST_CASE("ApiServer: a long streamed answer keeps only its newest deltas, and the answer that repeats them",
          "[server][runs]")
{
    std::vector<std::string> chunks;
    for (int i = 0; i < 40; ++i)
        chunks.push_back(std::string(30, static_cast<char>('a' + i % 26)));
    Fixture f({ScriptedModel::chunks(chunks)}, 0ms, [](adk::server::ApiServerOptions& o) { o.max_run_partial_bytes = 5000; });
    adk::test::run(f.ioc, [&]() -> asio::awaitable<void> {
        co_await f.create_session("s1");
        const std::string body = run_body("s1", true);
        std::string run_id;
        {
            adk::net::HttpResponse res = co_await post_sse(f.client, *f.server, body);
            run_id = std::string(res.header("x-adk-run-id"));
            FrameReader reader(res);
            std::vector<Frame> live = co_await reader.read_all();
            REQUIRE(live.size() == 41);  // the bound is for a client that comes back: a connected one reads all
            for (std::size_t i = 0; i < 40; ++i) {
                CHECK(live[i].id == run_id + ":" + std::to_string(i + 1));
                CHECK(text_of(live[i]) == chunks[i]);
            }
            CHECK(live.back().id == run_id + ":41");
            CHECK(!partial(live.back()));
        }
        const std::string events_path = "/apps/weather/users/u/sessions/s1/runs/" + run_id + "/events";
        adk::net::HttpResponse replay = co_await get_sse(f.client, *f.server, events_path);
        FrameReader reader(replay);
        std::vector<Frame> kept = co_await reader.read_all();
        REQUIRE(kept.size() >= 2);
        std::size_t partial_bytes = 0;
        for (std::size_t i = 0; i + 1 < kept.size(); ++i) {
            CHECK(partial(kept[i]));
            CHECK(kept[i].id == run_id + ":" + std::to_string(41 - (kept.size() - 1) + i));  // the newest ones
            partial_bytes += adk::approximate_bytes(json::value_to<adk::Event>(kept[i].json()));
        }
        CHECK(kept.size() < 10);
        CHECK(partial_bytes <= 5000);
        CHECK(!partial(kept.back()));
        CHECK(kept.back().id == run_id + ":41");
        CHECK(kept.back().json().at("content").at("parts").at(0).at("text").as_string().size() == 40 * 30);
        f.server->stop();
    }());
}

TEST_CASE("ApiServer: past the budget of all runs' frames the oldest finished runs are forgotten first",
          "[server][runs]")
{
    std::vector<ScriptedModel::Turn> turns;
    for (int i = 0; i < 6; ++i) {
        turns.push_back(adk::LlmResponse::function_call("get_weather", paris()));
        turns.push_back(adk::LlmResponse::text("It is sunny in Paris."));
    }
    Fixture f(std::move(turns), 0ms, [](adk::server::ApiServerOptions& o) { o.max_total_run_log_bytes = 12000; });
    adk::test::run(f.ioc, [&]() -> asio::awaitable<void> {
        co_await f.create_session("s1");
        std::vector<std::string> ids;
        std::size_t run_bytes = 0;
        for (int i = 0; i < 6; ++i) {
            const std::string body = run_body("s1", false);
            adk::net::HttpResponse res = co_await post_sse(f.client, *f.server, body);
            ids.emplace_back(res.header("x-adk-run-id"));
            FrameReader reader(res);
            std::vector<Frame> frames = co_await reader.read_all();
            REQUIRE(frames.size() == 3);
            run_bytes = 0;
            for (const auto& frame : frames)
                run_bytes += adk::approximate_bytes(json::value_to<adk::Event>(frame.json()));
        }
        REQUIRE(run_bytes > 3000);  // each run holds over a quarter of the budget: not all six fit
        Reply runs = co_await call(f.client, *f.server, "GET", "/apps/weather/users/u/sessions/s1/runs");
        std::vector<std::string> held;
        const json::value list = runs.json();
        for (const auto& r : list.as_array())
            held.emplace_back(r.at("runId").as_string());
        CHECK(held.size() < 6);
        CHECK(held.size() >= 2);
        REQUIRE(!held.empty());
        CHECK(held.back() == ids.back());  // the newest runs stay, in order
        CHECK(held.front() != ids.front());
        const std::string first_events = "/apps/weather/users/u/sessions/s1/runs/" + ids.front() + "/events";
        Reply gone = co_await call(f.client, *f.server, "GET", first_events);
        CHECK(gone.status == 404);
        const std::size_t stored = co_await stored_events(*f.sessions, "s1");
        CHECK(stored == 6 * 4);  // forgetting a run's frames loses no event of the session
        f.server->stop();
    }());
}

TEST_CASE("ApiServer: 20 clients run, drop and reconnect at once on an io_context run by four threads",
          "[server][runs][threads]")
{
    std::vector<ScriptedModel::Turn> turns;
    for (int i = 0; i < 20; ++i)
        turns.push_back(ScriptedModel::chunks({"It ", "is ", "sunny."}));
    auto model = std::make_shared<ScriptedModel>(std::move(turns));
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    asio::io_context ioc(4);
    auto guard = asio::make_work_guard(ioc);
    adk::server::ApiServer server(ioc.get_executor(), {{"weather", weather_agent(model)}}, adk::test::options_with(sessions));
    server.start();
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i)
        threads.emplace_back([&ioc] { ioc.run(); });

    asio::thread_pool clients(2);
    adk::net::HttpClient client(adk::test::no_retries());
    std::vector<std::future<int>> done;
    for (int c = 0; c < 20; ++c) {
        auto one = [&client, &server, c]() -> asio::awaitable<int> {
            const std::string session = "s" + std::to_string(c);
            const std::string path = "/apps/weather/users/u/sessions/" + session;
            Reply created = co_await call(client, server, "POST", path);
            const std::string body = run_body(session, true);
            Left left = co_await start_and_leave(client, server, body);
            const std::string run_id = left.run_id;
            const std::string last = left.first.size() == 1 ? left.first[0].id : std::string();
            adk::net::HttpResponse again = co_await post_sse(client, server, body, last);
            FrameReader reader(again);
            std::vector<Frame> rest = co_await reader.read_all();
            // Frames 2 to 4 come back after frame 1: two more deltas and the whole answer.
            const bool whole = created.status == 200 && last == run_id + ":1" && rest.size() == 3 &&
                               rest[0].id == run_id + ":2" && rest[2].id == run_id + ":4" && !partial(rest[2]) &&
                               rest[2].json().at("content").at("parts").at(0).at("text") == "It is sunny.";
            co_return whole ? 1 : 0;
        };
        done.push_back(asio::co_spawn(clients, one, asio::use_future));
    }
    int ok = 0;
    for (auto& f : done)
        ok += f.get();
    clients.join();
    server.stop();
    guard.reset();
    for (auto& t : threads)
        t.join();
    CHECK(ok == 20);
    CHECK(model->turns_left() == 0);
}

TEST_CASE("ApiServer: /run is a run of the server's: listed, stopped by the cancel route, refused past max_runs, "
          "cancelled when its client leaves",
          "[server][runs]")
{
    Fixture f({ScriptedModel::chunks({"Thinking"}).then_hang(), ScriptedModel::chunks({"Again"}).then_hang()}, 0ms,
              [](adk::server::ApiServerOptions& o) {
                  o.max_runs = 1;
                  o.run_grace = 0ms;
              });
    adk::test::run(f.ioc, [&]() -> asio::awaitable<void> {
        co_await f.create_session("s1");
        const std::string body = run_body("s1", false);
        // The /run waits for its hanging model; meanwhile the run is listed, a second run is refused, and the
        // cancel route ends it: /run answers what stopped it.
        std::optional<Reply> answered;
        auto post_run = [&]() -> asio::awaitable<void> { answered = co_await call(f.client, *f.server, "POST", "/run", body); };
        asio::co_spawn(f.ioc, post_run, asio::detached);
        std::string run_id;
        adk::net::HttpClient other(adk::test::no_retries());
        for (int i = 0; i < 200 && run_id.empty(); ++i) {
            Reply runs = co_await call(other, *f.server, "GET", "/apps/weather/users/u/sessions/s1/runs");
            if (!runs.json().as_array().empty())
                run_id = std::string(runs.json().at(0).at("runId").as_string());
            else
                co_await sleep_for(10ms);
        }
        REQUIRE(!run_id.empty());
        Reply second = co_await call(other, *f.server, "POST", "/run", body);
        CHECK(second.status == 503);
        const std::string cancel_path = "/apps/weather/users/u/sessions/s1/runs/" + run_id + "/cancel";
        Reply cancelled = co_await call(other, *f.server, "POST", cancel_path);
        CHECK(cancelled.json().at("cancelled") == true);
        for (int i = 0; i < 200 && !answered; ++i)
            co_await sleep_for(10ms);
        REQUIRE(answered);
        CHECK(answered->status == 500);
        CHECK_THAT(answered->body, Catch::Contains("cancelled by a client"));

        // A /run whose client leaves is cancelled (no grace here): the session records the interruption.
        adk::net::HttpClient leaving(adk::test::no_retries());
        asio::cancellation_signal give_up;
        auto send = [&]() -> asio::awaitable<void> {
            adk::net::HttpRequest req("POST", f.server->base_url() + "/run");
            req.body = body;
            try {
                co_await leaving.send(std::move(req));
            } catch (const std::exception&) {
                // cancelled: the client gave up
            }
        };
        asio::co_spawn(f.ioc, send, asio::bind_cancellation_slot(give_up.slot(), asio::detached));
        // Once its run is under way, the client gives up and closes the connection.
        bool running = false;
        for (int i = 0; i < 200 && !running; ++i) {
            Reply runs = co_await call(other, *f.server, "GET", "/apps/weather/users/u/sessions/s1/runs");
            const json::value list = runs.json();
            for (const auto& r : list.as_array())
                running = running || !r.at("finished").as_bool();
            if (!running)
                co_await sleep_for(10ms);
        }
        REQUIRE(running);
        give_up.emit(asio::cancellation_type::terminal);
        std::optional<adk::Session> stored;
        for (int i = 0; i < 200; ++i) {
            adk::GetSessionRequest read(adk::SessionKey("weather", "u", "s1"));
            stored = co_await f.sessions->get_session(std::move(read));
            if (stored && stored->events.size() == 4 && stored->events.back().interrupted)
                break;
            co_await sleep_for(10ms);
        }
        REQUIRE(stored);
        CHECK(stored->events.size() == 4);  // each run: the user's message, and the mark of its interruption
        CHECK(stored->events.back().interrupted);
        f.server->stop();
    }());
}

namespace {

// A run of a registry of its own, whose agent emitted `texts` as model events and finished (held for `grace`
// after, as long as the io_context is not run again).
class FinishedRun {
public:
    FinishedRun(std::vector<std::string> texts, std::size_t max_log_bytes = std::size_t{1} << 20,
                std::chrono::milliseconds grace = 0ms)
    {
        adk::server::RunLimits limits;
        limits.max_log_bytes = max_log_bytes;
        limits.grace = grace;
        registry = std::make_shared<adk::server::RunRegistry>(ioc.get_executor(), limits, 10, true);
        auto produce = [texts = std::move(texts)](adk::Sink<adk::Event> sink) -> asio::awaitable<void> {
            for (const auto& text : texts) {
                adk::Event e("agent", adk::Content::model(text));
                e.invocation_id = "e-1";
                co_await sink.emit(std::move(e));
            }
        };
        adk::server::RunOwner owner("app", "u", "s");
        run = registry->start(owner, adk::spawn_stream<adk::Event>(ioc.get_executor(), produce));
        while (!run->finished() && ioc.run_one() > 0) {
        }
        REQUIRE(run->finished());
    }

    asio::io_context ioc;
    std::shared_ptr<adk::server::RunRegistry> registry;
    std::shared_ptr<adk::server::Run> run;
};

}  // namespace

TEST_CASE("RunRegistry: a prepared run receives its invocation's events as they are emitted, its pump the end",
          "[server][runs]")
{
    asio::io_context ioc;
    auto registry = std::make_shared<adk::server::RunRegistry>(ioc.get_executor(), adk::server::RunLimits(), 10, true);
    std::shared_ptr<adk::server::Run> run = registry->prepare(adk::server::RunOwner("app", "u", "s"));
    CHECK(registry->size() == 0);  // not held before it starts
    // The producer holds its end until the test cancels this timer.
    auto gate = std::make_shared<asio::steady_timer>(ioc, std::chrono::hours(1));
    auto produce = [gate](adk::Sink<adk::Event> sink) -> asio::awaitable<void> {
        for (const char* text : {"one", "two"}) {
            adk::Event e("agent", adk::Content::model(text));
            e.invocation_id = "e-7";
            co_await sink.emit(std::move(e));
        }
        auto [ec] = co_await gate->async_wait(asio::as_tuple(asio::use_awaitable));
        (void)ec;
        throw adk::Error(adk::errc::unavailable, "the model is overloaded");
    };
    adk::EventStream stream = adk::spawn_stream<adk::Event>(ioc.get_executor(), produce, 1, run);
    while (run->last_frame() < 2 && ioc.run_one() > 0) {
    }
    CHECK(run->last_frame() == 2);  // in the log before the pump exists
    CHECK(run->invocation_id() == "e-7");
    registry->start(run, std::move(stream), "e-7");
    CHECK(registry->size() == 1);
    adk::server::Run::Follower follower(run, ioc.get_executor());
    std::uint64_t cursor = 0;
    auto read = follower.read(cursor, 64 * 1024);
    REQUIRE(read.frames.size() == 2);
    CHECK(read.frames[0].n == 1);
    adk::server::Run::EventScratch scratch;
    CHECK(read.frames[0].event(scratch)->text() == "one");
    CHECK(read.frames[1].event(scratch)->text() == "two");
    CHECK(!read.finished);
    gate->cancel();
    while (!run->finished() && ioc.run_one() > 0) {
    }
    REQUIRE(run->finished());
    read = follower.read(cursor, 64 * 1024);
    REQUIRE(read.frames.size() == 1);  // the failure, after the events
    CHECK(!read.frames[0].has_event());
    CHECK_THAT(read.frames[0].failure, Catch::Contains("the model is overloaded"));
    CHECK(read.finished);
    CHECK(run->failure() == read.frames[0].failure);
    registry->stop("the test ends");
}

namespace {

int renderings = 0;

std::string render_text(const adk::server::Run&, const adk::server::Run::Frame& frame)
{
    ++renderings;
    adk::server::Run::EventScratch scratch;
    return frame.event(scratch)->text();
}

}  // namespace

TEST_CASE("RunRegistry: a frame is an event shared by the log and every follower, a large frame's rendering too",
          "[server][runs]")
{
    const std::string big(std::size_t{2} << 20, 'x');
    FinishedRun f({big, big, big}, 1000);
    auto& ioc = f.ioc;
    auto& run = f.run;
    // The log holds the newest frame alone (over the bound, it is kept whole until the next one comes).
    CHECK(run->log_bytes() > big.size());
    CHECK(run->log_bytes() < big.size() + 4096);
    adk::server::Run::Follower one(run, ioc.get_executor());
    adk::server::Run::Follower two(run, ioc.get_executor());
    std::uint64_t cursor_one = 0;
    std::uint64_t cursor_two = 0;
    auto read_one = one.read(cursor_one, 64 * 1024);
    auto read_two = two.read(cursor_two, 64 * 1024);
    // First what it missed (frames 1 and 2), then the newest frame.
    CHECK(read_one.missed_first == 1);
    CHECK(read_one.missed_last == 2);
    CHECK_THAT(run->missed_message(read_one.missed_first, read_one.missed_last), Catch::Contains("no longer held"));
    REQUIRE(read_one.frames.size() == 1);
    REQUIRE(read_two.frames.size() == 1);
    const auto& frame = read_one.frames[0];
    CHECK(frame.n == 3);
    CHECK(frame.bytes > big.size());
    REQUIRE(frame.shared_event());
    CHECK(frame.shared_event() == read_two.frames[0].shared_event());  // one event, shared
    CHECK(frame.shared_event()->text() == big);
    CHECK(read_one.finished);
    CHECK(cursor_one == 3);
    renderings = 0;
    auto text_one = one.shared_rendering(frame, &render_text);
    auto text_two = two.shared_rendering(read_two.frames[0], &render_text);
    CHECK(renderings == 1);  // rendered once
    CHECK(text_one == text_two);
    CHECK(*text_one == big);
    // A follower that read everything of a finished run reads nothing more, and is told the run is over.
    auto again = one.read(cursor_one, 64 * 1024);
    CHECK(again.empty());
    CHECK(again.finished);
}

namespace {

// A streamed delta of an answer as the flow emits it: the answer's identity, its text, and usage counts.
adk::Event delta_event(const std::string& id, const std::string& text, std::int64_t candidates)
{
    adk::Event e("agent", adk::Content::model(text));
    e.id = id;
    e.invocation_id = "e-1";
    e.timestamp = 1700000000.25;
    e.partial = true;
    e.model_version = "gemini-2.5-flash";
    e.usage_metadata.emplace();
    e.usage_metadata->prompt_token_count = 10;
    e.usage_metadata->candidates_token_count = candidates;
    e.usage_metadata->total_token_count = 10 + candidates;
    return e;
}

// A run that received `sent` (its log keeps every delta), and what a follower read of it at once.
class ReceivedLog {
public:
    explicit ReceivedLog(const std::vector<adk::Event>& sent)
    {
        adk::server::RunLimits limits;
        limits.max_partial_bytes = std::size_t{1} << 20;
        registry = std::make_shared<adk::server::RunRegistry>(ioc.get_executor(), limits, 10, true);
        run = registry->prepare(adk::server::RunOwner("app", "u", "s"));
        for (const adk::Event& e : sent)
            run->receive(std::make_unique<adk::Event>(e));
        adk::server::Run::Follower follower(run, ioc.get_executor());
        std::uint64_t cursor = 0;
        read = follower.read(cursor, 1 << 20);
    }

    asio::io_context ioc;
    std::shared_ptr<adk::server::RunRegistry> registry;
    std::shared_ptr<adk::server::Run> run;
    adk::server::Run::Read read;
};

}  // namespace

TEST_CASE("RunRegistry: a plain-text delta is kept as what sets it apart from its answer's first, and reads back as "
          "the event that was emitted",
          "[server][runs]")
{
    std::vector<adk::Event> sent;
    // An answer: its first delta, deltas whose text (escaped, longer than a short string), counts and finish
    // reason differ, one without counts and one with extra usage members; a thought in between (not plain).
    sent.push_back(delta_event("a", "It is ", 1));
    sent.push_back(delta_event("a", "sunny \"today\"\nin Paris, and warm", 2));
    sent.push_back(delta_event("a", "", 3));
    sent.push_back(delta_event("a", "no counts", 3));
    sent.back().usage_metadata.reset();
    sent.push_back(delta_event("a", "details", 4));
    sent.back().usage_metadata->extra["promptTokensDetails"] = json::array{json::object{{"modality", "TEXT"}}};
    sent.push_back(delta_event("a", "thinking", 5));
    sent.back().content->parts.front().thought = true;
    sent.push_back(delta_event("a", "after the thought", 6));
    sent.push_back(delta_event("a", " end.", 7));
    sent.back().finish_reason = "STOP";
    // The whole answer, then a second answer (another id), a delta of another author with the same id, and one
    // that names a branch.
    adk::Event whole("agent", adk::Content::model("the whole answer"));
    whole.id = "a";
    whole.invocation_id = "e-1";
    sent.push_back(whole);
    sent.push_back(delta_event("b", "second ", 1));
    sent.push_back(delta_event("b", "answer", 2));
    sent.push_back(delta_event("b", "another author", 3));
    sent.back().author = "helper";
    sent.push_back(delta_event("b", "a branch", 4));
    sent.back().branch = "root.helper";
    const ReceivedLog log(sent);
    const adk::server::Run::Read& read = log.read;
    REQUIRE(read.frames.size() == sent.size());
    adk::server::Run::EventScratch scratch;
    std::vector<bool> compact;
    for (std::size_t i = 0; i < sent.size(); ++i) {
        const adk::server::Run::Frame& frame = read.frames[i];
        INFO("frame " << frame.n);
        const adk::Event* event = frame.event(scratch);
        REQUIRE(event);
        CHECK(*event == sent[i]);
        CHECK(adk::to_json_text(*event) == adk::to_json_text(sent[i]));
        CHECK(frame.bytes == adk::approximate_bytes(sent[i]));  // counted as the event it was
        CHECK(frame.partial() == sent[i].partial);
        compact.push_back(!frame.shared_event());
    }
    // Kept whole: each answer's first plain delta, what is not plain (the thought), the first plain delta after
    // it, the whole event, and a delta of another author or branch (each the first of its answer).
    CHECK(compact == std::vector<bool>{false, true, true, true, true, false, false, true, false, false, true, false,
                                       false});
    // Another reader, its scratch on the second answer first, then back on the first.
    adk::server::Run::EventScratch other;
    CHECK(*read.frames[10].event(other) == sent[10]);
    CHECK(*read.frames[1].event(other) == sent[1]);
    CHECK(*read.frames[10].event(other) == sent[10]);
}

TEST_CASE("RunRegistry: an answer's consecutive deltas with equal usage counts share them", "[server][runs]")
{
    // The base (its own counts), two deltas with counts 1, one with 2, one without, one with 2 again, then a
    // second answer whose first delta after its base has counts 2 too.
    std::vector<adk::Event> sent;
    for (std::int64_t counts : {1, 1, 1, 2, 0, 2})
        sent.push_back(delta_event("a", "piece " + std::to_string(sent.size()), counts));
    sent[4].usage_metadata.reset();
    sent.push_back(delta_event("b", "second", 2));
    sent.push_back(delta_event("b", "answer", 2));
    const ReceivedLog log(sent);
    const adk::server::Run::Read& read = log.read;
    REQUIRE(read.frames.size() == sent.size());
    adk::server::Run::EventScratch scratch;
    for (std::size_t i = 0; i < sent.size(); ++i) {
        INFO("frame " << i);
        CHECK(*read.frames[i].event(scratch) == sent[i]);
        CHECK((read.frames[i].delta() != nullptr) == (i != 0 && i != 6));  // each answer's base is kept whole
    }
    auto usage = [&](std::size_t i) { return read.frames[i].delta()->usage; };
    REQUIRE(usage(1));
    CHECK(usage(2) == usage(1));  // equal counts, shared
    REQUIRE(usage(3));
    CHECK(usage(3) != usage(1));
    CHECK(!usage(4));
    CHECK(usage(5) == usage(3));  // the last counts sent, shared past a delta without
    CHECK(usage(7) != usage(5));  // another answer: its own
}

namespace {

// A run that receives an answer's deltas, then the answer, and followers that read it when a test says.
class Burst {
public:
    explicit Burst(adk::server::RunLimits limits) : limits_(limits) {}

    void follow(bool whole_only)
    {
        followers.push_back(std::make_unique<adk::server::Run::Follower>(run, ioc.get_executor(), whole_only));
    }
    void stream(int count)
    {
        for (int i = 0; i < count; ++i, ++streamed)
            run->receive(
                std::make_unique<adk::Event>(delta_event("a", "word" + std::to_string(streamed) + " ", streamed + 1)));
    }
    void answer()
    {
        adk::Event whole("agent", adk::Content::model("the whole answer"));
        whole.invocation_id = "e-1";
        run->receive(std::make_unique<adk::Event>(std::move(whole)));
    }
    // Everything follower `i` reads now (the deltas' texts, "" for a whole frame), and the deltas it missed.
    std::vector<std::string> read_all(std::size_t i, std::uint64_t& cursor, std::uint64_t& missed)
    {
        std::vector<std::string> texts;
        adk::server::Run::EventScratch scratch;
        for (;;) {
            adk::server::Run::Read read = followers[i]->read(cursor, 64 * 1024);
            missed += read.missed_deltas;
            if (read.empty())
                return texts;
            for (const auto& frame : read.frames)
                texts.push_back(frame.partial() ? frame.event(scratch)->content->text() : "");
        }
    }

    adk::server::RunLimits limits_;
    asio::io_context ioc;
    std::shared_ptr<adk::server::RunRegistry> registry =
        std::make_shared<adk::server::RunRegistry>(ioc.get_executor(), limits_, 10, true);
    std::shared_ptr<adk::server::Run> run = registry->prepare(adk::server::RunOwner("app", "u", "s"));
    std::vector<std::unique_ptr<adk::server::Run::Follower>> followers;
    int streamed = 0;  // deltas so far: the next is "word<streamed> "
};

}  // namespace

TEST_CASE("RunRegistry: a connected follower reads every delta of a burst past the partial frames' bound, and a client "
          "that comes back after replays the newest",
          "[server][runs]")
{
    adk::server::RunLimits limits;  // 16 KiB of partial frames: fewer than 60 deltas
    Burst burst(limits);
    burst.follow(false);
    burst.stream(60);  // a model that sends its chunks at once: no read in between
    std::uint64_t cursor = 0;
    std::uint64_t missed = 0;
    std::vector<std::string> texts = burst.read_all(0, cursor, missed);
    REQUIRE(texts.size() == 60);
    CHECK(missed == 0);
    for (int i = 0; i < 60; ++i)
        CHECK(texts[static_cast<std::size_t>(i)] == "word" + std::to_string(i) + " ");
    // Read by every follower, the deltas are held no more than the bound says, for a client that comes back.
    burst.answer();
    CHECK(burst.read_all(0, cursor, missed) == std::vector<std::string>{""});
    adk::server::Run::Follower replay(burst.run, burst.ioc.get_executor());
    std::uint64_t replay_cursor = 0;
    adk::server::Run::Read kept = replay.read(replay_cursor, 1 << 20);
    REQUIRE(kept.frames.size() >= 2);
    CHECK(kept.frames.size() < 30);
    std::size_t partial_bytes = 0;
    for (std::size_t i = 0; i + 1 < kept.frames.size(); ++i) {
        CHECK(kept.frames[i].partial());
        CHECK(kept.frames[i].n == 61 - (kept.frames.size() - 1) + i);  // the newest deltas
        partial_bytes += kept.frames[i].bytes;
    }
    CHECK(partial_bytes <= limits.max_partial_bytes);
    CHECK(kept.frames.back().n == 61);
}

TEST_CASE("RunRegistry: a follower of whole events only does not hold deltas back, and one slower than the log's "
          "bound is told how many deltas it missed",
          "[server][runs]")
{
    SECTION("whole events only: the partial bound applies as if nobody followed")
    {
        adk::server::RunLimits limits;
        Burst burst(limits);
        burst.follow(true);
        burst.stream(60);
        CHECK(burst.run->log_bytes() <= limits.max_partial_bytes);
        std::uint64_t cursor = 0;
        std::uint64_t missed = 0;
        CHECK(burst.read_all(0, cursor, missed).empty());
        CHECK(missed == 0);  // it reads no delta, so it misses none
    }
    SECTION("a follower that does not read while the log passes its bound")
    {
        adk::server::RunLimits limits;
        limits.max_log_bytes = 24 << 10;
        limits.max_partial_bytes = 4 << 10;
        Burst burst(limits);
        burst.follow(false);
        burst.follow(false);
        std::uint64_t fast_cursor = 0;
        std::uint64_t fast_missed = 0;
        std::vector<std::string> fast;
        for (int i = 0; i < 10; ++i) {  // one follower reads as the run streams, the other not at all
            burst.stream(10);
            for (auto& text : burst.read_all(0, fast_cursor, fast_missed))
                fast.push_back(std::move(text));
        }
        CHECK(fast.size() == 100);
        CHECK(fast_missed == 0);
        CHECK(burst.run->log_bytes() <= limits.max_log_bytes);
        std::uint64_t slow_cursor = 0;
        std::uint64_t slow_missed = 0;
        std::vector<std::string> slow = burst.read_all(1, slow_cursor, slow_missed);
        CHECK(slow_missed > 0);
        CHECK(slow.size() + slow_missed == 100);
        CHECK(slow.back() == "word99 ");  // what it reads is the newest
        const std::string message = burst.run->missed_deltas_message(slow_missed);
        CHECK_THAT(message, Catch::Contains(std::to_string(slow_missed) + " streamed deltas of run"));
        CHECK_THAT(message, Catch::Contains("the whole event that follows them holds their text"));
        // It is told once: the next read misses nothing.
        burst.answer();
        std::uint64_t again = 0;
        CHECK(burst.read_all(1, slow_cursor, again) == std::vector<std::string>{""});
        CHECK(again == 0);
    }
}

TEST_CASE("RunRegistry: the frames each follower has not read yet, counted for the stream queue depth gauge",
          "[server][runs]")
{
    FinishedRun f({"part 0", "part 1", "part 2", "part 3"}, std::size_t{1} << 20, std::chrono::hours(1));
    REQUIRE(f.registry->size() == 1);
    auto& ioc = f.ioc;
    auto& registry = f.registry;
    auto& run = f.run;
    const std::uint64_t frames = run->last_frame();
    REQUIRE(frames >= 4);
    CHECK(registry->unread_frames() == 0);  // nobody follows: nothing waits for a client
    {
        adk::server::Run::Follower fast(run, ioc.get_executor());
        adk::server::Run::Follower slow(run, ioc.get_executor());
        CHECK(registry->unread_frames() == 2 * frames);
        std::uint64_t fast_cursor = 0;
        while (!fast.read(fast_cursor, 64 * 1024).finished) {
        }
        CHECK(registry->unread_frames() == frames);  // the slow one's
        std::uint64_t slow_cursor = 0;
        auto one = slow.read(slow_cursor, 1);  // max_bytes 1: a frame at a time
        CHECK(one.frames.size() == 1);
        CHECK(registry->unread_frames() == frames - 1);
        // A reconnect that resumes past what it read (Last-Event-ID) leaves only the rest unread.
        adk::server::Run::Follower resumed(run, ioc.get_executor());
        std::uint64_t resumed_cursor = frames - 1;
        (void)resumed.read(resumed_cursor, 64 * 1024);
        CHECK(registry->unread_frames() == frames - 1);
    }
    CHECK(registry->unread_frames() == 0);  // followers that left count no more
    CHECK(run->unread_frames() == 0);
}

TEST_CASE("RunRegistry: a follower of whole events only is given no delta and is not woken for one",
          "[server][runs]")
{
    asio::io_context ioc;
    adk::server::RunLimits limits;
    limits.grace = 0ms;  // the finished run is forgotten at once: ioc.run() returns when the followers are done
    auto registry = std::make_shared<adk::server::RunRegistry>(ioc.get_executor(), limits, 10, true);
    // Deltas, then their whole answer, twice; between two frames every follower has read what came and waits.
    auto produce = [&ioc](adk::Sink<adk::Event> sink) -> asio::awaitable<void> {
        for (const char* answer : {"first", "second"}) {
            for (int i = 0; i < 3; ++i) {
                adk::Event delta("agent", adk::Content::model(std::string(answer).substr(0, 2)));
                delta.invocation_id = "e-1";
                delta.partial = true;
                co_await sink.emit(std::move(delta));
                for (int yield = 0; yield < 10; ++yield)
                    co_await asio::post(ioc, asio::use_awaitable);
            }
            adk::Event whole("agent", adk::Content::model(answer));
            whole.invocation_id = "e-1";
            co_await sink.emit(std::move(whole));
            for (int yield = 0; yield < 10; ++yield)
                co_await asio::post(ioc, asio::use_awaitable);
        }
    };
    adk::server::RunOwner owner("app", "u", "s");
    auto run = registry->start(owner, adk::spawn_stream<adk::Event>(ioc.get_executor(), produce));

    class Seen {
    public:
        std::vector<std::string> frames;  // "delta" or the whole event's text
        int wakes = 0;
    };
    auto follow = [&](bool whole_only, Seen& seen) -> asio::awaitable<void> {
        adk::server::Run::Follower follower(run, ioc.get_executor(), whole_only);
        std::uint64_t cursor = 0;
        adk::server::Run::EventScratch scratch;
        for (;;) {
            adk::server::Run::Read read = follower.read(cursor, 1 << 20);
            for (const auto& f : read.frames)
                if (const adk::Event* e = f.event(scratch))
                    seen.frames.push_back(e->partial ? std::string("delta") : e->text());
            if (read.finished)
                co_return;
            if (read.empty()) {
                co_await follower.wait();
                ++seen.wakes;
            }
        }
    };
    Seen all, whole;
    asio::co_spawn(ioc, follow(false, all), asio::detached);
    asio::co_spawn(ioc, follow(true, whole), asio::detached);
    ioc.run();

    CHECK(all.frames == std::vector<std::string>{"delta", "delta", "delta", "first", "delta", "delta", "delta",
                                                 "second"});
    CHECK(all.wakes >= 8);  // woken for each frame, and for the end
    CHECK(whole.frames == std::vector<std::string>{"first", "second"});
    CHECK(whole.wakes <= 3);  // the two whole events and the end: none for a delta
    CHECK(run->finished());
}

namespace {

// A follower's writer that writes for itself (Run::Follower::Direct): reads what came and keeps the texts; told
// to refuse, it reads nothing and asks to be woken.
class DirectWriter final : public adk::server::Run::Follower::Direct {
public:
    bool deliver() noexcept override
    {
        ++calls;
        if (refuse)
            return false;
        while (true) {
            follower->read(cursor, 64 * 1024, read);
            if (read.empty())
                return true;
            for (const auto& frame : read.frames)
                written.push_back(frame.event(scratch)->text());
        }
    }

    adk::server::Run::Follower* follower = nullptr;
    std::uint64_t cursor = 0;
    adk::server::Run::Read read;
    adk::server::Run::EventScratch scratch;
    std::vector<std::string> written;
    int calls = 0;
    bool refuse = false;
};

// Follows `run` with a DirectWriter; wait() runs in a coroutine of the io_context, as write_run's does.
class DirectFollower {
public:
    DirectFollower(asio::io_context& ioc_, std::shared_ptr<adk::server::Run> run)
        : ioc(ioc_), follower(std::move(run), ioc_.get_executor(), false, &writer)
    {
        writer.follower = &follower;
    }
    ~DirectFollower()
    {
        follower.stop();  // ends a wait under way before the follower goes
        ioc.poll();
        ioc.restart();
    }

    // Reads what the log holds, then waits for more.
    void wait()
    {
        woken = false;
        while (true) {
            follower.read(writer.cursor, 64 * 1024, writer.read);
            if (writer.read.empty())
                break;
            for (const auto& frame : writer.read.frames)
                writer.written.push_back(frame.event(writer.scratch)->text());
        }
        asio::co_spawn(
            ioc,
            [this]() -> asio::awaitable<void> {
                co_await follower.wait();
                woken = true;
            },
            asio::detached);
        ioc.poll();
        ioc.restart();
    }

    asio::io_context& ioc;
    DirectWriter writer;
    adk::server::Run::Follower follower;
    bool woken = false;
};

// The invocation's side: `texts` received one after another in one handler on the io_context's thread (one
// turn of its loop, as a model's read that brought several chunks); returns how many times the follower's writer
// had been called when the last receive() returned. Runs the io_context until it has nothing left to do.
int receive_on_io_thread(asio::io_context& ioc, adk::server::Run& run, DirectWriter& writer,
                         std::vector<std::string> texts)
{
    int calls_at_return = -1;
    asio::post(ioc, [&] {
        for (const auto& text : texts)
            run.receive(std::make_unique<adk::Event>("agent", adk::Content::model(text)));
        calls_at_return = writer.calls;
    });
    ioc.poll();
    ioc.restart();
    return calls_at_return;
}

}  // namespace

TEST_CASE("RunRegistry: on one thread, a waiting follower that writes for itself is handed what came once per turn "
          "of the loop, and woken only for what it does not write",
          "[server][runs][threads]")
{
    asio::io_context ioc;
    auto registry = std::make_shared<adk::server::RunRegistry>(ioc.get_executor(), adk::server::RunLimits(), 10, true);
    std::shared_ptr<adk::server::Run> run = registry->prepare(adk::server::RunOwner("app", "u", "s"));
    DirectFollower f(ioc, run);
    f.wait();
    CHECK(!f.woken);

    // Two events in one turn: handed over after it, together (one write for a burst).
    CHECK(receive_on_io_thread(ioc, *run, f.writer, {"one", "two"}) == 0);
    CHECK(f.writer.calls == 1);
    CHECK(f.writer.written == std::vector<std::string>{"one", "two"});
    CHECK(receive_on_io_thread(ioc, *run, f.writer, {"three"}) == 1);
    CHECK(f.writer.calls == 2);
    CHECK(f.writer.written == std::vector<std::string>{"one", "two", "three"});
    CHECK(!f.woken);  // its coroutine never ran

    f.writer.refuse = true;  // a client that reads slowly: the follower must write it itself
    (void)receive_on_io_thread(ioc, *run, f.writer, {"four"});
    CHECK(f.writer.calls == 3);
    CHECK(f.woken);
    f.writer.refuse = false;
    f.wait();  // reads "four" as write_run does when woken
    CHECK(f.writer.written == std::vector<std::string>{"one", "two", "three", "four"});

    // An event received on a thread that does not run the io_context wakes the follower; nothing is written
    // from that thread.
    std::thread other([&] { run->receive(std::make_unique<adk::Event>("agent", adk::Content::model("five"))); });
    other.join();
    ioc.poll();
    ioc.restart();
    CHECK(f.writer.calls == 3);
    CHECK(f.woken);
    f.wait();
    CHECK(f.writer.written == std::vector<std::string>{"one", "two", "three", "four", "five"});
    CHECK(!f.woken);
}

TEST_CASE("RunRegistry: a registry of many threads wakes every follower, even one that writes for itself",
          "[server][runs]")
{
    asio::io_context ioc;
    auto registry = std::make_shared<adk::server::RunRegistry>(ioc.get_executor(), adk::server::RunLimits(), 10, false);
    std::shared_ptr<adk::server::Run> run = registry->prepare(adk::server::RunOwner("app", "u", "s"));
    DirectFollower f(ioc, run);
    f.wait();
    CHECK(receive_on_io_thread(ioc, *run, f.writer, {"one"}) == 0);
    CHECK(f.writer.calls == 0);
    CHECK(f.woken);
    f.wait();
    CHECK(f.writer.written == std::vector<std::string>{"one"});
}
