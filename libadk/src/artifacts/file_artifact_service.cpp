#include <adk/artifacts/file_artifact_service.hpp>

#include <adk/core/error.hpp>
#include <adk/core/ids.hpp>
#include <adk/core/offload.hpp>

#include <boost/asio/thread_pool.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <string_view>
#include <sstream>

#include <fcntl.h>
#include <unistd.h>

namespace adk {

namespace fs = std::filesystem;

namespace {

// Letters, digits, '-', '_' and '.' (but not a leading '.') stay; every other byte becomes %XX.
std::string encode(std::string_view name)
{
    static constexpr char hex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(name.size());
    for (std::size_t i = 0; i < name.size(); ++i) {
        auto c = static_cast<unsigned char>(name[i]);
        bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                     c == '_' || (c == '.' && i > 0);
        if (plain) {
            out.push_back(static_cast<char>(c));
        } else {
            out.push_back('%');
            out.push_back(hex[c >> 4]);
            out.push_back(hex[c & 15]);
        }
    }
    return out;
}

std::optional<std::string> decode(std::string_view name)
{
    std::string out;
    for (std::size_t i = 0; i < name.size(); ++i) {
        if (name[i] != '%') {
            out.push_back(name[i]);
            continue;
        }
        unsigned value = 0;
        if (i + 2 >= name.size())
            return std::nullopt;
        auto [end, ec] = std::from_chars(name.data() + i + 1, name.data() + i + 3, value, 16);
        if (ec != std::errc() || end != name.data() + i + 3)
            return std::nullopt;
        out.push_back(static_cast<char>(value));
        i += 2;
    }
    return out;
}

[[noreturn]] void failed(const std::string& doing, const fs::path& path, const std::string& why)
{
    throw Error(errc::storage_failed, "artifact store: " + doing + " '" + path.string() + "' failed: " + why);
}

// Writes a new file and flushes it to the disk before it is linked anywhere; removed again on failure.
void write_synced(const fs::path& path, std::string_view data)
{
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        failed("creating", path, std::strerror(errno));
    while (!data.empty()) {
        ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        data.remove_prefix(static_cast<std::size_t>(n));
    }
    int error = data.empty() && ::fsync(fd) == 0 ? 0 : errno;
    ::close(fd);
    if (error != 0 || !data.empty()) {
        std::error_code ignored;
        fs::remove(path, ignored);
        failed("writing", path, std::strerror(error != 0 ? error : EIO));
    }
}

std::optional<std::int64_t> version_of(const fs::path& file)
{
    if (file.extension() != ".json")
        return std::nullopt;
    std::string stem = file.stem().string();
    std::int64_t v = 0;
    auto [end, ec] = std::from_chars(stem.data(), stem.data() + stem.size(), v);
    if (ec != std::errc() || end != stem.data() + stem.size() || v < 0)
        return std::nullopt;
    return v;
}

}  // namespace

class FileArtifactService::Impl {
public:
    explicit Impl(fs::path root_) : root(std::move(root_))
    {
        std::error_code ec;
        fs::create_directories(root, ec);
        if (ec || !fs::is_directory(root))
            failed("creating the root folder", root, ec ? ec.message() : "it is not a folder");
    }

    ~Impl() { worker.join(); }

    fs::path user_folder(const SessionKey& s) const
    {
        return root / encode(s.app_name) / encode(s.user_id);
    }

    fs::path scope_folder(const ArtifactKey& key) const
    {
        fs::path user = user_folder(key.session);
        return key.user_scoped() ? user / "user" : user / "sessions" / encode(key.session.session_id);
    }

    fs::path file_folder(const ArtifactKey& key) const { return scope_folder(key) / encode(key.filename); }

