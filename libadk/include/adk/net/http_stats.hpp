// What the process's HTTP clients (adk/net/http_client.hpp) hold now, for metrics: connections open (pooled idle,
// or carrying a request) and requests whose connection is in use. Counted across every HttpClient of the process.
#pragma once

#include <cstdint>

namespace adk::net {

class HttpClientStats {
public:
    std::int64_t connections_open = 0;  // sockets connected, idle in a pool or in use
    std::int64_t connections_active = 0;  // of those, carrying a request or reading its response
};

HttpClientStats http_client_stats() noexcept;

}  // namespace adk::net
