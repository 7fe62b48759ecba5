// The JSON-schema check and the conversion of arguments into a described struct: any schema and any value
// (the input is the JSON array [schema, value]) give an answer, never a crash, undefined behaviour or an
// exception other than adk::Error.
#include <adk/tools/json_schema.hpp>

#include "fuzz.hpp"

#include <boost/describe/class.hpp>
#include <boost/describe/enum.hpp>
#include <boost/json/parse.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fuzzed {
enum class Mode { fast, careful };
BOOST_DESCRIBE_ENUM(Mode, fast, careful)

struct Inner {
    std::string name;
    std::optional<double> weight;
};
BOOST_DESCRIBE_STRUCT(Inner, (), (name, weight))

struct Args {
    int count = 0;
    std::int64_t big = 0;
    unsigned short small = 0;
    float ratio = 0;
    bool flag = false;
    std::optional<Mode> mode;
    std::vector<Inner> items;
    boost::json::value anything;
};
BOOST_DESCRIBE_STRUCT(Args, (), (count, big, small, ratio, flag, mode, items, anything))
}  // namespace fuzzed

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size)
{
    boost::system::error_code ec;
    const boost::json::value v = boost::json::parse(adk::fuzz::as_text(data, size), ec);
    if (ec)
        return 0;
    if (v.is_array() && v.get_array().size() == 2) {
        (void)adk::schema_mismatch(v.get_array()[0], v.get_array()[1]);
        (void)adk::schema_mismatch(adk::json_schema_for<fuzzed::Args>(), v.get_array()[1]);
    }
    (void)adk::schema_mismatch(v, v);
    adk::fuzz::only_adk_errors([&] { (void)adk::from_json<fuzzed::Args>(v); });
    if (v.is_array())
        for (const auto& item : v.get_array())
            adk::fuzz::only_adk_errors([&] { (void)adk::from_json<fuzzed::Args>(item); });
    return 0;
}
