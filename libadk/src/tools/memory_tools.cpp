// load_memory and preload_memory (adk/tools/builtin_tools.hpp).
#include <adk/core/log.hpp>
#include <adk/sessions/database_format.hpp>
#include <adk/tools/builtin_tools.hpp>

namespace adk {

namespace {

// ISO 8601 in UTC, e.g. "2026-11-25T09:30:00.250000Z".
std::string iso_time(double seconds)
{
    std::string text = database::format_time(seconds);
    text[10] = 'T';
    text += 'Z';
    return text;
}

class LoadMemoryTool final : public Tool {
public:
    LoadMemoryTool()
        : Tool("load_memory",
               "Loads the memory for the current user.\n\nNOTE: Currently this tool only uses text part from the memory.")
    {
    }

    std::optional<FunctionDeclaration> declaration() const override
    {
        json::object parameters{
            {"type", "object"},
            {"properties",
             {{"query", {{"type", "string"}, {"description", "The query to load the memory for."}}}}},
            {"required", {"query"}}};
        return FunctionDeclaration(name(), description(), std::move(parameters));
    }

    asio::awaitable<void> process_request(const ReadonlyContext& ctx, LlmRequest& request) override
    {
        auto declare = Tool::process_request(ctx, request);  // the declaration, as every tool adds it
        co_await std::move(declare);
        if (ctx.invocation_context().memory_service())
            request.append_instruction("You have memory. You can use it to answer questions. If any questions need\n"
                                       "you to look up the memory, you should call load_memory function with a query.");
    }

    asio::awaitable<json::value> run(ToolContext& ctx, json::object args) override
    {
        const json::value* query = args.if_contains("query");
        if (!query || !query->is_string())
            co_return json::object{{"error", "load_memory needs a string argument 'query': call it again with one"}};
        std::string text(query->get_string());
        SearchMemoryResponse found = co_await ctx.search_memory(std::move(text));
        json::array memories;
        for (const auto& memory : found.memories)
            memories.push_back(json::object{{"content", memory_text(memory.content)},
                                            {"author", memory.author},
                                            {"timestamp", iso_time(memory.timestamp)}});
        co_return json::object{{"memories", std::move(memories)}};
    }
};

class PreloadMemoryTool final : public Tool {
public:
    PreloadMemoryTool() : Tool("preload_memory", "preload_memory") {}

    std::optional<FunctionDeclaration> declaration() const override { return std::nullopt; }

    asio::awaitable<void> process_request(const ReadonlyContext& ctx, LlmRequest& request) override
    {
        const auto& user = ctx.user_content();
        const auto& memory = ctx.invocation_context().memory_service();
        if (!memory || !user || user->parts.empty() || !user->parts[0].text || user->parts[0].text->empty())
            co_return;
        SearchMemoryRequest search(ctx.invocation_context().app_name(), ctx.invocation_context().user_id(),
                                   *user->parts[0].text);
        SearchMemoryResponse found;
        try {
            found = co_await memory->search_memory(std::move(search));
        } catch (const std::exception& e) {
            if (ctx.invocation_context().cancelled())
                throw;
            // The model call goes on without memories rather than failing the user's turn.
            log(LogLevel::warning,
                std::string("preload_memory: the memory search failed, the model is called without memories: ") +
                    e.what(),
                ctx.invocation_context().span_context());
            co_return;
        }
        std::string lines;
        for (const auto& entry : found.memories) {
            std::string text = memory_text(entry.content);
            if (text.empty())
                continue;
            lines += "Time: " + iso_time(entry.timestamp) + "\n";
            lines += entry.author.empty() ? text : entry.author + ": " + text;
            lines += '\n';
        }
        if (lines.empty())
            co_return;
        request.append_instruction("The following content is from your previous conversations with the user.\n"
                                   "They may be useful for answering the user's current query.\n"
                                   "<PAST_CONVERSATIONS>\n" + lines + "</PAST_CONVERSATIONS>\n");
    }

    asio::awaitable<json::value> run(ToolContext&, json::object) override
    {
        co_return json::object{{"error", "preload_memory is not a function to call: memories are already in the "
                                         "instructions"}};
    }
};

}  // namespace

std::shared_ptr<Tool> load_memory_tool()
{
    return std::make_shared<LoadMemoryTool>();
}

std::shared_ptr<Tool> preload_memory_tool()
{
    return std::make_shared<PreloadMemoryTool>();
}

}  // namespace adk
