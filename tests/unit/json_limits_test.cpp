// What adk-cpp accepts as JSON it will store (adk/core/json_limits.hpp), the state limits (StateLimits), and
// the ids (adk/core/ids.hpp).
#include <adk/adk.hpp>
#include <adk/core/ids.hpp>
#include <adk/core/json_limits.hpp>
#include <adk/core/utf8.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

#include <limits>
#include <set>

#include <sys/wait.h>
#include <unistd.h>

namespace json = boost::json;

namespace {

// A value `depth` containers deep, objects and arrays in turn.
json::value nested(std::size_t depth)
{
    json::value v = "x";
    for (std::size_t i = 0; i < depth; ++i) {
        if (i % 2 == 0)
            v = json::object{{"k", std::move(v)}};
        else
            v = json::array{std::move(v)};
    }
    return v;
}

// Whether the event's JSON, as written, parses with `max_depth`.
bool parses_within(const adk::Event& e, std::size_t max_depth)
{
    json::parse_options options;
    options.max_depth = max_depth;
    boost::system::error_code ec;
    json::parse(adk::to_json_text(e), ec, {}, options);
    return !ec;
}

}  // namespace

TEST_CASE("check_json: depth, numbers JSON cannot hold, and a size never below the JSON's", "[json]")
{
    CHECK_NOTHROW(adk::check_json(nested(64), "v"));
    CHECK_THROWS_WITH(adk::check_json(nested(65), "v"), Catch::Contains("'v' nests deeper than 64 levels"));
    CHECK_NOTHROW(adk::check_json(nested(3), "v", 3));
    CHECK_THROWS(adk::check_json(nested(4), "v", 3));
    const json::value infinite = json::array{1, json::object{{"x", std::numeric_limits<double>::infinity()}}};
    CHECK_THROWS_WITH(adk::check_json(infinite, "v"), Catch::Contains("too large for JSON"));
    CHECK_THROWS(adk::check_json(json::value(std::numeric_limits<double>::quiet_NaN()), "v"));
    const json::value sample = json::parse(R"({"a": [1, -20, 3.25, true, null, "q\"\\\n\u0001"], "b": {"c": 18446744073709551615}})");
    CHECK(adk::check_json(sample, "v") >= json::serialize(sample).size());
    CHECK(adk::check_json(json::value("abc"), "v") == 5);

    boost::system::error_code ec;
    const std::string deep(adk::max_read_json_depth, '[');
    adk::parse_json(deep + std::string(adk::max_read_json_depth, ']'), ec);
    CHECK(!ec);
    adk::parse_json("[" + deep + std::string(adk::max_read_json_depth + 1, ']'), ec);
    CHECK(ec == json::error::too_deep);
}

TEST_CASE("check_event_json: each member is measured at the depth it has in the event's JSON", "[json]")
{
    // For each place an event holds JSON of its users: the deepest value accepted is exactly the one whose
    // event parses within max_json_depth, and one level more is refused.
    using Place = std::function<void(adk::Event&, json::value)>;
    const std::vector<std::pair<std::string, Place>> places{
        {"state", [](adk::Event& e, json::value v) { e.actions.state_delta["k"] = std::move(v); }},
        {"custom metadata", [](adk::Event& e, json::value v) { e.custom_metadata["k"] = std::move(v); }},
        {"event extra", [](adk::Event& e, json::value v) { e.extra["groundingMetadata"] = std::move(v); }},
        {"actions extra", [](adk::Event& e, json::value v) { e.actions.extra["other"] = std::move(v); }},
        {"agent state", [](adk::Event& e, json::value v) { e.actions.agent_state = json::object{{"k", std::move(v)}}; }},
        {"call args", [](adk::Event& e, json::value v) {
             e.content->parts.push_back(adk::Part::from_function_call("f", {{"k", std::move(v)}}, "c"));
         }},
        {"response", [](adk::Event& e, json::value v) {
             e.content->parts.push_back(adk::Part::from_function_response("f", {{"k", std::move(v)}}, "c"));
         }},
        {"part extra", [](adk::Event& e, json::value v) { e.content->parts[0].extra["videoMetadata"] = std::move(v); }},
        {"usage", [](adk::Event& e, json::value v) {
             e.usage_metadata.emplace();
             e.usage_metadata->extra["promptTokensDetails"] = std::move(v);
         }},
    };
    for (const auto& [name, place] : places) {
        INFO(name);
        std::size_t deepest = 0;
        for (std::size_t depth = 1; depth <= adk::max_json_depth; ++depth) {
            adk::Event e("agent", adk::Content::model("hi"));
            place(e, nested(depth));
            if (!parses_within(e, adk::max_json_depth))
                break;
            deepest = depth;
        }
        REQUIRE(deepest > 50);
        adk::Event fits("agent", adk::Content::model("hi"));
        place(fits, nested(deepest));
        CHECK_NOTHROW(adk::check_event_json(fits));
        adk::Event deeper("agent", adk::Content::model("hi"));
        place(deeper, nested(deepest + 1));
        CHECK_THROWS_AS(adk::check_event_json(deeper), adk::Error);
        adk::Event infinite("agent", adk::Content::model("hi"));
        place(infinite, json::value(-std::numeric_limits<double>::infinity()));
        CHECK_THROWS_WITH(adk::check_event_json(infinite), Catch::Contains("too large for JSON"));
    }
}

