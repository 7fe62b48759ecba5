// The C++ nodes of the refund_desk workflow (refund_desk/root_agent.yaml names them): a router, and a node that
// asks a person to approve a refund.
#pragma once

#include <adk/workflow/workflow.hpp>

#include <boost/json/parse.hpp>

#include <map>
#include <memory>
#include <string>

namespace samples {

// The sorter's answer ("refund", or anything else) is the route; its output is what the next node hears.
inline std::shared_ptr<adk::workflow::Node> route_request_node()
{
    return adk::workflow::function_node(
        "route_request",
        [](adk::workflow::NodeContext& ctx, boost::json::value input) -> boost::asio::awaitable<boost::json::value> {
            const std::string kind = input.is_string() ? std::string(input.get_string()) : "";
            ctx.set_route(kind.find("refund") != std::string::npos ? "refund" : "question");
            co_return boost::json::value("The customer wrote to us: " + kind);
        });
}

// Asks a person (RequestInput), then runs again when the answer came (rerun_on_resume), and says what was decided.
inline std::shared_ptr<adk::workflow::Node> approve_refund_node()
{
    adk::workflow::NodeOptions options;
    options.rerun_on_resume = true;
    return adk::workflow::function_node(
        "approve_refund",
        [](adk::workflow::NodeContext& ctx, boost::json::value) -> boost::asio::awaitable<boost::json::value> {
            adk::workflow::RequestInput question;
            question.message = "Refund 30 euros for order A-17? Answer yes or no.";
            question.payload = boost::json::object{{"order", "A-17"}, {"amount", 30}};
            question.response_schema = boost::json::parse(R"({"type": "string"})");
            const boost::json::value answer = co_await ctx.request_input(std::move(question));
            const bool approved = answer.is_string() && answer.get_string().starts_with("y");
            ctx.set_state("refund_approved", approved);
            co_return boost::json::value(approved ? "A manager approved the refund of 30 euros for order A-17."
                                                  : "A manager refused the refund for order A-17.");
        },
        options);
}

inline std::map<std::string, std::shared_ptr<adk::workflow::Node>, std::less<>> refund_nodes()
{
    return {{"route_request", route_request_node()}, {"approve_refund", approve_refund_node()}};
}

}  // namespace samples
