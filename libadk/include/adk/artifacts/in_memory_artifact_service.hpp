// InMemoryArtifactService: artifacts in this process's memory, safe for concurrent use from any thread.
// Everything is lost when the process exits.
#pragma once

#include <adk/artifacts/artifact_service.hpp>

#include <map>
#include <mutex>
#include <tuple>

namespace adk {

class InMemoryArtifactService final : public ArtifactService {
protected:
    asio::awaitable<std::int64_t> do_save_artifact(ArtifactKey key, Part artifact) override;
    asio::awaitable<std::optional<Part>> do_load_artifact(ArtifactKey key,
                                                          std::optional<std::int64_t> version) override;
    asio::awaitable<std::vector<std::string>> do_list_artifact_keys(SessionKey session) override;
    asio::awaitable<void> do_delete_artifact(ArtifactKey key) override;
    asio::awaitable<std::vector<std::int64_t>> do_list_versions(ArtifactKey key) override;

private:
    // (app, user, session or "" for user: files, filename) -> versions
    using Key = std::tuple<std::string, std::string, std::string, std::string>;
    static Key key_of(ArtifactKey key);

    std::mutex mutex_;
    std::map<Key, std::vector<Part>> files_;
};

}  // namespace adk
