#include <adk/artifacts/artifact_service.hpp>
#include <adk/core/error.hpp>
#include <adk/core/identifier.hpp>
#include <adk/flow/instruction_template.hpp>
#include <adk/sessions/state.hpp>

#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>

namespace adk {

namespace {

std::string_view trim(std::string_view s)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n'))
        s.remove_suffix(1);
    return s;
}

std::string as_text(const json::value& v)
{
    return v.is_string() ? std::string(v.get_string()) : json::serialize(v);
}

}  // namespace

bool is_valid_state_name(std::string_view name)
{
    auto colon = name.find(':');
    if (colon == std::string_view::npos)
        return is_identifier(name);
    std::string_view prefix = name.substr(0, colon + 1);
    if (prefix != app_state_prefix && prefix != user_state_prefix && prefix != temp_state_prefix)
        return false;
    return is_identifier(name.substr(colon + 1));
}

asio::awaitable<std::string> inject_session_state(std::string_view instruction, const ReadonlyContext& ctx)
{
    std::string out;
    std::size_t pos = 0;
    while (pos < instruction.size()) {
        // A match is a run of '{', then no braces, then a run of '}' (ADK's pattern {+[^{}]*}+).
        std::size_t open = instruction.find('{', pos);
        if (open == std::string_view::npos)
            break;
        std::size_t inner = open;
        while (inner < instruction.size() && instruction[inner] == '{')
            ++inner;
        std::size_t close = instruction.find_first_of("{}", inner);
        if (close == std::string_view::npos || instruction[close] == '{') {
            out.append(instruction.substr(pos, (close == std::string_view::npos ? instruction.size() : close) - pos));
            pos = close == std::string_view::npos ? instruction.size() : close;
            continue;
        }
        std::size_t end = close;
        while (end < instruction.size() && instruction[end] == '}')
            ++end;
        out.append(instruction.substr(pos, open - pos));
        std::string_view whole = instruction.substr(open, end - open);
        std::string_view name = trim(instruction.substr(inner, close - inner));
        pos = end;

        bool optional = !name.empty() && name.back() == '?';
        if (optional)
            name.remove_suffix(1);
        if (name.substr(0, 9) == "artifact.") {
            std::string filename(name.substr(9));
            const InvocationContext& ic = ctx.invocation_context();
            if (!ic.artifact_service())
                throw Error(errc::invalid_argument, "the instruction uses {" + std::string(name) +
                                                        "} but the Runner has no artifact service: set "
                                                        "RunnerOptions::artifact_service");
            std::optional<Part> artifact = co_await ic.artifact_service()->load_artifact(
                {ic.app_name(), ic.user_id(), ic.session_id(), filename});
            if (!artifact) {
                if (optional)
                    continue;
                throw Error(errc::not_found, "artifact '" + filename +
                                                 "' used in the instruction does not exist: save it first, or "
                                                 "write {artifact." + filename + "?} to make it optional");
            }
            out += artifact->text ? *artifact->text : json::serialize(json::value_from(*artifact));
            continue;
        }
        if (!is_valid_state_name(name)) {
            out.append(whole);  // not a placeholder: keep as written
            continue;
        }
        if (std::optional<json::value> v = ctx.state(name)) {
            out += as_text(*v);
        } else if (!optional) {
            throw Error(errc::not_found, "context variable not found: `" + std::string(name) +
                                             "` is used in the instruction but not in the session state; set it, "
                                             "or write {" + std::string(name) + "?} to make it optional");
        }
    }
    out.append(instruction.substr(std::min(pos, instruction.size())));
    co_return out;
}

}  // namespace adk
