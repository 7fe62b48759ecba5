// What a user's message answers, and which invocation a run continues: the Runner's checks before it stores
// anything, so that a bad answer changes nothing.
#pragma once

#include <adk/auth/credential_service.hpp>
#include <adk/core/content.hpp>
#include <adk/sessions/session.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace adk::detail {

class Answers {
public:
    Answers() = default;
    std::optional<std::string> invocation_id;  // the invocation whose calls the message answers
    bool answers_pending_long_running = false;  // it answers a long-running tool, which may outlive its invocation
    std::vector<std::pair<CredentialKey, json::object>> credentials;  // to keep before the message is stored
};

// Checks each functionResponse of the message against the session: it must name a function call of an agent
// there, by id and name, that has no answer yet; an answer to adk_request_confirmation must be one; an answer
// to adk_request_credential must be an auth config, whose credential is taken out of the message (it is kept in
// the CredentialService instead). All the answers must belong to one invocation. Throws adk::Error
// (invalid_argument, or already_exists for a call already answered) that says what is wrong.
Answers check_answers(const Session& session, Content& message, const std::string& app_name);

// An invocation of the session, as it can be resumed.
class InvocationRecord {
public:
    InvocationRecord() = default;
    std::optional<Content> user_content;  // the user's message that started it
    std::string started_by;                // the agent it started at ("" when no agent got to emit)
    std::string started_at;                // that agent's node path ("name@1"; "" for events without paths)
    bool finished = false;                 // that agent recorded its end (resumable apps)
    bool imported = false;                 // an event of it was imported with the session (is_imported)
};

// nullopt when the session holds no event of the invocation.
std::optional<InvocationRecord> find_invocation(const Session& session, const std::string& invocation_id);

}  // namespace adk::detail
