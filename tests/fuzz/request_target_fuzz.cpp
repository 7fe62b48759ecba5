// The server's request targets (server/src/request_target.hpp): any target a client sends is either refused
// with a reason or split into segments that hold no '/', '\\', control character, "." or "..", which the
// routes (adk/server/routes.hpp) then match safely.
#include "request_target.hpp"

#include <adk/net/url.hpp>
#include <adk/server/routes.hpp>

#include "fuzz.hpp"

namespace {

const adk::server::Routes& routes()
{
    static const adk::server::Routes table = [] {
        const auto nothing = [](adk::server::RouteRequest&) -> boost::asio::awaitable<void> { co_return; };
        adk::server::Routes r;
        r.add("GET", "/apps/{}/users/{}/sessions/{}", nothing);
        r.add("POST", "/tasks/{}:cancel", nothing);
        return r;
    }();
    return table;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size)
{
    std::string_view target = adk::fuzz::as_text(data, size);
    // A webhook's path resolved (adk::net::resolve_dot_segments): no "." or ".." segment is left, percent-encoded
    // or not, the query is kept as it was, and resolving again changes nothing.
    const std::string resolved = adk::net::resolve_dot_segments(target);
    adk::fuzz::check(resolved.starts_with('/'), "a resolved path starts with '/'");
    const std::size_t query = resolved.find('?');
    adk::fuzz::check((query == std::string::npos) == (target.find('?') == std::string_view::npos) &&
                         (query == std::string::npos || resolved.substr(query) == target.substr(target.find('?'))),
                     "the query is kept");
    for (std::string_view rest = std::string_view(resolved).substr(0, query); !rest.empty();) {
        rest.remove_prefix(1);
        const std::string_view segment = rest.substr(0, rest.find('/'));
        adk::fuzz::check(segment != "." && segment != "..", "no dot segment is left");
        rest.remove_prefix(segment.size());
    }
    adk::fuzz::check(adk::net::resolve_dot_segments(resolved) == resolved, "resolving is idempotent");
    std::string refused;
    auto parsed = adk::server::detail::RequestTarget::parse(target, refused);
    if (!refused.empty())
        return 0;
    adk::fuzz::check(!target.empty() && target.front() == '/', "an accepted target starts with '/'");
    for (const auto& segment : parsed.segments) {
        adk::fuzz::check(!segment.empty() && segment != "." && segment != "..", "no empty, '.' or '..' segment");
        for (char c : segment) {
            auto u = static_cast<unsigned char>(c);
            adk::fuzz::check(c != '/' && c != '\\' && u >= 0x20 && u != 0x7f, "no separator or control character");
        }
    }
    std::vector<std::string> params;
    if (routes().find("GET", parsed.segments, params))
        adk::fuzz::check(params.size() == 3 && params[2] == parsed.segments[5], "a match yields each wildcard's segment");
    if (routes().find("POST", parsed.segments, params))
        adk::fuzz::check(params.size() == 1 && !params[0].empty() && parsed.segments[1] == params[0] + ":cancel",
                         "a verb's parameter is what precedes it");
    return 0;
}
