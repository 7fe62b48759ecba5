#include <adk/agents/agent.hpp>
#include <adk/agents/callback_context.hpp>
#include <adk/sessions/state.hpp>

namespace adk {

const std::string& ReadonlyContext::agent_name() const
{
    return ctx_.agent().name();
}

std::optional<json::value> CallbackContext::state(std::string_view key) const
{
    if (const json::value* v = actions_.state_delta.if_contains(key))
        return *v;
    return ctx_.state(key);
}

void CallbackContext::set_state_value(std::string_view key, json::value value)
{
    validate_state_key(key);
    actions_.state_delta[key] = std::move(value);
}

}  // namespace adk
