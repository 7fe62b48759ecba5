// The weather tool of the samples: a FunctionTool whose arguments are a described struct (its JSON schema
// comes from the struct), and which remembers the city in the user's state.
#pragma once

#include <adk/adk.hpp>

#include <boost/describe/class.hpp>

#include <optional>
#include <string>

namespace samples {

struct WeatherArgs {
    std::string city;
    std::optional<std::string> units;
};
BOOST_DESCRIBE_STRUCT(WeatherArgs, (), (city, units))

inline std::shared_ptr<adk::FunctionTool> get_weather_tool()
{
    return adk::FunctionTool::create<WeatherArgs>(
        "get_weather", "Returns the current weather in a city.",
        [](adk::ToolContext& ctx, WeatherArgs args) -> boost::asio::awaitable<boost::json::value> {
            ctx.set_state("user:last_city", args.city);  // remembered across the user's sessions
            const bool fahrenheit = args.units == "fahrenheit";
            co_return boost::json::object{{"city", args.city}, {"sky", "sunny"}, {"temperature", fahrenheit ? 72 : 22},
                                          {"units", fahrenheit ? "fahrenheit" : "celsius"}};
        },
        {{"city", "The city, e.g. Paris"}, {"units", "celsius (default) or fahrenheit"}});
}

}  // namespace samples
