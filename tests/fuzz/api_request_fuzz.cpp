// The API server's router and body decoding (server/src): any request a client sends (method, target,
// headers, body) gets exactly one answer, never a crash or a 500, and an error answer is JSON that says what
// was wrong. The input is the request as text: "METHOD TARGET", header lines "name: value", an empty line,
// the body. Requests run through ApiServer's handler on an io_context, against in-memory sessions and
// artifacts and an agent that answers without a model.
#include "api_impl.hpp"

#include "fuzz.hpp"

#include <adk/adk.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

// Keeps what the handler answers.
class Recorder final : public adk::net::ResponseWriter {
public:
    void close() override {}
    unsigned status = 0;
    std::string body;
    int heads = 0;

protected:
    asio::awaitable<void> write_head(unsigned status_, std::string_view, const adk::net::HeaderList&,
                                     const std::string_view* whole) override
    {
        status = status_;
        ++heads;
        if (whole)
            body = *whole;
        co_return;
    }
    asio::awaitable<void> write_chunk(std::string_view data, bool) override
    {
        body += data;
        co_return;
    }
};

adk::server::ApiServer::Impl& server(asio::io_context& ioc)
{
    static adk::server::ApiServer::Impl impl = [&ioc] {
        auto answer = [](adk::CallbackContext&, adk::LlmRequest&) -> asio::awaitable<std::optional<adk::LlmResponse>> {
            co_return adk::LlmResponse::text("ok");
        };
        auto agent = adk::LlmAgent::builder("agent")
                         .model(std::make_shared<adk::testing::ScriptedModel>(std::vector<adk::testing::ScriptedModel::Turn>{}))
                         .before_model_callback(answer)
                         .build();
        adk::server::ApiServerOptions options;
        options.session_service = std::make_shared<adk::InMemorySessionService>();
        options.artifact_service = std::make_shared<adk::InMemoryArtifactService>();
        options.http.single_threaded = true;
        options.run_grace = std::chrono::milliseconds(0);  // a finished run is forgotten at once
        options.max_inline_data_bytes = 64;
        return adk::server::ApiServer::Impl(ioc.get_executor(), {{"app", agent}}, options);
    }();
    return impl;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size)
{
    static asio::io_context ioc;
    std::string_view text = adk::fuzz::as_text(data, size);
    adk::net::IncomingRequest req;
    const auto line_end = text.find('\n');
    std::string_view first = text.substr(0, line_end);
    const auto space = first.find(' ');
    if (space == std::string_view::npos)
        return 0;
    req.method = std::string(first.substr(0, space));
    req.target = std::string(first.substr(space + 1));
    text = line_end == std::string_view::npos ? std::string_view() : text.substr(line_end + 1);
    while (!text.empty() && text.front() != '\n') {
        const auto end = text.find('\n');
        std::string_view line = text.substr(0, end);
        if (const auto colon = line.find(": "); colon != std::string_view::npos)
            req.headers.emplace_back(std::string(line.substr(0, colon)), std::string(line.substr(colon + 2)));
        text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    }
    if (!text.empty())
        req.body = std::string(text.substr(1));

    Recorder res;
    adk::server::ApiServer::Impl& impl = server(ioc);
    bool threw = false;
    asio::co_spawn(ioc, impl.handle(req, res), [&threw](std::exception_ptr e) { threw = e != nullptr; });
    ioc.restart();
    ioc.run();
    adk::fuzz::check(!threw, "the handler answers; it does not throw");
    adk::fuzz::check(res.heads == 1, "one answer per request");
    adk::fuzz::check(res.status != 500, "no request makes the server fail");
    if (res.status >= 400) {
        boost::system::error_code ec;
        json::value error = json::parse(res.body, ec);
        adk::fuzz::check(!ec && error.is_object() && error.as_object().contains("error") &&
                             error.at("error").is_string(),
                         "an error answer is {\"error\": \"...\"}");
    }
    return 0;
}
