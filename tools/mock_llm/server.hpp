// mock-llm's server: Gemini, OpenAI chat and Anthropic wire formats on 127.0.0.1 over HTTP or HTTPS, answering
// by a script (render.hpp) or replaying a recorded body, with knobs that break the stream the ways networks
// and providers do. The mock-llm program and the tests both run it, on adk-cpp's HTTP server core
// (adk/net/http_server.hpp).
#pragma once

#include <adk/net/http_server.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace adk::mock_llm {

class ServerOptions {
public:
    ServerOptions() = default;
    std::string host = "127.0.0.1";
    unsigned short port = 0;  // 0: a free port
    bool tls = false;
    std::string cert_file;  // PEM, with tls
    std::string key_file;

    std::optional<boost::json::value> script;  // answer by script...
    std::string replay_body;                   // ...or serve this recorded body to every request
    std::string replay_content_type = "text/event-stream";

    std::chrono::milliseconds chunk_delay{0};            // before each frame after the first
    // With chunk_delay: the frames of the n-th request are written at the times t of the monotonic clock where
    // t mod chunk_delay = (n x 0.618... mod 1) x chunk_delay, one slot after another (no drift): streams opened
    // together do not write together, however fast their client opened them (a paced benchmark's chunks come
    // spread alike to every server).
    bool spread_chunks = false;
    std::size_t split_bytes = 0;                         // write each frame in pieces of this many bytes
    std::optional<std::size_t> disconnect_after_bytes;   // close the socket after this many body bytes
    std::optional<unsigned> status;                      // answer with this status and the format's error body
    std::string retry_after;                             // with `status`: the Retry-After header
    std::size_t status_times = 0;                        // with `status`: only the first N requests (0: all)
    bool stamp = false;  // "{t}" in a frame becomes CLOCK_MONOTONIC nanoseconds at its write (benchmarks)
    std::string trace_log;  // when set: one line per request appended to this file, its traceparent header or "-"
};

// A request as the server received it (header names in lower case).
using ReceivedRequest = net::IncomingRequest;

class Server {
public:
    // The server's handlers run on `ex`, whose io_context one thread runs (as the mock-llm program and the
    // tests' MockLlm do): a benchmark's mock-llm shares the machine with the runtime it measures, and a strand
    // would cost it a dispatch at every step.
    // Throws std::invalid_argument for a script that is not one (tools/mock_llm/README.md), naming the turn and
    // the field.
    Server(boost::asio::any_io_executor ex, ServerOptions options);
    ~Server();
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    // Binds and starts accepting; throws std::system_error when the address is taken.
    void start();
    // Closes the listener and every connection. Safe from any thread.
    void stop();

    unsigned short port() const;
    std::string base_url() const;  // "http://127.0.0.1:PORT" or https://
    std::vector<ReceivedRequest> requests() const;
    std::size_t connections_accepted() const;
    std::size_t open_connections() const;
    std::size_t body_bytes_written() const;
    // Gemini context caches held now (cached_contents.hpp).
    std::size_t cached_contents() const;

    class Impl;

private:
    std::shared_ptr<Impl> impl_;
};

// The options from mock-llm's command line (see README.md); throws std::invalid_argument with a usage
// message on bad arguments.
ServerOptions parse_command_line(const std::vector<std::string>& args);

}  // namespace adk::mock_llm
