#include <adk/artifacts/artifact_service.hpp>
#include <adk/core/error.hpp>

#include "../core/printable.hpp"

#include <algorithm>

namespace adk {

namespace {

[[noreturn]] void refuse(std::string_view what, std::string_view value, const std::string& why)
{
    throw Error(errc::invalid_argument, std::string(what) + " '" + detail::printable(value, 80) + "' is refused: " +
                                            why + ". Use a plain name such as 'report.pdf' or 'user:avatar.png'");
}

void check_session(const SessionKey& key)
{
    for (const std::string* part : {&key.app_name, &key.user_id, &key.session_id}) {
        if (part->empty() || *part == "." || *part == "..")
            refuse("an artifact's app, user or session", *part, "it is empty, '.' or '..'");
        for (char c : *part)
            if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '/' || c == '\\')
                refuse("an artifact's app, user or session", *part, "it holds a control character or a slash");
    }
}

// Throws inside the coroutine, so that the error comes out of co_await as the backends' errors do. A name
// may hold '/' (folders of the user's own), but no segment may leave its folder: a backend that stores
// files under a root can use names as they are.
void checked(const ArtifactKey& key)
{
    check_session(key.session);
    const std::string& name = key.filename;
    if (name.empty())
        throw Error(errc::invalid_argument, "an artifact needs a file name");
    if (name.size() > max_artifact_name_bytes)
        refuse("the artifact name", name, "it is longer than " + std::to_string(max_artifact_name_bytes) + " bytes");
    if (name.front() == '/')
        refuse("the artifact name", name, "it is an absolute path");
    for (char c : name) {
        if (c == '\0')
            refuse("the artifact name", name, "it holds a NUL character");
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
            refuse("the artifact name", name, "it holds a control character");
        if (c == '\\')
            refuse("the artifact name", name, "it holds a backslash");
    }
    std::string_view rest = name;
    while (!rest.empty()) {
        std::string_view segment = rest.substr(0, rest.find('/'));
        if (segment == ".." || segment == ".")
            refuse("the artifact name", name, "it holds a '" + std::string(segment) + "' segment");
        if (segment.empty())
            refuse("the artifact name", name, "it holds an empty segment ('//' or a trailing '/')");
        rest.remove_prefix(std::min(rest.size(), segment.size() + 1));
        if (rest.empty() && name.back() == '/')
            refuse("the artifact name", name, "it ends with '/'");
    }
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
    check_session(session);
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
