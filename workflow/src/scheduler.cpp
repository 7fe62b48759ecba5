#include "scheduler.hpp"
#include "detail.hpp"

#include <adk/core/error.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/experimental/channel.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <deque>

namespace adk::workflow::detail {

namespace {

using Graph = Workflow::Graph;

struct Trigger {
    std::size_t node;
    json::value input;
    std::string from;
    std::string branch;  // the branch it runs on, or below which it gets one of its own (split)
    bool split = false;
};

enum class Status { idle, running, completed, waiting };

// One node of a running workflow.
struct Slot {
    int runs = 0;
    Status status = Status::idle;
    json::value output;  // its latest output (null: none)
    std::optional<json::value> route;
    std::string branch;
    bool paused = false;
    std::shared_ptr<asio::cancellation_signal> cancel;
};

struct Done {
    std::size_t node = 0;
    std::exception_ptr error;
};

std::string sub_branch(const std::string& parent, const std::string& name)
{
    return parent.empty() ? name : parent + "." + name;
}

// The longest common prefix of branches, by whole '.'-separated segments.
std::string common_branch(const std::vector<std::string>& branches)
{
    if (branches.empty())
        return {};
    std::string prefix = branches.front();
    for (const std::string& b : branches) {
        std::size_t n = 0, last = 0;
        while (n < prefix.size() && n < b.size() && prefix[n] == b[n]) {
            ++n;
            if (prefix[n - 1] == '.')
                last = n - 1;
        }
        const bool whole = (n == prefix.size() && (n == b.size() || b[n] == '.')) ||
                           (n == b.size() && (n == prefix.size() || prefix[n] == '.'));
        prefix.resize(whole ? n : last);
    }
    return prefix;
}

// One run of a workflow: the scheduler. Nodes run as coroutines of their own on the workflow's executor; each
// tells `done` when it ends.
class Scheduler {
public:
    Scheduler(const Workflow& wf, const Graph& g, int max_concurrency, InvocationContext& ctx, EventSink& out,
              asio::any_io_executor ex)
        : wf_(wf), g_(g), max_concurrency_(max_concurrency), ctx_(ctx), out_(out), ex_(std::move(ex)),
          slots_(g.nodes.size()),
          done_(ex_, g.nodes.size() + 1)
    {
        owners_ = ctx.node_output_for();
        if (owners_.empty())
            owners_.push_back(ctx.node_path());
    }

    asio::awaitable<void> run(json::value input)
    {
        const bool split = g_.starts.size() > 1;
        for (std::size_t s : g_.starts)
            triggers_.push_back(Trigger{s, input, std::string(start_name), ctx_.branch(), split});
        std::exception_ptr failure;
        std::optional<std::size_t> failed;
        try {
            for (;;) {
                schedule();
                if (running_ == 0)
                    break;
                auto [ec, d] = co_await done_.async_receive(asio::as_tuple(asio::use_awaitable));
                if (ec)
                    throw boost::system::system_error(ec);
                --running_;
                if (d.error) {
                    failure = d.error;
                    failed = d.node;
                    break;
                }
                complete(d.node);
            }
        } catch (...) {
            failure = std::current_exception();
        }
        if (failure) {
            co_await stop_all();
            if (failed)
                if (std::optional<Error> error = co_await report(*failed, failure))
                    throw *error;
            std::rethrow_exception(failure);
        }
        finish();
    }

private:
    // Starts what can start: a triggered node that is not running, while the concurrency limit allows. A node whose
    // run the invocation recorded as finished is passed over with what it recorded.
    void schedule()
    {
        for (;;) {
            auto it = std::find_if(triggers_.begin(), triggers_.end(),
                                   [&](const Trigger& t) { return slots_[t.node].status != Status::running; });
            if (it == triggers_.end())
                return;
            if (max_concurrency_ > 0 && running_ >= static_cast<std::size_t>(max_concurrency_))
                return;
            Trigger t = std::move(*it);
            triggers_.erase(it);
            start(std::move(t));
        }
    }

