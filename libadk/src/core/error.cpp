#include <adk/core/error.hpp>

#include <boost/system/errc.hpp>

namespace adk {
namespace {

class Category final : public boost::system::error_category {
public:
    const char* name() const noexcept override { return "adk"; }

    std::string message(int ev) const override
    {
        switch (static_cast<errc>(ev)) {
        case errc::invalid_argument: return "invalid argument";
        case errc::not_found: return "not found";
        case errc::already_exists: return "already exists";
        case errc::cancelled: return "cancelled";
        case errc::llm_call_limit_exceeded: return "LLM call limit exceeded";
        case errc::agent_failed: return "agent failed";
        case errc::stream_closed: return "stream closed";
        case errc::bad_response: return "bad response from the provider";
        case errc::storage_failed: return "storage failed";
        case errc::too_large: return "too large";
        case errc::timed_out: return "timed out";
        case errc::unavailable: return "unavailable";
        case errc::node_run_limit_exceeded: return "node run limit exceeded";
        }
        return "unknown adk error";
    }

    // Lets callers test portable conditions: e == boost::system::errc::operation_canceled.
    boost::system::error_condition default_error_condition(int ev) const noexcept override
    {
        namespace sys = boost::system;
        switch (static_cast<errc>(ev)) {
        case errc::invalid_argument: return sys::errc::make_error_code(sys::errc::invalid_argument).default_error_condition();
        case errc::not_found: return sys::errc::make_error_code(sys::errc::no_such_file_or_directory).default_error_condition();
        case errc::already_exists: return sys::errc::make_error_code(sys::errc::file_exists).default_error_condition();
        case errc::cancelled: return sys::errc::make_error_code(sys::errc::operation_canceled).default_error_condition();
        case errc::too_large: return sys::errc::make_error_code(sys::errc::value_too_large).default_error_condition();
        case errc::timed_out: return sys::errc::make_error_code(sys::errc::timed_out).default_error_condition();
        default: return {ev, *this};
        }
    }
};

}  // namespace

const boost::system::error_category& error_category() noexcept
{
    static const Category category;
    return category;
}

}  // namespace adk
