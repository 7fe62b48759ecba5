// ArtifactService: versioned files (as genai Parts) that belong to a session, or to a user when the file
// name starts with "user:".
#pragma once

#include <adk/core/content.hpp>

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace adk {

namespace asio = boost::asio;

class ArtifactService {
public:
    virtual ~ArtifactService() = default;
    // Stores a new version; versions count from 0. Returns the version stored.
    virtual asio::awaitable<std::int64_t> save_artifact(std::string app_name, std::string user_id,
                                                        std::string session_id, std::string filename,
                                                        Part artifact) = 0;
    // The given version, or the latest; nullopt when there is none.
    virtual asio::awaitable<std::optional<Part>> load_artifact(std::string app_name, std::string user_id,
                                                               std::string session_id, std::string filename,
                                                               std::optional<std::int64_t> version) = 0;
    virtual asio::awaitable<std::vector<std::string>> list_artifact_keys(std::string app_name, std::string user_id,
                                                                         std::string session_id) = 0;
    virtual asio::awaitable<void> delete_artifact(std::string app_name, std::string user_id, std::string session_id,
                                                  std::string filename) = 0;
    virtual asio::awaitable<std::vector<std::int64_t>> list_versions(std::string app_name, std::string user_id,
                                                                     std::string session_id,
                                                                     std::string filename) = 0;
};

// Artifacts in this process's memory; safe for concurrent use.
class InMemoryArtifactService final : public ArtifactService {
public:
    asio::awaitable<std::int64_t> save_artifact(std::string app_name, std::string user_id, std::string session_id,
                                                std::string filename, Part artifact) override;
    asio::awaitable<std::optional<Part>> load_artifact(std::string app_name, std::string user_id,
                                                       std::string session_id, std::string filename,
                                                       std::optional<std::int64_t> version) override;
    asio::awaitable<std::vector<std::string>> list_artifact_keys(std::string app_name, std::string user_id,
                                                                 std::string session_id) override;
    asio::awaitable<void> delete_artifact(std::string app_name, std::string user_id, std::string session_id,
                                          std::string filename) override;
    asio::awaitable<std::vector<std::int64_t>> list_versions(std::string app_name, std::string user_id,
                                                             std::string session_id, std::string filename) override;

private:
    // (app, user, session or "" for user: files, filename) -> versions
    using Key = std::tuple<std::string, std::string, std::string, std::string>;
    static Key key(std::string app, std::string user, std::string session, std::string filename);

    std::mutex mutex_;
    std::map<Key, std::vector<Part>> files_;
};

}  // namespace adk