    void start(Trigger t)
    {
        Slot& slot = slots_[t.node];
        const Node& node = *g_.nodes[t.node];
        const int run = ++slot.runs;
        if (t.split)  // one of several nodes an edge fans out to: a branch of its own, "name@run" as ADK names it
            t.branch = sub_branch(t.branch, node.name() + "@" + std::to_string(run));
        std::shared_ptr<Agent> agent = node.agent();
        InvocationContext node_ctx = agent ? ctx_.for_agent(*agent, run) : ctx_.for_node(node.name(), run);
        if (t.branch != node_ctx.branch())
            node_ctx = node_ctx.with_branch(t.branch);
        std::vector<std::string> output_for{node_ctx.node_path()};
        if (g_.terminal[t.node])
            output_for.insert(output_for.end(), owners_.begin(), owners_.end());
        node_ctx = node_ctx.as_workflow_node(std::move(output_for), t.input);
        slot.branch = t.branch;
        slot.paused = false;
        if (std::optional<NodeOutcome> recorded = node_ctx.node_outcome()) {
            slot.output = recorded->output ? std::move(*recorded->output) : json::value();
            slot.route = std::move(recorded->route);
            complete(t.node);
            return;
        }
        // A node that asked a person and is not run again: the answers are its output, once they all came.
        std::optional<json::value> answered;
        if (!node.agent() && !node.options().rerun_on_resume)
            if (std::vector<std::string> asked = node_ctx.node_interrupts(); !asked.empty()) {
                answered = answers_to(node_ctx, asked);
                if (!answered) {
                    node_ctx.pause();
                    slot.paused = true;
                    complete(t.node);
                    return;
                }
            }
        slot.status = Status::running;
        slot.cancel = std::make_shared<asio::cancellation_signal>();
        ++running_;
        const std::size_t index = t.node;
        asio::co_spawn(ex_, run_node(std::move(node_ctx), std::move(t), std::move(answered)),
                       asio::bind_cancellation_slot(slot.cancel->slot(), [this, index](std::exception_ptr e) {
                           done_.try_send(boost::system::error_code{}, Done{index, std::move(e)});
                       }));
    }

    // Runs one node to its end: its attempts (RetryConfig), each within its timeout; then its output event.
    // `answered`: the answers of a node that asked a person, which are its output without running it again.
    asio::awaitable<void> run_node(InvocationContext node_ctx, Trigger t, std::optional<json::value> answered)
    {
        Node& node = *g_.nodes[t.node];
        Slot& slot = slots_[t.node];
        if (answered) {
            NodeContext nc(node_ctx, out_, node.name(), t.from, 1);
            slot.output = std::move(*answered);
            slot.route.reset();
            co_await record(node_ctx, nc, t.node);
            co_return;
        }
        check_schema(node.options().input_schema, t.input, node, "input");
        for (int attempt = 1;; ++attempt) {
            NodeContext nc(node_ctx, out_, node.name(), t.from, attempt);
            bool interrupted = false;
            try {
                json::value output = co_await attempt_once(node, nc, t.input);
                if (node.agent() && node_ctx.paused()) {
                    slot.paused = true;
                    co_return;
                }
                if (!output.is_null())
                    check_schema(node.options().output_schema, output, node, "output");
                slot.output = std::move(output);
                slot.route = nc.route();
                if (!node.agent())
                    co_await record(node_ctx, nc, t.node);
                co_return;
            } catch (const NodeInterrupted&) {
                interrupted = true;
            } catch (const std::exception& e) {
                const std::optional<RetryConfig>& retry = node.options().retry;
                if (is_cancellation(e, ctx_) || !retry || attempt >= retry->max_attempts ||
                    (retry->retry_on && !retry->retry_on(e)))
                    throw;
            }
            if (interrupted) {
                node_ctx.pause();
                slot.paused = true;
                co_return;
            }
            asio::steady_timer timer(ex_, node.options().retry->delay_after(attempt, unit_random()));
            co_await timer.async_wait(asio::use_awaitable);
        }
    }

    asio::awaitable<json::value> attempt_once(Node& node, NodeContext& nc, const json::value& input)
    {
        const std::chrono::milliseconds timeout = node.options().timeout;
        if (timeout.count() == 0)
            co_return co_await node.run(nc, input);
        using namespace asio::experimental::awaitable_operators;
        asio::steady_timer timer(ex_, timeout);
        auto result = co_await (node.run(nc, input) || timer.async_wait(asio::use_awaitable));
        if (result.index() == 1)
            throw Error(errc::timed_out, "node '" + node.name() + "' did not finish within its timeout of " +
                                             std::to_string(timeout.count()) + " ms");
        co_return std::move(std::get<0>(result));
    }

    // A function's or join's output, route and state changes as its event; in a resumable app a node that said
    // nothing records its end, so that a resumed workflow passes over it.
    asio::awaitable<void> record(const InvocationContext& node_ctx, NodeContext& nc, std::size_t index)
    {
        const Slot& slot = slots_[index];
        json::object state_delta = nc.take_state_delta();
        const bool said = !slot.output.is_null() || slot.route || !state_delta.empty();
        if (!said && !node_ctx.is_resumable())
            co_return;
        Event event = node_ctx.make_event();
        event.author = g_.nodes[index]->name();
        event.actions.state_delta = std::move(state_delta);
        event.actions.route = slot.route;
        if (!slot.output.is_null()) {
            event.content = content_of(slot.output, false);
            event.output = slot.output;
            event.node_info->output_for = node_ctx.node_output_for();
        }
        if (slot.output.is_null() && !slot.route && node_ctx.is_resumable())
            event.actions.end_of_agent = true;
        co_await out_.emit(std::move(event));
    }

