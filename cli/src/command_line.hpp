// The adk command line read into a Command: which command, its positional arguments and its flags, each
// flag checked against the command's own list. Sans I/O: the usage texts are returned, not printed.
#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace adk::cli::detail {

// Where the apps come from, which changes the positional arguments the commands take.
enum class AppSource { code, yaml };

// A usage error: what() is the message, and the command's usage follows it.
class UsageError : public std::runtime_error {
public:
    UsageError(const std::string& message, std::string usage_)
        : std::runtime_error(message), usage(std::move(usage_))
    {
    }
    std::string usage;
};

class Command {
public:
    std::string name;                     // "run", "web", "api_server"; empty with --help alone
    std::vector<std::string> positional;  // at most one
    std::map<std::string, std::vector<std::string>, std::less<>> flags;  // a flag given twice keeps both
    bool help = false;

    // The last value of the flag, or none.
    std::optional<std::string> value(std::string_view flag) const;
    bool has(std::string_view flag) const { return flags.contains(flag); }
    // Every value of a repeatable flag, comma-separated values split.
    std::vector<std::string> list(std::string_view flag) const;
    // The flag's whole number from 0 to `max`, or `fallback` when it is not given. Throws adk::Error
    // (invalid_argument) for anything else, saying what the flag takes.
    long long number(std::string_view flag, long long fallback, long long max) const;
};

// Throws UsageError for an unknown command or flag, a flag without its value, or too many arguments.
Command parse_command_line(const std::vector<std::string>& args, AppSource source, std::string_view program);

// The whole --help text, or one command's.
std::string usage(AppSource source, std::string_view program, std::string_view command = {});

}  // namespace adk::cli::detail
