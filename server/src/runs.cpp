#include <adk/server/runs.hpp>

#include <adk/core/error.hpp>
#include <adk/core/ids.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <utility>
#include <charconv>

namespace adk::server {

Run::Run(std::string id_, std::uint64_t number_, RunOwner owner_, asio::any_io_executor strand, RunLimits limits,
         std::weak_ptr<RunRegistry> registry, std::shared_ptr<std::atomic<std::size_t>> total_bytes,
         bool single_threaded)
    : id(std::move(id_)), number(number_), owner(std::move(owner_)), strand_(std::move(strand)), limits_(limits),
      registry_(std::move(registry)), timer_(strand_), total_bytes_(std::move(total_bytes)),
      single_threaded_(single_threaded)
{
}

Run::~Run()
{
    *total_bytes_ -= log_bytes_;
}

void Run::start(EventStream stream, std::string invocation_id)
{
    canceller_ = stream.canceller();
    if (!invocation_id.empty()) {
        std::lock_guard lock(mutex_);
        invocation_id_ = std::move(invocation_id);
    }
    asio::co_spawn(strand_, pump(shared_from_this(), std::move(stream)), asio::detached);
}

namespace {

// Whether `e` is a streamed delta of plain text: one text part and, besides the members a Run::Delta keeps and
// those that name the answer (same_answer), nothing set. The sizes below stop the build when Event or Part gain
// a member, so that a new one is looked at here before a delta could lose it (EventActions::empty() does the same).
bool plain_delta(const Event& e)
{
    static_assert(sizeof(void*) != 8 || sizeof(Event) == 744, "Event changed: check plain_delta and same_answer");
    static_assert(sizeof(void*) != 8 || sizeof(Part) == 160, "Part changed: check plain_delta");
    if (!e.partial || !e.content || e.content->parts.size() != 1 || !e.content->extra.empty())
        return false;
    const Part& p = e.content->parts.front();
    if (!p.text || p.thought || p.thought_signature || p.inline_data || p.file_data || p.function_call ||
        p.function_response || p.executable_code || p.code_execution_result || !p.extra.empty())
        return false;
    return e.actions.empty() && !e.turn_complete && !e.interrupted && !e.error_code && !e.error_message &&
           e.long_running_tool_ids.empty() && e.custom_metadata.empty() && !e.node_info && !e.output &&
           !e.isolation_scope && e.extra.empty();
}

// Whether plain delta `e` belongs to the answer whose first plain delta is `base`.
bool same_answer(const Event& base, const Event& e)
{
    return e.id == base.id && e.timestamp == base.timestamp && e.author == base.author &&
           e.invocation_id == base.invocation_id && e.branch == base.branch && e.model_version == base.model_version &&
           e.content->role == base.content->role;
}

}  // namespace

const Event& Run::EventScratch::of(const std::shared_ptr<const Event>& base, const Delta& delta)
{
    if (base_ != base) {
        event_ = *base;
        base_ = base;
    }
    event_.content->parts.front().text = delta.text;
    if (delta.usage)
        event_.usage_metadata = *delta.usage;
    else
        event_.usage_metadata.reset();
    event_.finish_reason = delta.finish_reason;
    return event_;
}

// A plain-text delta of the answer streaming now is kept as a Delta against the answer's first one (the event
// itself is freed here); any other event is kept whole, and ends the answer unless it starts a new one.
void Run::receive(std::unique_ptr<Event> event) noexcept
{
    const std::size_t bytes = approximate_bytes(*event);
    const bool plain = plain_delta(*event);
    if (plain && delta_base_ && same_answer(*delta_base_, *event)) {
        auto delta = std::make_shared<Delta>();
        delta->text = std::move(*event->content->parts.front().text);
        if (event->usage_metadata) {
            if (!delta_usage_ || !(*delta_usage_ == *event->usage_metadata))
                delta_usage_ = std::make_shared<UsageMetadata>(std::move(*event->usage_metadata));
            delta->usage = delta_usage_;
        }
        delta->finish_reason = std::move(event->finish_reason);
        event.reset();
        append(Frame(delta_base_, std::move(delta), bytes));
        return;
    }
    std::shared_ptr<const Event> shared(std::move(event));
    delta_base_ = plain ? shared : nullptr;
    delta_usage_ = nullptr;
    append(Frame(std::move(shared), bytes));
}

// A committed event is whole (never a delta, nor a delta's base): it ends the answer that streamed, and the log
// shares it with the session.
void Run::receive_held(std::unique_ptr<Event> event, std::shared_ptr<const Event> held) noexcept
{
    event.reset();
    const std::size_t bytes = approximate_bytes(*held);
    delta_base_ = nullptr;
    delta_usage_ = nullptr;
    append(Frame(std::move(held), bytes));
}

// The coroutine's frame holds `self` from its creation: the run lives while its pump does. A stream whose events
// the run receives gives the pump its end alone.
asio::awaitable<void> Run::pump(std::shared_ptr<Run> self, EventStream stream)
{
    std::string failure;
    bool cancelled = false;
    try {
        while (std::unique_ptr<Event> event = co_await stream.next_boxed())
            self->receive(std::move(event));
    } catch (const Error& e) {
        failure = e.message();
        cancelled = e.code() == errc::cancelled;
    } catch (const std::exception& e) {
        failure = e.what();
    }
    if (!failure.empty()) {
        {
            std::lock_guard lock(self->mutex_);
            self->failure_ = failure;
            self->cancelled_ = cancelled;
        }
        const std::size_t bytes = sizeof(Held) + failure.size();
        self->append(Frame(std::move(failure), cancelled, bytes));
    }
    self->finish();
}

void Run::append(Frame frame)
{
    std::unique_lock lock(mutex_);
    if (invocation_id_.empty() && frame.event_)
        invocation_id_ = frame.event_->invocation_id;
    frame.n = next_frame_++;
    const bool partial = frame.partial();
    const std::size_t bytes = frame.bytes;
    const std::size_t before = log_bytes_;
    log_bytes_ += bytes;
    if (partial)
        partial_bytes_ += bytes;
    log_.emplace_back(std::move(frame));
    // Past a bound, the oldest partial frames go first (the whole event after them repeats their text), then the
    // oldest frame. Partial frames have a bound of their own, so that a long answer keeps only its newest
    // deltas for a client that comes back; past it they go down to three quarters of it at once, so that a
    // streamed answer moves the whole frames before its deltas (the deque's erase) once every few deltas, not at
    // each. That bound leaves the deltas a connected follower of deltas has not read (from `unread` on): only
    // the log's bound drops those, and the follower is told how many it missed. The newest frame stays.
    if (partial_bytes_ > limits_.max_partial_bytes || log_bytes_ > limits_.max_log_bytes)
        trim_log();
    if (log_bytes_ >= before)
        *total_bytes_ += log_bytes_ - before;
    else
        *total_bytes_ -= before - log_bytes_;
    bool post = false;
    wake_waiting(lock, partial, single_threaded_ ? &post : nullptr);
    lock.unlock();
    if (post)
        asio::post(strand_, [self = shared_from_this()] { self->deliver_waiting(); });
}

void Run::trim_log()
{
    std::uint64_t unread = next_frame_;
    for (const Follower* follower : followers_)
        if (!follower->whole_only_)
            unread = std::min(unread, follower->read_to_ + 1);
    const auto drop_partial = [&](const Held& held) {
        partial_bytes_ -= held.frame.bytes;
        log_bytes_ -= held.frame.bytes;
        if (held.frame.n >= unread)
            for (Follower* follower : followers_)
                if (!follower->whole_only_ && follower->read_to_ < held.frame.n)
                    ++follower->missed_deltas_;
    };
    const std::size_t partial_floor = limits_.max_partial_bytes / 4 * 3;
    while ((log_bytes_ > limits_.max_log_bytes || partial_bytes_ > limits_.max_partial_bytes) && log_.size() > 1) {
        const bool over_log = log_bytes_ > limits_.max_log_bytes;
        const auto newest = log_.end() - 1;
        const auto first = std::find_if(log_.begin(), newest, [](const Held& h) { return h.frame.partial(); });
        if (first == newest || (!over_log && first->frame.n >= unread)) {
            if (!over_log)
                break;  // no partial frame but the newest, or none that every follower of deltas has read
            last_whole_dropped_ = std::max(last_whole_dropped_, log_.front().frame.n);
            log_bytes_ -= log_.front().frame.bytes;
            log_.pop_front();
            continue;
        }
        auto last = first;
        do {
            drop_partial(*last);
            ++last;
        } while (last != newest && last->frame.partial() &&
                 (log_bytes_ > limits_.max_log_bytes || (partial_bytes_ > partial_floor && last->frame.n < unread)));
        log_.erase(first, last);
    }
}

void Run::finish()
{
    std::unique_lock lock(mutex_);
    finished_ = true;
    const bool unfollowed = followers_.empty();
    wake_waiting(lock);
    if (unfollowed)
        asio::post(strand_, [self = shared_from_this()] { self->arm_timer(); });
}

namespace {

// Whether the calling thread is the one that runs `executor`, an io_context's (with work tracked or not).
bool running_here(const asio::any_io_executor& executor)
{
    using untracked = asio::io_context::executor_type;
    using tracked = decltype(asio::prefer(std::declval<untracked>(), asio::execution::outstanding_work.tracked));
    if (const auto* e = executor.target<untracked>())
        return e->running_in_this_thread();
    if (const auto* e = executor.target<tracked>())
        return e->running_in_this_thread();
    return false;
}

}  // namespace

// Under the mutex: a token to each follower that waits, whose wait ends on its own executor; or, with `post`, a
// follower that writes for itself on this thread waits on, for deliver_waiting().
void Run::wake_waiting(std::unique_lock<std::mutex>&, bool partial, bool* post)
{
    for (Follower* f : followers_)
        if (f->waiting_ && !(partial && f->whole_only_)) {
            if (post && f->direct_ && running_here(f->wake_.get_executor())) {
                *post = *post || !delivery_posted_;
                delivery_posted_ = true;
                continue;
            }
            f->waiting_ = false;
            f->wake_.notify();
        }
}

// On the followers' thread. A follower still waiting is suspended in wait() (nothing woke it since it read), so
// that its connection writes nothing else meanwhile; none of them is destroyed while this runs.
void Run::deliver_waiting()
{
    Deliveries direct;
    {
        std::lock_guard lock(mutex_);
        delivery_posted_ = false;
        for (Follower* f : followers_) {
            if (!f->waiting_ || !f->direct_ || !running_here(f->wake_.get_executor()))
                continue;
            f->waiting_ = false;
            if (direct.size < direct.followers.size())
                direct.followers[direct.size++] = f;
            else
                f->wake_.notify();
        }
    }
    for (std::size_t i = 0; i < direct.size; ++i) {
        Follower* f = direct.followers[i];
        if (!f->direct_->deliver())
            f->wake_.notify();
    }
}

void Run::detach(Follower* follower)
{
    std::lock_guard lock(mutex_);
    followers_.erase(std::find(followers_.begin(), followers_.end(), follower));
    if (followers_.empty())
        asio::post(strand_, [self = shared_from_this()] { self->arm_timer(); });
}

void Run::arm_timer()
{
    {
        std::lock_guard lock(mutex_);
        if (!followers_.empty() || closed_)
            return;
    }
    timer_.expires_after(limits_.grace);
    timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
        if (ec)
            return;  // re-armed, or the server stopped
        std::unique_lock lock(self->mutex_);
        if (!self->followers_.empty())
            return;  // someone came back
        if (!self->finished_) {
            lock.unlock();
            self->canceller_.cancel("the run's client left and none came back within the grace period (" +
                                    std::to_string(self->limits_.grace.count()) + " ms): the run was cancelled");
            return;  // its end arms the timer again, to forget it later
        }
        lock.unlock();
        if (auto registry = self->registry_.lock())
            registry->forget(self->id);
    });
}

