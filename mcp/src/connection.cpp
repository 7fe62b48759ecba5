#include <adk/mcp/connection.hpp>

#include <adk/core/clock.hpp>
#include <adk/core/log.hpp>
#include <adk/core/wakeup.hpp>

#include "log_limiter.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>

#include <atomic>
#include <deque>
#include <map>
#include <mutex>

namespace adk::mcp {

namespace {

std::string seconds_text(std::chrono::milliseconds d)
{
    if (d.count() % 1000 == 0)
        return std::to_string(d.count() / 1000) + " s";
    return std::to_string(d.count()) + " ms";
}

LogLevel level_of(std::string_view mcp_level)
{
    if (mcp_level == "debug")
        return LogLevel::debug;
    if (mcp_level == "info" || mcp_level == "notice")
        return LogLevel::info;
    if (mcp_level == "warning")
        return LogLevel::warning;
    return LogLevel::error;  // error, critical, alert, emergency
}

}  // namespace

RpcFailure::RpcFailure(std::string server, jsonrpc::RpcError error)
    : Error(errc::agent_failed, server + " answered with an error: " + error.message + " (JSON-RPC error " +
                                    std::to_string(error.code) + ")"),
      rpc_(std::move(error))
{
}

// A request of ours waiting for its answer.
class Waiter {
public:
    explicit Waiter(const asio::any_io_executor& executor) : wake(std::make_shared<Wakeup>(executor)) {}
    std::shared_ptr<Wakeup> wake;
    std::optional<jsonrpc::Response> response;
    std::optional<Error> failure;  // the connection ended, or the handshake failed
    bool timed_out = false;
    std::function<void(const event::Progress&)> on_progress;
    void finish() { wake->notify(); }
};

class Connection::Impl : public std::enable_shared_from_this<Impl> {
public:
    Impl(asio::any_io_executor executor, std::unique_ptr<Transport> transport, ConnectionOptions options)
        : strand_(std::move(executor)), transport_(std::move(transport)), options_(std::move(options)),
          session_(options_.session)
    {
    }

    // Everything below runs on strand_.

    asio::awaitable<void> start()
    {
        if (started_)
            co_return;
        started_ = true;
        co_await transport_->open();
        ended_ = false;
        asio::co_spawn(strand_, read_loop(shared_from_this()), asio::detached);
        jsonrpc::Request init = session_.initialize();
        auto waiter = std::make_shared<Waiter>(strand_);
        waiters_[init.id] = waiter;
        init_waiter_ = waiter;
        write(jsonrpc::encode(init));
        adk::Timer deadline(strand_, options_.initialize_timeout);
        deadline.async_wait([waiter](boost::system::error_code ec) {
            if (!ec) {
                waiter->timed_out = true;
                waiter->finish();
            }
        });
        co_await waiter->wake->async_wait(asio::use_awaitable);
        deadline.cancel();
        waiters_.erase(init.id);
        init_waiter_.reset();
        if (waiter->timed_out)
            throw Error(errc::timed_out, "the " + name() + " did not answer initialize within " +
                                             seconds_text(options_.initialize_timeout) + suffix());
        if (waiter->failure)
            throw *waiter->failure;
        ready_ = true;
    }

    asio::awaitable<json::value> call(std::string method, json::object params, CallOptions call_options)
    {
        if (!ready_ || ended_)
            throw Error(errc::unavailable, "the " + name() + " is not connected" + suffix());
        jsonrpc::Request request = session_.request(method, std::move(params), bool(call_options.on_progress));
        auto waiter = std::make_shared<Waiter>(strand_);
        waiter->on_progress = std::move(call_options.on_progress);
        waiters_[request.id] = waiter;
        write(jsonrpc::encode(request));
        const auto timeout = call_options.timeout.value_or(options_.request_timeout);
        adk::Timer deadline(strand_, timeout);
        deadline.async_wait([waiter](boost::system::error_code ec) {
            if (!ec) {
                waiter->timed_out = true;
                waiter->finish();
            }
        });
        bool cancelled = false;
        try {
            co_await waiter->wake->async_wait(asio::use_awaitable);
        } catch (const boost::system::system_error&) {
            cancelled = true;  // the caller gave up (its invocation was cancelled)
        }
        deadline.cancel();
        waiters_.erase(request.id);
        if (cancelled || waiter->timed_out) {
            std::string reason = cancelled ? "the caller cancelled the request"
                                           : "no answer within " + seconds_text(timeout);
            if (auto note = session_.abandon(request.id, reason))
                write(jsonrpc::encode(*note));
            if (cancelled)
                throw boost::system::system_error(asio::error::operation_aborted);
            throw Error(errc::timed_out, "the " + name() + " did not answer " + method + " within " +
                                             seconds_text(timeout) + " (it was asked to cancel it)");
        }
        if (waiter->failure)
            throw *waiter->failure;
        if (!waiter->response->ok())
            throw RpcFailure("the " + name(), std::move(*waiter->response->error));
        co_return std::move(*waiter->response->result);
    }

