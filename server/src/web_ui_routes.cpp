// The ADK web UI's static files under /dev-ui/ (from ApiServerOptions::web_ui_dir), the runtime config it
// reads at start, and the redirects to it from / and /dev-ui. ../shared/fixtures/adk/API.md §1.
#include "api_impl.hpp"

#include <boost/json/serialize.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <system_error>

namespace adk::server {

namespace {

namespace fs = std::filesystem;

// The UI is loaded as ES modules: .js must be served as JavaScript.
std::string_view mime_type(const fs::path& file)
{
    const std::string ext = file.extension().string();
    if (ext == ".html")
        return "text/html; charset=utf-8";
    if (ext == ".js" || ext == ".mjs")
        return "text/javascript; charset=utf-8";
    if (ext == ".css")
        return "text/css; charset=utf-8";
    if (ext == ".json" || ext == ".map")
        return "application/json";
    if (ext == ".svg")
        return "image/svg+xml";
    if (ext == ".png")
        return "image/png";
    if (ext == ".ico")
        return "image/x-icon";
    if (ext == ".wasm")
        return "application/wasm";
    if (ext == ".woff2")
        return "font/woff2";
    if (ext == ".txt" || ext == ".version")
        return "text/plain; charset=utf-8";
    return "application/octet-stream";
}

// The file's bytes, or nothing when it is not a regular file under `root` (a link out of it counts as out).
// Read whole, on the connection's thread, at each request: the UI is a hundred files that the browser keeps
// (max-age), served to the few people who develop an agent, not on a hot path.
std::optional<std::string> read_under(const fs::path& root, const fs::path& relative, std::size_t max_bytes)
{
    std::error_code ec;
    const fs::path file = fs::canonical(root / relative, ec);
    if (ec || !fs::is_regular_file(file, ec))
        return std::nullopt;
    const auto [end, rest] = std::mismatch(root.begin(), root.end(), file.begin(), file.end());
    if (end != root.end())
        return std::nullopt;
    const auto size = fs::file_size(file, ec);
    if (ec || size > max_bytes)
        return std::nullopt;
    std::ifstream in(file, std::ios::binary);
    std::string bytes(static_cast<std::size_t>(size), '\0');
    if (!in.read(bytes.data(), static_cast<std::streamsize>(bytes.size())))
        return std::nullopt;
    return bytes;
}

}  // namespace

std::filesystem::path detail::web_ui_root(const std::string& dir)
{
    if (dir.empty())
        return {};
    std::error_code ec;
    fs::path root = fs::canonical(dir, ec);
    if (ec || !fs::is_regular_file(root / "index.html", ec))
        throw Error(errc::invalid_argument,
                    "the web UI folder '" + dir + "' has no index.html: give the dist/browser folder of "
                    "@google/adk-devtools (tools/fetch_web_ui.sh puts it in the cache)");
    return root;
}

bool ApiServer::Impl::is_web_ui_target(const detail::RequestTarget& target) const
{
    if (web_ui_root.empty())
        return false;
    return target.segments.empty() || target.segments.front() == "dev-ui";
}

asio::awaitable<void> ApiServer::Impl::web_ui(const IncomingRequest& req, ResponseWriter& res,
                                              const detail::RequestTarget& target)
{
    if (req.method != "GET") {
        co_await detail::reply_error(res, 405, "the web UI's files are read with GET");
        co_return;
    }
    // "/" and "/dev-ui" lead to "/dev-ui/": index.html's <base href="./"> needs the trailing slash.
    const std::string_view path = std::string_view(req.target).substr(0, req.target.find('?'));
    if (path == "/" || path == "/dev-ui") {
        const net::HeaderList location{{"location", "/dev-ui/"}};
        co_await res.send(path == "/" ? 302 : 301, "text/plain; charset=utf-8", "", location);
        co_return;
    }
    fs::path relative;
    for (auto it = target.segments.begin() + 1; it != target.segments.end(); ++it)
        relative /= *it;
    const bool directory = path.back() == '/';
    if (directory)
        relative /= "index.html";
    if (relative == fs::path("assets") / "config" / "runtime-config.json") {
        // Same origin: the API's routes are at the root of this server.
        json::value config = json::object{{"backendUrl", ""}};
        co_await detail::reply_json(res, 200, config);
        co_return;
    }
    constexpr std::size_t max_file_bytes = std::size_t{64} << 20;
    std::optional<std::string> bytes = read_under(web_ui_root, relative, max_file_bytes);
    if (!bytes) {
        co_await detail::reply_error(res, 404, "Not found in the web UI: " + std::string(path.substr(0, 200)));
        co_return;
    }
    // index.html names the current bundle's files, which change with every release of the UI.
    const net::HeaderList cache{{"cache-control", relative.filename() == "index.html" ? "no-cache" : "max-age=3600"}};
    co_await res.send(200, mime_type(relative), *bytes, cache);
}

}  // namespace adk::server
