// Tools: JSON schemas (checking, generating from described structs, converting), FunctionTool.
#include <adk/adk.hpp>

#include "support/agents.hpp"
#include "support/run.hpp"

#include <boost/asio/strand.hpp>
#include <boost/describe/class.hpp>
#include <boost/describe/enum.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <catch2/catch.hpp>

namespace asio = boost::asio;
namespace json = boost::json;
using adk::test::run;

namespace weather {
enum class Units { celsius, fahrenheit };
BOOST_DESCRIBE_ENUM(Units, celsius, fahrenheit)

struct Place {
    std::string city;
    std::optional<std::string> country;
};
BOOST_DESCRIBE_STRUCT(Place, (), (city, country))

struct Args {
    Place place;
    int days = 1;
    std::optional<Units> units;
    std::vector<std::string> fields;
    bool detailed = false;
    double threshold = 0;
};
BOOST_DESCRIBE_STRUCT(Args, (), (place, days, units, fields, detailed, threshold))
}  // namespace weather

TEST_CASE("a schema is generated from a described struct", "[tools]")
{
    json::value schema = adk::json_schema_for<weather::Args>({{"days", "How many days to forecast."}});
    json::value expected = json::parse(R"({
        "type": "object",
        "properties": {
            "place": {"type": "object", "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
                      "required": ["city"]},
            "days": {"type": "integer", "description": "How many days to forecast."},
            "units": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "fields": {"type": "array", "items": {"type": "string"}},
            "detailed": {"type": "boolean"},
            "threshold": {"type": "number"}
        },
        "required": ["place", "days", "fields", "detailed", "threshold"]
    })");
    CHECK(schema == expected);
}

TEST_CASE("arguments convert into the described struct", "[tools]")
{
    auto args = adk::from_json<weather::Args>(json::parse(
        R"({"place": {"city": "Paris"}, "days": 3, "units": "fahrenheit", "fields": ["sky", "wind"],
            "detailed": true, "threshold": 0.5})"));
    CHECK(args.place.city == "Paris");
    CHECK(!args.place.country);
    CHECK(args.days == 3);
    CHECK(args.units == weather::Units::fahrenheit);
    CHECK(args.fields == std::vector<std::string>{"sky", "wind"});
    CHECK(args.detailed);
    CHECK(args.threshold == 0.5);
    CHECK_THROWS_WITH(adk::from_json<weather::Args>(json::parse(R"({"place": {}, "days": 1})")),
                      Catch::Contains("'arguments.place.city' must be present"));
    CHECK_THROWS_WITH(adk::from_json<weather::Place>(json::parse(R"({"city": 5})")),
                      Catch::Contains("'arguments.city' must be a string"));
}

TEST_CASE("schema_mismatch names the first argument that does not fit", "[tools]")
{
    json::value schema = adk::json_schema_for<weather::Args>();
    auto check = [&](const char* args) { return adk::schema_mismatch(schema, json::parse(args)).value_or("fits"); };
    const char* good = R"({"place": {"city": "Paris"}, "days": 2, "fields": [], "detailed": false, "threshold": 1})";
    CHECK(check(good) == "fits");
    CHECK(check(R"({"days": 2, "fields": [], "detailed": false, "threshold": 1})") == "'place' is required");
    CHECK(check(R"({"place": {"city": "P"}, "days": "two", "fields": [], "detailed": false, "threshold": 1})") ==
          R"('days' must be an integer, got "two")");
    CHECK(check(R"({"place": {"city": 1}, "days": 2, "fields": [], "detailed": false, "threshold": 1})") ==
          "'place.city' must be a string, got 1");
    CHECK(check(R"({"place": {"city": "P"}, "days": 2, "fields": [1], "detailed": false, "threshold": 1})") ==
          "'fields[0]' must be a string, got 1");
    CHECK(check(R"({"place": {"city": "P"}, "days": 2, "fields": [], "detailed": false, "threshold": 1,
                    "units": "kelvin"})") == R"('units' must be one of ["celsius","fahrenheit"], got "kelvin")");
    CHECK(check(R"([1])") == R"(the arguments must be an object, got [1])");
    json::value strict = json::parse(R"({"type": "OBJECT", "properties": {"a": {"type": "STRING"}},
                                         "additionalProperties": false})");
    CHECK(adk::schema_mismatch(strict, json::parse(R"({"a": "x", "b": 1})")) == "'b' is not an argument of this tool");
    CHECK(adk::schema_mismatch(strict, json::parse(R"({"a": 2})")) == "'a' must be a string, got 2");
}