    asio::awaitable<void> close()
    {
        if (closed_)
            co_return;
        closed_ = true;
        ready_ = false;
        end("the " + name() + " was closed");
        co_await transport_->close();
    }

    const std::string& name() const { return transport_->name(); }
    bool closed() const { return closed_; }
    bool alive() const { return ready_ && !ended_; }
    ServerInfo server() const
    {
        std::lock_guard lock(info_mutex_);
        return info_;
    }

    asio::any_io_executor strand_;  // as given: a strand when several threads run the io_context

private:
    std::string suffix() const
    {
        std::string d = transport_->diagnostics();
        return d.empty() ? "" : " (" + d + ")";
    }

    // Queues a message; one writer at a time sends the queue in order.
    void write(std::string text)
    {
        outbox_.push_back(std::move(text));
        if (writing_)
            return;
        writing_ = true;
        asio::co_spawn(strand_, write_loop(shared_from_this()), asio::detached);
    }

    static asio::awaitable<void> write_loop(std::shared_ptr<Impl> self)
    {
        while (!self->outbox_.empty()) {
            std::string text = std::move(self->outbox_.front());
            self->outbox_.pop_front();
            try {
                co_await self->transport_->send(std::move(text));
            } catch (const std::exception& e) {
                self->outbox_.clear();
                self->end(e.what());
            }
        }
        self->writing_ = false;
    }

    static asio::awaitable<void> read_loop(std::shared_ptr<Impl> self)
    {
        std::string why;
        try {
            for (;;) {
                std::optional<std::string> text = co_await self->transport_->receive();
                if (!text)
                    break;
                jsonrpc::Decoded decoded = jsonrpc::decode(*text);
                for (const jsonrpc::Item& item : decoded.items)
                    self->dispatch(item);
            }
            why = "the " + self->name() + " ended the connection" + self->suffix();
        } catch (const std::exception& e) {
            why = "the connection to the " + self->name() + " broke: " + e.what() + self->suffix();
        }
        self->end(why);
    }

    void dispatch(const jsonrpc::Item& item)
    {
        std::vector<jsonrpc::Message> out;
        SessionEvent ev = session_.receive(item, out);
        for (const auto& m : out)
            write(jsonrpc::encode(m));
        std::visit([&](auto& e) { on(e); }, ev);
    }

    void on(event::Ready&)
    {
        {
            std::lock_guard lock(info_mutex_);
            info_ = session_.server();
        }
        finish_initialize(std::nullopt);
    }
    void on(event::Failed& f) { finish_initialize(Error(errc::bad_response, "the " + name() + ": " + f.why)); }
    void finish_initialize(std::optional<Error> failure)
    {
        if (!init_waiter_ || init_waiter_->response || init_waiter_->failure)
            return;
        if (failure)
            init_waiter_->failure = std::move(failure);
        else
            init_waiter_->response = jsonrpc::Response::success(jsonrpc::Id(), json::object{});
        init_waiter_->finish();
    }
    void on(event::Answer& a)
    {
        auto at = waiters_.find(a.response.id);
        if (at == waiters_.end())
            return;
        at->second->response = std::move(a.response);
        at->second->finish();
    }
    void on(event::Incoming& in)
    {
        auto signal = std::make_shared<asio::cancellation_signal>();
        handling_[in.request.id] = signal;
        // The signal outlives the coroutine bound to its slot: the completion handler holds it, and forgets it.
        auto done = [self = shared_from_this(), id = in.request.id, signal](std::exception_ptr) {
            auto at = self->handling_.find(id);
            if (at != self->handling_.end() && at->second == signal)
                self->handling_.erase(at);
        };
        asio::co_spawn(strand_, answer(shared_from_this(), std::move(in.request)),
                       asio::bind_cancellation_slot(signal->slot(), std::move(done)));
    }
    void on(event::Progress& p)
    {
        auto at = waiters_.find(p.request);
        if (at != waiters_.end() && at->second->on_progress)
            at->second->on_progress(p);
    }
    void on(event::Log& l)
    {
        if (options_.on_log)
            return options_.on_log(l);
        // A server that floods is written at most detail::max_log_lines each detail::log_window, each line cut.
        if (!log_limiter_.admit(adk::Clock::now()))
            return;
        if (std::string held = log_limiter_.take_held_back(name()); !held.empty())
            log(LogLevel::warning, held);
        const std::string data = l.data.is_string() ? std::string(l.data.get_string()) : json::serialize(l.data);
        log(level_of(l.level),
            detail::log_line_cut(name() + (l.logger.empty() ? "" : " [" + l.logger + "]") + ": " + data));
    }
    void on(event::ToolsChanged&)
    {
        if (options_.on_tools_changed)
            options_.on_tools_changed();
    }
    void on(event::ServerCancelled& c)
    {
        auto at = handling_.find(c.request);
        if (at != handling_.end())
            at->second->emit(asio::cancellation_type::terminal);
    }
    void on(event::Ignored& i) { log(LogLevel::debug, name() + ": " + i.why); }

