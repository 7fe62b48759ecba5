// The bytes Beast's serializer writes for a message, as one string: what the HTTP client and server write in one
// call where Beast's own write walks the head's many small buffers through an asynchronous write.
#pragma once

#include <boost/beast/core/buffers_range.hpp>
#include <boost/system/error_code.hpp>

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

}  // namespace adk::net::detail
