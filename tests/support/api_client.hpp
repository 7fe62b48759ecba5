// Test helpers for adk::server over loopback HTTP: one-shot calls that read the whole answer, and a reader of
// Server-Sent Events frames.
#pragma once

#include <adk/core/json_limits.hpp>
#include <adk/net/http_client.hpp>
#include <adk/server/api_server.hpp>
#include <adk/sessions/session_service.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace adk::test {

class Reply {
public:
    unsigned status = 0;
    std::string body;
    // Parsed as adk-cpp's readers parse (deeper than Boost.JSON's default of 32 levels).
    boost::json::value json() const
    {
        if (body.empty())
            return {};
        boost::json::parse_options options;
        options.max_depth = max_read_json_depth;
        return boost::json::parse(body, {}, options);
    }
};

// (string_view parameters: g++ 12 miscompiles std::string temporaries built in a co_await expression.)
inline asio::awaitable<Reply> call(net::HttpClient& client, const server::ApiServer& server, std::string_view method,
                                   std::string_view path, std::string_view body = {})
{
    net::HttpRequest req(std::string(method), server.base_url() + std::string(path));
    if (!body.empty())
        req.set("content-type", "application/json");
    req.body = std::string(body);
    net::HttpResponse res = co_await client.send(std::move(req));
    Reply r;
    r.status = res.status();
    r.body = co_await res.read_all();
    co_return r;
}

// A client that never retries: a 409 is an answer here, not a reason to try again.
inline net::HttpClientOptions no_retries()
{
    net::HttpClientOptions o;
    o.retry.max_retries = 0;
    return o;
}

inline server::ApiServerOptions options_with(std::shared_ptr<SessionService> sessions)
{
    server::ApiServerOptions options;
    options.http.port = 0;
    options.session_service = std::move(sessions);
    return options;
}

// One Server-Sent Events frame: its id (empty when none) and its data.
class Frame {
public:
    std::string id;
    std::string data;
    boost::json::value json() const { return boost::json::parse(data); }
};

// Reads frames off a streamed response as they arrive.
class FrameReader {
public:
    explicit FrameReader(net::HttpResponse& res) : res_(res) {}

    // The frames up to `count` more (fewer at the end of the stream).
    asio::awaitable<std::vector<Frame>> read(std::size_t count)
    {
        std::vector<Frame> out;
        while (out.size() < count) {
            const auto end = buffer_.find("\n\n");
            if (end == std::string::npos) {
                std::string_view more = co_await res_.read_some();
                if (more.empty())
                    break;
                buffer_.append(more);
                continue;
            }
            Frame frame;
            std::string_view text(buffer_.data(), end);
            while (!text.empty()) {
                const auto nl = text.find('\n');
                std::string_view line = text.substr(0, nl);
                if (line.starts_with("id: "))
                    frame.id = std::string(line.substr(4));
                else if (line.starts_with("data: "))
                    frame.data = std::string(line.substr(6));
                text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
            }
            buffer_.erase(0, end + 2);
            out.push_back(std::move(frame));
        }
        co_return out;
    }

    asio::awaitable<std::vector<Frame>> read_all() { return read(static_cast<std::size_t>(-1)); }

private:
    net::HttpResponse& res_;
    std::string buffer_;
};

}  // namespace adk::test