bool Run::cancel(const std::string& why)
{
    {
        std::lock_guard lock(mutex_);
        if (finished_)
            return false;
    }
    canceller_.cancel(why);
    return true;
}

void Run::close(const std::string& why)
{
    {
        std::lock_guard lock(mutex_);
        closed_ = true;
    }
    cancel(why);
    asio::post(strand_, [self = shared_from_this()] { self->timer_.cancel(); });
}

bool Run::finished() const
{
    std::lock_guard lock(mutex_);
    return finished_;
}

std::string Run::failure() const
{
    std::lock_guard lock(mutex_);
    return failure_;
}

bool Run::cancelled() const
{
    std::lock_guard lock(mutex_);
    return cancelled_;
}

std::string Run::invocation_id() const
{
    std::lock_guard lock(mutex_);
    return invocation_id_;
}

std::uint64_t Run::last_frame() const
{
    std::lock_guard lock(mutex_);
    return next_frame_ - 1;
}

std::size_t Run::followers() const
{
    std::lock_guard lock(mutex_);
    return followers_.size();
}

std::size_t Run::log_bytes() const
{
    std::lock_guard lock(mutex_);
    return log_bytes_;
}

std::size_t Run::unread_frames() const
{
    std::lock_guard lock(mutex_);
    std::size_t unread = 0;
    for (const Follower* follower : followers_) {
        auto first = std::upper_bound(log_.begin(), log_.end(), follower->read_to_,
                                      [](std::uint64_t n, const Held& h) { return n < h.frame.n; });
        unread += static_cast<std::size_t>(log_.end() - first);
    }
    return unread;
}

