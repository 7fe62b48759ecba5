// ReadonlyContext and CallbackContext: what instruction providers and callbacks see.
#pragma once

#include <adk/agents/invocation_context.hpp>
#include <adk/core/event.hpp>

#include <boost/json/value_from.hpp>

#include <string>
#include <utility>
#include <string_view>

namespace adk {

class ReadonlyContext {
public:
    explicit ReadonlyContext(const InvocationContext& ctx) : ctx_(ctx) {}
    virtual ~ReadonlyContext() = default;
    ReadonlyContext(const ReadonlyContext&) = delete;
    ReadonlyContext& operator=(const ReadonlyContext&) = delete;

    const std::string& invocation_id() const noexcept { return ctx_.invocation_id(); }
    const std::string& agent_name() const;
    const std::optional<Content>& user_content() const noexcept { return ctx_.user_content(); }
    Session session() const { return ctx_.session(); }
    // A copy of a state value; nullopt when there is none.
    virtual std::optional<json::value> state(std::string_view key) const { return ctx_.state(key); }
    const InvocationContext& invocation_context() const noexcept { return ctx_; }

protected:
    const InvocationContext& ctx_;
};

// A callback's view: reads see the callback's own writes first; writes are collected in actions() and
// reach the session with the event the callback leads to.
class CallbackContext : public ReadonlyContext {
public:
    explicit CallbackContext(const InvocationContext& ctx) : ReadonlyContext(ctx) {}

    std::optional<json::value> state(std::string_view key) const override;
    // Any value Boost.JSON converts (strings, numbers, json::value, containers, described structs).
    // Throws adk::Error for an invalid key (see validate_state_key).
    template <class T>
    void set_state(std::string_view key, T&& value)
    {
        set_state_value(key, json::value_from(std::forward<T>(value)));
    }
    void set_state_value(std::string_view key, json::value value);
    bool has_state_delta() const noexcept { return !actions_.state_delta.empty(); }

    EventActions& actions() noexcept { return actions_; }

private:
    EventActions actions_;
};

}  // namespace adk
