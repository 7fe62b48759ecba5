#include <adk/core/stream.hpp>

namespace adk::detail {

std::exception_ptr as_adk_error(std::exception_ptr failure)
{
    try {
        std::rethrow_exception(failure);
    } catch (const Error&) {
        return failure;
    } catch (const boost::system::system_error& e) {
        return std::make_exception_ptr(Error(e.code(), e.what()));
    } catch (const std::exception& e) {
        return std::make_exception_ptr(Error(errc::agent_failed, e.what()));
    } catch (...) {
        return std::make_exception_ptr(
            Error(errc::agent_failed, "the producer threw something that is not a std::exception; throw adk::Error"));
    }
}

}  // namespace adk::detail