    // A node ended: the edges out of it fire.
    void complete(std::size_t index)
    {
        Slot& slot = slots_[index];
        const Node& node = *g_.nodes[index];
        if (slot.paused) {
            slot.status = Status::waiting;
            return;
        }
        if (node.options().wait_for_output && slot.output.is_null() && !slot.route) {
            slot.status = Status::waiting;
            return;
        }
        slot.status = Status::completed;
        const std::vector<std::size_t> next = g_.next(index, slot.route);
        const bool split = next.size() > 1;
        for (std::size_t n : next) {
            const Node& target = *g_.nodes[n];
            if (!target.joins()) {
                triggers_.push_back(Trigger{n, slot.output, node.name(), slot.branch, split});
                continue;
            }
            const std::vector<std::size_t>& preds = g_.in[n];
            if (!std::all_of(preds.begin(), preds.end(),
                             [&](std::size_t p) { return slots_[p].status == Status::completed; }))
                continue;
            json::object inputs;
            std::vector<std::string> branches;
            for (std::size_t p : preds) {
                inputs.emplace(g_.nodes[p]->name(), slots_[p].output);
                branches.push_back(slots_[p].branch);
            }
            triggers_.push_back(Trigger{n, std::move(inputs), std::string(), common_branch(branches), false});
        }
    }

    // Cancels the nodes still running and waits for them: they use this scheduler.
    asio::awaitable<void> stop_all()
    {
        if (running_ == 0)
            co_return;
        for (Slot& slot : slots_)
            if (slot.status == Status::running && slot.cancel)
                slot.cancel->emit(asio::cancellation_type::terminal);
        co_await asio::this_coro::reset_cancellation_state();
        while (running_ > 0) {
            auto [ec, d] = co_await done_.async_receive(asio::as_tuple(asio::use_awaitable));
            if (ec)
                break;
            --running_;
        }
    }

    // A node failed after its attempts: an event of its own says which and why, and so does the error the workflow
    // ends with (nullopt: the invocation was cancelled, and that is the error).
    asio::awaitable<std::optional<Error>> report(std::size_t index, std::exception_ptr failure)
    {
        std::string why = "unknown error";
        bool timed_out = false;
        bool cancelled = ctx_.cancelled();
        try {
            std::rethrow_exception(failure);
        } catch (const std::exception& e) {
            const auto* error = dynamic_cast<const Error*>(&e);
            why = error ? error->message() : e.what();
            timed_out = error && error->code() == make_error_code(errc::timed_out);
            cancelled = cancelled || is_cancellation(e, ctx_);
        } catch (...) {
        }
        if (cancelled)
            co_return std::nullopt;
        const Node& node = *g_.nodes[index];
        InvocationContext node_ctx = ctx_.for_node(node.name(), slots_[index].runs).with_branch(slots_[index].branch);
        Event event = node_ctx.make_event();
        if (!event.node_info) {
            event.node_info.emplace();
            event.node_info->path = node_ctx.node_path();
        }
        event.author = node.name();
        event.error_code = timed_out ? "NODE_TIMEOUT" : "NODE_FAILED";
        event.error_message = "node '" + node.name() + "' of workflow '" + wf_.name() + "' failed: " + why;
        Error error(timed_out ? errc::timed_out : errc::agent_failed, *event.error_message);
        co_await out_.emit(std::move(event));
        co_return error;
    }

    // The workflow ended: its output is its terminal node's (recorded with that node's event).
    void finish() const
    {
        std::size_t outputs = 0;
        for (std::size_t i = 0; i < slots_.size(); ++i)
            if (g_.terminal[i] && slots_[i].status == Status::completed && !slots_[i].output.is_null())
                ++outputs;
        if (outputs > 1)
            throw Error(errc::invalid_argument, "workflow '" + wf_.name() + "': " + std::to_string(outputs) +
                                                    " terminal nodes gave an output; a workflow has one output: join "
                                                    "them (JoinNode) or give all but one no output");
    }

    const Workflow& wf_;
    const Graph& g_;
    int max_concurrency_;
    InvocationContext& ctx_;
    EventSink& out_;
    asio::any_io_executor ex_;
    std::vector<Slot> slots_;
    std::deque<Trigger> triggers_;
    std::size_t running_ = 0;
    asio::experimental::channel<void(boost::system::error_code, Done)> done_;
    std::vector<std::string> owners_;
};


}  // namespace

asio::awaitable<void> run_graph(const Workflow& wf, const Workflow::Graph& graph, int max_concurrency,
                                InvocationContext& ctx, EventSink& out, json::value input)
{
    asio::any_io_executor ex = co_await asio::this_coro::executor;
    Scheduler scheduler(wf, graph, max_concurrency, ctx, out, ex);
    co_await scheduler.run(std::move(input));
}

}  // namespace adk::workflow::detail
