#include "node_runner.hpp"

#include <adk/core/error.hpp>
#include <adk/core/ids.hpp>
#include <adk/core/workers.hpp>
#include <adk/tools/json_schema.hpp>
#include <adk/tools/tool_confirmation.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <cmath>
#include <random>

namespace adk::workflow {

namespace detail {

Content content_of(const json::value& output, bool user)
{
    std::string text = output.is_string() ? std::string(output.get_string()) : json::serialize(output);
    return user ? Content::user(std::move(text)) : Content::model(std::move(text));
}

double unit_random()
{
    thread_local std::mt19937_64 engine{std::random_device{}()};
    return std::uniform_real_distribution<double>(0.0, 1.0)(engine);
}

bool is_cancellation(const std::exception& e, const InvocationContext& ctx)
{
    if (ctx.cancelled())
        return true;
    if (const auto* se = dynamic_cast<const boost::system::system_error*>(&e))
        return se->code() == asio::error::operation_aborted || se->code() == make_error_code(errc::cancelled);
    return false;
}

void check_schema(const std::optional<json::value>& schema, const json::value& value, const Node& node,
                  std::string_view what)
{
    if (!schema)
        return;
    if (std::optional<std::string> mismatch = schema_mismatch(*schema, value))
        throw Error(errc::invalid_argument, "node '" + node.name() + "': its " + std::string(what) +
                                                " does not fit its schema (" + *mismatch +
                                                "): " + json::serialize(value).substr(0, 200));
}

namespace {

// The person's answer to question `id`, once it came: a user's functionResponse to it in the session.
std::optional<json::value> answer_to(const InvocationContext& ctx, const std::string& id)
{
    return ctx.with_session([&](const Session& s) -> std::optional<json::value> {
        const json::value* schema = nullptr;
        for (const Event& e : s.events) {
            if (!e.content)
                continue;
            for (const Part& p : e.content->parts) {
                if (p.function_call && p.function_call->id == id)
                    schema = p.function_call->args.if_contains("response_schema");
                if (p.function_response && p.function_response->id == id && e.author == "user")
                    return read_input_answer(p.function_response->response, schema);
            }
        }
        return std::nullopt;
    });
}

}  // namespace

std::optional<json::value> answers_to(const InvocationContext& ctx, const std::vector<std::string>& ids)
{
    json::array all;
    for (const std::string& id : ids) {
        std::optional<json::value> answer = answer_to(ctx, id);
        if (!answer)
            return std::nullopt;
        all.push_back(std::move(*answer));
    }
    if (all.size() == 1)
        return std::move(all.front());
    return json::value(std::move(all));
}


}  // namespace detail

using detail::answers_to;
using detail::content_of;
using detail::NodeInterrupted;
using detail::start_name;

std::chrono::milliseconds RetryConfig::delay_after(int attempt, double unit) const
{
    double delay = static_cast<double>(initial_delay.count()) * std::pow(backoff_factor, std::max(0, attempt - 1));
    const double ceiling = static_cast<double>(max_delay.count());
    if (jitter > 0) {
        delay = std::min(delay, ceiling / (1 + jitter));
        const double span = jitter * delay;
        delay = std::max(0.0, delay - span + unit * 2 * span);
    }
    return std::chrono::milliseconds(static_cast<std::int64_t>(std::min(delay, ceiling)));
}

// --- NodeContext ---

NodeContext::NodeContext(InvocationContext ctx, EventSink& out, std::string name, std::string from, int attempt)
    : ctx_(std::move(ctx)), out_(out), name_(std::move(name)), from_(std::move(from)), attempt_(attempt)
{
}

std::optional<json::value> NodeContext::state(std::string_view key) const
{
    if (const json::value* v = state_delta_.if_contains(key))
        return *v;
    return ctx_.state(key);
}

void NodeContext::set_state(std::string key, json::value value)
{
    state_delta_.insert_or_assign(std::move(key), std::move(value));
}

void NodeContext::set_route(json::value route)
{
    route_ = std::move(route);
}

asio::awaitable<void> NodeContext::emit(Content content)
{
    Event event = ctx_.make_event(std::move(content));
    event.author = name_;
    event.actions.state_delta = std::exchange(state_delta_, {});
    co_await out_.emit(std::move(event));
}

asio::awaitable<void> NodeContext::emit_output(Event event, json::value output)
{
    if (!event.node_info) {
        event.node_info.emplace();
        event.node_info->path = ctx_.node_path();
    }
    event.node_info->output_for = ctx_.node_output_for();
    event.output = std::move(output);
    for (auto& [key, value] : std::exchange(state_delta_, {}))
        event.actions.state_delta.insert_or_assign(key, std::move(value));
    output_emitted_ = true;
    co_await out_.emit(std::move(event));
}

asio::awaitable<json::value> NodeContext::request_input(RequestInput request)
{
    if (!ctx_.is_resumable())
        throw Error(errc::invalid_argument, "node '" + name_ + "' asks a person (request_input), which needs a "
                                            "resumable app: set RunnerOptions::resumability.is_resumable = true");
    const std::size_t n = asked_++;
    const std::vector<std::string> asked = ctx_.node_interrupts();
    if (n < asked.size()) {
        if (std::optional<json::value> answer = detail::answer_to(ctx_, asked[n]))
            co_return std::move(*answer);
        throw NodeInterrupted{};  // asked before, and still waiting
    }
    const std::string id = request.interrupt_id.empty() ? new_uuid() : std::move(request.interrupt_id);
    json::object args{{"interruptId", id},
                      {"message", request.message.empty() ? json::value() : json::value(request.message)},
                      {"payload", std::move(request.payload)},
                      {"response_schema", request.response_schema ? std::move(*request.response_schema) : json::value()}};
    Event event = ctx_.make_event(
        Content("model", {Part::from_function_call(std::string(request_input_function), std::move(args), id)}));
    event.author = name_;
    event.long_running_tool_ids.push_back(id);
    event.actions.state_delta = std::exchange(state_delta_, {});
    co_await out_.emit(std::move(event));
    throw NodeInterrupted{};
}

asio::awaitable<json::value> NodeContext::run_node(std::shared_ptr<Agent> agent, json::value input,
                                                   RunNodeOptions options)
{
    if (!agent)
        throw Error(errc::invalid_argument, "node '" + name_ + "': run_node was given no agent");
    auto node = std::make_shared<AgentNode>(std::move(agent));
    co_return co_await run_node(std::move(node), std::move(input), options);
}

asio::awaitable<json::value> NodeContext::run_node(std::shared_ptr<Node> node, json::value input,
                                                   RunNodeOptions options)
{
    if (!node)
        throw Error(errc::invalid_argument, "node '" + name_ + "': run_node was given no node");
    if (options.run < 0)
        throw Error(errc::invalid_argument, "node '" + name_ + "': RunNodeOptions::run must be 1 or more (0: the next)");
    ChildRuns& runs = child_runs_[node->name()];
    const int run = options.run > 0 ? options.run : runs.highest + 1;
    if (!runs.used.insert(run).second)
        throw Error(errc::invalid_argument, "node '" + name_ + "' ran node '" + node->name() + "' as run " +
                                                std::to_string(run) + " twice: give each run a number of its own");
    runs.highest = std::max(runs.highest, run);
    const std::string segment = node->name() + "@" + std::to_string(run);
    std::string branch = ctx_.branch();
    if (options.own_branch)
        branch = branch.empty() ? segment : branch + "." + segment;
    InvocationContext child = detail::node_context(ctx_, *node, run, branch, {}, input);
    std::optional<detail::Settled> settled = detail::settle(*node, child);
    detail::NodeResult result;
    std::optional<Error> failed;
    try {
        result = co_await detail::run_node(*node, std::move(child), out_, name_, std::move(input), std::move(settled));
    } catch (const std::exception& e) {
        if (detail::is_cancellation(e, ctx_))
            throw;
        const auto* error = dynamic_cast<const Error*>(&e);
        failed.emplace(error ? error->code() : make_error_code(errc::agent_failed),
                       "node '" + node->name() + "' (run by '" + name_ + "') failed: " +
                           (error ? error->message() : std::string(e.what())));
    }
    if (failed)
        throw *failed;
    if (result.paused)
        throw NodeInterrupted{};
    co_return std::move(result.output);
}

// --- nodes ---

Node::Node(std::string name, NodeOptions options) : name_(std::move(name)), options_(std::move(options))
{
    Agent::validate_name(name_);
    if (name_ == start_name)
        throw Error(errc::invalid_argument, "node name '__START__' is START's: choose another name");
    if (options_.retry && options_.retry->max_attempts < 1)
        throw Error(errc::invalid_argument, "node '" + name_ + "': RetryConfig::max_attempts must be 1 or more");
    if (options_.timeout.count() < 0)
        throw Error(errc::invalid_argument, "node '" + name_ + "': a timeout cannot be negative (0: none)");
}

Node::~Node() = default;

FunctionNode::FunctionNode(std::string name, Function fn, NodeOptions options)
    : Node(std::move(name), std::move(options)), fn_(std::move(fn))
{
    if (!fn_)
        throw Error(errc::invalid_argument, "FunctionNode '" + this->name() + "' was given no function");
}

asio::awaitable<json::value> FunctionNode::run(NodeContext& ctx, json::value input)
{
    return fn_(ctx, std::move(input));
}

JoinNode::JoinNode(std::string name, NodeOptions options) : Node(std::move(name), std::move(options)) {}

asio::awaitable<json::value> JoinNode::run(NodeContext&, json::value input)
{
    co_return input;
}

AgentNode::AgentNode(std::shared_ptr<Agent> agent, NodeOptions options)
    : Node(agent ? agent->name() : std::string("agent"), std::move(options)), agent_(std::move(agent))
{
    if (!agent_)
        throw Error(errc::invalid_argument, "AgentNode was given no agent");
}

asio::awaitable<json::value> AgentNode::run(NodeContext& ctx, json::value input)
{
    const InvocationContext& node = ctx.invocation();
    // The input becomes a user turn on the node's branch, recorded (agentState) so that a resumed node does not
    // hear it twice. The user's own message is in the session already, where every branch sees it; a nested
    // workflow takes its input from its context (InvocationContext::node_input).
    const std::optional<Content>& message = node.user_content();
    const bool users_message = input.is_string() && message && message->text() == input.get_string();
    if (!input.is_null() && !users_message && !dynamic_cast<const Workflow*>(agent_.get()) && !node.agent_state()) {
        Event turn = node.make_event(content_of(input, true));
        turn.author = "user";
        turn.actions.agent_state = json::object{{"input", input}};
        co_await ctx.sink().emit(std::move(turn));
    }
    co_await agent_->run_in(node, ctx.sink());
    std::optional<NodeOutcome> outcome = node.node_outcome();
    if (outcome && outcome->route)
        ctx.set_route(*outcome->route);
    co_return outcome && outcome->output ? std::move(*outcome->output) : json::value();
}

namespace {

NodeOptions rerun_on_resume(NodeOptions options)
{
    options.rerun_on_resume = true;
    return options;
}

}  // namespace

ParallelWorker::ParallelWorker(std::shared_ptr<Node> inner, int max_workers, NodeOptions options)
    : Node(inner ? inner->name() : std::string("worker"), rerun_on_resume(std::move(options))),
      inner_(std::move(inner)), max_workers_(max_workers)
{
    if (!inner_)
        throw Error(errc::invalid_argument, "ParallelWorker was given no node to run");
    if (max_workers_ < 1)
        throw Error(errc::invalid_argument, "ParallelWorker '" + name() + "': max_workers must be 1 or more");
}

asio::awaitable<json::value> ParallelWorker::run(NodeContext& ctx, json::value input)
{
    json::array items = input.is_array() ? std::move(input.get_array()) : json::array{std::move(input)};
    json::array results(items.size());
    std::size_t next = 0;
    bool stop = false;
    bool interrupted = false;
    std::exception_ptr failure;
    auto worker = [&]() -> asio::awaitable<void> {
        while (!stop && next < items.size()) {
            const std::size_t i = next++;
            RunNodeOptions options;
            options.run = static_cast<int>(i) + 1;
            options.own_branch = true;
            try {
                results[i] = co_await ctx.run_node(inner_, items[i], options);
            } catch (const NodeInterrupted&) {
                interrupted = true;  // the others go on: their items are done when the answer comes
            } catch (...) {
                if (!failure)
                    failure = std::current_exception();
                stop = true;
            }
        }
    };
    co_await run_workers(std::min(items.size(), static_cast<std::size_t>(max_workers_)), worker);
    if (failure)
        std::rethrow_exception(failure);
    if (interrupted)
        throw NodeInterrupted{};
    co_return json::value(std::move(results));
}

namespace {

std::string_view trim(std::string_view text)
{
    const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
    while (!text.empty() && space(text.front()))
        text.remove_prefix(1);
    while (!text.empty() && space(text.back()))
        text.remove_suffix(1);
    return text;
}

// A ToolNode's input as the call's arguments.
json::object tool_args(const std::string& node, json::value input)
{
    if (const json::string* text = input.if_string()) {
        const std::string_view trimmed = trim(*text);
        if (trimmed.empty())
            return {};
        boost::system::error_code ec;
        json::value parsed = json::parse(trimmed, ec);
        if (ec || !parsed.is_object())
            throw Error(errc::invalid_argument, "ToolNode '" + node + "': its input is text that is not a JSON object "
                                                "of the tool's arguments: " + std::string(trimmed.substr(0, 200)));
        return std::move(parsed.get_object());
    }
    if (input.is_null())
        return {};
    if (json::object* args = input.if_object())
        return std::move(*args);
    throw Error(errc::invalid_argument, "ToolNode '" + node + "': its input must be an object of the tool's "
                                        "arguments (or a text holding one, or null for none), not " +
                                        json::serialize(input).substr(0, 200));
}

}  // namespace

ToolNode::ToolNode(std::shared_ptr<Tool> tool, NodeOptions options)
    : Node(tool ? tool->name() : std::string("tool"), std::move(options)), tool_(std::move(tool))
{
    if (!tool_)
        throw Error(errc::invalid_argument, "ToolNode was given no tool");
    if (tool_->is_long_running())
        throw Error(errc::invalid_argument, "ToolNode '" + name() + "': a long-running tool waits in a model's turn; "
                                            "give it to an LlmAgent, or run it in a FunctionNode");
    if (tool_->auth_config())
        throw Error(errc::invalid_argument, "ToolNode '" + name() + "': a tool that needs a credential asks for it "
                                            "in a model's turn; give it to an LlmAgent");
}

asio::awaitable<json::value> ToolNode::run(NodeContext& ctx, json::value input)
{
    json::object args = tool_args(name(), std::move(input));
    if (tool_->requires_confirmation(args))
        throw Error(errc::invalid_argument, "ToolNode '" + name() + "': this call needs a person's confirmation, "
                                            "which a model's turn asks for; give the tool to an LlmAgent, or ask in a "
                                            "FunctionNode (NodeContext::request_input)");
    const std::string id = ctx.node_path();  // one call per run of the node
    ToolContext tool_ctx(ctx.invocation(), id);
    json::value result = co_await tool_->run(tool_ctx, std::move(args));
    EventActions& actions = tool_ctx.actions();
    if (!actions.requested_tool_confirmations.empty() || !actions.requested_auth_configs.empty())
        throw Error(errc::invalid_argument, "ToolNode '" + name() + "': the tool asked for a confirmation or a "
                                            "credential, which only a model's turn can wait for; give it to an "
                                            "LlmAgent");
    json::object response =
        result.is_object() ? std::move(result.get_object()) : json::object{{"result", std::move(result)}};
    Event event = ctx.invocation().make_event(
        Content("user", {Part::from_function_response(tool_->name(), response, id)}));
    event.author = name();
    event.actions = std::move(actions);
    json::value output(std::move(response));
    co_await ctx.emit_output(std::move(event), output);
    co_return output;
}

std::shared_ptr<FunctionNode> function_node(std::string name, FunctionNode::Function fn, NodeOptions options)
{
    return std::make_shared<FunctionNode>(std::move(name), std::move(fn), std::move(options));
}

std::shared_ptr<JoinNode> join_node(std::string name, NodeOptions options)
{
    return std::make_shared<JoinNode>(std::move(name), std::move(options));
}

}  // namespace adk::workflow
