// A request's target ("/apps/a/users/u/sessions?x=1") as the server routes it: the path's segments,
// percent-decoded, and the query's parameters. Everything in it came over the socket: parse() refuses what
// a route could be fooled by, and says why.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace adk::server::detail {

// Why `id` (an app, user or session id a body names) could not be a path segment, or nothing: what a body
// stores must stay reachable by the routes that read it. Refused: empty, "." or "..", a '/', a '\\' or a
// control character, text that is not UTF-8.
std::optional<std::string> id_refusal(std::string_view id);

class RequestTarget {
public:
    // The segments of the path; the query's parameters (the last value of a repeated name).
    std::vector<std::string> segments;
    std::map<std::string, std::string, std::less<>> query;

    // The target parsed; or the reason it is refused: not starting with '/', longer than `max_length`, a bad
    // percent-encoding, or a segment that decodes to a control character, '/', '\\', "." or "..".
    static RequestTarget parse(std::string_view target, std::string& refused, std::size_t max_length = 4096);

    std::optional<std::string_view> query_value(std::string_view name) const;
};

}  // namespace adk::server::detail
