#include <adk/artifacts/artifact_service.hpp>
#include <adk/core/error.hpp>

namespace adk {

InMemoryArtifactService::Key InMemoryArtifactService::key(std::string app, std::string user, std::string session,
                                                          std::string filename)
{
    if (filename.empty())
        throw Error(errc::invalid_argument, "an artifact needs a file name");
    if (filename.rfind("user:", 0) == 0)
        session.clear();  // user-scoped: shared by the user's sessions
    return {std::move(app), std::move(user), std::move(session), std::move(filename)};
}

asio::awaitable<std::int64_t> InMemoryArtifactService::save_artifact(std::string app_name, std::string user_id,
                                                                     std::string session_id, std::string filename,
                                                                     Part artifact)
{
    std::lock_guard lock(mutex_);
    auto& versions = files_[key(app_name, user_id, session_id, filename)];
    versions.push_back(std::move(artifact));
    co_return static_cast<std::int64_t>(versions.size() - 1);
}

asio::awaitable<std::optional<Part>> InMemoryArtifactService::load_artifact(std::string app_name,
                                                                            std::string user_id,
                                                                            std::string session_id,
                                                                            std::string filename,
                                                                            std::optional<std::int64_t> version)
{
    std::lock_guard lock(mutex_);
    auto it = files_.find(key(app_name, user_id, session_id, filename));
    if (it == files_.end() || it->second.empty())
        co_return std::nullopt;
    std::int64_t v = version.value_or(static_cast<std::int64_t>(it->second.size()) - 1);
    if (v < 0 || v >= static_cast<std::int64_t>(it->second.size()))
        co_return std::nullopt;
    co_return it->second[static_cast<std::size_t>(v)];
}

asio::awaitable<std::vector<std::string>> InMemoryArtifactService::list_artifact_keys(std::string app_name,
                                                                                      std::string user_id,
                                                                                      std::string session_id)
{
    std::vector<std::string> out;
    std::lock_guard lock(mutex_);
    for (const auto& [k, versions] : files_) {
        const auto& [app, user, session, filename] = k;
        if (app == app_name && user == user_id && (session == session_id || session.empty()))
            out.push_back(filename);
    }
    co_return out;
}

asio::awaitable<void> InMemoryArtifactService::delete_artifact(std::string app_name, std::string user_id,
                                                               std::string session_id, std::string filename)
{
    std::lock_guard lock(mutex_);
    files_.erase(key(app_name, user_id, session_id, filename));
    co_return;
}

asio::awaitable<std::vector<std::int64_t>> InMemoryArtifactService::list_versions(std::string app_name,
                                                                                  std::string user_id,
                                                                                  std::string session_id,
                                                                                  std::string filename)
{
    std::vector<std::int64_t> out;
    std::lock_guard lock(mutex_);
    if (auto it = files_.find(key(app_name, user_id, session_id, filename)); it != files_.end())
        for (std::size_t v = 0; v < it->second.size(); ++v)
            out.push_back(static_cast<std::int64_t>(v));
    co_return out;
}

}  // namespace adk
