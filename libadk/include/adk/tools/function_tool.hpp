// FunctionTool: a tool made from a C++ callable.
//
//   // arguments as JSON, with an explicit schema
//   auto weather = adk::FunctionTool::create("get_weather", "Returns the weather for a city.", schema,
//       [](adk::ToolContext& ctx, json::object args) -> asio::awaitable<json::value> { ... });
//
//   // typed arguments: the schema is generated from a struct described with BOOST_DESCRIBE_STRUCT
//   auto weather = adk::FunctionTool::create<WeatherArgs>("get_weather", "Returns the weather.",
//       [](adk::ToolContext& ctx, WeatherArgs args) -> asio::awaitable<json::value> { ... });
//
// Arguments are checked against the schema before the callable runs; when they do not fit, the model
// gets {"error": "..."} that says which argument is wrong, and the callable is not called.
#pragma once

#include <adk/tools/json_schema.hpp>
#include <adk/tools/tool.hpp>

#include <functional>
#include <memory>
#include <string>
#include <utility>

namespace adk {

class FunctionTool final : public Tool {
public:
    using Function = std::function<asio::awaitable<json::value>(ToolContext&, json::object)>;

    FunctionTool(std::string name, std::string description, json::value parameters, Function fn,
                 bool is_long_running = false);

    static std::shared_ptr<FunctionTool> create(std::string name, std::string description, json::value parameters,
                                                Function fn, bool is_long_running = false)
    {
        return std::make_shared<FunctionTool>(std::move(name), std::move(description), std::move(parameters),
                                              std::move(fn), is_long_running);
    }

    // Typed arguments: `fn(ToolContext&, Args)`; Args described with BOOST_DESCRIBE_STRUCT.
    template <class Args, class F>
    static std::shared_ptr<FunctionTool> create(std::string name, std::string description, F fn,
                                                const FieldDocs& docs = {}, bool is_long_running = false)
    {
        Function erased = [fn = std::move(fn)](ToolContext& ctx, json::object args) -> asio::awaitable<json::value> {
            Args typed = from_json<Args>(json::value(std::move(args)));
            co_return co_await fn(ctx, std::move(typed));
        };
        return create(std::move(name), std::move(description), json_schema_for<Args>(docs), std::move(erased),
                      is_long_running);
    }

    std::optional<FunctionDeclaration> declaration() const override;
    asio::awaitable<json::value> run(ToolContext& ctx, json::object args) override;

    const json::value& parameters() const noexcept { return parameters_; }

private:
    json::value parameters_;
    Function fn_;
};

}  // namespace adk