std::string Run::missed_message(std::uint64_t first, std::uint64_t last) const
{
    return "events " + std::to_string(first) + " to " + std::to_string(last) + " of run " + id +
           " are no longer held by the server (it keeps about the last " + std::to_string(limits_.max_log_bytes) +
           " bytes of a run): the session holds every whole event; read it with GET on the session";
}

std::string Run::missed_deltas_message(std::uint64_t count) const
{
    return std::to_string(count) + " streamed deltas of run " + id +
           " were dropped before this client read them (it read more slowly than the run streamed, and the server "
           "keeps about the last " + std::to_string(limits_.max_log_bytes) +
           " bytes of a run): the whole event that follows them holds their text";
}

Run::Follower::Follower(std::shared_ptr<Run> run, asio::any_io_executor executor, bool whole_events_only,
                        Direct* direct)
    : run_(std::move(run)), wake_(std::move(executor)), whole_only_(whole_events_only), direct_(direct)
{
    std::lock_guard lock(run_->mutex_);
    run_->followers_.push_back(this);
}

Run::Follower::~Follower()
{
    run_->detach(this);
}

void Run::Follower::read(std::uint64_t& cursor, std::size_t max_bytes, Read& out)
{
    out.frames.clear();
    out.missed_first = out.missed_last = 0;
    out.missed_deltas = 0;
    out.finished = false;
    std::lock_guard lock(run_->mutex_);
    out.missed_deltas = std::exchange(missed_deltas_, 0);
    if (run_->last_whole_dropped_ > cursor) {
        out.missed_first = cursor + 1;
        out.missed_last = run_->last_whole_dropped_;
        cursor = run_->last_whole_dropped_;
    }
    auto it = std::upper_bound(run_->log_.begin(), run_->log_.end(), cursor,
                               [](std::uint64_t n, const Held& h) { return n < h.frame.n; });
    std::size_t bytes = 0;
    for (; it != run_->log_.end(); ++it) {
        if (whole_only_ && it->frame.partial()) {
            cursor = it->frame.n;
            continue;
        }
        if (!out.frames.empty() && bytes + it->frame.bytes > max_bytes)
            break;
        bytes += it->frame.bytes;
        out.frames.push_back(it->frame);
        cursor = it->frame.n;
    }
    read_to_ = cursor;
    if (it == run_->log_.end()) {
        if (run_->finished_)
            out.finished = true;
        else if (out.empty())
            waiting_ = true;
    }
}

