#include <adk/sandbox/sandbox_report.hpp>

#include <adk/core/content.hpp>
#include <adk/core/error.hpp>
#include <adk/core/json_limits.hpp>

#include <boost/json/value_to.hpp>

#include <algorithm>

namespace adk {

namespace {

constexpr std::size_t max_name_bytes = 255;
constexpr std::size_t max_note_bytes = 300;

std::string shown(std::string_view text)
{
    std::string out;
    for (char c : text.substr(0, 80))
        out.push_back(static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? '?' : c);
    return text.size() > 80 ? out + "..." : out;
}

// Why `name` is not a plain relative path, or nothing.
std::optional<std::string> bad_name(std::string_view name)
{
    if (name.empty() || name.size() > max_name_bytes)
        return "its name is empty or longer than " + std::to_string(max_name_bytes) + " bytes";
    if (name.front() == '/')
        return std::string("its name is an absolute path");
    for (char c : name)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '\\')
            return std::string("its name holds a control character or a backslash");
    std::string_view rest = name;
    while (!rest.empty()) {
        const std::string_view segment = rest.substr(0, rest.find('/'));
        if (segment.empty() || segment == "." || segment == "..")
            return std::string("its name holds an empty, '.' or '..' segment");
        rest.remove_prefix(std::min(rest.size(), segment.size() + 1));
    }
    if (name.back() == '/')
        return std::string("its name ends with '/'");
    return std::nullopt;
}

std::string text_at(const json::object& o, std::string_view key)
{
    const json::value* v = o.if_contains(key);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

void add_note(SandboxReport& report, std::string note)
{
    constexpr std::size_t max_notes = 64;
    if (report.notes.size() >= max_notes)
        return;
    if (note.size() > max_note_bytes)
        note = note.substr(0, max_note_bytes) + "...";
    report.notes.push_back(std::move(note));
}

void read_file(SandboxReport& report, const json::object& line, const SandboxLimits& limits)
{
    const std::string name = text_at(line, "file");
    if (auto why = bad_name(name)) {
        add_note(report, "a file was left behind: " + *why + " (" + shown(name) + ")");
        return;
    }
    const json::value* data = line.if_contains("inlineData");
    Blob blob;
    try {
        if (!data)
            throw Error(errc::invalid_argument, "it has no inlineData");
        blob = json::value_to<Blob>(*data);
    } catch (const std::exception& e) {
        add_note(report, "`" + name + "` was left behind: " + shown(e.what()));
        return;
    }
    if (blob.data.size() > limits.file_bytes) {
        add_note(report, "`" + name + "` was left behind: it is over " + std::to_string(limits.file_bytes) + " bytes");
        return;
    }
    if (blob.mime_type.empty() || blob.mime_type.size() > 255)
        blob.mime_type = "application/octet-stream";
    auto same = std::find_if(report.files.begin(), report.files.end(), [&](const CodeFile& f) { return f.name == name; });
    if (same != report.files.end()) {
        *same = CodeFile(name, std::move(blob.data), std::move(blob.mime_type));
        return;
    }
    if (report.files.size() >= static_cast<std::size_t>(std::max(0, limits.output_files))) {
        add_note(report, "`" + name + "` was left behind: only " + std::to_string(limits.output_files) +
                             " files are brought back");
        return;
    }
    report.files.emplace_back(name, std::move(blob.data), std::move(blob.mime_type));
}

void read_line(SandboxReport& report, std::string_view text, const SandboxLimits& limits)
{
    boost::system::error_code ec;
    json::value v = parse_json(text, ec);
    if (ec || !v.is_object()) {
        add_note(report, "a line of the sandbox's report was not understood: " + shown(text));
        return;
    }
    const json::object& line = v.get_object();
    if (const json::value* started = line.if_contains("started"); started && started->is_bool())
        report.started = report.started || started->get_bool();
    if (const json::value* limit = line.if_contains("limit"); limit && limit->is_string()) {
        const json::string& l = limit->get_string();
        if (l == "memory" || l == "processes")
            report.limit = std::string(l);
    }
    if (line.contains("file"))
        read_file(report, line, limits);
    if (line.contains("skipped"))
        add_note(report, "`" + shown(text_at(line, "skipped")) + "` was left behind: " +
                             shown(text_at(line, "reason")));
    if (const json::value* exit = line.if_contains("exit"); exit && exit->is_int64()) {
        const std::int64_t status = exit->get_int64();
        report.exit_status = static_cast<int>(std::clamp<std::int64_t>(status, -1, 255));
    }
}

}  // namespace

SandboxReport parse_sandbox_report(std::string_view text, const SandboxLimits& limits)
{
    SandboxReport report;
    // A file's line holds it in base64, with room for its name and type.
    const std::size_t max_line = limits.file_bytes / 3 * 4 + 4096;
    while (!text.empty()) {
        const std::size_t end = text.find('\n');
        const std::string_view line = text.substr(0, end);
        text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
        if (line.empty())
            continue;
        if (line.size() > max_line) {
            add_note(report, "a line of the sandbox's report was over " + std::to_string(max_line) + " bytes");
            continue;
        }
        read_line(report, line, limits);
    }
    return report;
}

}  // namespace adk
