// A custom agent run by the Runner: one coroutine that streams a reply word by word as partial events,
// then commits the whole reply with a state change. The program prints the stream as it arrives.
//
//   build/release/samples/custom_agent "What is adk-cpp?"
#include <adk/adk.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <iostream>
#include <sstream>

namespace asio = boost::asio;
using namespace std::chrono_literals;

// Answers every message with the same words, streamed the way a model streams tokens.
class Narrator final : public adk::Agent {
public:
    Narrator() : adk::Agent("narrator", "Tells what adk-cpp is, word by word.") {}

private:
    asio::awaitable<void> run_impl(adk::InvocationContext& ctx, adk::EventSink& out) override
    {
        std::istringstream words("adk-cpp runs agents as C++20 coroutines. Every event streams through a "
                                 "bounded channel, so a slow reader slows the agent instead of filling memory.");
        asio::steady_timer pause(co_await asio::this_coro::executor);
        std::string full;
        for (std::string word; words >> word;) {
            std::string delta = (full.empty() ? "" : " ") + word;
            full += delta;
            adk::Event chunk = ctx.make_event(adk::Content::model(delta));
            chunk.partial = true;  // shown at once, never stored
            co_await out.emit(std::move(chunk));
            pause.expires_after(40ms);
            co_await pause.async_wait(asio::use_awaitable);
        }
        adk::Event answer = ctx.make_event(adk::Content::model(full));
        answer.turn_complete = true;
        std::optional<boost::json::value> seen = ctx.state("user:questions");
        answer.actions.state_delta["user:questions"] = (seen ? seen->to_number<std::int64_t>() : 0) + 1;
        co_await out.emit(std::move(answer));  // stored in the session before emit returns
    }
};

asio::awaitable<void> chat(std::string question)
{
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::Runner runner({.app_name = "sample", .agent = std::make_shared<Narrator>(), .session_service = sessions});
    adk::Session session = co_await sessions->create_session({"sample", "you"});

    std::cout << "you: " << question << "\nnarrator:";
    auto events = co_await runner.run("you", session.id, adk::Content::user(question));
    while (auto ev = co_await events.next()) {
        if (ev->partial)
            std::cout << ev->text() << std::flush;
        else if (ev->is_final_response())
            std::cout << "\n[final event " << ev->id << ", " << ev->text().size() << " characters]\n";
    }
    auto stored = co_await sessions->get_session({"sample", "you", session.id});
    std::cout << "session " << stored->id << ": " << stored->events.size()
              << " events stored, user:questions = " << stored->state["user:questions"] << "\n";
}

int main(int argc, char** argv)
{
    std::string question = argc > 1 ? argv[1] : "What is adk-cpp?";
    asio::io_context ioc;
    // An error ends the program with its message (std::terminate prints what() of the exception).
    asio::co_spawn(ioc, chat(question), [](std::exception_ptr e) {
        if (e)
            std::rethrow_exception(e);
    });
    ioc.run();
}