std::shared_ptr<const std::string> Run::Follower::shared_rendering(const Frame& frame, Render render)
{
    auto held = [&] {
        auto it = std::lower_bound(run_->log_.begin(), run_->log_.end(), frame.n,
                                   [](const Held& h, std::uint64_t n) { return h.frame.n < n; });
        return it != run_->log_.end() && it->frame.n == frame.n ? &*it : nullptr;
    };
    {
        std::lock_guard lock(run_->mutex_);
        if (Held* h = held(); h && h->rendered_by == render)
            return h->rendering;
    }
    // Rendered outside the lock (a large event takes a while; the pump appends meanwhile), kept when the log still
    // holds the frame and no other follower kept its own first.
    auto text = std::make_shared<const std::string>(render(*run_, frame));
    std::lock_guard lock(run_->mutex_);
    Held* h = held();
    if (!h)
        return text;
    if (h->rendered_by != render) {
        h->rendered_by = render;
        h->rendering = std::move(text);
    }
    return h->rendering;
}

asio::awaitable<void> Run::Follower::wait()
{
    if (wake_.try_take())
        co_return;
    auto [ec] = co_await wake_.async_wait(asio::as_tuple(asio::use_awaitable));
    (void)ec;
}

void Run::Follower::stop()
{
    wake_.notify();
}

