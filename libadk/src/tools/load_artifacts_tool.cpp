// load_artifacts (adk/tools/builtin_tools.hpp).
#include <adk/artifacts/artifact_service.hpp>
#include <adk/core/log.hpp>
#include <adk/net/sse_parser.hpp>
#include <adk/tools/builtin_tools.hpp>

#include <boost/json/serialize.hpp>

#include <cstdio>

namespace adk {

namespace {

std::string mime_type_only(std::string_view mime)  // "text/plain; charset=utf-8" -> "text/plain"
{
    mime = mime.substr(0, mime.find(';'));
    while (!mime.empty() && mime.back() == ' ')
        mime.remove_suffix(1);
    while (!mime.empty() && mime.front() == ' ')
        mime.remove_prefix(1);
    return std::string(mime);
}

// An artifact as a part the model can take: images, audio, video and PDF as they are; text-like files as
// their text; other bytes as a line that says what they are.
Part part_for_model(Part artifact, const std::string& name)
{
    if (!artifact.inline_data)
        return artifact;
    std::string mime = mime_type_only(artifact.inline_data->mime_type);
    if (mime.starts_with("image/") || mime.starts_with("audio/") || mime.starts_with("video/") ||
        mime == "application/pdf")
        return artifact;
    if (mime.empty())
        mime = "application/octet-stream";
    const std::string& data = artifact.inline_data->data;
    if (mime.starts_with("text/") || mime == "application/json" || mime == "application/xml" ||
        mime == "application/csv")
        return Part::from_text(net::to_valid_utf8(data));
    char size[32];
    std::snprintf(size, sizeof size, "%.1f", static_cast<double>(data.size()) / 1024.0);
    return Part::from_text("[Binary artifact: " + name + ", type: " + mime + ", size: " + size +
                           " KB. Content cannot be displayed inline.]");
}

class LoadArtifactsTool final : public Tool {
public:
    LoadArtifactsTool()
        : Tool("load_artifacts", "Loads artifacts into the session for this request.\n\nNOTE: Call when you need "
                                 "access to artifacts (for example, uploads saved by the web UI).")
    {
    }

    std::optional<FunctionDeclaration> declaration() const override
    {
        json::object parameters{
            {"type", "object"},
            {"properties",
             {{"artifact_names",
               {{"type", "array"}, {"items", {{"type", "string"}}}, {"description", "The names of the artifacts to load."}}}}}};
        return FunctionDeclaration(name(), description(), std::move(parameters));
    }

    // The artifacts' names in the instructions; and after the model called load_artifacts, the artifacts
    // it asked for, each in a user content after the history (for this model call only: they are not
    // stored in the session).
    asio::awaitable<void> process_request(const ReadonlyContext& ctx, LlmRequest& request) override
    {
        auto declare = Tool::process_request(ctx, request);  // the declaration, as every tool adds it
        co_await std::move(declare);
        const InvocationContext& ic = ctx.invocation_context();
        if (!ic.artifact_service())
            co_return;
        SessionKey key(ic.app_name(), ic.user_id(), ic.session_id());
        std::vector<std::string> names = co_await ic.artifact_service()->list_artifact_keys(std::move(key));
        if (names.empty())
            co_return;
        json::array listed(names.begin(), names.end());
        request.append_instruction("You have a list of artifacts:\n  " + json::serialize(listed) +
                                   "\n\n  When the user asks questions about any of the artifacts, you should call the\n"
                                   "  `load_artifacts` function to load the artifact. Always call load_artifacts\n"
                                   "  before answering questions related to the artifacts, regardless of whether the\n"
                                   "  artifacts have been loaded before. Do not depend on prior answers about the\n"
                                   "  artifacts.");
        for (const std::string& wanted : requested(request)) {
            std::optional<Part> artifact = co_await load(ic, wanted);
            if (!artifact && wanted.rfind(user_artifact_prefix, 0) != 0) {
                std::string as_user = std::string(user_artifact_prefix) + wanted;
                artifact = co_await load(ic, as_user);
            }
            if (!artifact) {
                log(LogLevel::warning, "load_artifacts: the model asked for an artifact that does not exist",
                    ic.span_context());
                continue;
            }
            std::vector<Part> parts;
            parts.push_back(Part::from_text("Artifact " + wanted + " is:"));
            parts.push_back(part_for_model(std::move(*artifact), wanted));
            request.contents.emplace_back("user", std::move(parts));
        }
    }

    asio::awaitable<json::value> run(ToolContext&, json::object args) override
    {
        json::array names;
        if (const json::value* given = args.if_contains("artifact_names"); given && given->is_array())
            names = given->get_array();
        co_return json::object{{"artifact_names", std::move(names)},
                               {"status", "artifact contents temporarily inserted and removed. to access these "
                                          "artifacts, call load_artifacts tool again."}};
    }

private:
    // The names in load_artifacts' response when it is the last thing in the request (the model called
    // the tool in its previous step); none otherwise.
    static std::vector<std::string> requested(const LlmRequest& request)
    {
        std::vector<std::string> out;
        if (request.contents.empty())
            return out;
        const Content& last = request.contents.back();
        if (last.role != "user" || last.parts.empty() || !last.parts[0].function_response ||
            last.parts[0].function_response->name != "load_artifacts")
            return out;
        const json::value* names = last.parts[0].function_response->response.if_contains("artifact_names");
        if (!names || !names->is_array())
            return out;
        for (const auto& n : names->get_array())
            if (n.is_string() && !n.get_string().empty())
                out.emplace_back(n.get_string());
        return out;
    }

    // The latest version; nullopt when it is missing or its name is not one an artifact may have.
    static asio::awaitable<std::optional<Part>> load(const InvocationContext& ic, const std::string& name)
    {
        ArtifactKey key(ic.app_name(), ic.user_id(), ic.session_id(), name);
        std::optional<std::int64_t> latest;
        try {
            co_return co_await ic.artifact_service()->load_artifact(std::move(key), latest);
        } catch (const Error& e) {
            if (e.code() != errc::invalid_argument)
                throw;
            co_return std::nullopt;  // a name the model made up that no artifact can have
        }
    }
};

}  // namespace

std::shared_ptr<Tool> load_artifacts_tool()
{
    return std::make_shared<LoadArtifactsTool>();
}

}  // namespace adk
