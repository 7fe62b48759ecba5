// tools/mock-llm's server on its own thread and io_context, for end-to-end tests whose client side runs
// on the test's io_context.
#pragma once

#include "server.hpp"

#include <boost/asio/io_context.hpp>

#include <thread>

namespace adk::test {

class MockLlm {
public:
    explicit MockLlm(mock_llm::ServerOptions options) : server_(ioc_.get_executor(), std::move(options))
    {
        server_.start();
        thread_ = std::thread([this] { ioc_.run(); });
    }
    ~MockLlm()
    {
        server_.stop();
        thread_.join();  // returns once the listener and every connection are closed
    }
    MockLlm(const MockLlm&) = delete;
    MockLlm& operator=(const MockLlm&) = delete;

    mock_llm::Server& server() { return server_; }
    std::string base_url() const { return server_.base_url(); }

private:
    boost::asio::io_context ioc_;
    mock_llm::Server server_;
    std::thread thread_;
};

}  // namespace adk::test
