// Reads back a session of app "app", user "u" from the database a URL names, on an io_context of its own: what
// the tests of processes (killed, resumed, run side by side) check after the processes ended.
#pragma once

#include <adk/services/service_url.hpp>
#include <adk/sessions/session_service.hpp>

#include "support/run.hpp"

#include <boost/asio/io_context.hpp>

#include <stdexcept>
#include <string>

namespace adk::test {

inline Session read_session(const std::string& url, const std::string& id)
{
    auto sessions = services::open_session_service(url);
    boost::asio::io_context ioc;
    return run(ioc, [&]() -> boost::asio::awaitable<Session> {
        GetSessionRequest request("app", "u", id);
        auto s = co_await sessions->get_session(std::move(request));
        if (!s)
            throw std::runtime_error("the session is gone");
        co_return std::move(*s);
    }());
}

}  // namespace adk::test
