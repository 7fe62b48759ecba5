#include "conformance/memory_service_suite.hpp"

#include "support/run.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_future.hpp>

#include <catch2/catch.hpp>

#include <future>
#include <string>
#include <vector>

namespace adk::test {

namespace {

Event said(std::string author, std::string text, double timestamp)
{
    Event e(author, author == "user" ? Content::user(text) : Content::model(text));
    e.id = author + "-" + std::to_string(timestamp);
    e.timestamp = timestamp;
    return e;
}

std::vector<std::string> texts(const SearchMemoryResponse& r)
{
    std::vector<std::string> out;
    for (const auto& m : r.memories)
        out.push_back(m.content.parts.at(0).text.value_or(""));
    return out;
}

asio::awaitable<SearchMemoryResponse> search(MemoryService& memory, std::string app, std::string user, std::string query)
{
    SearchMemoryRequest request(std::move(app), std::move(user), std::move(query));
    co_return co_await memory.search_memory(std::move(request));
}

// Alice's two sessions and Bob's one, as the searches below expect them.
asio::awaitable<Session> remember_trips(MemoryService& memory)
{
    Session trip("s1", "app", "alice");
    trip.events.push_back(said("user", "I am flying to Lisbon in May.", 1000));
    trip.events.push_back(said("planner", "Booked: LISBON, three nights!", 1001));
    Event call("planner", Content("model", {Part::from_function_call("book", json::object{{"city", "Lisbon"}})}));
    call.timestamp = 1002;
    trip.events.push_back(call);  // no text: no query finds it
    Event no_content;
    no_content.author = "planner";
    no_content.timestamp = 1003;
    trip.events.push_back(no_content);
    Session food("s2", "app", "alice");
    food.events.push_back(said("user", "I like grilled sardines", 900));  // older than the trip
    Event photo("user", Content("user", {Part::from_text("my sardines photo"),
                                          Part::from_bytes(std::string("\x89PNG", 4), "image/png")}));
    photo.timestamp = 901;
    food.events.push_back(photo);
    Session bobs("s3", "app", "bob");
    bobs.events.push_back(said("user", "Lisbon is lovely", 1100));
    Session other_app("s1", "other", "alice");
    other_app.events.push_back(said("user", "Lisbon again", 1200));
    co_await memory.add_session_to_memory(trip);
    co_await memory.add_session_to_memory(food);
    co_await memory.add_session_to_memory(bobs);
    co_await memory.add_session_to_memory(other_app);
    co_return trip;
}

void words_and_scopes(MemoryService& memory)
{
    asio::io_context ioc;
    run(ioc, [&]() -> asio::awaitable<void> {
        Session trip = co_await remember_trips(memory);

        auto lisbon = co_await search(memory, "app", "alice", "what about lisbon?");
        CHECK(texts(lisbon) == std::vector<std::string>{"I am flying to Lisbon in May.", "Booked: LISBON, three nights!"});
        REQUIRE(lisbon.memories.size() == 2);
        CHECK(lisbon.memories[0].author == "user");
        CHECK(lisbon.memories[0].timestamp == 1000);
        CHECK(lisbon.memories[1].author == "planner");
        CHECK(lisbon.memories[1].timestamp == 1001);
        CHECK(lisbon.memories[1].content.role == "model");

        // Any word of the query; oldest first, across sessions.
        auto either = co_await search(memory, "app", "alice", "SARDINES may");
        CHECK(texts(either) == std::vector<std::string>{"I like grilled sardines", "my sardines photo",
                                                         "I am flying to Lisbon in May."});
        REQUIRE(either.memories.size() == 3);
        CHECK(either.memories[1].content.parts.size() == 2);  // the whole content comes back, bytes too
        CHECK(either.memories[1].content.parts.at(1).inline_data->data == std::string("\x89PNG", 4));

        auto part_of_word = co_await search(memory, "app", "alice", "Lis");
        CHECK(part_of_word.memories.empty());  // whole words only
        auto no_words = co_await search(memory, "app", "alice", " ?! ... ");
        CHECK(no_words.memories.empty());
        auto empty = co_await search(memory, "app", "alice", "");
        CHECK(empty.memories.empty());
        auto other_user = co_await search(memory, "app", "carol", "lisbon");
        CHECK(other_user.memories.empty());
        auto bob = co_await search(memory, "app", "bob", "lisbon");
        CHECK(texts(bob) == std::vector<std::string>{"Lisbon is lovely"});
        auto other_app = co_await search(memory, "other", "alice", "lisbon");
        CHECK(texts(other_app) == std::vector<std::string>{"Lisbon again"});
        auto no_app = co_await search(memory, "nowhere", "alice", "lisbon");
        CHECK(no_app.memories.empty());

        // Adding a session again replaces what was remembered of it.
        trip.events.erase(trip.events.begin());
        co_await memory.add_session_to_memory(trip);
        auto again = co_await search(memory, "app", "alice", "lisbon");
        CHECK(texts(again) == std::vector<std::string>{"Booked: LISBON, three nights!"});
        Session emptied("s1", "app", "alice");
        co_await memory.add_session_to_memory(emptied);
        auto gone = co_await search(memory, "app", "alice", "lisbon");
        CHECK(gone.memories.empty());
    }());
}

// A query is the user's text: quotes, operators and punctuation are words or nothing, never syntax.
void hostile_queries(MemoryService& memory)
{
    asio::io_context ioc;
    run(ioc, [&]() -> asio::awaitable<void> {
        co_await remember_trips(memory);
        const std::vector<std::string> queries{"\"lisbon", "lisbon\"", "lisbon*", "NEAR(lisbon may)", "lisbon AND", "OR lisbon",
                                  "NOT lisbon", "-lisbon", "^lisbon", "lisbon:", "{lisbon}", "(lisbon", "'lisbon'",
                                  "lisbon\\", "lisbon; DROP TABLE x", std::string("lis\0bon lisbon", 14)};
        for (const std::string& query : queries) {
            auto found = co_await search(memory, "app", "alice", query);
            CHECK(found.memories.size() == 2);
        }
        auto operators_only = co_await search(memory, "app", "alice", "AND OR NOT NEAR");
        CHECK(operators_only.memories.empty());  // words that no remembered event holds
    }());
}

// Sessions added and searched from four threads at once: every session's events are found.
void concurrent_use(const MemoryServiceFactory& make)
{
    std::shared_ptr<MemoryService> memory = make();
    asio::thread_pool pool(4);
    constexpr int sessions = 8;  // 40 events: within any backend's result limit
    std::vector<std::future<void>> done;
    for (int s = 0; s < sessions; ++s) {
        auto writer = [memory, s]() -> asio::awaitable<void> {
            Session session("s" + std::to_string(s), "app", "u");
            for (int i = 0; i < 5; ++i)
                session.events.push_back(said("user", "note about pelicans number " + std::to_string(i), s * 10 + i));
            co_await memory->add_session_to_memory(session);
            (void)co_await search(*memory, "app", "u", "pelicans");
        };
        done.push_back(asio::co_spawn(pool, writer, asio::use_future));
    }
    for (auto& f : done)
        f.get();
    auto all = asio::co_spawn(pool, search(*memory, "app", "u", "pelicans"), asio::use_future).get();
    CHECK(all.memories.size() == sessions * 5);
    for (std::size_t i = 1; i < all.memories.size(); ++i)
        CHECK(all.memories[i - 1].timestamp <= all.memories[i].timestamp);
    pool.join();  // a service's worker may still be letting go of the pool, which it posted to
}

}  // namespace

void memory_service_suite(const MemoryServiceFactory& make)
{
    SECTION("whole words, case ignored, any word of the query; per app and user; oldest first; re-adding replaces")
    {
        words_and_scopes(*make());
    }
    SECTION("quotes, operators and punctuation in a query are never syntax")
    {
        hostile_queries(*make());
    }
    SECTION("sessions added and searched from four threads at once")
    {
        concurrent_use(make);
    }
}

}  // namespace adk::test
