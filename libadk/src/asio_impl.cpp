// Asio's, Asio SSL's and Beast's non-template code, compiled once for the library and its users
// (BOOST_ASIO_SEPARATE_COMPILATION and BOOST_BEAST_SEPARATE_COMPILATION are public definitions of adk::adk).
#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>
