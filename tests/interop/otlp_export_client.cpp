// Runs four invocations whose spans OtlpSpanExporter sends where OpenTelemetry's environment variables say
// (run_otlp.sh points them at otlp_receiver.mjs): in session "transfer" a coordinator hands the question to
// weather_agent, which calls a tool; in "error" the model refuses; in "cancel" the client leaves mid-stream.
// Its metrics (GenAiMetrics, fed from the same spans) go out once at the end through OtlpMetricExporter. Exits 1
// when a span was dropped or the metrics did not go.
#include <adk/adk.hpp>
#include <adk/otel/otlp_exporter.hpp>
#include <adk/otel/otlp_metric_exporter.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/json/parse.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <iostream>

namespace {

namespace asio = boost::asio;
namespace json = boost::json;
using adk::testing::ScriptedModel;

std::shared_ptr<ScriptedModel> scripted(std::vector<ScriptedModel::Turn> turns, std::string name)
{
    return std::make_shared<ScriptedModel>(std::move(turns), std::move(name));
}

asio::awaitable<void> scenarios(std::shared_ptr<adk::telemetry::Tracer> tracer,
                                std::shared_ptr<adk::otel::OtlpSpanExporter> exporter,
                                std::shared_ptr<adk::otel::OtlpMetricExporter> metrics)
{
    auto sessions = std::make_shared<adk::InMemorySessionService>();
    auto weather_tool = adk::FunctionTool::create(
        "get_weather", "Tells the weather.", json::parse(R"({"type":"object","properties":{"city":{"type":"string"}}})"),
        [](adk::ToolContext&, json::object args) -> asio::awaitable<json::value> {
            co_return json::object{{"city", args.at("city")}, {"sky", "sunny"}};
        });
    auto weather = adk::LlmAgent::builder("weather_agent")
                       .description("Knows the weather.")
                       .model(scripted({adk::LlmResponse::function_call("get_weather", {{"city", "Paris"}}),
                                        adk::LlmResponse::text("Sunny in Paris.")},
                                       "gemini-2.5-flash"))
                       .tool(weather_tool)
                       .build();
    auto coordinator = adk::LlmAgent::builder("coordinator")
                           .description("Sends each question to the agent that knows.")
                           .model(scripted({adk::LlmResponse::function_call("transfer_to_agent",
                                                                            {{"agent_name", "weather_agent"}})},
                                           "gemini-2.5-pro"))
                           .sub_agent(weather)
                           .build();
    auto failing = adk::LlmAgent::builder("failing")
                       .model(scripted({ScriptedModel::Turn::raise(
                                           adk::Error(adk::errc::bad_response, "the provider sent nonsense"))},
                                       "gemini-2.5-flash"))
                       .build();
    auto slow = adk::LlmAgent::builder("slow")
                    .model(scripted({ScriptedModel::chunks({"It ", "is "}).then_hang()}, "gemini-2.5-flash"))
                    .build();

    using App = std::pair<std::string, std::shared_ptr<adk::Agent>>;
    const std::vector<App> apps{App("transfer", coordinator), App("error", failing), App("cancel", slow)};
    for (const auto& [session, agent] : apps) {
        adk::Runner runner(adk::RunnerOptions{
            .app_name = "otlp_interop", .agent = agent, .session_service = sessions, .tracer = tracer});
        adk::CreateSessionRequest create("otlp_interop", "u", session);
        co_await sessions->create_session(std::move(create));
        adk::RunRequest request("u", session, adk::Content::user("Weather in Paris?"));
        request.run_config.streaming_mode = adk::StreamingMode::sse;
        auto stream = co_await runner.run(std::move(request));
        try {
            while (auto event = co_await stream.next()) {
                if (session == "cancel" && event->partial) {
                    stream.cancel();
                    // The invocation unwinds on its strand; its spans have ended once the runner no longer has it.
                    while (runner.cancel(event->invocation_id)) {
                        const auto executor = co_await asio::this_coro::executor;
                        asio::steady_timer wait(executor, std::chrono::milliseconds(10));
                        co_await wait.async_wait(asio::use_awaitable);
                    }
                    break;
                }
            }
        } catch (const adk::Error& e) {
            std::cout << session << ": the run ended with " << e.message() << "\n";
        }
    }
    const std::chrono::milliseconds deadline = std::chrono::seconds(20);
    co_await exporter->shutdown(deadline);
    co_await metrics->shutdown(deadline);
}

}  // namespace

int main()
{
    try {
        asio::io_context ioc;
        adk::otel::OtlpOptions options = adk::otel::OtlpOptions::from_env();
        auto exporter = adk::otel::OtlpSpanExporter::create(ioc.get_executor(), options);
        auto meter = std::make_shared<adk::telemetry::Meter>();
        auto metrics = adk::otel::OtlpMetricExporter::create(ioc.get_executor(), meter, options);
        auto tracer = std::make_shared<adk::telemetry::Tracer>(
            std::vector<std::shared_ptr<adk::telemetry::SpanSink>>{exporter,
                                                                   std::make_shared<adk::telemetry::GenAiMetrics>(meter)},
            options.tracer);
        std::exception_ptr failure;
        asio::co_spawn(ioc, scenarios(tracer, exporter, metrics), [&](std::exception_ptr e) { failure = e; });
        ioc.run();
        if (failure)
            std::rethrow_exception(failure);
        const auto stats = exporter->stats();
        const auto metric_stats = metrics->stats();
        std::cout << "exported " << stats.exported << " spans, dropped " << stats.dropped << "; metrics exported "
                  << metric_stats.exports << " times, failed " << metric_stats.failed << "\n";
        return stats.dropped == 0 && stats.exported > 0 && metric_stats.exports > 0 && metric_stats.failed == 0 ? 0
                                                                                                                 : 1;
    } catch (const std::exception& e) {
        std::cerr << "otlp_export_client: " << e.what() << "\n";
        return 1;
    }
}