RunRegistry::RunRegistry(asio::any_io_executor executor, RunLimits limits, std::size_t max_runs, bool single_threaded)
    : executor_(std::move(executor)), limits_(limits), max_runs_(max_runs), single_threaded_(single_threaded)
{
}

bool RunRegistry::full() const
{
    std::lock_guard lock(mutex_);
    return runs_.size() >= max_runs_;
}

std::shared_ptr<Run> RunRegistry::prepare(RunOwner owner)
{
    asio::any_io_executor strand = single_threaded_ ? executor_ : asio::make_strand(executor_);
    std::uint64_t number = 0;
    {
        std::lock_guard lock(mutex_);
        number = ++started_;
    }
    return std::make_shared<Run>(new_uuid(), number, std::move(owner), std::move(strand), limits_, weak_from_this(),
                                 total_bytes_, single_threaded_);
}

void RunRegistry::start(const std::shared_ptr<Run>& run, EventStream stream, std::string invocation_id)
{
    std::vector<std::shared_ptr<Run>> evicted;
    {
        std::lock_guard lock(mutex_);
        if (*total_bytes_ > limits_.max_total_log_bytes)
            evicted = evict_finished();
        runs_.emplace(run->id, run);
    }
    for (auto& old : evicted)
        old->close("the server keeps no more runs' frames (ApiServerOptions::max_total_run_log_bytes)");
    run->start(std::move(stream), std::move(invocation_id));
}

std::shared_ptr<Run> RunRegistry::start(RunOwner owner, EventStream stream, std::string invocation_id)
{
    std::shared_ptr<Run> run = prepare(std::move(owner));
    start(run, std::move(stream), std::move(invocation_id));
    return run;
}

// Under the lock: the oldest finished runs, taken out of the registry until what the others hold is under
// 3/4 of the budget (so that the next runs do not each pay for a scan). Their memory goes when the caller has
// closed them (their retention timers hold them until then).
std::vector<std::shared_ptr<Run>> RunRegistry::evict_finished()
{
    std::vector<std::shared_ptr<Run>> finished;
    for (const auto& [id, run] : runs_)
        if (run->finished())
            finished.push_back(run);
    std::sort(finished.begin(), finished.end(), [](const auto& a, const auto& b) { return a->number < b->number; });
    std::size_t held = *total_bytes_;
    std::vector<std::shared_ptr<Run>> out;
    for (auto& run : finished) {
        if (held <= limits_.max_total_log_bytes / 4 * 3)
            break;
        held -= std::min(held, run->log_bytes());
        runs_.erase(run->id);
        out.push_back(std::move(run));
    }
    return out;
}