    std::vector<std::int64_t> versions(const fs::path& folder) const
    {
        std::vector<std::int64_t> out;
        std::error_code ec;
        for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec))
            if (auto v = version_of(it->path()))
                out.push_back(*v);
        std::sort(out.begin(), out.end());
        return out;
    }

    std::int64_t save(const ArtifactKey& key, const Part& part)
    {
        fs::path folder = file_folder(key);
        std::error_code ec;
        fs::create_directories(folder, ec);
        if (ec)
            failed("creating the folder", folder, ec.message());
        fs::path temp = folder / (".tmp-" + new_uuid());
        write_synced(temp, json::serialize(json::value_from(part)));
        std::vector<std::int64_t> taken = versions(folder);
        std::int64_t v = taken.empty() ? 0 : taken.back() + 1;
        // link() refuses a name that exists: the first writer to link a number owns it.
        while (::link(temp.c_str(), (folder / (std::to_string(v) + ".json")).c_str()) != 0) {
            if (errno != EEXIST) {
                int error = errno;
                fs::remove(temp, ec);
                failed("storing a version in", folder, std::strerror(error));
            }
            ++v;
        }
        fs::remove(temp, ec);
        return v;
    }

    std::optional<Part> load(const ArtifactKey& key, std::optional<std::int64_t> version) const
    {
        fs::path folder = file_folder(key);
        if (!version) {
            auto all = versions(folder);
            if (all.empty())
                return std::nullopt;
            version = all.back();
        }
        if (*version < 0)
            return std::nullopt;
        fs::path file = folder / (std::to_string(*version) + ".json");
        std::ifstream in(file, std::ios::binary);
        if (!in)
            return std::nullopt;
        std::stringstream text;
        text << in.rdbuf();
        boost::system::error_code ec;
        json::value v = json::parse(text.str(), ec);
        if (ec)
            failed("reading", file, "it is not JSON (" + ec.message() + ")");
        try {
            return json::value_to<Part>(v);
        } catch (const std::exception& e) {
            failed("reading", file, e.what());
        }
    }

    std::vector<std::string> list(const SessionKey& session) const
    {
        std::vector<std::string> out;
        fs::path user = user_folder(session);
        for (const fs::path& scope : {user / "sessions" / encode(session.session_id), user / "user"}) {
            std::error_code ec;
            for (fs::directory_iterator it(scope, ec), end; !ec && it != end; it.increment(ec)) {
                auto name = decode(it->path().filename().string());
                if (name && !versions(it->path()).empty())
                    out.push_back(std::move(*name));
            }
        }
        std::sort(out.begin(), out.end());
        return out;
    }

    void remove(const ArtifactKey& key) const
    {
        std::error_code ec;
        fs::remove_all(file_folder(key), ec);
        if (ec)
            failed("deleting", file_folder(key), ec.message());
    }

    fs::path root;
    // Runs `work` on the worker thread for a caller that awaits it (adk::offload). Not a coroutine: the
    // executor is made here, not inside the caller's co_await expression.
    template <class F>
    asio::awaitable<std::invoke_result_t<F&>> on_worker(F work)
    {
        return offload(worker.get_executor(), std::move(work));
    }

    asio::thread_pool worker{1};
};

FileArtifactService::FileArtifactService(fs::path root) : impl_(std::make_unique<Impl>(std::move(root))) {}

FileArtifactService::~FileArtifactService() = default;

const fs::path& FileArtifactService::root() const noexcept
{
    return impl_->root;
}

// The worker sees the service through a plain pointer; the caller awaits the worker's end.
asio::awaitable<std::int64_t> FileArtifactService::do_save_artifact(ArtifactKey key, Part artifact)
{
    auto work = [impl = impl_.get(), key = std::move(key), artifact = std::move(artifact)] {
        return impl->save(key, artifact);
    };
    co_return co_await impl_->on_worker(std::move(work));
}

asio::awaitable<std::optional<Part>> FileArtifactService::do_load_artifact(ArtifactKey key,
                                                                           std::optional<std::int64_t> version)
{
    auto work = [impl = impl_.get(), key = std::move(key), version] { return impl->load(key, version); };
    co_return co_await impl_->on_worker(std::move(work));
}

asio::awaitable<std::vector<std::string>> FileArtifactService::do_list_artifact_keys(SessionKey session)
{
    auto work = [impl = impl_.get(), session = std::move(session)] { return impl->list(session); };
    co_return co_await impl_->on_worker(std::move(work));
}

asio::awaitable<void> FileArtifactService::do_delete_artifact(ArtifactKey key)
{
    auto work = [impl = impl_.get(), key = std::move(key)] { impl->remove(key); };
    co_await impl_->on_worker(std::move(work));
}

asio::awaitable<std::vector<std::int64_t>> FileArtifactService::do_list_versions(ArtifactKey key)
{
    auto work = [impl = impl_.get(), key = std::move(key)] { return impl->versions(impl->file_folder(key)); };
    co_return co_await impl_->on_worker(std::move(work));
}

}  // namespace adk
