#include "answers.hpp"

#include "../agents/run_state.hpp"

#include <adk/core/error.hpp>
#include <adk/tools/tool_confirmation.hpp>

#include <set>

namespace adk::detail {

namespace {

struct FoundCall {
    const Event* event = nullptr;
    const FunctionCall* call = nullptr;
};

// The latest call with this id: a model may give the same id to calls of different turns ("call_0"), and the one
// an answer can still be for is the newest.
FoundCall find_call(const Session& session, const std::string& id)
{
    FoundCall found;
    for (const Event& e : session.events) {
        if (e.author == "user" || !e.content)
            continue;
        for (const Part& p : e.content->parts)
            if (p.function_call && p.function_call->id == id)
                found = {&e, &*p.function_call};
    }
    return found;
}

// Whether the call (made in event `made`) already has its answer after it: a response of the agent's (a tool's
// result), or a client's answer that is not an update of a long-running tool ({"status": "pending"}).
bool answered(const Session& session, const std::string& id, bool long_running, const Event* made)
{
    bool after = made == nullptr;
    for (const Event& e : session.events) {
        if (&e == made)
            after = true;
        if (!after || !e.content)
            continue;
        for (const Part& p : e.content->parts) {
            if (!p.function_response || p.function_response->id != id)
                continue;
            const bool update = is_progress_update(p.function_response->response);
            if (e.author == "user" ? !update : !long_running)
                return true;
        }
    }
    return false;
}

bool is_long_running(const Event& e, const std::string& id)
{
    return std::find(e.long_running_tool_ids.begin(), e.long_running_tool_ids.end(), id) !=
           e.long_running_tool_ids.end();
}

}  // namespace

Answers check_answers(const Session& session, Content& message, const std::string& app_name)
{
    Answers answers;
    std::set<std::string> seen;
    for (Part& part : message.parts) {
        if (!part.function_response)
            continue;
        FunctionResponse& r = *part.function_response;
        if (r.id.empty())
            throw Error(errc::invalid_argument, "the functionResponse '" + r.name + "' has no id: give the id of the "
                                                "function call it answers");
        const std::string quoted = "'" + r.id.substr(0, 100) + "'";
        if (!seen.insert(r.id).second)
            throw Error(errc::invalid_argument, "the message answers function call " + quoted + " twice: answer it once");
        FoundCall found = find_call(session, r.id);
        if (!found.call)
            throw Error(errc::invalid_argument, "session " + session.id + " has no function call " + quoted +
                                                    " to answer: give the id of a call the agent made (its event's "
                                                    "content.parts[].functionCall.id)");
        if (is_imported(*found.event))
            throw Error(errc::invalid_argument, "function call " + quoted + " was imported with the session, not made "
                                                "by an agent here: it cannot be answered");
        if (found.call->name != r.name)
            throw Error(errc::invalid_argument, "function call " + quoted + " is a call of '" + found.call->name +
                                                    "', not of '" + r.name.substr(0, 100) + "': answer it with its own name");
        const bool long_running = is_long_running(*found.event, r.id);
        if (answered(session, r.id, long_running, found.event))
            throw Error(errc::already_exists, "function call " + quoted + " was already answered: an answer counts "
                                                  "once, so this one changes nothing");
        if (is_question(r.name)) {
            const std::string original = asked_about(*found.call);
            if (answered(session, original, false, find_call(session, original).event))
                throw Error(errc::already_exists, "the call that question " + quoted + " is about was already "
                                                      "answered: this answer changes nothing");
        }
        if (r.name == request_confirmation_function) {
            try {
                (void)read_confirmation_answer(r.response);
            } catch (const Error& e) {
                throw Error(errc::invalid_argument, "the answer to " + quoted + ": " + e.message());
            }
        } else if (r.name == request_input_function) {
            try {
                (void)read_input_answer(r.response, found.call->args.if_contains("response_schema"));
            } catch (const Error& e) {
                throw Error(errc::invalid_argument, "the answer to " + quoted + ": " + e.message() +
                                                        ". The question still waits for its answer");
            }
        } else if (r.name == request_credential_function) {
            // The answer is the auth config with its credential: kept in the CredentialService, and stored in the
            // session without the credential.
            const json::value* asked = found.call->args.if_contains("authConfig");
            json::object auth_config = r.response;
            if (auth_config.contains("authConfig") && auth_config.at("authConfig").is_object())
                auth_config = auth_config.at("authConfig").get_object();
            if (!auth_config.contains("exchangedAuthCredential") && !auth_config.contains("rawAuthCredential"))
                throw Error(errc::invalid_argument, "the answer to " + quoted + " holds no credential: answer with "
                                                    "the authConfig, its exchangedAuthCredential or rawAuthCredential "
                                                    "filled in");
            // The key is the one the tool asked with, whatever the answer says.
            std::string key = credential_key_of(asked && asked->is_object() ? asked->get_object() : auth_config);
            answers.credentials.emplace_back(CredentialKey(app_name, session.user_id, key), auth_config);
            r.response = json::object{{"credentialKey", key}, {"credential", "kept by the credential service"}};
        }
        if (answers.invocation_id && *answers.invocation_id != found.event->invocation_id)
            throw Error(errc::invalid_argument, "the message answers calls of two invocations (" +
                                                    *answers.invocation_id + " and " + found.event->invocation_id +
                                                    "): answer each in a message of its own");
        answers.invocation_id = found.event->invocation_id;
        answers.answers_pending_long_running = answers.answers_pending_long_running || long_running;
    }
    return answers;
}

std::optional<InvocationRecord> find_invocation(const Session& session, const std::string& invocation_id)
{
    std::optional<InvocationRecord> record;
    for (const Event& e : session.events) {
        if (e.invocation_id != invocation_id)
            continue;
        if (!record)
            record.emplace();
        record->imported = record->imported || is_imported(e);
        if (e.author == "user") {
            if (!record->user_content && e.content && !e.content->parts.empty() && e.content->parts.front().text)
                record->user_content = e.content;
            continue;
        }
        // The agent it started at is its first event's node at the top (its path's first segment), or, for an
        // event without a path, its author; that node's end is the invocation's end.
        std::string_view path = e.node_path();
        std::string_view top = path.substr(0, path.find('/'));
        if (record->started_by.empty()) {
            record->started_by = top.empty() ? e.author : std::string(node_path::name_of(top));
            record->started_at = std::string(top);
        }
        const bool at_start = record->started_at.empty() ? e.author == record->started_by : path == record->started_at;
        if (e.actions.end_of_agent && at_start)
            record->finished = true;
    }
    return record;
}

}  // namespace adk::detail
