// The artifact service conformance suite: what every ArtifactService backend must do. Used as the session
// service suite is (session_service_suite.hpp): a backend's TEST_CASE calls it with a factory.
#pragma once

#include <adk/artifacts/artifact_service.hpp>

#include <functional>
#include <memory>

namespace adk::test {

using ArtifactServiceFactory = std::function<std::shared_ptr<ArtifactService>()>;

void artifact_service_suite(const ArtifactServiceFactory& make);

}  // namespace adk::test
