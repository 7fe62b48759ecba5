// The sandbox's report (adk/sandbox/sandbox_report.hpp), which the model's code can write too: any bytes parse
// without throwing; what is kept stays within the limits, names only plain relative paths, and each file, written
// back as the sandbox writes it, reads back the same.
#include <adk/core/content.hpp>
#include <adk/sandbox/sandbox_report.hpp>

#include "fuzz.hpp"

#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size)
{
    adk::SandboxLimits limits;
    limits.output_files = 3;
    limits.file_bytes = 64;
    const adk::SandboxReport report = adk::parse_sandbox_report(adk::fuzz::as_text(data, size), limits);
    adk::fuzz::check(report.files.size() <= 3, "at most output_files files");
    adk::fuzz::check(report.notes.size() <= 64, "at most 64 notes");
    adk::fuzz::check(report.limit.empty() || report.limit == "memory" || report.limit == "processes",
                     "only the limits the sandbox names");
    for (const adk::CodeFile& f : report.files) {
        adk::fuzz::check(f.content.size() <= 64, "a file within file_bytes");
        adk::fuzz::check(!f.name.empty() && f.name.front() != '/' && f.name.back() != '/', "a relative name");
        adk::fuzz::check(("/" + f.name + "/").find("/../") == std::string::npos, "no '..' segment");
        adk::fuzz::check(!f.mime_type.empty(), "a MIME type");
        adk::Blob blob(f.mime_type, f.content);
        boost::json::object line{{"file", f.name}, {"inlineData", boost::json::value_from(blob)}};
        const adk::SandboxReport again = adk::parse_sandbox_report(boost::json::serialize(line) + "\n", limits);
        adk::fuzz::check(again.files.size() == 1 && again.files[0] == f, "a file kept reads back the same");
    }
    return 0;
}
