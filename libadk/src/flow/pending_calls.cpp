#include "pending_calls.hpp"

#include "../agents/invocation.hpp"
#include "../agents/run_state.hpp"

#include <adk/tools/tool_confirmation.hpp>

#include <algorithm>
#include <map>
#include <set>

namespace adk::detail {

namespace {

// Which events are the agent's own. In a resumed invocation, those of its node: a node that runs twice (a loop's
// rounds) has a path for each run, and only this run's turn is continued. Events without a path (written before
// paths, or by ADK 1.x) are taken by author. An answer in a new invocation continues the agent's latest turn,
// whatever path it had in the invocation that made it.
class NodeEvents {
public:
    NodeEvents(const std::string& agent, std::string_view path) : agent_(agent), path_(path) {}
    bool operator()(const Event& e) const
    {
        return e.author == agent_ && (path_.empty() || e.node_path().empty() || e.node_path() == path_);
    }

private:
    const std::string& agent_;
    std::string_view path_;
};

bool is_model_turn_with_calls(const Event& e, const NodeEvents& agent)
{
    if (e.partial || !agent(e) || !e.content)
        return false;
    return std::any_of(e.content->parts.begin(), e.content->parts.end(),
                       [](const Part& p) { return p.function_call && !is_question(p.function_call->name); });
}

bool is_answer_text(const Event& e)
{
    bool text = false;
    for (const Part& p : e.content->parts) {
        if (p.function_call || p.function_response)
            return false;
        text = text || (p.text && !p.thought);
    }
    return text;
}

class Question {
public:
    Question(std::string id_, bool confirmation_) : id(std::move(id_)), confirmation(confirmation_) {}
    std::string id;
    bool confirmation;  // adk_request_confirmation; else adk_request_credential
};

// What came after the model's turn.
struct Afterwards {
    std::set<std::string> agent_responses;                    // call id
    std::map<std::string, json::object> final_answers;        // call id -> the client's response
    std::set<std::string> updates;                            // call ids with a client's update
    std::map<std::string, Question> question_for;             // original call id -> the latest question
    std::optional<std::string> transferred_to;
    std::size_t last_answer = 0;
    std::size_t last_text = 0;
};

Afterwards read_afterwards(const EventList& events, std::size_t turn, const NodeEvents& agent)
{
    Afterwards after;
    after.last_answer = turn;
    for (std::size_t i = turn + 1; i < events.size(); ++i) {
        const Event& e = events[i];
        if (e.partial || !e.content)
            continue;
        const bool by_user = e.author == "user";
        if (!by_user && !agent(e))
            continue;
        for (const Part& p : e.content->parts) {
            if (const auto& r = p.function_response) {
                if (!by_user)
                    after.agent_responses.insert(r->id);
                else if (is_progress_update(r->response))
                    after.updates.insert(r->id);
                else
                    after.final_answers[r->id] = r->response;
                if (by_user)
                    after.last_answer = i;
            }
            if (const auto& c = p.function_call; c && !by_user && is_question(c->name))
                after.question_for.insert_or_assign(asked_about(*c),
                                                    Question(c->id, c->name == request_confirmation_function));
        }
        if (!by_user && e.actions.transfer_to_agent)
            after.transferred_to = e.actions.transfer_to_agent;
        if (!by_user && is_answer_text(e))
            after.last_text = i;
    }
    return after;
}

}  // namespace

std::optional<PendingCalls> find_pending_calls(const InvocationContext& ctx, const std::string& agent)
{
    std::set<std::string> answers;  // the function-response ids in a new invocation's message
    if (!ctx.resumed()) {
        if (ctx.user_content())
            for (const Part& p : ctx.user_content()->parts)
                if (p.function_response)
                    answers.insert(p.function_response->id);
        if (answers.empty())
            return std::nullopt;
    }
    const NodeEvents node(agent, ctx.resumed() ? std::string_view(ctx.node_path()) : std::string_view());
    // A resumed invocation knows where its node's turn is (RunState); an answer in a new invocation continues the
    // agent's latest turn in the session.
    std::optional<std::size_t> resumed_turn;
    if (ctx.resumed()) {
        const RunState* run_state = ctx.invocation()->run_state.get();
        std::optional<NodeProgress> progress = run_state ? run_state->find(ctx.node_path()) : std::nullopt;
        if (!progress || !progress->calls_turn)
            return std::nullopt;
        resumed_turn = progress->calls_turn;
    }
    return ctx.with_session([&](const Session& s) -> std::optional<PendingCalls> {
        const EventList& events = s.events;
        std::size_t turn = events.size();
        if (resumed_turn) {
            if (*resumed_turn < events.size() && is_model_turn_with_calls(events[*resumed_turn], node))
                turn = *resumed_turn;
        } else {
            for (std::size_t i = events.size(); i-- > 0;)
                if (is_model_turn_with_calls(events[i], node)) {
                    turn = i;
                    break;
                }
        }
        if (turn == events.size())
            return std::nullopt;
        const Event& model_turn = events[turn];
        Afterwards after = read_afterwards(events, turn, node);

        std::vector<FunctionCall> calls;
        for (const Part& p : model_turn.content->parts)
            if (p.function_call && !is_question(p.function_call->name))
                calls.push_back(*p.function_call);
        if (!ctx.resumed()) {
            // The new message must answer this turn: a call of it, or a question asked for one.
            bool related = std::any_of(calls.begin(), calls.end(), [&](const FunctionCall& c) {
                auto q = after.question_for.find(c.id);
                return answers.contains(c.id) || (q != after.question_for.end() && answers.contains(q->second.id));
            });
            if (!related)
                return std::nullopt;
        }

        PendingCalls pending;
        if (after.transferred_to) {
            pending.transferred_to = after.transferred_to;
            return pending;
        }
        if (after.last_text > after.last_answer) {
            pending.done = true;
            return pending;
        }
        const auto& long_running = model_turn.long_running_tool_ids;
        for (FunctionCall& call : calls) {
            const std::string& id = call.id;
            if (after.final_answers.contains(id))
                continue;
            if (std::find(long_running.begin(), long_running.end(), id) != long_running.end()) {
                // Started: its first response or a client's update is there, and the final answer comes later.
                if (!after.agent_responses.contains(id) && !after.updates.contains(id))
                    pending.waits = true;
                continue;
            }
            if (after.agent_responses.contains(id))
                continue;
            auto question = after.question_for.find(id);
            if (question == after.question_for.end()) {
                pending.to_run.emplace_back(std::move(call));  // it never ran, or its response was lost
                continue;
            }
            auto answer = after.final_answers.find(question->second.id);
            if (answer == after.final_answers.end()) {
                pending.waits = true;
                continue;
            }
            if (!question->second.confirmation) {
                pending.to_run.emplace_back(std::move(call));  // the credential is kept now: it runs
                continue;
            }
            ToolConfirmation confirmation;
            try {
                confirmation = read_confirmation_answer(answer->second);
            } catch (const std::exception&) {
                confirmation = ToolConfirmation({}, false);  // an answer that cannot be read approves nothing
            }
            const auto step = confirmation.confirmed ? PlannedCall::Step::run_approved : PlannedCall::Step::reject;
            pending.to_run.emplace_back(std::move(call), step, std::move(confirmation));
        }
        return pending;
    });
}

}  // namespace adk::detail
