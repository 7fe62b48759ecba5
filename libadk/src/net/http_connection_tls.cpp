// The server's TLS connections (http_server_impl.hpp says why this is a file of its own).
#include "http_connection.hpp"

#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/ssl.hpp>

namespace adk::net::detail {

void start_tls_connection(std::shared_ptr<HttpServer::Impl> server, tcp::socket socket, asio::any_io_executor executor,
                          std::size_t id, Admission admission)
{
    auto conn = std::make_shared<Connection<ssl::stream<beast::tcp_stream>>>(server, std::move(socket), server->tls);
    conn->admit(admission);
    start_connection(std::move(server), std::move(conn), std::move(executor), id);
}

}  // namespace adk::net::detail
