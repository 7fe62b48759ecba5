// ArtifactService: versioned files (as genai Parts) that belong to a session, or to a user when the file
// name starts with "user:" (then every session of the user sees them).
//
// DESIGN: as SessionService, the public functions are non-virtual coroutines that check their input once
// (an error comes out of co_await, as a backend's would), then call a backend's protected virtual. Every backend must pass the conformance suite in
// tests/conformance/artifact_service_suite.hpp.
#pragma once

#include <adk/core/content.hpp>
#include <adk/sessions/session.hpp>

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace adk {

namespace asio = boost::asio;

inline constexpr std::string_view user_artifact_prefix = "user:";
inline constexpr std::size_t max_artifact_name_bytes = 1024;

// Which file: a session's, or its user's when the name starts with "user:".
class ArtifactKey {
public:
    ArtifactKey(SessionKey session_, std::string filename_);
    ArtifactKey(std::string app_name, std::string user_id, std::string session_id, std::string filename_);

    SessionKey session;
    std::string filename;

    bool user_scoped() const noexcept { return filename.rfind(user_artifact_prefix, 0) == 0; }
};

static_assert(!std::is_aggregate_v<ArtifactKey>);

class ArtifactService {
public:
    virtual ~ArtifactService() = default;

    // Every function refuses (adk::Error, invalid_argument), before a backend sees it, a key whose file
    // name is empty, absolute, over 1024 bytes, or holds a NUL, a control character, a backslash, or a '..',
    // '.' or empty segment; or whose app, user or session is empty, '.', '..', or holds a slash or a control
    // character. A name may hold '/'.
    //
    // Stores a new version; versions count from 0. Returns the version stored.
    asio::awaitable<std::int64_t> save_artifact(ArtifactKey key, Part artifact);
    // The given version, or the latest; nullopt when there is none.
    asio::awaitable<std::optional<Part>> load_artifact(ArtifactKey key, std::optional<std::int64_t> version = {});
    // The names of the session's files and of its user's "user:" files, sorted.
    asio::awaitable<std::vector<std::string>> list_artifact_keys(SessionKey session);
    // Every version of the file goes. Deleting a file that does not exist is not an error.
    asio::awaitable<void> delete_artifact(ArtifactKey key);
    // The file's versions, oldest first; empty when there is no such file.
    asio::awaitable<std::vector<std::int64_t>> list_versions(ArtifactKey key);

protected:
    // Called with a valid key.
    virtual asio::awaitable<std::int64_t> do_save_artifact(ArtifactKey key, Part artifact) = 0;
    virtual asio::awaitable<std::optional<Part>> do_load_artifact(ArtifactKey key,
                                                                  std::optional<std::int64_t> version) = 0;
    virtual asio::awaitable<std::vector<std::string>> do_list_artifact_keys(SessionKey session) = 0;
    virtual asio::awaitable<void> do_delete_artifact(ArtifactKey key) = 0;
    virtual asio::awaitable<std::vector<std::int64_t>> do_list_versions(ArtifactKey key) = 0;
};

}  // namespace adk
