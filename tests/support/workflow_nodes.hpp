// Function nodes and look-ups the tests of graph workflows share: nodes that record their inputs, nodes that ask a
// person, and the outputs, paths and questions among a run's events.
#pragma once

#include <adk/adk.hpp>
#include <adk/workflow/workflow.hpp>

#include <boost/asio/awaitable.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace adk::test::workflow_nodes {

namespace asio = boost::asio;
namespace json = boost::json;
namespace wf = adk::workflow;
using adk::Event;
using wf::NodeContext;

// A function node that records each input it gets and answers with fn(input).
using Inputs = std::map<std::string, std::vector<json::value>>;

inline std::shared_ptr<wf::FunctionNode> node(std::string name, std::shared_ptr<Inputs> seen,
                                       std::function<json::value(const json::value&)> fn, wf::NodeOptions options = {})
{
    std::string key = name;
    return wf::function_node(
        std::move(name),
        [seen, key, fn](NodeContext&, json::value input) -> asio::awaitable<json::value> {
            (*seen)[key].push_back(input);
            co_return fn(input);
        },
        std::move(options));
}

inline json::value suffix(const json::value& in, std::string_view s)
{
    return json::value(std::string(in.as_string()) + std::string(s));
}

inline const Event* output_event(const std::vector<Event>& events, std::string_view path)
{
    for (const Event& e : events)
        if (e.node_info && e.node_info->path == path && e.output)
            return &e;
    return nullptr;
}

inline std::vector<std::string> paths(const std::vector<Event>& events)
{
    std::vector<std::string> out;
    for (const Event& e : events)
        if (e.node_info && e.node_info->path && e.output)
            out.push_back(*e.node_info->path);
    return out;
}

// The questions (adk_request_input calls) among events: id -> args.
inline std::map<std::string, json::object> questions(const std::vector<Event>& events)
{
    std::map<std::string, json::object> out;
    for (const Event& e : events) {
        if (!e.content)
            continue;
        for (const adk::Part& p : e.content->parts)
            if (p.function_call && p.function_call->name == "adk_request_input") {
                CHECK(std::find(e.long_running_tool_ids.begin(), e.long_running_tool_ids.end(), p.function_call->id) !=
                      e.long_running_tool_ids.end());
                out.emplace(p.function_call->id, p.function_call->args);
            }
    }
    return out;
}

// A node that asks `message` and, run again, returns what it was told.
inline std::shared_ptr<wf::FunctionNode> asking(std::string name, std::string message, std::string id = {},
                                         std::optional<json::value> schema = std::nullopt, bool rerun = false,
                                         std::shared_ptr<int> runs = std::make_shared<int>(0))
{
    wf::NodeOptions options;
    options.rerun_on_resume = rerun;
    return wf::function_node(
        std::move(name),
        [message, id, schema, runs](NodeContext& ctx, json::value) -> asio::awaitable<json::value> {
            ++*runs;
            wf::RequestInput request;
            request.message = message;
            request.payload = json::object{{"asked_by", ctx.node_name()}};
            request.response_schema = schema;
            request.interrupt_id = id;
            json::value told = co_await ctx.request_input(std::move(request));
            co_return json::object{{"told", told}};
        },
        options);
}

}  // namespace adk::test::workflow_nodes
