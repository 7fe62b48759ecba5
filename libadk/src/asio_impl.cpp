// Asio's non-template code, compiled once for the library and its users
// (BOOST_ASIO_SEPARATE_COMPILATION is a public definition of adk::adk).
#include <boost/asio/impl/src.hpp>
