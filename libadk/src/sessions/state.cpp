#include <adk/core/error.hpp>
#include <adk/sessions/state.hpp>

#include "../core/printable.hpp"

#include <string>

namespace adk {

void validate_state_key(std::string_view key)
{
    auto refuse = [&](const std::string& why) {
        throw Error(errc::invalid_argument, "state key '" + detail::printable(key, 64) + "' is refused: " + why +
                                                ". Use a short name such as 'user:city' or 'draft_count'");
    };
    if (key.empty())
        refuse("it is empty");
    for (std::string_view scope : {app_state_prefix, user_state_prefix, temp_state_prefix})
        if (key == scope)
            refuse("it names the scope '" + std::string(scope) + "' but no key in it");
    if (key.size() > max_state_key_bytes)
        refuse("it is " + std::to_string(key.size()) + " bytes long, over the limit of " +
               std::to_string(max_state_key_bytes));
    for (char c : key) {
        auto u = static_cast<unsigned char>(c);
        if (c == '\0')
            refuse("it contains a NUL character");
        if (u < 0x20 || u == 0x7f)
            refuse("it contains a control character");
        if (c == '/' || c == '\\')
            refuse("it contains a path separator");
    }
    if (key.find("..") != std::string_view::npos)
        refuse("it contains '..'");
}

}  // namespace adk

namespace adk {

namespace {

bool has_prefix(std::string_view key, std::string_view prefix)
{
    return key.substr(0, prefix.size()) == prefix;
}

void add_with_prefix(json::object& out, std::string_view prefix, const json::object& scope)
{
    std::string key(prefix);
    for (const auto& kv : scope) {
        key.resize(prefix.size());
        key += kv.key();
        out[key] = kv.value();
    }
}

}  // namespace

void validate_state_keys(const json::object& state)
{
    for (const auto& kv : state)
        validate_state_key(kv.key());
}

void check_state_delta(const json::object& delta, const StateLimits& limits)
{
    std::size_t total = 2;
    for (const auto& kv : delta) {
        validate_state_key(kv.key());
        const std::string where = "state '" + detail::printable(kv.key(), 64) + "'";
        const std::size_t bytes = check_json(kv.value(), where, max_state_value_depth);
        if (bytes > limits.max_value_bytes)
            throw Error(errc::too_large, where + " is " + std::to_string(bytes) +
                                             " bytes of JSON, over the limit of " +
                                             std::to_string(limits.max_value_bytes) +
                                             " for one value (StateLimits::max_value_bytes): keep large data in "
                                             "an artifact and its name in state");
        total += kv.key().size() + 4 + bytes;
    }
    if (total > limits.max_delta_bytes)
        throw Error(errc::too_large, "the state delta is " + std::to_string(total) +
                                         " bytes of JSON, over the limit of " + std::to_string(limits.max_delta_bytes) +
                                         " for what one event sets (StateLimits::max_delta_bytes): set fewer or "
                                         "smaller values");
}

void check_scope_bytes(const StateLimits& limits, std::string_view scope, std::size_t bytes)
{
    if (bytes > limits.max_scope_bytes)
        throw Error(errc::too_large, "the state of " + std::string(scope) + " would hold " + std::to_string(bytes) +
                                         " bytes of JSON, over the limit of " + std::to_string(limits.max_scope_bytes) +
                                         " (StateLimits::max_scope_bytes): remove keys it no longer needs, or keep "
                                         "large data in an artifact");
}

std::size_t state_bytes_after(const json::object& state, const json::object& delta)
{
    std::size_t bytes = check_json(state, "state", max_read_json_depth);
    for (const auto& kv : delta) {
        const std::size_t entry = kv.key().size() + 4;
        if (const json::value* old = state.if_contains(kv.key()))
            bytes -= entry + check_json(*old, "state", max_read_json_depth);
        bytes += entry + check_json(kv.value(), "state", max_read_json_depth);
    }
    return bytes;
}

ScopedState split_state_delta(const json::object& delta)
{
    ScopedState out;
    for (const auto& kv : delta) {
        std::string_view key = kv.key();
        if (has_prefix(key, app_state_prefix))
            out.app[key.substr(app_state_prefix.size())] = kv.value();
        else if (has_prefix(key, user_state_prefix))
            out.user[key.substr(user_state_prefix.size())] = kv.value();
        else if (!has_prefix(key, temp_state_prefix))
            out.session[key] = kv.value();
    }
    return out;
}

json::object merge_state(const json::object& app, const json::object& user, const json::object& session)
{
    json::object out = session;
    add_with_prefix(out, app_state_prefix, app);
    add_with_prefix(out, user_state_prefix, user);
    return out;
}

json::object take_temp_state(json::object& delta)
{
    json::object temp;
    for (auto it = delta.begin(); it != delta.end();) {
        if (has_prefix(it->key(), temp_state_prefix)) {
            temp.emplace(it->key(), std::move(it->value()));
            it = delta.erase(it);
        } else {
            ++it;
        }
    }
    return temp;
}

void assign_state(json::object& state, json::object& delta)
{
    for (auto& kv : delta)
        state[kv.key()] = std::move(kv.value());
}

}  // namespace adk
