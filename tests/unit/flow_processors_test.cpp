// The LlmAgent flow's parts, each alone: its request processors, the tool gates, the text a streamed answer is
// joined in; and the processors a user adds to an LlmAgent.
#include <adk/adk.hpp>

#include "flow/joined_text.hpp"
#include "flow/processors/processors.hpp"
#include "flow/tool_dispatch.hpp"

#include "support/agents.hpp"
#include "support/run.hpp"

#include <boost/asio/strand.hpp>
#include <boost/json/parse.hpp>

#include <catch2/catch.hpp>

#include <random>
#include <string>

namespace asio = boost::asio;
namespace json = boost::json;
using adk::LlmAgent;
using adk::LlmResponse;
using adk::test::run;
using adk::testing::ScriptedModel;

namespace {

std::shared_ptr<adk::FunctionTool> echo_tool(std::string name)
{
    return adk::FunctionTool::create(std::move(name), "Echoes.", json::parse(R"({"type":"object"})"),
                                     [](adk::ToolContext&, json::object args) -> asio::awaitable<json::value> {
                                         co_return args;
                                     });
}

// One LlmAgent (the root, unless given another) in an invocation over a session that holds `events`.
struct ProcessorFixture {
    asio::io_context ioc;
    adk::InvocationOptions options;
    std::shared_ptr<LlmAgent> agent;

    explicit ProcessorFixture(std::shared_ptr<LlmAgent> agent_, std::shared_ptr<adk::Agent> root = nullptr)
        : agent(std::move(agent_))
    {
        options.app_name = "app";
        options.user_id = "u";
        options.session = adk::Session("s", "app", "u");
        options.session.state["city"] = "Oslo";
        options.session_service = std::make_shared<adk::InMemorySessionService>();
        options.executor = asio::make_strand(ioc);
        options.root_agent = root ? root : agent;
    }

    // Runs one processor on `request`; returns the events it emitted.
    std::vector<adk::Event> process(adk::RequestProcessor& processor, adk::LlmRequest& request)
    {
        auto ctx = std::make_shared<adk::InvocationContext>(options, agent.get());
        auto producer = [ctx, &processor, &request](adk::Sink<adk::Event> sink) -> asio::awaitable<void> {
            adk::EventSink out(std::move(sink), ctx->invocation());
            co_await processor.process_request(*ctx, request, out);
        };
        return run(ioc, [&]() -> asio::awaitable<std::vector<adk::Event>> {
            adk::EventStream stream = adk::spawn_stream<adk::Event>(ctx->executor(), producer);
            co_return co_await adk::test::drain(stream);
        }());
    }
};

std::shared_ptr<ScriptedModel> model_answering(std::string text)
{
    return std::make_shared<ScriptedModel>(std::vector<ScriptedModel::Turn>{LlmResponse::text(std::move(text))});
}

}  // namespace

TEST_CASE("basic processor: the model's name, the generation config, the output schema", "[flow]")
{
    adk::GenerateContentConfig config;
    config.temperature = 0.25;
    auto agent = LlmAgent::builder("a").model(model_answering("x")).generate_content_config(config)
                     .output_schema(json::parse(R"({"type":"object"})")).output_key("out").build();
    ProcessorFixture f(agent);
    adk::LlmRequest request;
    adk::detail::BasicRequestProcessor basic;
    CHECK(f.process(basic, request).empty());
    CHECK(request.model == std::string(agent->config().model->name()));
    CHECK(request.config.temperature == 0.25);
    CHECK(request.config.response_mime_type == "application/json");
    CHECK(request.config.response_schema == json::parse(R"({"type":"object"})"));
    CHECK(request.contents.empty());
    CHECK(!request.system_instruction);
}

