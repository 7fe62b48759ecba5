// Support triage as a graph workflow (adk::workflow): an LlmAgent sorts the ticket, a function node routes it;
// a bug goes to an investigator (an LlmAgent) and pages the on-call engineer at once, and a person approves the
// fix plan before the reply goes out; a question goes to an answerer; anything else is escalated. Offline:
// ScriptedModel plays each model. The app is resumable: the approval pauses the invocation, and the person's
// answer (given here by the program) resumes it where it stopped.
//
//   build/release/samples/support_triage ["ticket text"]
#include <adk/adk.hpp>
#include <adk/workflow/workflow.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <iostream>

namespace asio = boost::asio;
namespace json = boost::json;
namespace wf = adk::workflow;
using adk::LlmResponse;
using adk::testing::ScriptedModel;

namespace {

std::shared_ptr<adk::LlmAgent> scripted_agent(std::string name, std::string instruction, std::string answer,
                                              std::optional<json::value> schema = std::nullopt)
{
    auto builder = adk::LlmAgent::builder(std::move(name))
                       .model(std::make_shared<ScriptedModel>(std::vector<ScriptedModel::Turn>{LlmResponse::text(answer)}))
                       .instruction(std::move(instruction))
                       .include_contents(adk::IncludeContents::none);
    if (schema)
        builder.output_schema(std::move(*schema));
    return builder.build();
}

std::shared_ptr<wf::Workflow> triage_workflow(const std::string& ticket)
{
    const bool bug = ticket.find("crash") != std::string::npos;
    auto triage = scripted_agent(
        "triage", "Sort the support ticket: bug, question or other.",
        bug ? R"({"category": "bug", "summary": "Photo upload crashes the app"})"
            : R"({"category": "question", "summary": "How to export data"})",
        json::parse(R"({"type": "object", "properties": {"category": {"type": "string"}, "summary": {"type": "string"}},
                        "required": ["category", "summary"]})"));
    auto route_ticket = wf::function_node("route_ticket", [](wf::NodeContext& ctx, json::value sorted) -> asio::awaitable<json::value> {
        ctx.set_route(sorted.at("category"));
        co_return sorted.at("summary");
    });
    auto investigate = scripted_agent("investigate", "Propose a fix plan.",
                                      "Resize photos before upload; ship in 2.4.1.");
    auto page_oncall = wf::function_node("page_oncall", [](wf::NodeContext& ctx, json::value summary) -> asio::awaitable<json::value> {
        ctx.set_state("oncall_paged", true);
        co_return json::value("paged on-call about: " + std::string(summary.as_string()));
    });
    auto both = wf::join_node("both");
    auto approve = wf::function_node("approve", [](wf::NodeContext& ctx, json::value findings) -> asio::awaitable<json::value> {
        wf::RequestInput question;
        question.message = "Send this fix plan to the customer?";
        question.payload = findings;
        question.response_schema = json::parse(R"({"type": "boolean"})");
        co_return co_await ctx.request_input(std::move(question));
    });
    auto answer = scripted_agent("answer", "Answer the customer's question.", "Use Settings > Export.");
    auto escalate = wf::function_node("escalate", [](wf::NodeContext&, json::value summary) -> asio::awaitable<json::value> {
        co_return json::value("escalated to a person: " + json::serialize(summary));
    });
    auto reply = wf::function_node("reply", [](wf::NodeContext& ctx, json::value in) -> asio::awaitable<json::value> {
        if (ctx.from() == "approve")
            co_return json::value(in.as_bool() ? "Reply sent with the fix plan." : "Held: the plan was not approved.");
        co_return json::value("Reply sent: " + (in.is_string() ? std::string(in.as_string()) : json::serialize(in)));
    });
    return wf::Workflow::Builder("support_triage")
        .chain({wf::START, triage, route_ticket})
        .route(route_ticket, "bug", investigate)
        .route(route_ticket, "bug", page_oncall)
        .route(route_ticket, "question", answer)
        .route(route_ticket, wf::default_route, escalate)
        .edge(investigate, both)
        .edge(page_oncall, both)
        .chain({both, approve, reply})
        .edge(answer, reply)
        .edge(escalate, reply)
        .build();
}

// Prints each node's output, and returns the question a node asked, if any.
asio::awaitable<std::optional<std::string>> show(adk::EventStream events)
{
    std::optional<std::string> question;
    while (auto ev = co_await events.next()) {
        for (const auto& call : ev->function_calls())
            if (call.name == adk::request_input_function) {
                std::cout << ev->author << " asks: " << json::serialize(call.args.at("message")) << " "
                          << json::serialize(call.args.at("payload")) << "\n";
                question = call.id;
            }
        if (ev->output && ev->node_info && ev->node_info->path)
            std::cout << *ev->node_info->path << " -> " << json::serialize(*ev->output) << "\n";
    }
    co_return question;
}

asio::awaitable<void> run(std::string ticket)
{
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    adk::Runner runner({.app_name = "support",
                        .agent = triage_workflow(ticket),
                        .session_service = sessions,
                        .resumability = {.is_resumable = true}});
    adk::Session session = co_await sessions->create_session({"support", "customer"});
    adk::Content message = adk::Content::user(ticket);
    adk::EventStream first = co_await runner.run("customer", session.id, std::move(message));
    std::optional<std::string> question = co_await show(std::move(first));
    if (question) {
        std::cout << "(paused; the person answers: yes)\n";
        adk::Content yes("user", {adk::Part::from_function_response(std::string(adk::request_input_function),
                                                                    {{"result", true}}, *question)});
        adk::RunRequest answer("customer", session.id, std::move(yes));
        adk::EventStream rest = co_await runner.run(std::move(answer));
        co_await show(std::move(rest));
    }
    std::optional<adk::Session> after = co_await sessions->get_session({"support", "customer", session.id});
    std::cout << "state: " << json::serialize(after->state) << "\n";
}

}  // namespace

int main(int argc, char** argv)
{
    const std::string ticket = argc > 1 ? argv[1] : "The app crashes when I upload a photo.";
    asio::io_context ioc;
    asio::co_spawn(ioc, run(ticket), [](std::exception_ptr e) {
        if (e)
            std::rethrow_exception(e);
    });
    ioc.run();
}
