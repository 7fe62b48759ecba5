// The bank_agent's tools: one that needs a person's approval for each call, and a long-running one whose
// answer comes later.
#pragma once

#include <adk/tools/function_tool.hpp>

#include <boost/json/parse.hpp>

#include <memory>

namespace samples {

// Each call waits for a person's approval (adk_request_confirmation); it runs only once approved.
inline std::shared_ptr<adk::FunctionTool> transfer_money_tool()
{
    auto tool = adk::FunctionTool::create(
        "transfer_money", "Sends money from the user's account to someone.",
        boost::json::parse(R"({"type": "object",
                               "properties": {"amount": {"type": "number", "description": "how much, in euros"},
                                              "to": {"type": "string", "description": "who receives it"}},
                               "required": ["amount", "to"]})"),
        [](adk::ToolContext& ctx, boost::json::object args) -> boost::asio::awaitable<boost::json::value> {
            // Only an approved call gets here; ctx.tool_confirmation() holds the approval.
            co_return boost::json::object{{"status", "sent"}, {"amount", args.at("amount")}, {"to", args.at("to")},
                                          {"approved", ctx.tool_confirmation().has_value()}};
        });
    tool->set_require_confirmation(true);
    return tool;
}

// A long-running tool: it files the request and returns at once; the manager's answer comes later, as the
// client's functionResponse for the call (adk run ... --answer CALL_ID --response '{"status": "approved"}').
inline std::shared_ptr<adk::FunctionTool> request_approval_tool()
{
    return adk::FunctionTool::create(
        "request_approval", "Asks a manager to approve a large transfer. The answer comes later.",
        boost::json::parse(R"({"type": "object",
                               "properties": {"amount": {"type": "number"}, "reason": {"type": "string"}},
                               "required": ["amount"]})"),
        [](adk::ToolContext& ctx, boost::json::object args) -> boost::asio::awaitable<boost::json::value> {
            co_return boost::json::object{{"status", "pending"}, {"ticket", ctx.function_call_id()},
                                          {"amount", args.at("amount")}};
        },
        /*is_long_running=*/true);
}

}  // namespace samples
