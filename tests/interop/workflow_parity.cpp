// The graph of adk_workflow/workflow_parity.mjs, run by adk-cpp: writes the events of one message as JSON.
//   workflow_parity MESSAGE OUT.json
#include <adk/adk.hpp>
#include <adk/workflow/workflow.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>

#include <fstream>
#include <iostream>

namespace asio = boost::asio;
namespace json = boost::json;
namespace wf = adk::workflow;
using wf::NodeContext;

namespace {

using Fn = std::function<json::value(NodeContext&, const json::value&)>;

std::shared_ptr<wf::FunctionNode> node(std::string name, Fn fn)
{
    return wf::function_node(std::move(name), [fn](NodeContext& ctx, json::value in) -> asio::awaitable<json::value> {
        co_return fn(ctx, in);
    });
}

std::string text_of(const json::value& v)
{
    return std::string(v.as_object().at("text").as_string());
}

std::shared_ptr<wf::Workflow> graph()
{
    auto prepare = node("prepare", [](NodeContext&, const json::value& in) {
        return json::value(std::string(in.as_string()) + " (prepared)");
    });
    auto classify = node("classify", [](NodeContext& ctx, const json::value& in) {
        ctx.set_route(std::string(in.as_string()).find("bug") != std::string::npos ? "bug" : "question");
        return json::value(json::object{{"text", in}});
    });
    auto fix = node("fix", [](NodeContext&, const json::value& in) { return json::value("fix for " + text_of(in)); });
    auto other = node("other", [](NodeContext&, const json::value& in) { return json::value("answer to " + text_of(in)); });
    auto left = node("left", [](NodeContext&, const json::value& in) { return json::value({{"side", "left"}, {"got", in}}); });
    auto right = node("right", [](NodeContext&, const json::value& in) { return json::value({{"side", "right"}, {"got", in}}); });
    auto joined = wf::join_node("joined");
    auto runs = std::make_shared<int>(0);
    auto report = node("report", [runs](NodeContext& ctx, const json::value&) {
        ++*runs;
        ctx.set_route(*runs < 3 ? "again" : "done");
        return json::value({{"run", *runs}});
    });
    auto done = node("done", [](NodeContext&, const json::value& in) {
        return json::value("done after " + std::to_string(in.as_object().at("run").as_int64()));
    });
    return wf::Workflow::Builder("parity")
        .chain({wf::START, prepare, classify})
        .route(classify, "bug", fix)
        .route(classify, wf::default_route, other)
        .edges(fix, {left, right})
        .edge(left, joined)
        .edge(right, joined)
        .edge(joined, report)
        .edge(other, report)
        .route(report, "again", report)
        .route(report, "done", done)
        .build();
}

asio::awaitable<json::array> run(std::string message)
{
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::Runner runner({.app_name = "parity", .agent = graph(), .session_service = sessions});
    adk::CreateSessionRequest create("parity", "u", "s");
    co_await sessions->create_session(std::move(create));
    adk::Content content = adk::Content::user(std::move(message));
    auto stream = co_await runner.run("u", "s", std::move(content));
    json::array events;
    while (auto event = co_await stream.next())
        events.push_back(json::value_from(*event));
    co_return events;
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc != 3) {
        std::cerr << "usage: workflow_parity MESSAGE OUT.json\n";
        return 2;
    }
    try {
        asio::io_context ioc;
        std::future<json::array> events = asio::co_spawn(ioc, run(argv[1]), asio::use_future);
        ioc.run();
        std::ofstream(argv[2]) << json::serialize(events.get());
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "workflow_parity: " << e.what() << "\n";
        return 1;
    }
}
