// The session service conformance suite: what every SessionService backend must do, in one set of tests.
// A backend's test file calls it from a TEST_CASE of its own with a factory that makes an empty service:
//
//   TEST_CASE("MySessionService passes the session service suite", "[sessions][threads]")
//   {
//       adk::test::session_service_suite([&] { return std::make_shared<MySessionService>(path); });
//   }
//
// Each part of the suite is a Catch2 SECTION, so each runs on a fresh service and is reported by name.
#pragma once

#include <adk/sessions/session_service.hpp>

#include <functional>
#include <memory>

namespace adk::test {

using SessionServiceFactory = std::function<std::shared_ptr<SessionService>()>;

void session_service_suite(const SessionServiceFactory& make);

}  // namespace adk::test
