// The memory service conformance suite: what every MemoryService backend must do (InMemoryMemoryService,
// adk::sqlite's SqliteMemoryService). Used as the session service suite is (session_service_suite.hpp): a
// backend's TEST_CASE calls it with a factory. What backends may do differently (stems, digits, ranking) is
// left to each backend's own tests.
#pragma once

#include <adk/memory/memory_service.hpp>

#include <functional>
#include <memory>

namespace adk::test {

using MemoryServiceFactory = std::function<std::shared_ptr<MemoryService>()>;

void memory_service_suite(const MemoryServiceFactory& make);

}  // namespace adk::test
