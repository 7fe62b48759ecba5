#include <adk/core/strands.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>

namespace adk {

namespace asio = boost::asio;

asio::any_io_executor new_strand(const asio::any_io_executor& ex)
{
    if (auto* e = ex.target<asio::io_context::executor_type>())
        return asio::make_strand(*e);
    if (auto* e = ex.target<asio::thread_pool::executor_type>())
        return asio::make_strand(*e);
    if (auto* s = ex.target<asio::strand<asio::io_context::executor_type>>())
        return asio::make_strand(s->get_inner_executor());
    if (auto* s = ex.target<asio::strand<asio::thread_pool::executor_type>>())
        return asio::make_strand(s->get_inner_executor());
    if (auto* s = ex.target<asio::strand<asio::any_io_executor>>())
        return asio::make_strand(s->get_inner_executor());
    return asio::make_strand(ex);
}

asio::any_io_executor branch_executor(const asio::any_io_executor& ex)
{
    bool on_strand = ex.target<asio::strand<asio::io_context::executor_type>>() ||
                     ex.target<asio::strand<asio::thread_pool::executor_type>>() ||
                     ex.target<asio::strand<asio::any_io_executor>>();
    return on_strand ? new_strand(ex) : ex;
}

}  // namespace adk
