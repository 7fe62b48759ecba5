// The server's plain TCP connections (http_server_impl.hpp says why this is a file of its own).
#include "http_connection.hpp"

namespace adk::net::detail {

void start_plain_connection(std::shared_ptr<HttpServer::Impl> server, tcp::socket socket, asio::any_io_executor executor,
                            std::size_t id, Admission admission)
{
    auto conn = std::make_shared<Connection<beast::tcp_stream>>(server, std::move(socket));
    conn->admit(admission);
    start_connection(std::move(server), std::move(conn), std::move(executor), id);
}

}  // namespace adk::net::detail
