// The artifact routes under /apps/{app}/users/{user}/sessions/{session}/artifacts: list the names, load the
// latest or a version (a genai Part), list the versions, delete.
#include "api_impl.hpp"

#include <adk/artifacts/artifact_service.hpp>

#include <boost/json/value_from.hpp>

namespace adk::server {

namespace {

Error artifact_not_found(const std::string& name)
{
    return Error(errc::not_found, "Artifact not found: " + name);
}

}  // namespace

// Checks the app and the artifact service; `p` is app, user, session[, name].
ArtifactService& ApiServer::Impl::artifacts(const std::vector<std::string>& p) const
{
    app(p[0]);
    if (!options.artifact_service)
        throw Error(errc::not_found, "this server keeps no artifacts (it was started without an artifact service)");
    return *options.artifact_service;
}

asio::awaitable<void> ApiServer::Impl::list_artifacts(ResponseWriter& res, const std::vector<std::string>& p)
{
    ArtifactService& service = artifacts(p);
    SessionKey session(p[0], p[1], p[2]);
    std::vector<std::string> names = co_await service.list_artifact_keys(std::move(session));
    json::value v = json::value_from(names);
    co_await detail::reply_json(res, 200, v);
}

asio::awaitable<void> ApiServer::Impl::load_artifact(ResponseWriter& res, const std::vector<std::string>& p,
                                                     std::optional<std::int64_t> version)
{
    ArtifactService& service = artifacts(p);
    ArtifactKey key(p[0], p[1], p[2], p[3]);
    std::optional<Part> part = co_await service.load_artifact(std::move(key), version);
    if (!part)
        throw artifact_not_found(p[3]);
    json::value v = json::value_from(*part);
    co_await detail::reply_json(res, 200, v);
}

asio::awaitable<void> ApiServer::Impl::list_artifact_versions(ResponseWriter& res, const std::vector<std::string>& p)
{
    ArtifactService& service = artifacts(p);
    ArtifactKey key(p[0], p[1], p[2], p[3]);
    std::vector<std::int64_t> versions = co_await service.list_versions(std::move(key));
    if (versions.empty())
        throw artifact_not_found(p[3]);
    json::value v = json::value_from(versions);
    co_await detail::reply_json(res, 200, v);
}

asio::awaitable<void> ApiServer::Impl::delete_artifact(ResponseWriter& res, const std::vector<std::string>& p)
{
    ArtifactService& service = artifacts(p);
    ArtifactKey key(p[0], p[1], p[2], p[3]);
    co_await service.delete_artifact(std::move(key));
    co_await res.send(204, "application/json", "");
}

}  // namespace adk::server
