#include <adk/artifacts/in_memory_artifact_service.hpp>

#include <algorithm>

namespace adk {

InMemoryArtifactService::Key InMemoryArtifactService::key_of(ArtifactKey key)
{
    if (key.user_scoped())
        key.session.session_id.clear();  // shared by the user's sessions
    return {std::move(key.session.app_name), std::move(key.session.user_id), std::move(key.session.session_id),
            std::move(key.filename)};
}

asio::awaitable<std::int64_t> InMemoryArtifactService::do_save_artifact(ArtifactKey key, Part artifact)
{
    std::lock_guard lock(mutex_);
    auto& versions = files_[key_of(std::move(key))];
    versions.push_back(std::move(artifact));
    co_return static_cast<std::int64_t>(versions.size() - 1);
}

asio::awaitable<std::optional<Part>> InMemoryArtifactService::do_load_artifact(ArtifactKey key,
                                                                               std::optional<std::int64_t> version)
{
    std::lock_guard lock(mutex_);
    auto it = files_.find(key_of(std::move(key)));
    if (it == files_.end() || it->second.empty())
        co_return std::nullopt;
    std::int64_t v = version.value_or(static_cast<std::int64_t>(it->second.size()) - 1);
    if (v < 0 || v >= static_cast<std::int64_t>(it->second.size()))
        co_return std::nullopt;
    co_return it->second[static_cast<std::size_t>(v)];
}

asio::awaitable<std::vector<std::string>> InMemoryArtifactService::do_list_artifact_keys(SessionKey session)
{
    std::vector<std::string> out;
    std::lock_guard lock(mutex_);
    for (const auto& [k, versions] : files_) {
        const auto& [app, user, session_id, filename] = k;
        if (app == session.app_name && user == session.user_id &&
            (session_id == session.session_id || session_id.empty()))
            out.push_back(filename);
    }
    std::sort(out.begin(), out.end());
    co_return out;
}

asio::awaitable<void> InMemoryArtifactService::do_delete_artifact(ArtifactKey key)
{
    std::lock_guard lock(mutex_);
    files_.erase(key_of(std::move(key)));
    co_return;
}

asio::awaitable<std::vector<std::int64_t>> InMemoryArtifactService::do_list_versions(ArtifactKey key)
{
    std::vector<std::int64_t> out;
    std::lock_guard lock(mutex_);
    if (auto it = files_.find(key_of(std::move(key))); it != files_.end())
        for (std::size_t v = 0; v < it->second.size(); ++v)
            out.push_back(static_cast<std::int64_t>(v));
    co_return out;
}

}  // namespace adk