TEST_CASE("instructions processor: global then own instruction, templated, a static one verbatim", "[flow]")
{
    auto child = LlmAgent::builder("child").model(model_answering("x")).instruction("Weather for {city}.").build();
    auto root = LlmAgent::builder("root").model(model_answering("x")).global_instruction("Be brief in {city}.")
                    .sub_agent(child).build();
    ProcessorFixture f(child, root);
    adk::LlmRequest request;
    adk::detail::InstructionsRequestProcessor instructions;
    f.process(instructions, request);
    CHECK(request.system_text() == "Be brief in Oslo.\n\nWeather for Oslo.");
    CHECK(request.contents.empty());

    auto fixed = LlmAgent::builder("fixed").model(model_answering("x")).static_instruction("Never {city}.")
                     .instruction("Now in {city}.").build();
    ProcessorFixture g(fixed);
    adk::LlmRequest with_static;
    g.process(instructions, with_static);
    CHECK(with_static.system_text() == "Never {city}.");  // verbatim
    REQUIRE(with_static.contents.size() == 1);               // the dynamic part, as a user message
    CHECK(with_static.contents[0].role == "user");
    CHECK(with_static.contents[0].text() == "Now in Oslo.");
}

TEST_CASE("identity processor: the agent's name and description", "[flow]")
{
    auto agent = LlmAgent::builder("helper").description("Answers questions.").model(model_answering("x")).build();
    ProcessorFixture f(agent);
    adk::LlmRequest request;
    request.append_instruction("Earlier.");
    adk::detail::IdentityRequestProcessor identity;
    f.process(identity, request);
    CHECK(request.system_text() == "Earlier.\n\nYou are an agent. Your internal name is \"helper\". The description "
                                   "about you is \"Answers questions.\".");
}

TEST_CASE("contents processor: the session's history first, then what earlier processors added", "[flow]")
{
    auto agent = LlmAgent::builder("helper").model(model_answering("x")).build();
    ProcessorFixture f(agent);
    f.options.session.events.push_back(adk::Event("user", adk::Content::user("hello")));
    f.options.session.events.push_back(adk::Event("helper", adk::Content::model("hi")));
    adk::LlmRequest request;
    request.contents.push_back(adk::Content::user("dynamic instruction"));
    adk::detail::ContentsRequestProcessor contents;
    f.process(contents, request);
    REQUIRE(request.contents.size() == 3);
    CHECK(request.contents[0].text() == "hello");
    CHECK(request.contents[1].role == "model");
    CHECK(request.contents[1].text() == "hi");
    CHECK(request.contents[2].text() == "dynamic instruction");
}

namespace {
// A tool that adds an instruction of its own when it is offered, as well as its declaration.
class InstructingTool final : public adk::Tool {
public:
    InstructingTool() : Tool("lookup", "Looks things up.") {}
    std::optional<adk::FunctionDeclaration> declaration() const override
    {
        return adk::FunctionDeclaration(name(), description(), json::value());
    }
    asio::awaitable<void> process_request(const adk::ReadonlyContext& ctx, adk::LlmRequest& request) override
    {
        co_await Tool::process_request(ctx, request);
        request.append_instruction("Use lookup for facts about " + std::string(ctx.state("city")->as_string()) + ".");
    }
    asio::awaitable<json::value> run(adk::ToolContext&, json::object) override { co_return json::value(); }
};
}  // namespace

TEST_CASE("tools processor: each callable tool declares itself, and may add to the request", "[flow]")
{
    auto agent = LlmAgent::builder("helper").model(model_answering("x")).build();
    ProcessorFixture f(agent);
    adk::LlmRequest request;
    request.callable_tools = {echo_tool("echo"), std::make_shared<InstructingTool>()};
    adk::detail::ToolsRequestProcessor tools;
    f.process(tools, request);
    REQUIRE(request.tools.size() == 2);
    CHECK(request.tools[0].name == "echo");
    CHECK(request.tools[1].name == "lookup");
    CHECK(request.system_text() == "Use lookup for facts about Oslo.");
    CHECK(request.find_tool("lookup") == request.callable_tools[1].get());
    CHECK(request.find_tool("missing") == nullptr);
}

