// A session database's rows read back (adk/sessions/database_format.hpp): the database may have been
// written by another program, so any event_data, state or time column either fails with adk::Error or reads as a
// value that writes and reads again without an error.
#include <adk/sessions/database_format.hpp>

#include "fuzz.hpp"

#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size)
{
    std::string_view text(reinterpret_cast<const char*>(data), size);
    adk::fuzz::only_adk_errors([&] {
        adk::Event event = adk::database::event_from_json(text);
        std::string again = adk::database::event_to_json(event);
        bool reread = adk::fuzz::only_adk_errors([&] { (void)adk::database::event_from_json(again); });
        adk::fuzz::check(reread, "an event written from a row it read reads again");
    });
    adk::fuzz::only_adk_errors([&] { (void)adk::database::parse_state(text, "a fuzzed row"); });
    adk::fuzz::only_adk_errors([&] {
        double seconds = adk::database::parse_time(text.substr(0, 64));
        std::string formatted = adk::database::format_time(seconds);
        adk::fuzz::check(formatted.size() >= 26, "a time read from a column formats to a full column");
    });
    return 0;
}
