#include "scheduler.hpp"
#include "node_runner.hpp"

#include <adk/core/channel.hpp>
#include <adk/core/error.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
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
        static const std::vector<std::string> not_last;
        Slot& slot = slots_[t.node];
        Node& node = *g_.nodes[t.node];
        const int run = ++slot.runs;
        if (t.split)  // one of several nodes an edge fans out to: a branch of its own, "name@run" as ADK names it
            t.branch = sub_branch(t.branch, node.name() + "@" + std::to_string(run));
        InvocationContext node_ctx =
            node_context(ctx_, node, run, t.branch, g_.terminal[t.node] ? owners_ : not_last, t.input);
        slot.branch = t.branch;
        std::optional<Settled> settled = settle(node, node_ctx);
        if (settled && !settled->record) {  // passed over: no coroutine to start
            take(slot, std::move(settled->result));
            complete(t.node);
            return;
        }
        ctx_.check_and_inc_node_run();
        slot.status = Status::running;
        slot.cancel = std::make_shared<asio::cancellation_signal>();
        ++running_;
        const std::size_t index = t.node;
        asio::co_spawn(ex_, run_slot(std::move(node_ctx), std::move(t), std::move(settled)),
                       asio::bind_cancellation_slot(slot.cancel->slot(), [this, index](std::exception_ptr e) {
                           done_.try_send(boost::system::error_code{}, Done{index, std::move(e)});
                       }));
    }

    asio::awaitable<void> run_slot(InvocationContext node_ctx, Trigger t, std::optional<Settled> settled)
    {
        NodeResult result = co_await run_node(*g_.nodes[t.node], std::move(node_ctx), out_, std::move(t.from),
                                              std::move(t.input), std::move(settled));
        take(slots_[t.node], std::move(result));
    }

    static void take(Slot& slot, NodeResult result)
    {
        slot.output = std::move(result.output);
        slot.route = std::move(result.route);
        slot.paused = result.paused;
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
    ConcurrentChannel<void(boost::system::error_code, Done)> done_;  // nodes that ended, from their coroutines
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
