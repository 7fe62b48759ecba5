// How many of an MCP server's log lines (its notifications/message, its stderr) reach adk's log: a server that
// floods would otherwise fill the host's log and its disk. At most `lines` per `window` are written; what is held
// back is counted, and said in one line when the next window's first line comes or the server goes.
#pragma once

#include <adk/core/clock.hpp>
#include <adk/core/utf8.hpp>

#include <chrono>
#include <cstddef>
#include <string>

namespace adk::mcp::detail {

// The bounds of each server's log (README, "Security and limits").
inline constexpr std::size_t max_log_lines = 50;
inline constexpr std::chrono::seconds log_window{10};
inline constexpr std::size_t max_log_line_bytes = 4096;

class LogLimiter {
public:
    using clock = adk::Clock;

    LogLimiter(std::size_t lines = max_log_lines, clock::duration window = log_window) : lines_(lines), window_(window) {}

    // Whether a line that comes at `now` is written. Lines held back before it, in windows past, are counted in
    // held_back() until take_held_back() says them.
    bool admit(clock::time_point now)
    {
        if (!began_ || now - started_ >= window_) {
            began_ = true;
            started_ = now;
            written_ = 0;
        }
        if (written_ < lines_) {
            ++written_;
            return true;
        }
        ++held_back_;
        return false;
    }

    std::size_t held_back() const { return held_back_; }

    // The count of lines held back, as a line of the log ("" when none was), and the count starts again.
    std::string take_held_back(const std::string& server)
    {
        if (held_back_ == 0)
            return {};
        std::string line = server + ": " + std::to_string(held_back_) + " more log line" + (held_back_ == 1 ? "" : "s") +
                           " not written (at most " + std::to_string(lines_) + " each " +
                           std::to_string(std::chrono::duration_cast<std::chrono::seconds>(window_).count()) + " s)";
        held_back_ = 0;
        return line;
    }

private:
    std::size_t lines_;
    clock::duration window_;
    bool began_ = false;
    clock::time_point started_{};
    std::size_t written_ = 0;
    std::size_t held_back_ = 0;
};

// `text` cut to max_log_line_bytes, at a UTF-8 boundary, with "..." when cut.
inline std::string log_line_cut(std::string text)
{
    if (text.size() <= max_log_line_bytes)
        return text;
    text.resize(utf8_prefix_size(text, max_log_line_bytes));
    return text + "...";
}

}  // namespace adk::mcp::detail