std::shared_ptr<Run> RunRegistry::find(const std::string& id, const RunOwner& owner) const
{
    std::lock_guard lock(mutex_);
    auto it = runs_.find(id);
    if (it == runs_.end() || !(it->second->owner == owner))
        return nullptr;
    return it->second;
}

std::vector<std::shared_ptr<Run>> RunRegistry::of_session(const RunOwner& owner) const
{
    std::vector<std::shared_ptr<Run>> out;
    {
        std::lock_guard lock(mutex_);
        for (const auto& [id, run] : runs_)
            if (run->owner == owner)
                out.push_back(run);
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a->number < b->number; });
    return out;
}

std::size_t RunRegistry::size() const
{
    std::lock_guard lock(mutex_);
    return runs_.size();
}

std::size_t RunRegistry::unread_frames() const
{
    std::vector<std::shared_ptr<Run>> held;
    {
        std::lock_guard lock(mutex_);  // not held while a run's is taken
        held.reserve(runs_.size());
        for (const auto& [id, run] : runs_)
            held.push_back(run);
    }
    std::size_t unread = 0;
    for (const auto& run : held)
        unread += run->unread_frames();
    return unread;
}

void RunRegistry::forget(const std::string& id)
{
    std::lock_guard lock(mutex_);
    runs_.erase(id);
}

void RunRegistry::stop(const std::string& why)
{
    std::map<std::string, std::shared_ptr<Run>> all;
    {
        std::lock_guard lock(mutex_);
        all.swap(runs_);
    }
    for (auto& [id, run] : all)
        run->close(why);
}

void RunWriter::finished(std::string&, const Run&) {}

void RunWriter::missed_deltas(std::string&, const Run&, std::uint64_t) {}

namespace {

// How much of a run's log one write carries at most (whole frames; one frame may be larger).
constexpr std::size_t max_write_bytes = std::size_t{64} << 10;

// One connection following a run: what write_run's coroutine reads and writes with, and what writes the frames
// that come while it waits, without waking it, when the connection can (Run::Follower::Direct).
class Following final : public Run::Follower::Direct {
public:
    Following(net::ResponseWriter& res_, Run& run_, std::uint64_t cursor_, RunWriter& writer_)
        : res(res_), run(run_), writer(writer_), shared(writer_.shared()), cursor(cursor_)
    {
    }

    // Renders into `into` what `read` says was missed, if anything.
    void render_missed(std::string& into)
    {
        if (read.missed_deltas != 0)
            writer.missed_deltas(into, run, read.missed_deltas);
        if (read.missed_last != 0)
            writer.missed(into, run, read.missed_first, read.missed_last);
    }
    // Renders the frames `read` holds from `first` into `into`; stops before a frame whose rendering is shared
    // (large_frame() says). Returns how many frames it rendered.
    std::size_t render(std::size_t first, std::string& into)
    {
        std::size_t i = first;
        for (; i < read.frames.size() && !large_frame(read.frames[i]); ++i)
            writer.frame(into, run, read.frames[i]);
        return i - first;
    }
    bool large_frame(const Run::Frame& frame) const { return shared && frame.bytes > max_write_bytes; }

    // A large frame's room is not kept while the client reads on.
    static void trim(std::string& text)
    {
        if (text.capacity() > 2 * max_write_bytes)
            std::string().swap(text);
    }

