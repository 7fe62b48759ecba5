// mock-llm's answers as a client reads them: each streamed Gemini frame is one SSE event whose data is the
// GenerateContentResponse the script asks for.
#include "render.hpp"
#include "server.hpp"

#include <boost/asio/io_context.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>

#include <catch2/catch.hpp>

namespace json = boost::json;
using adk::mock_llm::Format;

namespace {

json::value gemini_text_response(const std::string& text, std::size_t prompt, std::size_t completion, bool last)
{
    json::object candidate{{"content", {{"parts", json::array{json::object{{"text", text}}}}, {"role", "model"}}},
                           {"index", 0}};
    if (last)
        candidate["finishReason"] = "STOP";
    return json::object{{"candidates", json::array{candidate}},
                        {"usageMetadata",
                         {{"promptTokenCount", prompt},
                          {"candidatesTokenCount", completion},
                          {"totalTokenCount", prompt + completion}}},
                        {"modelVersion", "gemini-test"},
                        {"responseId", "mock-response"}};
}

json::value frame_data(const std::string& frame)
{
    REQUIRE(frame.starts_with("data: "));
    REQUIRE(frame.ends_with("\r\n\r\n"));
    REQUIRE(frame.find('\n') == frame.size() - 3);  // one event, one data line
    return json::parse(std::string_view(frame).substr(6, frame.size() - 10));
}

}  // namespace

TEST_CASE("mock-llm: a streamed Gemini answer's text frames, each a whole response with its usage", "[mock_llm]")
{
    // Texts that JSON must escape: quotes, a backslash, a newline, a control character, non-ASCII.
    const std::vector<std::string> chunks{"plain ", "say \"hi\"\\ ", "line\nbreak\x01 ", "caf\xc3\xa9 \xe2\x9c\x93"};
    const json::value script = json::parse(R"({"turns": [{"chunks": )" +
                                           json::serialize(json::value_from(chunks)) + R"(, "repeat": 2}]})");
    const std::string request = R"({"contents": [{"role": "user", "parts": [{"text": "hello"}]}]})";
    const std::size_t prompt = request.size() / 4 + 1;

    auto answer = adk::mock_llm::render(script, Format::gemini, true, "gemini-test", request);
    REQUIRE(answer.status == 200);
    REQUIRE(answer.plan.head.empty());
    REQUIRE(answer.plan.tail.empty());  // the last text frame carries the finish reason
    REQUIRE(answer.plan.text_count == 8);
    for (std::size_t i = 0; i < 8; ++i) {
        INFO("frame " << i);
        CHECK(frame_data(answer.plan.text_frame(i)) == gemini_text_response(chunks[i % 4], prompt, i + 1, i == 7));
    }
}

TEST_CASE("mock-llm: a Gemini answer with text, then a function call, ends with the call's frame", "[mock_llm]")
{
    const json::value script = json::parse(R"({"turns": [
        {"chunks": ["a", "b"], "function_calls": [{"name": "lookup", "args": {"q": "x"}, "id": "c1"}]}]})");
    const std::string request = R"({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})";
    const std::size_t prompt = request.size() / 4 + 1;

    auto answer = adk::mock_llm::render(script, Format::gemini, true, "gemini-test", request);
    REQUIRE(answer.plan.text_count == 2);
    CHECK(frame_data(answer.plan.text_frame(0)) == gemini_text_response("a", prompt, 1, false));
    CHECK(frame_data(answer.plan.text_frame(1)) == gemini_text_response("b", prompt, 2, false));
    REQUIRE(answer.plan.tail.size() == 1);
    const json::value call = frame_data(answer.plan.tail[0]);
    const auto& candidate = call.at("candidates").at(0);
    CHECK(candidate.at("finishReason") == "STOP");
    CHECK(candidate.at("content").at("parts").at(0).at("functionCall") ==
          json::parse(R"({"name": "lookup", "args": {"q": "x"}, "id": "c1"})"));
    CHECK(call.at("usageMetadata").at("candidatesTokenCount") == 3);
}

