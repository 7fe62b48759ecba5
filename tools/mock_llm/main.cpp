// mock-llm: a provider server on loopback for tests, samples, demos and benchmarks. See README.md.
#include "server.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <iostream>

int main(int argc, char** argv)
{
    adk::mock_llm::ServerOptions options;
    try {
        options = adk::mock_llm::parse_command_line(std::vector<std::string>(argv + 1, argv + argc));
    } catch (const std::exception& e) {
        std::cerr << "mock-llm: " << e.what() << '\n';
        return 2;
    }
    try {
        boost::asio::io_context ioc;
        adk::mock_llm::Server server(ioc.get_executor(), options);
        server.start();
        std::cout << "listening on " << server.base_url() << std::endl;
        boost::asio::signal_set signals(ioc, SIGINT, SIGTERM);
        signals.async_wait([&](auto, int) {
            server.stop();
            ioc.stop();
        });
        ioc.run();
    } catch (const std::exception& e) {
        std::cerr << "mock-llm: " << e.what() << '\n';
        return 1;
    }
    return 0;
}
