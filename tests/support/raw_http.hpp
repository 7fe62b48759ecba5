// Raw sockets for the clients that HttpClient would never be: a request written byte for byte, and whatever
// the server sends back until it closes the connection.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>

#include <string>

#include <sys/socket.h>
#include <sys/time.h>

namespace adk::test {

// Every byte the peer sends on `socket` until it closes it (or 10 s pass).
inline std::string read_until_closed(boost::asio::ip::tcp::socket& socket)
{
    timeval ten_seconds{10, 0};
    ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &ten_seconds, sizeof ten_seconds);
    std::string out;
    boost::system::error_code ec;
    char buffer[4096];
    while (!ec) {
        std::size_t n = socket.read_some(boost::asio::buffer(buffer), ec);
        out.append(buffer, n);
    }
    return out;
}

// Connects to 127.0.0.1:port, writes `request` as it is, and returns every byte the server sends until it
// closes the connection (or 10 s pass).
inline std::string raw_exchange(unsigned short port, const std::string& request)
{
    boost::asio::io_context io;
    boost::asio::ip::tcp::socket socket(io);
    socket.connect(boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port));
    boost::system::error_code ec;
    boost::asio::write(socket, boost::asio::buffer(request), ec);  // a server that refused early may cut it short
    return read_until_closed(socket);
}

}  // namespace adk::test