namespace {
struct ToolFixture {
    asio::io_context ioc;
    adk::InvocationOptions options;
    ToolFixture()
    {
        options.app_name = "app";
        options.user_id = "u";
        options.session = adk::Session("s", "app", "u");
        options.session.state["user:city"] = "Oslo";
        options.session_service = std::make_shared<adk::InMemorySessionService>();
        options.artifact_service = std::make_shared<adk::InMemoryArtifactService>();
        options.executor = asio::make_strand(ioc);
    }
    json::value call(adk::Tool& tool, const char* args, adk::EventActions* actions = nullptr)
    {
        adk::InvocationContext ctx(options);
        adk::ToolContext tc(ctx, "call-1");
        json::value result = run(ioc, tool.run(tc, json::parse(args).as_object()));
        if (actions)
            *actions = tc.actions();
        return result;
    }
};
}  // namespace

TEST_CASE("FunctionTool with typed arguments: schema, conversion, state and artifacts", "[tools]")
{
    ToolFixture f;
    auto tool = adk::FunctionTool::create<weather::Place>(
        "get_weather", "Returns the weather.",
        [](adk::ToolContext& ctx, weather::Place place) -> asio::awaitable<json::value> {
            std::optional<json::value> home = ctx.state("user:city");
            ctx.set_state("last_city", place.city);
            co_await ctx.save_artifact("report.txt", adk::Part::from_text("sunny in " + place.city));
            co_return json::object{{"city", place.city}, {"home", home ? *home : json::value()},
                                   {"call", ctx.function_call_id()}};
        });
    auto declaration = tool->declaration();
    REQUIRE(declaration);
    CHECK(declaration->name == "get_weather");
    CHECK(declaration->parameters.at("required").at(0) == "city");

    adk::EventActions actions;
    json::value result = f.call(*tool, R"({"city": "Paris"})", &actions);
    CHECK(result == json::parse(R"({"city": "Paris", "home": "Oslo", "call": "call-1"})"));
    CHECK(actions.state_delta.at("last_city") == "Paris");
    CHECK(actions.artifact_delta.at("report.txt") == 0);

    json::value bad = f.call(*tool, R"({"town": "Paris"})");
    CHECK_THAT(std::string(bad.at("error").as_string()),
               Catch::Contains("Invalid arguments for get_weather: 'city' is required"));
}

TEST_CASE("FunctionTool with an explicit schema, and without an artifact service", "[tools]")
{
    ToolFixture f;
    int calls = 0;
    auto tool = adk::FunctionTool::create(
        "add", "Adds.", json::parse(R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]})"),
        [&](adk::ToolContext& ctx, json::object args) -> asio::awaitable<json::value> {
            ++calls;
            if (args.contains("save"))
                co_await ctx.save_artifact("x", adk::Part::from_text("x"));
            co_return args.at("a").as_int64() + args.at("b").as_int64();
        });
    CHECK(f.call(*tool, R"({"a": 2, "b": 3})") == 5);
    CHECK(f.call(*tool, R"({"a": 2})").at("error").as_string().find("'b' is required") != json::string::npos);
    CHECK(calls == 1);  // the function never saw the bad arguments
    f.options.artifact_service = nullptr;
    CHECK_THROWS_WITH(f.call(*tool, R"({"a": 1, "b": 1, "save": true})"), Catch::Contains("no artifact service"));
    CHECK_THROWS_WITH(adk::FunctionTool::create("", "d", json::value(), nullptr), Catch::Contains("needs a name"));
    CHECK_THROWS_WITH(adk::FunctionTool::create("t", "d", json::value(), nullptr), Catch::Contains("no function"));
    CHECK_THROWS_WITH(adk::FunctionTool::create("t", "d", json::value(1),
                                                [](adk::ToolContext&, json::object) -> asio::awaitable<json::value> {
                                                    co_return nullptr;
                                                }),
                      Catch::Contains("JSON schema object"));
}

