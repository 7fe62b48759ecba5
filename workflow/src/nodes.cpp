#include "detail.hpp"

#include <adk/core/error.hpp>
#include <adk/core/ids.hpp>
#include <adk/tools/json_schema.hpp>
#include <adk/tools/tool_confirmation.hpp>

#include <boost/json/serialize.hpp>

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
    // hear it twice. The user's own message is in the session already; a nested workflow takes its input from
    // its context (InvocationContext::node_input).
    if (!input.is_null() && ctx.from() != start_name && !dynamic_cast<const Workflow*>(agent_.get()) &&
        !node.agent_state()) {
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

std::shared_ptr<FunctionNode> function_node(std::string name, FunctionNode::Function fn, NodeOptions options)
{
    return std::make_shared<FunctionNode>(std::move(name), std::move(fn), std::move(options));
}

std::shared_ptr<JoinNode> join_node(std::string name, NodeOptions options)
{
    return std::make_shared<JoinNode>(std::move(name), std::move(options));
}

}  // namespace adk::workflow
