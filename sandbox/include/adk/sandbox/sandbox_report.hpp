// What the sandbox's Python side (src/sandbox_main.py.hpp) tells the executor on descriptor 3: one JSON object per
// line. {"started": true} once the interpreter runs; at the end {"limit": "memory"} or {"limit": "processes"}
// when the code hit one, {"file": name, "inlineData": {"mimeType", "data" (base64)}} for each file written,
// {"skipped": name, "reason": text} for files left behind, and {"exit": status} last. The model's code can write
// there too: the text is hostile, and read with bounds.
#pragma once

#include <adk/code_execution/code_executor.hpp>
#include <adk/sandbox/sandboxed_code_executor.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace adk {

class SandboxReport {
public:
    SandboxReport() = default;
    bool started = false;
    std::optional<int> exit_status;  // the wrapper's last word: the code ended by itself
    std::string limit;               // "memory" or "processes"
    std::vector<CodeFile> files;
    std::vector<std::string> notes;  // files left behind, lines not understood, and why
};

// Reads the report. Never throws: a line that is not JSON, too long, or names a file that is not a plain relative
// path (no "..", no leading "/", no control characters) becomes a note. At most limits.output_files files, each
// at most limits.file_bytes; duplicates keep the last.
SandboxReport parse_sandbox_report(std::string_view text, const SandboxLimits& limits);

static_assert(!std::is_aggregate_v<SandboxReport>);

}  // namespace adk
