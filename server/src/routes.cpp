#include <adk/server/routes.hpp>

#include "request_target.hpp"

#include <algorithm>

namespace adk::server {

unsigned http_status(const Error& e) noexcept
{
    if (e.code().category() != error_category())
        return 500;  // a system's or a library's error: the server's own failure
    switch (static_cast<errc>(e.code().value())) {
    case errc::invalid_argument: return 400;
    case errc::not_found: return 404;
    case errc::already_exists: return 409;
    case errc::too_large: return 413;
    case errc::unavailable: return 503;
    case errc::timed_out: return 504;
    default: return 500;
    }
}

std::optional<std::string_view> RouteRequest::query(std::string_view name) const
{
    return target.query_value(name);
}

std::vector<Routes::Segment> Routes::parse_pattern(std::string_view pattern)
{
    if (!pattern.starts_with('/'))
        throw Error(errc::invalid_argument, "a route's pattern starts with '/': " + std::string(pattern));
    std::vector<Segment> out;
    pattern.remove_prefix(1);
    while (!pattern.empty()) {
        const std::size_t slash = pattern.find('/');
        const std::string_view text = pattern.substr(0, slash);
        pattern = slash == std::string_view::npos ? std::string_view() : pattern.substr(slash + 1);
        if (text.empty() || (slash != std::string_view::npos && pattern.empty()))
            throw Error(errc::invalid_argument, "a route's pattern has an empty segment");
        Segment segment;
        if (text == "{}") {
            segment.kind = Segment::any;
        } else if (text.starts_with("{}:") && text.size() > 3) {
            segment.kind = Segment::verb;
            segment.text = text.substr(2);
        } else {
            segment.text = text;
        }
        out.push_back(std::move(segment));
    }
    return out;
}

bool Routes::fits(const std::vector<Segment>& pattern, const std::vector<std::string>& segments,
                  std::vector<std::string>* params)
{
    if (pattern.size() != segments.size())
        return false;
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        const Segment& p = pattern[i];
        const std::string& s = segments[i];
        const bool ok = p.kind == Segment::literal ? s == p.text
                        : p.kind == Segment::any   ? true
                                                   : s.size() > p.text.size() && s.ends_with(p.text);
        if (!ok)
            return false;
    }
    if (params) {
        params->clear();
        for (std::size_t i = 0; i < pattern.size(); ++i) {
            if (pattern[i].kind == Segment::any)
                params->push_back(segments[i]);
            else if (pattern[i].kind == Segment::verb)
                params->push_back(segments[i].substr(0, segments[i].size() - pattern[i].text.size()));
        }
    }
    return true;
}

Routes& Routes::add(std::string_view methods, std::string_view pattern, Handler handler)
{
    Route route;
    while (!methods.empty()) {
        const std::size_t space = methods.find(' ');
        if (space != 0)
            route.methods.emplace_back(methods.substr(0, space));
        methods = space == std::string_view::npos ? std::string_view() : methods.substr(space + 1);
    }
    if (route.methods.empty())
        throw Error(errc::invalid_argument, "a route needs a method");
    route.pattern = parse_pattern(pattern);
    route.handler = std::move(handler);
    routes_.push_back(std::move(route));
    return *this;
}

Routes& Routes::mount(std::string_view prefix, const Routes& routes)
{
    std::vector<Segment> head = parse_pattern(prefix);
    for (const Route& r : routes.routes_) {
        Route mounted = r;
        mounted.pattern.insert(mounted.pattern.begin(), head.begin(), head.end());
        routes_.push_back(std::move(mounted));
    }
    return *this;
}

Routes& Routes::add_open(std::string_view methods, std::string_view pattern, Handler handler)
{
    add(methods, pattern, std::move(handler));
    routes_.back().open = true;
    return *this;
}

const Routes::Route* Routes::route_for(std::string_view method, const std::vector<std::string>& segments,
                                       std::vector<std::string>* params) const
{
    for (const Route& r : routes_) {
        if (std::find(r.methods.begin(), r.methods.end(), method) != r.methods.end() &&
            fits(r.pattern, segments, params))
            return &r;
    }
    return nullptr;
}

const Routes::Handler* Routes::find(std::string_view method, const std::vector<std::string>& segments,
                                    std::vector<std::string>& params) const
{
    const Route* r = route_for(method, segments, &params);
    return r ? &r->handler : nullptr;
}

bool Routes::open(std::string_view method, const std::vector<std::string>& segments) const
{
    const Route* r = route_for(method, segments, nullptr);
    return r && r->open;
}

std::string Routes::methods_of(const std::vector<std::string>& segments) const
{
    std::vector<std::string_view> methods;
    for (const Route& r : routes_)
        if (fits(r.pattern, segments, nullptr))
            for (const std::string& m : r.methods)
                if (std::find(methods.begin(), methods.end(), m) == methods.end())
                    methods.push_back(m);
    std::string out;
    for (std::string_view m : methods) {
        if (!out.empty())
            out += ", ";
        out += m;
    }
    return out;
}

}  // namespace adk::server