TEST_CASE("transfer processor: the roster and transfer_to_agent, only when the agent may transfer", "[flow]")
{
    auto billing = LlmAgent::builder("billing").description("Invoices.").model(model_answering("x")).build();
    auto root = LlmAgent::builder("desk").model(model_answering("x")).sub_agent(billing).build();
    adk::detail::TransferRequestProcessor transfer;

    ProcessorFixture f(root);
    adk::LlmRequest request;
    f.process(transfer, request);
    CHECK_THAT(request.system_text(), Catch::Contains("billing") && Catch::Contains("Invoices."));
    REQUIRE(request.tools.size() == 1);
    CHECK(request.tools[0].name == "transfer_to_agent");
    CHECK(request.find_tool("transfer_to_agent") != nullptr);

    auto alone = LlmAgent::builder("alone").model(model_answering("x")).build();
    ProcessorFixture g(alone);
    adk::LlmRequest untouched;
    g.process(transfer, untouched);
    CHECK(untouched.tools.empty());
    CHECK(untouched.callable_tools.empty());
    CHECK(!untouched.system_instruction);
}

TEST_CASE("the flow's request processors, in their order", "[flow]")
{
    const auto& all = adk::detail::flow_request_processors();
    REQUIRE(all.size() == 6);
    CHECK(dynamic_cast<adk::detail::BasicRequestProcessor*>(all[0]));
    CHECK(dynamic_cast<adk::detail::InstructionsRequestProcessor*>(all[1]));
    CHECK(dynamic_cast<adk::detail::IdentityRequestProcessor*>(all[2]));
    CHECK(dynamic_cast<adk::detail::ContentsRequestProcessor*>(all[3]));
    CHECK(dynamic_cast<adk::detail::ToolsRequestProcessor*>(all[4]));
    CHECK(dynamic_cast<adk::detail::TransferRequestProcessor*>(all[5]));
}

namespace {

// Adds a line to the system instruction and emits a note before the model is called; with `end`, ends the
// invocation instead.
class NoteProcessor final : public adk::RequestProcessor {
public:
    explicit NoteProcessor(bool end_) : end(end_) {}
    asio::awaitable<void> process_request(adk::InvocationContext& ctx, adk::LlmRequest& request,
                                          adk::EventSink& out) override
    {
        ++calls;
        seen_tools = request.tools.size();
        request.append_instruction("Mind the note.");
        adk::Event note = ctx.make_event(adk::Content::model("note"));
        co_await out.emit(std::move(note));
        if (end)
            ctx.set_end_invocation();
    }
    bool end;
    int calls = 0;
    std::size_t seen_tools = 0;
};

class ShoutProcessor final : public adk::ResponseProcessor {
public:
    asio::awaitable<void> process_response(adk::InvocationContext&, LlmResponse& response, adk::EventSink&) override
    {
        for (auto& part : response.content->parts)
            if (part.text)
                for (auto& c : *part.text)
                    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        co_return;
    }
};

}  // namespace