TEST_CASE("numbers out of any range are refused, never cast (UBSan checks the casts)", "[tools]")
{
    json::value schema = json::parse(R"({"type":"object","properties":{"n":{"type":"integer"},"x":{"type":"number"}}})");
    CHECK(adk::schema_mismatch(schema, json::parse(R"({"n":3.0})")) == std::nullopt);
    CHECK(adk::schema_mismatch(schema, json::parse(R"({"n":1e300})")) == std::nullopt);  // a whole number, just large
    CHECK(adk::schema_mismatch(schema, json::parse(R"({"n":1e400})")).has_value());     // infinity is none
    CHECK(adk::schema_mismatch(schema, json::parse(R"({"x":-1e400})")).has_value());
    CHECK(adk::schema_mismatch(schema, json::parse(R"({"n":2.5})")).has_value());

    // A described struct's int and double members: values that do not fit are refused with the path.
    auto convert = [](const char* text) -> std::string {
        try {
            (void)adk::from_json<weather::Args>(json::parse(text));
        } catch (const adk::Error& e) {
            return e.message();
        }
        return "accepted";
    };
    auto args = [](const std::string& days, const std::string& threshold) {
        return R"({"place":{"city":"P"},"fields":[],"detailed":false,"days":)" + days + R"(,"threshold":)" +
               threshold + "}";
    };
    CHECK(convert(args("3.0", "0.5").c_str()) == "accepted");
    CHECK_THAT(convert(args("1e300", "0").c_str()), Catch::Contains("days"));
    CHECK_THAT(convert(args("1099511627776", "0").c_str()), Catch::Contains("days"));  // 2^40
    CHECK_THAT(convert(args("-1e400", "0").c_str()), Catch::Contains("days"));
    CHECK_THAT(convert(args("1", "1e400").c_str()), Catch::Contains("threshold"));
}

TEST_CASE("ToolRegistry: strict refuses an agent naming a missing tool, permissive binds what exists", "[tools]")
{
    adk::ToolRegistry registry;
    registry.add(adk::FunctionTool::create("get_weather", "Weather.",
                                           boost::json::parse(R"({"type":"object","properties":{}})"),
                                           [](adk::ToolContext&, boost::json::object) -> asio::awaitable<boost::json::value> {
                                               co_return "sunny";
                                           }));
    CHECK(registry.validation_mode() == adk::ValidationMode::strict);
    const std::vector<std::string> names{"get_weather", "book_flight", "exit_loop", "pay"};
    CHECK_THROWS_WITH(registry.bind(names, "planner"),
                      Catch::Contains("agent 'planner' names tools that are not registered: 'book_flight', 'pay'") &&
                          Catch::Contains("known: exit_loop, get_weather,") && Catch::Contains("permissive"));
    registry.set_validation_mode(adk::ValidationMode::permissive);
    const auto bound = registry.bind(names, "planner");
    REQUIRE(bound.size() == 2);
    CHECK(bound[0]->name() == "get_weather");
    CHECK(bound[1]->name() == "exit_loop");

    // The model is offered exactly the tools bound.
    auto model = std::make_shared<adk::testing::ScriptedModel>(std::vector<adk::testing::ScriptedModel::Turn>{
        adk::LlmResponse::text("ok")});
    auto agent = adk::LlmAgent::builder("planner").model(model).tools(bound).build();
    adk::test::Harness h;
    h.send(agent, "plan a trip");
    std::vector<std::string> declared;
    const std::vector<adk::LlmRequest> requests = model->requests();
    for (const auto& d : requests.at(0).tools)
        declared.push_back(d.name);
    CHECK(declared == std::vector<std::string>{"get_weather", "exit_loop"});
}
