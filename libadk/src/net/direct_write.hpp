// Writing a message in one call where the socket takes it, shared by the HTTP client (its request) and server (a
// response's head, a whole answer, a stream's chunk): the bytes Beast's serializer writes, as one string, in
// place of Beast's write walking the head's many small buffers through an asynchronous write; and a write of
// what the socket takes now, without an asynchronous operation, its timer or a trip through the scheduler.
#pragma once

#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/buffers_range.hpp>
#include <boost/system/error_code.hpp>

#include <cstddef>
#include <string>

namespace adk::net::detail {

// Everything `serializer` writes, or its head alone when `head_only`; `ec` is its error, if any.
template <class Serializer>
std::string message_text(Serializer& serializer, bool head_only, boost::system::error_code& ec)
{
    serializer.split(head_only);
    std::string out;
    do {
        serializer.next(ec, [&](boost::system::error_code&, const auto& buffers) {
            std::size_t n = 0;
            for (const auto b : boost::beast::buffers_range_ref(buffers)) {
                out.append(static_cast<const char*>(b.data()), b.size());
                n += b.size();
            }
            serializer.consume(n);
        });
    } while (!ec && !(head_only ? serializer.is_header_done() : serializer.is_done()));
    return out;
}

// Writes what `socket` takes of `buffers` now, without waiting, and returns how much: all of it, or `ec` is
// would_block (the socket took part of it, or none; the caller writes the rest under its timeout) or the failure.
template <class Buffers>
std::size_t write_some_now(boost::asio::ip::tcp::socket& socket, const Buffers& buffers, boost::system::error_code& ec)
{
    namespace asio = boost::asio;
    if (!socket.non_blocking())
        socket.non_blocking(true, ec);
    const std::size_t written = ec ? 0 : socket.write_some(buffers, ec);
    if (!ec && written < asio::buffer_size(buffers))
        ec = asio::error::would_block;
    if (ec && ec == asio::error::try_again)  // `ec &&`: the comparison is a call, made for every chunk
        ec = asio::error::would_block;
    return written;
}

}  // namespace adk::net::detail
