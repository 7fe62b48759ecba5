// FileArtifactService: versioned artifacts as files under a root folder, kept across restarts.
//
//   auto artifacts = std::make_shared<adk::FileArtifactService>("/var/lib/my-agent/artifacts");
//
// Layout (each name percent-encoded into one folder name, so that no name can reach outside its folder):
//   ROOT/APP/USER/sessions/SESSION/NAME/N.json    a session's file, version N
//   ROOT/APP/USER/user/NAME/N.json                a "user:" file, shared by the user's sessions
// Each version holds the Part in ADK's JSON (bytes in base64, with their MIME type).
//
// DESIGN: the file system calls run on the service's worker thread (adk::offload), never on the caller's.
// A version is written to a temporary file, then linked into place under its number; when another
// writer (thread or process) took that number first, the next one is tried, so concurrent saves never
// overwrite each other and a reader never sees half a version.
#pragma once

#include <adk/artifacts/artifact_service.hpp>

#include <filesystem>
#include <memory>

namespace adk {

class FileArtifactService final : public ArtifactService {
public:
    // Creates the root folder when missing. Throws adk::Error (storage_failed) when it cannot.
    explicit FileArtifactService(std::filesystem::path root);
    ~FileArtifactService() override;

    const std::filesystem::path& root() const noexcept;

protected:
    asio::awaitable<std::int64_t> do_save_artifact(ArtifactKey key, Part artifact) override;
    asio::awaitable<std::optional<Part>> do_load_artifact(ArtifactKey key,
                                                          std::optional<std::int64_t> version) override;
    asio::awaitable<std::vector<std::string>> do_list_artifact_keys(SessionKey session) override;
    asio::awaitable<void> do_delete_artifact(ArtifactKey key) override;
    asio::awaitable<std::vector<std::int64_t>> do_list_versions(ArtifactKey key) override;

private:
    class Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace adk
