// The A2A server the @a2a-js/sdk clients talk to (tests/interop/run_a2a.sh): an ApiServer with adk::a2a mounted,
// serving four apps whose models are scripted (ScriptedModel), so that every answer is known:
//   weather  a call to get_weather, then "It is sunny in Paris." in chunks, for every task
//   bank     a long-running call (ask_for_approval) that waits for its client; the answer: "Approved: sent."
//   gated    a tool that waits until the file GATE_FILE exists, then "Through the gate." (a stream dropped and
//            subscribed again while it waits)
//   broken   a model that fails: the task FAILS with the model's error
//
//   a2a_interop_server GATE_FILE [WEBHOOK_PREFIX]   webhooks allowed under the prefix (push notifications)
//
// Prints "listening on http://127.0.0.1:PORT" once it serves; stops on SIGTERM or SIGINT.
#include <adk/a2a/server.hpp>
#include <adk/adk.hpp>
#include <adk/server/api_server.hpp>
#include <adk/sessions/in_memory_session_service.hpp>

#include "support/a2a_apps.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <filesystem>
#include <iostream>

namespace asio = boost::asio;
namespace apps = adk::test::a2a_apps;

namespace {

constexpr int tasks_per_app = 50;  // more than the clients send

// Waits until the file exists.
asio::awaitable<void> file_gate(std::filesystem::path gate)
{
    asio::steady_timer timer(co_await asio::this_coro::executor);
    while (!std::filesystem::exists(gate)) {
        timer.expires_after(std::chrono::milliseconds(10));
        auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
        if (ec)
            throw adk::Error(adk::errc::cancelled, "the wait for the gate was cancelled");
    }
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc != 2 && argc != 3) {
        std::cerr << "usage: a2a_interop_server GATE_FILE [WEBHOOK_PREFIX]\n";
        return 2;
    }
    asio::io_context ioc(1);
    adk::server::ApiServerOptions options;
    options.session_service = std::make_shared<adk::InMemorySessionService>();
    options.http.port = 0;
    adk::server::ApiServer server(ioc.get_executor(),
                                  {{"weather", apps::weather(tasks_per_app)},
                                   {"bank", apps::bank(tasks_per_app)},
                                   {"gated", apps::gated(tasks_per_app, [gate = std::filesystem::path(argv[1])] {
                                        return file_gate(gate);
                                    })},
                                   {"broken", apps::broken(tasks_per_app)}},
                                  options);
    adk::a2a::ServerOptions a2a_options;
    if (argc == 3)
        a2a_options.push_allowed_urls = {argv[2]};
    adk::a2a::Server a2a(server, a2a_options);
    a2a.mount();
    server.start();
    std::cout << "listening on " << server.base_url() << std::endl;
    asio::signal_set signals(ioc, SIGTERM, SIGINT);
    signals.async_wait([&](boost::system::error_code, int) {
        server.stop();
        ioc.stop();
    });
    ioc.run();
    return 0;
}
