#include "server.hpp"

#include "render.hpp"

#include <boost/json/parse.hpp>

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace adk::mock_llm {
namespace {

constexpr const char* usage =
    "usage: mock-llm [--host 127.0.0.1] [--port 0] [--tls --cert FILE --key FILE]\n"
    "                (--script FILE.json | --replay FILE.sse|FILE.json)\n"
    "                [--chunk-delay-ms N [--spread-chunks]] [--split-bytes N] [--disconnect-after-bytes N]\n"
    "                [--status CODE [--retry-after S] [--status-times N]] [--stamp] [--trace-log FILE]\n"
    "See tools/mock_llm/README.md for the script format.";

std::string read_file(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw std::invalid_argument("cannot read '" + path + "'");
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::size_t number(const std::string& flag, const std::string& text)
{
    std::size_t used = 0;
    unsigned long long v = 0;
    try {
        v = std::stoull(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != text.size() || text.empty() || text.front() == '-')
        throw std::invalid_argument(flag + " wants a whole number, not '" + text + "'\n" + usage);
    return static_cast<std::size_t>(v);
}

}  // namespace

ServerOptions parse_command_line(const std::vector<std::string>& args)
{
    ServerOptions o;
    bool have_source = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        auto value = [&]() -> const std::string& {
            if (i + 1 >= args.size())
                throw std::invalid_argument(a + " wants a value\n" + usage);
            return args[++i];
        };
        if (a == "--host") {
            o.host = value();
        } else if (a == "--port") {
            const auto p = number(a, value());
            if (p > 65535)
                throw std::invalid_argument("--port must be 0 to 65535");
            o.port = static_cast<unsigned short>(p);
        } else if (a == "--tls") {
            o.tls = true;
        } else if (a == "--cert") {
            o.cert_file = value();
        } else if (a == "--key") {
            o.key_file = value();
        } else if (a == "--script") {
            const std::string path = value();
            boost::system::error_code ec;
            auto script = boost::json::parse(read_file(path), ec);
            if (ec)
                throw std::invalid_argument("the script '" + path + "' is not valid JSON: " + ec.message());
            try {
                validate_script(script);
            } catch (const std::invalid_argument& e) {
                throw std::invalid_argument("the script '" + path + "': " + e.what());
            }
            o.script = std::move(script);
            have_source = true;
        } else if (a == "--replay") {
            const std::string path = value();
            o.replay_body = read_file(path);
            o.replay_content_type = path.ends_with(".json") ? "application/json" : "text/event-stream";
            if (o.replay_body.empty())
                throw std::invalid_argument("the recording '" + path + "' is empty");
            have_source = true;
        } else if (a == "--chunk-delay-ms") {
            o.chunk_delay = std::chrono::milliseconds(number(a, value()));
        } else if (a == "--spread-chunks") {
            o.spread_chunks = true;
        } else if (a == "--split-bytes") {
            o.split_bytes = number(a, value());
        } else if (a == "--disconnect-after-bytes") {
            o.disconnect_after_bytes = number(a, value());
        } else if (a == "--status") {
            const auto s = number(a, value());
            if (s < 100 || s > 599)
                throw std::invalid_argument("--status must be an HTTP status from 100 to 599");
            o.status = static_cast<unsigned>(s);
        } else if (a == "--retry-after") {
            o.retry_after = value();
        } else if (a == "--status-times") {
            o.status_times = number(a, value());
        } else if (a == "--stamp") {
            o.stamp = true;
        } else if (a == "--trace-log") {
            o.trace_log = value();
        } else if (a == "--help" || a == "-h") {
            throw std::invalid_argument(usage);
        } else {
            throw std::invalid_argument("unknown argument '" + a + "'\n" + usage);
        }
    }
    if (!have_source)
        throw std::invalid_argument(std::string("give --script or --replay\n") + usage);
    if (o.tls && (o.cert_file.empty() || o.key_file.empty()))
        throw std::invalid_argument(std::string("--tls wants --cert and --key (PEM files)\n") + usage);
    if (o.spread_chunks && o.chunk_delay.count() == 0)
        throw std::invalid_argument(std::string("--spread-chunks spreads paced chunks: give --chunk-delay-ms N too\n") +
                                    usage);
    return o;
}

}  // namespace adk::mock_llm
