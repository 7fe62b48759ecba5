#include "span_errors.hpp"

#include <adk/core/error.hpp>
#include <adk/core/stream.hpp>

namespace adk::detail {

namespace {

const char* errc_name(int value) noexcept
{
    switch (static_cast<errc>(value)) {
    case errc::invalid_argument: return "invalid_argument";
    case errc::not_found: return "not_found";
    case errc::already_exists: return "already_exists";
    case errc::cancelled: return "cancelled";
    case errc::llm_call_limit_exceeded: return "llm_call_limit_exceeded";
    case errc::agent_failed: return "agent_failed";
    case errc::stream_closed: return "stream_closed";
    case errc::bad_response: return "bad_response";
    case errc::storage_failed: return "storage_failed";
    case errc::too_large: return "too_large";
    case errc::timed_out: return "timed_out";
    case errc::unavailable: return "unavailable";
    case errc::node_run_limit_exceeded: return "node_run_limit_exceeded";
    }
    return "adk_error";
}

}  // namespace

std::string error_type(std::exception_ptr failure)
{
    try {
        std::rethrow_exception(as_adk_error(failure));
    } catch (const Error& e) {
        if (e.code().category() == error_category())
            return errc_name(e.code().value());
        return std::string(e.code().category().name()) + "." + std::to_string(e.code().value());
    } catch (...) {
        return "exception";
    }
}

void record_failure(telemetry::Span& span, std::exception_ptr failure)
{
    if (!span.recording() || !failure)
        return;
    std::string message;
    try {
        std::rethrow_exception(as_adk_error(failure));
    } catch (const Error& e) {
        message = e.message();
    } catch (...) {
        message = "unknown failure";
    }
    span.set_error(error_type(failure), std::move(message));
}

}  // namespace adk::detail
