#include <adk/artifacts/artifact_service.hpp>
#include <adk/core/error.hpp>

namespace adk {

namespace {

// Throws inside the coroutine, so that the error comes out of co_await as the backends' errors do.
void checked(const ArtifactKey& key)
{
    if (key.filename.empty())
        throw Error(errc::invalid_argument, "an artifact needs a file name");
}

}  // namespace

ArtifactKey::ArtifactKey(SessionKey session_, std::string filename_)
    : session(std::move(session_)), filename(std::move(filename_))
{
}

ArtifactKey::ArtifactKey(std::string app_name, std::string user_id, std::string session_id, std::string filename_)
    : session(std::move(app_name), std::move(user_id), std::move(session_id)), filename(std::move(filename_))
{
}

asio::awaitable<std::int64_t> ArtifactService::save_artifact(ArtifactKey key, Part artifact)
{
    checked(key);
    co_return co_await do_save_artifact(std::move(key), std::move(artifact));
}

asio::awaitable<std::optional<Part>> ArtifactService::load_artifact(ArtifactKey key,
                                                                    std::optional<std::int64_t> version)
{
    checked(key);
    co_return co_await do_load_artifact(std::move(key), version);
}

asio::awaitable<std::vector<std::string>> ArtifactService::list_artifact_keys(SessionKey session)
{
    co_return co_await do_list_artifact_keys(std::move(session));
}

asio::awaitable<void> ArtifactService::delete_artifact(ArtifactKey key)
{
    checked(key);
    co_await do_delete_artifact(std::move(key));
}

asio::awaitable<std::vector<std::int64_t>> ArtifactService::list_versions(ArtifactKey key)
{
    checked(key);
    co_return co_await do_list_versions(std::move(key));
}

}  // namespace adk