TEST_CASE("an LlmAgent's own processors: after the flow's, they change the request and the answer", "[flow]")
{
    adk::test::Harness h;
    auto model = std::make_shared<ScriptedModel>(std::vector<ScriptedModel::Turn>{
        LlmResponse::function_call("echo", {{"x", 1}}), LlmResponse::text("done")});
    auto note = std::make_shared<NoteProcessor>(false);
    auto agent = LlmAgent::builder("helper").model(model).instruction("Help.").tool(echo_tool("echo"))
                     .request_processor(note).response_processor(std::make_shared<ShoutProcessor>()).build();
    auto events = h.send(agent, "go");
    CHECK(note->calls == 2);       // before each model call
    CHECK(note->seen_tools == 1);  // the flow's processors ran first
    auto requests = model->requests();
    REQUIRE(requests.size() == 2);
    CHECK_THAT(requests[0].system_text(), Catch::EndsWith("Mind the note."));
    std::vector<std::string> texts;
    for (const auto& e : events)
        texts.push_back(e.text());
    // note, the call, its response, note, the answer as the response processor left it
    REQUIRE(events.size() == 5);
    CHECK(texts[0] == "note");
    CHECK(events[1].function_calls().size() == 1);
    CHECK(events[2].function_responses().size() == 1);
    CHECK(texts[3] == "note");
    CHECK(texts[4] == "DONE");

    auto ender = std::make_shared<NoteProcessor>(true);
    auto quiet_model = model_answering("never");
    auto stopped = LlmAgent::builder("stopper").model(quiet_model).request_processor(ender).build();
    auto stopped_events = h.send(stopped, "go", {}, "s2");
    REQUIRE(stopped_events.size() == 1);
    CHECK(stopped_events[0].text() == "note");
    CHECK(quiet_model->requests().empty());  // the model was not called

    adk::LlmAgentConfig bad;
    bad.name = "bad";
    bad.model = quiet_model;
    bad.request_processors.push_back(nullptr);
    CHECK_THROWS_WITH(LlmAgent(bad), Catch::Contains("a request processor is null"));
}

TEST_CASE("tool stages: the confirmation and auth gates pass every call, the run stage runs the tool", "[flow]")
{
    auto agent = LlmAgent::builder("helper").model(model_answering("x")).build();
    ProcessorFixture f(agent);
    adk::InvocationContext ctx(f.options, agent.get());
    adk::FunctionCall fc("call-1", "echo", json::object{{"x", 1}});
    auto tool = echo_tool("echo");
    adk::detail::ToolCall call(ctx, fc, *tool);
    const adk::LlmAgentConfig& cfg = agent->config();
    run(f.ioc, adk::detail::confirmation_gate(cfg, call));
    run(f.ioc, adk::detail::auth_gate(cfg, call));
    CHECK(!call.stopped);
    CHECK(!call.result);
    run(f.ioc, adk::detail::run_stage(cfg, call));
    REQUIRE(call.result);
    CHECK(*call.result == json::object{{"x", 1}});

    auto failing = adk::FunctionTool::create("boom", "Fails.", json::value(),
                                             [](adk::ToolContext&, json::object) -> asio::awaitable<json::value> {
                                                 throw std::runtime_error("no fuel");
                                                 co_return json::value();
                                             });
    adk::FunctionCall boom("call-2", "boom", json::object{});
    adk::detail::ToolCall failed(ctx, boom, *failing);
    run(f.ioc, adk::detail::run_stage(cfg, failed));
    REQUIRE(failed.result);
    CHECK_THAT(std::string(failed.result->at("error").as_string()), Catch::Contains("no fuel"));
}

TEST_CASE("JoinedText joins pieces across its blocks into the text at its size, and is empty after", "[flow]")
{
    using adk::detail::JoinedText;
    std::mt19937 random(33);
    for (const std::size_t largest : {std::size_t{1}, std::size_t{40}, JoinedText::first_block + 1,
                                      JoinedText::max_block * 3}) {
        JoinedText text;
        std::string expected;
        CHECK(text.empty());
        for (int i = 0; expected.size() < 3 * JoinedText::max_block + 100; ++i) {
            const std::size_t n = std::uniform_int_distribution<std::size_t>(0, largest)(random);
            std::string piece(n, '\0');
            for (char& c : piece)
                c = static_cast<char>('a' + (i + (&c - piece.data())) % 26);
            text.append(piece);
            expected += piece;
            CHECK(text.size() == expected.size());
        }
        const std::string joined = text.take();
        CHECK(joined == expected);
        CHECK(joined.capacity() == joined.size());  // no room past the text
        CHECK(text.empty());
        text.append("again");  // usable after take()
        CHECK(text.take() == "again");
    }
    JoinedText none;
    CHECK(none.take().empty());
}
