#include <adk/services/service_url.hpp>

#include <adk/artifacts/file_artifact_service.hpp>
#include <adk/artifacts/in_memory_artifact_service.hpp>
#include <adk/core/error.hpp>
#include <adk/sessions/in_memory_session_service.hpp>
#include <adk/postgres/postgres_session_service.hpp>
#include <adk/sqlite/sqlite_session_service.hpp>

#include <string>

namespace adk::services {

namespace {

constexpr std::string_view accepted = "memory://, sqlite:///relative/path.db, sqlite:////absolute/path.db, "
                                      "sqlite://:memory: or postgresql://user@host:port/database";

// The URL as it may be printed: its scheme and path, without credentials or a query string.
std::string printable_url(std::string_view url)
{
    std::string out(url.substr(0, url.find_first_of("?#")));
    if (auto scheme_end = out.find("://"); scheme_end != std::string::npos) {
        auto authority = scheme_end + 3;
        auto at = out.find('@', authority);
        auto slash = out.find('/', authority);
        if (at != std::string::npos && (slash == std::string::npos || at < slash))
            out.replace(authority, at - authority, "***");
    }
    std::string safe;
    for (char c : out)
        safe.push_back(static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? '?' : c);
    return safe.substr(0, 200);
}

[[noreturn]] void refuse(std::string_view url, std::string_view why, std::string_view service = "session",
                         std::string_view accepted_urls = accepted)
{
    throw Error(errc::invalid_argument, std::string(service) + " service URL '" + printable_url(url) +
                                            "': " + std::string(why) + ". Accepted: " + std::string(accepted_urls));
}

}  // namespace

std::shared_ptr<SessionService> open_session_service(std::string_view url)
{
    if (url == "memory://" || url == "memory:")
        return std::make_shared<InMemorySessionService>();
    constexpr std::string_view sqlite = "sqlite://";
    if (url.starts_with(sqlite)) {
        std::string_view rest = url.substr(sqlite.size());
        if (rest == ":memory:" || rest.empty())
            return std::make_shared<sqlite::SqliteSessionService>(":memory:");
        if (!rest.starts_with('/'))
            refuse(url, "a file is named after a third slash (a host is not accepted)");
        std::string_view path = rest.substr(1);
        if (path.empty())
            refuse(url, "no file is named");
        if (path.find_first_of("?#") != std::string_view::npos)
            refuse(url, "query strings and fragments are not accepted");
        if (path.find('\0') != std::string_view::npos)
            refuse(url, "the path holds a NUL character");
        return std::make_shared<sqlite::SqliteSessionService>(std::string(path));
    }
    if (url.starts_with("postgres://") || url.starts_with("postgresql://")) {
        for (char c : url)
            if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
                refuse(url, "the URL holds a control character");
        return std::make_shared<postgres::PostgresSessionService>(std::string(url));
    }
    refuse(url, "unknown scheme");
}

std::string_view session_store_system(std::string_view url) noexcept
{
    if (url.starts_with("sqlite://"))
        return "sqlite";
    if (url.starts_with("postgres://") || url.starts_with("postgresql://"))
        return "postgresql";
    return "adk.in_memory";
}

std::shared_ptr<ArtifactService> open_artifact_service(std::string_view url)
{
    constexpr std::string_view accepted_urls = "memory://, file:///relative/folder or file:////absolute/folder";
    if (url == "memory://" || url == "memory:")
        return std::make_shared<InMemoryArtifactService>();
    constexpr std::string_view file = "file://";
    if (!url.starts_with(file))
        refuse(url, "unknown scheme", "artifact", accepted_urls);
    std::string_view rest = url.substr(file.size());
    if (!rest.starts_with('/') || rest.size() == 1)
        refuse(url, "a folder is named after a third slash (a host is not accepted)", "artifact", accepted_urls);
    std::string_view path = rest.substr(1);
    for (char c : path)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '?' || c == '#')
            refuse(url, "the path holds a control character, '?' or '#'", "artifact", accepted_urls);
    return std::make_shared<FileArtifactService>(std::string(path));
}

}  // namespace adk::services
