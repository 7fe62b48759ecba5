// ADK content to A2A parts and back, with the metadata ADK's own A2A converters write (adk_type, adk_thought).
#include <adk/a2a/convert.hpp>
#include <adk/core/error.hpp>

#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

namespace a2a = adk::a2a;
namespace json = boost::json;

TEST_CASE("A2A: every kind of ADK part becomes an A2A part and comes back the same", "[a2a]")
{
    adk::Part image = adk::Part::from_bytes(std::string("\x89PNG", 4), "image/png");
    image.inline_data->display_name = "chart.png";
    adk::Part doc = adk::Part::from_uri("gs://bucket/report.pdf", "application/pdf");
    adk::Part code;
    code.executable_code.emplace("PYTHON", "print(1)");
    adk::Part result;
    result.code_execution_result.emplace("OUTCOME_OK", "1\n");
    const adk::Content content("model", {adk::Part::from_text("Here."), adk::Part::from_thought("thinking"), image, doc,
                                         adk::Part::from_function_call("get_weather", json::object{{"city", "Paris"}}, "c-1"),
                                         adk::Part::from_function_response("get_weather", json::object{{"sky", "sunny"}}, "c-1"),
                                         code, result});
    const a2a::Message m = a2a::to_message(content, a2a::Role::agent, "m-1");
    REQUIRE(m.parts.size() == 8);
    CHECK(*m.parts[0].text() == "Here.");
    CHECK(m.parts[1].metadata.at("adk_thought") == true);
    CHECK(std::get<a2a::Part::Raw>(m.parts[2].content).bytes == std::string("\x89PNG", 4));
    CHECK(m.parts[2].media_type == "image/png");
    CHECK(m.parts[2].filename == "chart.png");
    CHECK(std::get<a2a::Part::Url>(m.parts[3].content).url == "gs://bucket/report.pdf");
    CHECK(m.parts[4].metadata.at("adk_type") == "function_call");
    CHECK(std::get<a2a::Part::Data>(m.parts[4].content).value ==
          json::parse(R"({"name": "get_weather", "args": {"city": "Paris"}, "id": "c-1"})"));
    CHECK(m.parts[5].metadata.at("adk_type") == "function_response");
    CHECK(m.parts[6].metadata.at("adk_type") == "executable_code");
    CHECK(m.parts[7].metadata.at("adk_type") == "code_execution_result");
    CHECK(a2a::adk_metadata_key("type") == "adk_type");

    const adk::Content back = a2a::to_content(m);
    CHECK(back.role == "model");
    CHECK(back == content);
}

TEST_CASE("A2A: a client's structured data reads as its JSON text, and a call without a name is refused", "[a2a]")
{
    a2a::Message m;
    m.message_id = "m-1";
    m.role = a2a::Role::user;
    m.parts.push_back(a2a::Part::data_part(json::parse(R"({"origin": "LHR", "seats": 2})")));
    const adk::Content c = a2a::to_content(m);
    CHECK(c.role == "user");
    REQUIRE(c.parts.size() == 1);
    CHECK(json::parse(*c.parts[0].text) == json::parse(R"({"origin": "LHR", "seats": 2})"));

    a2a::Part nameless = a2a::Part::data_part(json::parse(R"({"args": {}})"));
    nameless.metadata["adk_type"] = "function_call";
    CHECK_THROWS_AS(a2a::from_a2a(nameless), adk::Error);
    a2a::Part bad_args = a2a::Part::data_part(json::parse(R"({"name": "f", "args": [1]})"));
    bad_args.metadata["adk_type"] = "function_call";
    CHECK_THROWS_WITH(a2a::from_a2a(bad_args), Catch::Contains("args must be an object"));
    a2a::Part huge = a2a::Part::raw_part(std::string(adk::max_inline_data_bytes + 1, 'x'), "application/octet-stream");
    CHECK_THROWS_WITH(a2a::from_a2a(huge), Catch::Contains("at most"));
}