    // What deliver() renders into: one buffer for every follower its thread writes for. The connection keeps
    // what the socket does not take, so the text is not needed once write_now() returns, and a paced stream's
    // follower, which its run writes for while it waits, holds no buffer of its own.
    static std::string& delivery_buffer()
    {
        thread_local std::string text;
        return text;
    }

    bool deliver() noexcept override
    {
        if (!res.can_write_now())
            return false;
        std::string& text = delivery_buffer();
        while (true) {
            follower->read(cursor, max_write_bytes, read);
            if (read.finished ||
                std::any_of(read.frames.begin(), read.frames.end(), [&](const Run::Frame& f) { return large_frame(f); })) {
                held = true;  // the follower writes these
                return false;
            }
            if (read.empty())
                return true;  // read() marked the follower waiting again
            text.clear();
            render_missed(text);
            render(0, text);
            const bool written = text.empty() || res.write_now(text);
            trim(text);
            if (!written)
                return false;  // the follower writes the rest the connection kept
        }
    }

    net::ResponseWriter& res;
    Run& run;
    RunWriter& writer;
    const Run::Follower::Render shared;
    Run::Follower* follower = nullptr;
    std::uint64_t cursor;
    Run::Read read;
    bool held = false;  // deliver() read frames the follower writes
    std::string out;    // what the follower's coroutine writes; reused while the follower is woken for each frame
};

}  // namespace

asio::awaitable<bool> write_run(net::ResponseWriter& res, std::shared_ptr<Run> run, std::uint64_t cursor,
                                RunWriter& writer)
{
    auto executor = co_await asio::this_coro::executor;
    Following f(res, *run, cursor, writer);
    auto follower = std::make_shared<Run::Follower>(run, executor, false, &f);  // destroyed before f
    f.follower = follower.get();
    res.on_client_gone([weak = std::weak_ptr<Run::Follower>(follower)] {
        if (auto fl = weak.lock())
            fl->stop();
    });
    Run::Read& read = f.read;
    std::string& out = f.out;
    while (true) {
        if (!f.held)
            follower->read(f.cursor, max_write_bytes, read);
        f.held = false;
        out.clear();
        f.render_missed(out);
        for (std::size_t i = 0; i < read.frames.size();) {
            i += f.render(i, out);
            if (i == read.frames.size())
                break;
            if (!out.empty())  // a large frame: one rendering for every follower
                co_await res.write(out);
            out.clear();
            const std::shared_ptr<const std::string> text = follower->shared_rendering(read.frames[i], f.shared);
            co_await res.write(*text);
            ++i;
        }
        if (read.finished) {
            writer.finished(out, *run);
            if (res.streaming())
                co_await res.end_stream(out);  // the last frames and the stream's end in one write
            else if (!out.empty())
                co_await res.write(out);
            co_return true;
        }
        if (!out.empty())
            co_await res.write(out);
        Following::trim(out);
        if (read.empty()) {
            if (run->single_threaded() && res.can_write_now())
                std::string().swap(out);  // the run writes what comes while the follower waits (deliver())
            co_await follower->wait();
            if (res.client_gone())
                co_return false;  // the stream stays unfinished: the connection closes
            asio::cancellation_state state = co_await asio::this_coro::cancellation_state;
            if (state.cancelled() != asio::cancellation_type::none)
                co_return false;  // the server stops
            if (!res.can_write_now())
                co_await res.flush();  // what the run wrote for this follower and the socket did not take
        }
    }
}

std::optional<std::pair<std::string, std::uint64_t>> parse_frame_id(std::string_view id)
{
    const auto colon = id.rfind(':');
    if (colon == std::string_view::npos || colon == 0 || colon + 1 == id.size() || id.size() > 200)
        return std::nullopt;
    std::uint64_t n = 0;
    const char* first = id.data() + colon + 1;
    const char* last = id.data() + id.size();
    auto [end, ec] = std::from_chars(first, last, n);
    if (ec != std::errc() || end != last)
        return std::nullopt;
    return std::make_pair(std::string(id.substr(0, colon)), n);
}

}  // namespace adk::server