TEST_CASE("check_state_delta: keys, depth and sizes, and state_bytes_after counts what a delta replaces", "[json][state]")
{
    adk::StateLimits limits;
    limits.max_value_bytes = 100;
    limits.max_delta_bytes = 150;
    CHECK_NOTHROW(adk::check_state_delta({{"k", std::string(90, 'x')}}, limits));
    auto code_of = [](json::object delta, const adk::StateLimits& under = adk::StateLimits()) {
        try {
            adk::check_state_delta(delta, under);
        } catch (const adk::Error& e) {
            return e.code();
        }
        return boost::system::error_code();
    };
    CHECK(code_of({{"k", std::string(100, 'x')}}, limits) == adk::errc::too_large);
    CHECK(code_of({{"a", std::string(80, 'x')}, {"b", std::string(80, 'x')}}, limits) == adk::errc::too_large);
    CHECK(code_of({{"k", nested(adk::max_state_value_depth)}}) == boost::system::error_code());
    CHECK(code_of({{"k", nested(adk::max_state_value_depth + 1)}}) == adk::errc::invalid_argument);
    CHECK(code_of({{"a/b", 1}}) == adk::errc::invalid_argument);

    const json::object state{{"a", std::string(50, 'x')}, {"b", 1}};
    const std::size_t now = adk::check_json(json::value(state), "s");
    CHECK(adk::state_bytes_after(state, {}) == now);
    CHECK(adk::state_bytes_after(state, {{"a", "y"}}) < now);
    CHECK(adk::state_bytes_after(state, {{"c", std::string(50, 'x')}}) > now + 50);
    CHECK_THROWS_WITH(adk::check_scope_bytes(limits, "the app 'x'", limits.max_scope_bytes + 1),
                      Catch::Contains("max_scope_bytes"));
}

TEST_CASE("new_uuid: version 4 UUIDs, unique, and a forked child never repeats its parent's", "[ids]")
{
    std::set<std::string> seen;
    for (int i = 0; i < 20000; ++i) {
        const std::string id = adk::new_uuid();
        REQUIRE(id.size() == 36);
        CHECK(id[14] == '4');
        CHECK(std::string_view("89ab").find(id[19]) != std::string_view::npos);
        CHECK(seen.insert(id).second);
    }
    // The parent has bytes buffered; a child that used them would hand out the ids the parent hands out next.
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        const std::string id = adk::new_uuid();
        const ssize_t written = ::write(fds[1], id.data(), id.size());
        ::_exit(written == 36 ? 0 : 1);
    }
    ::close(fds[1]);
    char buffer[36];
    ssize_t got = 0;
    while (got < 36) {
        const ssize_t n = ::read(fds[0], buffer + got, static_cast<std::size_t>(36 - got));
        if (n <= 0)
            break;
        got += n;
    }
    ::close(fds[0]);
    int status = 0;
    ::waitpid(child, &status, 0);
    REQUIRE(got == 36);
    const std::string from_child(buffer, 36);
    const std::string next = adk::new_uuid();
    CHECK(from_child != next);
    CHECK(seen.count(from_child) == 0);
}

TEST_CASE("utf8_prefix_size: a cut at a byte bound never splits a UTF-8 sequence", "[core]")
{
    using adk::utf8_prefix_size;
    const std::string text = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x99\x82";  // a, é (2 bytes), € (3), 🙂 (4)
    CHECK(utf8_prefix_size(text, 100) == text.size());
    CHECK(utf8_prefix_size(text, text.size()) == text.size());
    CHECK(utf8_prefix_size(text, 0) == 0);
    CHECK(utf8_prefix_size(text, 1) == 1);
    CHECK(utf8_prefix_size(text, 2) == 1);  // inside é: before it
    CHECK(utf8_prefix_size(text, 3) == 3);
    CHECK(utf8_prefix_size(text, 4) == 3);
    CHECK(utf8_prefix_size(text, 5) == 3);
    CHECK(utf8_prefix_size(text, 6) == 6);
    for (std::size_t n = 6; n < 10; ++n)
        CHECK(utf8_prefix_size(text, n) == 6);
    // Bytes that are not UTF-8 are counted as they are: a run of continuation bytes alone is cut to nothing.
    CHECK(utf8_prefix_size("\x80\x80\x80", 2) == 0);
    CHECK(utf8_prefix_size("ab\xFF\xFF", 3) == 3);
}
