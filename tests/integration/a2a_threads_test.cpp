// adk::a2a::Server on an io_context run by four threads (TSan runs it): tasks streamed, sent, continued, listed and
// read by clients on other threads at once, each task's state followed by the server while clients come and go.
#include <adk/a2a/server.hpp>
#include <adk/a2a/types.hpp>
#include <adk/core/ids.hpp>
#include <adk/net/http_client.hpp>
#include <adk/server/api_server.hpp>

#include "support/a2a_apps.hpp"
#include "support/api_client.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_to.hpp>

#include <catch2/catch.hpp>

#include <exception>
#include <future>
#include <string>
#include <thread>

namespace a2a = adk::a2a;
namespace asio = boost::asio;
namespace json = boost::json;
namespace apps = adk::test::a2a_apps;

namespace {

asio::awaitable<json::value> post_json(adk::net::HttpClient& client, std::string url, json::value body)
{
    adk::net::HttpRequest req("POST", std::move(url));
    req.set("content-type", "application/json");
    req.body = json::serialize(body);
    adk::net::HttpResponse res = co_await client.send(std::move(req));
    const std::string text = co_await res.read_all();
    co_return json::parse(text);
}

json::value message(std::string_view text, std::string_view task_id = {}, json::value part = nullptr)
{
    json::object m{{"messageId", adk::new_uuid()}, {"role", "ROLE_USER"},
                   {"parts", json::array{part.is_null() ? json::value(json::object{{"text", text}}) : part}}};
    if (!task_id.empty())
        m["taskId"] = task_id;
    return json::object{{"message", std::move(m)}};
}

}  // namespace

TEST_CASE("A2A on four threads: tasks streamed, answered, listed and read at once", "[a2a][server][threads]")
{
    constexpr int clients_count = 12;
    asio::io_context ioc(4);
    auto guard = asio::make_work_guard(ioc);
    // An app per client: a scripted model answers its turns in order, so clients at once get models of their own.
    std::vector<adk::server::App> served;
    for (int c = 0; c < clients_count; ++c)
        served.push_back(c % 2 == 0 ? adk::server::App{"weather" + std::to_string(c), apps::weather(1)}
                                    : adk::server::App{"bank" + std::to_string(c), apps::bank(1)});
    adk::server::ApiServer server(ioc.get_executor(), std::move(served),
                                  adk::test::options_with(std::make_shared<adk::InMemorySessionService>()));
    a2a::Server a2a_server(server);
    a2a_server.mount();
    server.start();
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i)
        threads.emplace_back([&ioc] { ioc.run(); });

    asio::thread_pool pool(2);
    adk::net::HttpClient client(adk::test::no_retries());
    const std::string base = server.base_url() + "/a2a/";
    std::vector<std::future<int>> done;
    for (int c = 0; c < clients_count; ++c) {
        auto one = [&client, &base, c]() -> asio::awaitable<int> {
            const std::string app = (c % 2 == 0 ? "weather" : "bank") + std::to_string(c);
            if (c % 2 == 0) {  // a weather task, streamed; then the task read and the tasks listed
                adk::net::HttpRequest req("POST", base + app + "/message:stream");
                req.set("content-type", "application/json");
                req.body = json::serialize(message("Weather?"));
                adk::net::HttpResponse res = co_await client.send(std::move(req));
                adk::test::FrameReader reader(res);
                const std::vector<adk::test::Frame> frames = co_await reader.read_all();
                if (frames.size() < 4)
                    co_return 0;
                const auto task = std::get<a2a::Task>(a2a::stream_response_from_json(frames.front().json()));
                adk::net::HttpRequest get("GET", base + app + "/tasks/" + task.id);
                adk::net::HttpResponse got = co_await client.send(std::move(get));
                const std::string got_text = co_await got.read_all();
                const auto now = json::value_to<a2a::Task>(json::parse(got_text));
                adk::net::HttpRequest list("GET", base + app + "/tasks?pageSize=100");
                adk::net::HttpResponse listed = co_await client.send(std::move(list));
                const std::string listed_text = co_await listed.read_all();
                const auto tasks = json::value_to<a2a::ListTasksResponse>(json::parse(listed_text));
                co_return now.status.state == a2a::TaskState::completed && now.artifacts.size() == 1 &&
                                  tasks.total_size == 1
                              ? 1
                              : 0;
            }
            // A bank task: it waits for its client, who answers it.
            const json::value asked = co_await post_json(client, base + app + "/message:send", message("Send 5 euros."));
            const auto task = json::value_to<a2a::Task>(asked.at("task"));
            if (task.status.state != a2a::TaskState::input_required || !task.status.message)
                co_return 0;
            const json::object& call = std::get<a2a::Part::Data>(task.status.message->parts.at(0).content).value.as_object();
            const json::value answer = json::object{
                {"data", json::object{{"id", call.at("id")}, {"name", "ask_for_approval"},
                                      {"response", json::object{{"status", "approved"}}}}},
                {"metadata", json::object{{"adk_type", "function_response"}}}};
            const json::value done_json =
                co_await post_json(client, base + app + "/message:send", message("", task.id, answer));
            const auto finished = json::value_to<a2a::Task>(done_json.at("task"));
            co_return finished.status.state == a2a::TaskState::completed && finished.id == task.id ? 1 : 0;
        };
        done.push_back(asio::co_spawn(pool, one, asio::use_future));
    }
    int ok = 0;
    std::vector<std::string> failures;  // what a client's coroutine threw (kept, so that the threads are joined)
    for (auto& f : done) {
        try {
            ok += f.get();
        } catch (const std::exception& e) {
            failures.emplace_back(e.what());
        }
    }
    pool.join();
    server.stop();
    guard.reset();
    for (auto& t : threads)
        t.join();
    for (const std::string& failure : failures)
        FAIL_CHECK("a client failed: " << failure);
    CHECK(ok == clients_count);
}
