// InMemoryMemoryService: keyword search over the sessions added to memory.
#include <adk/memory/in_memory_memory_service.hpp>

#include "support/run.hpp"

#include <catch2/catch.hpp>

namespace asio = boost::asio;
using adk::test::run;

namespace {

adk::Event said(std::string author, std::string text, double timestamp)
{
    adk::Event e(std::move(author), author == "user" ? adk::Content::user(text) : adk::Content::model(text));
    e.timestamp = timestamp;
    return e;
}

std::vector<std::string> texts(const adk::SearchMemoryResponse& r)
{
    std::vector<std::string> out;
    for (const auto& m : r.memories)
        out.push_back(m.content.parts.at(0).text.value_or(""));
    return out;
}

}  // namespace

TEST_CASE("InMemoryMemoryService finds events by word, per app and user, case ignored", "[memory]")
{
    asio::io_context ioc;
    run(ioc, [&]() -> asio::awaitable<void> {
        adk::InMemoryMemoryService memory;
        adk::Session trip("s1", "app", "alice");
        trip.events.push_back(said("user", "I am flying to Lisbon in May.", 10));
        trip.events.push_back(said("planner", "Booked: LISBON, 3 nights!", 11));
        adk::Event no_content;
        no_content.author = "planner";
        trip.events.push_back(no_content);  // no content: not remembered
        adk::Session food("s2", "app", "alice");
        food.events.push_back(said("user", "I like grilled sardines", 20));
        adk::Session bobs("s3", "app", "bob");
        bobs.events.push_back(said("user", "Lisbon is lovely", 30));
        co_await memory.add_session_to_memory(trip);
        co_await memory.add_session_to_memory(food);
        co_await memory.add_session_to_memory(bobs);

        auto lisbon = co_await memory.search_memory({"app", "alice", "what about lisbon?"});
        CHECK(texts(lisbon) == std::vector<std::string>{"I am flying to Lisbon in May.", "Booked: LISBON, 3 nights!"});
        REQUIRE(lisbon.memories.size() == 2);
        CHECK(lisbon.memories[1].author == "planner");
        CHECK(lisbon.memories[1].timestamp == 11);

        auto either = co_await memory.search_memory({"app", "alice", "Sardines or MAY"});
        CHECK(texts(either) == std::vector<std::string>{"I am flying to Lisbon in May.", "I like grilled sardines"});
        auto part_of_word = co_await memory.search_memory({"app", "alice", "Lis"});
        CHECK(part_of_word.memories.empty());  // whole words only
        auto no_words = co_await memory.search_memory({"app", "alice", "3 ?!"});
        CHECK(no_words.memories.empty());
        auto other_user = co_await memory.search_memory({"app", "carol", "lisbon"});
        CHECK(other_user.memories.empty());
        auto other_app = co_await memory.search_memory({"other", "alice", "lisbon"});
        CHECK(other_app.memories.empty());

        // Adding a session again replaces what was remembered of it.
        trip.events.erase(trip.events.begin());
        co_await memory.add_session_to_memory(trip);
        auto again = co_await memory.search_memory({"app", "alice", "lisbon"});
        CHECK(texts(again) == std::vector<std::string>{"Booked: LISBON, 3 nights!"});
    }());
}