TEST_CASE("mock-llm: a bad script is refused when the server is made, naming the turn and the field", "[mock_llm]")
{
    boost::asio::io_context ioc;
    auto refusal = [&](const char* script) -> std::string {
        adk::mock_llm::ServerOptions options;
        options.script = json::parse(script);
        try {
            adk::mock_llm::Server server(ioc.get_executor(), options);
        } catch (const std::invalid_argument& e) {
            return e.what();
        }
        return "accepted";
    };
    CHECK_THAT(refusal(R"({"turns": [{"text": "hi"}, {"error": {"status": "x"}}]})"),
               Catch::Contains("script turn 1: \"error.status\" must be an HTTP error status"));
    CHECK_THAT(refusal(R"({"turns": [{"chunks": "not a list"}]})"), Catch::Contains("script turn 0: \"chunks\""));
    CHECK_THAT(refusal(R"({"turns": [{"function_calls": [{"args": {}}]}]})"),
               Catch::Contains("function_calls[0].name"));
    CHECK_THAT(refusal(R"({"turns": [{"repeat": -3}]})"), Catch::Contains("\"repeat\""));
    CHECK_THAT(refusal(R"({"turns": [7]})"), Catch::Contains("script turn 0 is not an object"));
    CHECK_THAT(refusal(R"({"turns": []})"), Catch::Contains("non-empty \"turns\""));
    CHECK(refusal(R"({"turns": [{"chunks": ["a"], "repeat": 2}, {"error": {"status": 429, "retry_after": 1}}]})") ==
          "accepted");
}

TEST_CASE("mock-llm: an agent named in the system instruction gets its own turns, in each format", "[mock_llm]")
{
    const json::value script = json::parse(R"({"turns": [{"text": "default"}],
        "agents": {"weather_agent": {"turns": [{"text": "weather"}]}, "critic": {"turns": [{"text": "critic"}]}}})");
    const std::string named = R"(You are an agent. Your internal name is \"critic\".)";
    const std::string unknown = R"(You are an agent. Your internal name is \"someone_else\".)";
    auto text_of = [&](Format format, const std::string& request) {
        auto answer = adk::mock_llm::render(script, format, false, "m", request);
        REQUIRE(answer.status == 200);
        return answer.body;
    };
    auto gemini = [](const std::string& system) {
        return R"({"systemInstruction": {"parts": [{"text": "x"}, {"text": ")" + system +
               R"("}]}, "contents": [{"role": "user", "parts": [{"text": "hi"}]}]})";
    };
    CHECK_THAT(text_of(Format::gemini, gemini(named)), Catch::Contains("\"critic\""));
    CHECK_THAT(text_of(Format::gemini, gemini(unknown)), Catch::Contains("\"default\""));
    CHECK_THAT(text_of(Format::gemini, R"({"contents": []})"), Catch::Contains("\"default\""));
    CHECK_THAT(text_of(Format::openai, R"({"model": "m", "messages": [{"role": "system", "content": ")" + named +
                                           R"("}, {"role": "user", "content": "hi"}]})"),
               Catch::Contains("\"critic\""));
    CHECK_THAT(text_of(Format::anthropic, R"({"model": "m", "system": [{"type": "text", "text": ")" + named +
                                              R"("}], "messages": [{"role": "user", "content": "hi"}]})"),
               Catch::Contains("\"critic\""));
    CHECK_THAT(text_of(Format::anthropic, R"({"model": "m", "system": ")" + named + R"(", "messages": []})"),
               Catch::Contains("\"critic\""));
    boost::asio::io_context ioc;
    adk::mock_llm::ServerOptions options;
    options.script = json::parse(R"({"turns": [{"text": "a"}], "agents": {"critic": {"turns": []}}})");
    CHECK_THROWS_WITH(adk::mock_llm::Server(ioc.get_executor(), options),
                      Catch::Contains("the script of the agent 'critic'"));
}