    static asio::awaitable<void> answer(std::shared_ptr<Impl> self, jsonrpc::Request request)
    {
        std::optional<jsonrpc::Response> response;
        bool cancelled = false;
        try {
            if (!self->options_.handle_request)
                throw RpcFailure("", jsonrpc::RpcError(jsonrpc::code::method_not_found, "Method not found"));
            json::value result = co_await self->options_.handle_request(request);
            response = jsonrpc::Response::success(request.id, std::move(result));
        } catch (const RpcFailure& e) {
            response = jsonrpc::Response::failure(request.id, e.rpc());
        } catch (const boost::system::system_error& e) {
            cancelled = e.code() == asio::error::operation_aborted;
            if (!cancelled)
                response = jsonrpc::Response::failure(request.id,
                                                      jsonrpc::RpcError(jsonrpc::code::internal_error, e.what()));
        } catch (const std::exception& e) {
            response = jsonrpc::Response::failure(request.id, jsonrpc::RpcError(jsonrpc::code::internal_error, e.what()));
        }
        // A request the server cancelled gets no answer (the spec: the receiver should not respond).
        if (response && !cancelled && !self->ended_)
            self->write(jsonrpc::encode(*response));
    }

    // The connection is over: every waiter fails with `why`, and cancels the handlers under way.
    void end(const std::string& why)
    {
        if (ended_)
            return;
        ended_ = true;
        for (auto& [id, waiter] : waiters_) {
            (void)id;
            if (!waiter->response && !waiter->failure) {
                waiter->failure.emplace(errc::unavailable, why);
                waiter->finish();
            }
        }
        for (auto& [id, signal] : handling_) {
            (void)id;
            signal->emit(asio::cancellation_type::terminal);
        }
        if (!closed_)
            log(LogLevel::warning, why);
        if (std::string held = log_limiter_.take_held_back(name()); !held.empty())
            log(LogLevel::warning, held);
    }

    std::unique_ptr<Transport> transport_;
    ConnectionOptions options_;
    ClientSession session_;
    bool started_ = false;
    std::atomic<bool> ready_{false};  // atomic: alive() reads them from any thread
    std::atomic<bool> ended_{false};
    std::atomic<bool> closed_{false};
    std::shared_ptr<Waiter> init_waiter_;
    bool writing_ = false;
    std::deque<std::string> outbox_;
    std::map<jsonrpc::Id, std::shared_ptr<Waiter>> waiters_;
    std::map<jsonrpc::Id, std::shared_ptr<asio::cancellation_signal>> handling_;
    mutable std::mutex info_mutex_;
    ServerInfo info_;
    detail::LogLimiter log_limiter_;  // the server's notifications/message
};

std::shared_ptr<Connection> Connection::create(asio::any_io_executor executor, std::unique_ptr<Transport> transport,
                                               ConnectionOptions options)
{
    if (!transport)
        throw Error(errc::invalid_argument, "an MCP connection needs a transport");
    return std::shared_ptr<Connection>(
        new Connection(std::make_shared<Impl>(std::move(executor), std::move(transport), std::move(options))));
}

Connection::Connection(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

Connection::~Connection()
{
    // Closed: nothing to do. Held by nothing else: the Impl goes with this handle, and the transport's destructor
    // ends the server at once (its io_context may be gone already). Held by its reader: the io_context runs, and
    // the transport ends on the strand.
    if (impl_->closed() || impl_.use_count() == 1)
        return;
    asio::co_spawn(impl_->strand_, [impl = impl_]() -> asio::awaitable<void> { co_await impl->close(); },
                   asio::detached);
}

asio::awaitable<void> Connection::start()
{
    auto body = [impl = impl_]() { return impl->start(); };  // named: no capturing lambda inside co_await (g++ 12)
    co_await asio::co_spawn(impl_->strand_, std::move(body), asio::use_awaitable);
}

asio::awaitable<json::value> Connection::call(std::string method, json::object params, CallOptions options)
{
    auto body = [impl = impl_, m = std::move(method), p = std::move(params), o = std::move(options)]() mutable {
        return impl->call(std::move(m), std::move(p), std::move(o));
    };
    co_return co_await asio::co_spawn(impl_->strand_, std::move(body), asio::use_awaitable);
}

asio::awaitable<void> Connection::close()
{
    auto body = [impl = impl_]() { return impl->close(); };
    co_await asio::co_spawn(impl_->strand_, std::move(body), asio::use_awaitable);
}

bool Connection::alive() const
{
    return impl_->alive();  // a read of two flags the strand writes: a hint, as any liveness check is
}

ServerInfo Connection::server() const
{
    return impl_->server();
}

const std::string& Connection::name() const
{
    return impl_->name();
}

}  // namespace adk::mcp
