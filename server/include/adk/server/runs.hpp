// Runs that belong to the server, not to the connection that started them. A run's pump reads the Runner's
// EventStream into the run's log, a bounded list of numbered frames: the events the run emitted (shared by the
// log and every follower, never copied) and, when it failed, why. Any number of connections follow the log from
// where they are, each writing the frames in its own protocol (ADK's /run_sse frames, A2A's task updates). When
// no connection follows an unfinished run, a grace timer starts; if nobody comes back before it fires, the run is
// cancelled. A finished run stays for the same grace period, so that a client that lost the end of its stream
// can still read it.
//
// Frame numbers count from 1; ADK's frame ids are "<run id>:<n>" (a client that sends Last-Event-ID
// "<run id>:<n>" gets the frames after n). Past the log's bound, partial frames (deltas whose text the next whole
// event repeats) are dropped first, then the oldest whole ones; a follower that missed a whole frame is told
// which (Read::missed), and one that missed deltas how many (Read::missed_deltas). Partial frames have a bound of
// their own for what a client that comes back replays (16 KiB; past it they are dropped down to three quarters
// of it): a run keeps its newest deltas, not all it streamed. That bound never drops a delta a connected follower
// has yet to read: a burst of deltas (a model that sends its chunks at once) reaches a client that keeps reading
// whole, up to the log's bound.
//
// Memory: frames are counted by approximate_bytes(event). A run's log holds at most max_log_bytes, or its newest
// frame alone when that one is larger (an event is kept whole until the next one comes); all runs' logs together
// at most about max_total_log_bytes: past it, starting a run forgets the oldest finished runs (their sessions hold
// every whole event). A follower reads at most about 64 KiB of small frames at a time; a large frame's rendering
// can be shared by every follower that writes it the same way (Follower::shared_rendering), so that a client that
// stops reading holds no copy of its own of the frame it is stuck on, and is closed after the server's write
// timeout. A streamed delta of plain text that shares its answer's identity with the answer's first delta (id,
// invocation, author, branch, time, role, model version) is kept as that first delta and what differs (its text,
// usage counts and finish reason: Run::Delta), not as an Event of its own: a reader makes it whole again in an
// EventScratch of its own, and renders it as the event the invocation emitted, byte for byte.
//
// A run is its invocation's StreamReceiver (RunRegistry::prepare, RunRequest::receiver): the invocation's
// coroutine appends each event to the log as it emits it, and wakes the followers that wait, with no coroutine
// in between; the pump reads only the stream's end. A run started on a stream that carries its events
// (RunRegistry::start with a stream of its own) has its pump append them.
//
// Threads: a run's log is guarded by its mutex; its timers live on the run's strand; a follower that waits is
// woken through a Wakeup of its own (adk/core/wakeup.hpp), whose handler runs on the follower's executor. On a
// single-threaded server (the one thread runs the invocation and the connection), a follower that can write without
// waiting (Follower::Direct: write_run on a plain connection) is not woken: the run has it write the frames that
// came, once per turn of the event loop (the frames of a burst in one write), without resuming its coroutine; the
// follower is woken only for what it cannot write at once (a client that reads slowly, the run's end, a frame
// larger than one write).
#pragma once

#include <adk/agents/event_sink.hpp>
#include <adk/core/boxed.hpp>
#include <adk/core/clock.hpp>
#include <adk/core/event.hpp>
#include <adk/core/wakeup.hpp>
#include <adk/net/http_server.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace adk::server {

class RunLimits {
public:
    RunLimits() = default;
    std::chrono::milliseconds grace{std::chrono::seconds(30)};
    std::size_t max_log_bytes = std::size_t{1} << 20;
    // What of a run's log partial frames may take (deltas whose text the next whole event repeats): a client
    // that comes back gets the newest of them, and a long answer does not hold every delta it streamed.
    std::size_t max_partial_bytes = std::size_t{16} << 10;
    // What the logs of every run held may add up to; past it, the oldest finished runs are forgotten first.
    std::size_t max_total_log_bytes = std::size_t{256} << 20;
};

class RunRegistry;

// Who a run belongs to: a follower must name the same app, user and session.
class RunOwner {
public:
    RunOwner(std::string app_, std::string user_, std::string session_)
        : app(std::move(app_)), user(std::move(user_)), session(std::move(session_))
    {
    }
    std::string app;
    std::string user;
    std::string session;
    friend bool operator==(const RunOwner&, const RunOwner&) = default;
};

class Run final : public StreamReceiver<Event>, public std::enable_shared_from_this<Run> {
public:
    // `single_threaded`: one thread runs the run's strand, its invocation and its followers' connections.
    Run(std::string id_, std::uint64_t number_, RunOwner owner_, asio::any_io_executor strand, RunLimits limits,
        std::weak_ptr<RunRegistry> registry, std::shared_ptr<std::atomic<std::size_t>> total_bytes,
        bool single_threaded = false);
    ~Run() override;

    const std::string id;
    const std::uint64_t number;  // the order the server started runs in
    const RunOwner owner;

    // A streamed delta as the log keeps it when it differs from its answer's first delta (its base) only in
    // these: a delta of plain text (Run::receive says which). Rendered, it is the event the invocation emitted.
    // A finish reason comes with an answer's last delta; usage counts with the last (OpenAI, Anthropic) or with
    // every chunk (Gemini), often the same counts chunk after chunk: an answer's consecutive deltas with equal
    // counts share them. A Delta takes 56 bytes, not 176 (the log holds a dozen per stream).
    class Delta {
    public:
        std::string text;
        std::shared_ptr<const UsageMetadata> usage;  // null: none
        Boxed<std::string> finish_reason;
    };

    // Where a reader of frames has a delta kept as a Delta made whole again: a copy of its base, taken once per
    // answer, with the delta's members set. Each reader (a follower's writer) has its own.
    class EventScratch {
    public:
        const Event& of(const std::shared_ptr<const Event>& base, const Delta& delta);

    private:
        std::shared_ptr<const Event> base_;  // held, so that another base made where it was is not taken for it
        Event event_;
    };

    // One frame of the log: an event the run emitted, shared with the log, or (the last frame of a run that
    // failed) why it failed. A streamed delta of plain text is kept as its answer's first delta and a Delta.
    class Frame {
    public:
        Frame(std::shared_ptr<const Event> event, std::size_t bytes_) : bytes(bytes_), event_(std::move(event)) {}
        Frame(std::shared_ptr<const Event> base, std::shared_ptr<const Delta> delta, std::size_t bytes_)
            : bytes(bytes_), event_(std::move(base)), delta_(std::move(delta))
        {
        }
        Frame(std::string failure_, bool cancelled_, std::size_t bytes_)
            : bytes(bytes_), failure(std::move(failure_)), cancelled(cancelled_)
        {
        }
        std::uint64_t n = 0;  // from 1, set when the log takes the frame
        std::size_t bytes;    // what the log counts for it (approximate_bytes of the event it was)
        std::string failure;
        bool cancelled = false;  // the failure is the run's cancellation (errc::cancelled)

        // Whether the frame is an event (else the failure).
        bool has_event() const { return event_ != nullptr; }
        // The event the run emitted; null for the failure. A delta kept as a Delta is made whole in `scratch`
        // (valid until scratch is used again).
        const Event* event(EventScratch& scratch) const
        {
            if (!delta_)
                return event_.get();
            return &scratch.of(event_, *delta_);
        }
        // The event as the log holds it, shared: null for the failure and for a delta kept as a Delta.
        std::shared_ptr<const Event> shared_event() const { return delta_ ? nullptr : event_; }
        // A delta kept as a Delta: what sets it apart, and its base (the answer's first delta); null otherwise.
        const Delta* delta() const { return delta_.get(); }
        const std::shared_ptr<const Event>& delta_base() const { return event_; }
        bool partial() const { return event_ && event_->partial; }

    private:
        friend class Run;
        std::shared_ptr<const Event> event_;  // null for the failure; a Delta's base
        std::shared_ptr<const Delta> delta_;
    };

    // What a follower read: the frames after its cursor, in order, and whether the run is over and they were
    // the last. Reused from one read to the next (its vector keeps its room).
    class Read {
    public:
        std::vector<Frame> frames;
        // Whole frames the log no longer held when the follower came to them: [first, last]; last is 0 when none.
        std::uint64_t missed_first = 0;
        std::uint64_t missed_last = 0;
        // Partial frames (deltas) dropped past the log's bound before the follower read them: it read too slowly.
        std::uint64_t missed_deltas = 0;
        bool finished = false;
        bool empty() const { return frames.empty() && missed_last == 0 && missed_deltas == 0; }
    };

    // A connection that follows the run; detaches when destroyed. `whole_events_only`: one that reads no partial
    // frame (a streamed delta) is neither given them nor woken for them.
    class Follower {
    public:
        // What has a waiting follower's frames written without waking it, on the follower's thread.
        class Direct {
        public:
            virtual ~Direct() = default;
            // Reads the frames that came and writes them; true when they are written and read() found no more
            // (the follower waits on), false when the follower must be woken to finish what it read.
            virtual bool deliver() noexcept = 0;
        };

        // `direct`: what writes for this follower while it waits, when the run's thread is the follower's
        // (a single-threaded registry); it must outlive the follower.
        Follower(std::shared_ptr<Run> run, asio::any_io_executor executor, bool whole_events_only = false,
                 Direct* direct = nullptr);
        ~Follower();
        Follower(const Follower&) = delete;
        Follower& operator=(const Follower&) = delete;

        // The frames after `cursor` (moved on past them) into `out`, up to about `max_bytes` of events (at
        // least one frame). When there are none and the run is not over, the next frame (or the run's end) ends
        // the wait() that follows.
        void read(std::uint64_t& cursor, std::size_t max_bytes, Read& out);
        Read read(std::uint64_t& cursor, std::size_t max_bytes)
        {
            Read out;
            read(cursor, max_bytes, out);
            return out;
        }
        // `frame` as `render` writes it (a function of the run and the frame alone), shared with every follower
        // that renders it with the same function while the log holds the frame: a large frame is rendered once,
        // not once per follower.
        using Render = std::string (*)(const Run& run, const Frame& frame);
        std::shared_ptr<const std::string> shared_rendering(const Frame& frame, Render render);
        // Waits for frames after read() found none: returns when they come, the run ends, stop() is
        // called, or the awaiting coroutine is cancelled.
        asio::awaitable<void> wait();
        // Ends a wait() under way; on the follower's executor.
        void stop();

    private:
        friend class Run;
        std::shared_ptr<Run> run_;
        // One token: the run sends it when a frame comes while the follower waits (or is about to), stop() too.
        Wakeup wake_;
        const bool whole_only_;
        Direct* const direct_;
        bool waiting_ = false;  // under the run's mutex: read() found nothing, no token sent since
        std::uint64_t read_to_ = 0;  // under the run's mutex: the last frame read() gave
        std::uint64_t missed_deltas_ = 0;  // under the run's mutex: deltas dropped before read() gave them
    };

    // The invocation's side: appends an event it emitted to the log, and wakes the followers that wait for one.
    void receive(std::unique_ptr<Event> event) noexcept override;
    // The same for an event its session holds (a committed one): the log keeps that one, not a copy.
    void receive_held(std::unique_ptr<Event> event, std::shared_ptr<const Event> held) noexcept override;
    // The pump's side. Starts reading `stream` on the run's strand: the end of the invocation whose events come
    // through receive(), or all of them.
    void start(EventStream stream, std::string invocation_id);
    // Cancels the run from any thread; false when it had finished.
    bool cancel(const std::string& why);
    // Cancels the run and its timer for good (the server stops).
    void close(const std::string& why);

    bool finished() const;
    // Whether one thread runs the run, its invocation and its followers: a follower that waits has the frames
    // that come written for it (Follower::Direct) and is not woken for each.
    bool single_threaded() const noexcept { return single_threaded_; }
    // Why a finished run failed (empty: it did not), and whether that was its cancellation.
    std::string failure() const;
    bool cancelled() const;
    std::string invocation_id() const;
    std::uint64_t last_frame() const;
    std::size_t followers() const;
    std::size_t log_bytes() const;
    // The frames of the log its followers have not read yet, each follower's counted (a slow client's backlog).
    std::size_t unread_frames() const;
    // What a follower is told when it missed whole frames (Read::missed_first to missed_last).
    std::string missed_message(std::uint64_t first, std::uint64_t last) const;
    // What a follower is told when it missed `count` deltas (Read::missed_deltas).
    std::string missed_deltas_message(std::uint64_t count) const;

private:
    friend class Follower;
    static asio::awaitable<void> pump(std::shared_ptr<Run> self, EventStream stream);
    void append(Frame frame);
    // Drops frames past the log's bounds (under the mutex): append() says which go first.
    void trim_log();
    void finish();
    // The producer's side (receive, or the pump for a stream that carries its events: never both at once):
    // the first plain-text delta of the answer streaming now, which the deltas after it are kept against.
    std::shared_ptr<const Event> delta_base_;
    // The usage counts of the last Delta that had some: the next one with equal counts shares them.
    std::shared_ptr<const UsageMetadata> delta_usage_;
    // Waiting followers that write the frames that came themselves (Follower::Direct), once the mutex is
    // released; a run rarely has more than one follower.
    class Deliveries {
    public:
        std::array<Follower*, 4> followers{};
        std::size_t size = 0;
    };
    // `partial`: the frame that came is a streamed delta (followers of whole events only sleep on). With
    // `post`, a waiting follower that can write for itself on this thread is left waiting, and *post is set
    // when a delivery must be posted (none is yet).
    void wake_waiting(std::unique_lock<std::mutex>& lock, bool partial = false, bool* post = nullptr);
    // Posted on the run's strand (its followers' thread) once for what comes in one turn of the event loop: each
    // follower that waits writes what came (one write for a burst), or is woken when it cannot.
    void deliver_waiting();
    void detach(Follower* follower);
    void arm_timer();  // on the strand: grace for an unfollowed run, retention for a finished one

    // A frame as the log holds it: counted, with the rendering followers share (under the mutex).
    class Held {
    public:
        explicit Held(Frame frame_) : frame(std::move(frame_)) {}
        Frame frame;
        Follower::Render rendered_by = nullptr;
        std::shared_ptr<const std::string> rendering;
    };

    asio::any_io_executor strand_;
    RunLimits limits_;
    std::weak_ptr<RunRegistry> registry_;
    adk::Timer timer_;  // on strand_
    Canceller canceller_;  // set by start(), before the registry gives the run to anyone
    const std::shared_ptr<std::atomic<std::size_t>> total_bytes_;  // of every run of the registry
    const bool single_threaded_;

    mutable std::mutex mutex_;
    std::deque<Held> log_;
    std::size_t log_bytes_ = 0;
    std::size_t partial_bytes_ = 0;  // of log_bytes_, what partial frames take
    std::uint64_t next_frame_ = 1;
    std::uint64_t last_whole_dropped_ = 0;  // the highest frame number of a whole frame dropped from the log
    bool finished_ = false;
    bool closed_ = false;
    std::string failure_;
    bool cancelled_ = false;
    std::string invocation_id_;
    std::vector<Follower*> followers_;  // each detaches in its destructor
    bool delivery_posted_ = false;      // deliver_waiting() is posted and has not run yet
};

class RunRegistry : public std::enable_shared_from_this<RunRegistry> {
public:
    // Each run's pump and timers run on a strand of `executor`, or on `executor` itself when one thread runs it.
    RunRegistry(asio::any_io_executor executor, RunLimits limits, std::size_t max_runs, bool single_threaded);

    // Whether the registry holds max_runs runs (check before starting an invocation: start() takes one more).
    bool full() const;
    // A run of `owner`'s not started yet: the receiver of the invocation to start (RunRequest::receiver). The
    // registry does not hold it until start(): dropped before (the invocation did not start), it is gone.
    std::shared_ptr<Run> prepare(RunOwner owner);
    // Holds `run` and starts its pump on `stream`, the invocation `invocation_id` (Runner::start; empty: learnt
    // from its first event) whose events the run receives, or which carries them.
    void start(const std::shared_ptr<Run>& run, EventStream stream, std::string invocation_id = {});
    // prepare() and start() at once, for a stream that carries its events.
    std::shared_ptr<Run> start(RunOwner owner, EventStream stream, std::string invocation_id = {});
    // The run of that id, when it is `owner`'s and still held.
    std::shared_ptr<Run> find(const std::string& id, const RunOwner& owner) const;
    // The runs held for a session, oldest first.
    std::vector<std::shared_ptr<Run>> of_session(const RunOwner& owner) const;
    std::size_t size() const;
    // The frames the followers of every run have not read yet (Run::unread_frames).
    std::size_t unread_frames() const;
    // The bytes the logs of the runs add up to (a run's frames are counted until it is destroyed).
    std::size_t log_bytes() const { return *total_bytes_; }

    void forget(const std::string& id);
    // The server stops: every unfinished run is cancelled, every run forgotten, and no timer is left.
    void stop(const std::string& why);

private:
    std::vector<std::shared_ptr<Run>> evict_finished();

    asio::any_io_executor executor_;
    RunLimits limits_;
    std::size_t max_runs_;
    bool single_threaded_;
    std::shared_ptr<std::atomic<std::size_t>> total_bytes_ = std::make_shared<std::atomic<std::size_t>>(0);
    mutable std::mutex mutex_;
    std::map<std::string, std::shared_ptr<Run>> runs_;
    std::uint64_t started_ = 0;
};

// How one follower writes a run's frames in its protocol: ADK's /run_sse frames, A2A's task updates.
class RunWriter {
public:
    virtual ~RunWriter() = default;
    // Appends what `frame` is in this protocol to `out` (nothing, for a frame the protocol does not show).
    virtual void frame(std::string& out, const Run& run, const Run::Frame& frame) = 0;
    // Appends what tells the client that frames `first` to `last` are no longer held (Run::missed_message).
    virtual void missed(std::string& out, const Run& run, std::uint64_t first, std::uint64_t last) = 0;
    // Appends what tells the client that `count` deltas were dropped before it read them
    // (Run::missed_deltas_message); nothing by default (the whole event that follows repeats their text).
    virtual void missed_deltas(std::string& out, const Run& run, std::uint64_t count);
    // Appends what follows the run's last frame (A2A: the final status); nothing by default.
    virtual void finished(std::string& out, const Run& run);
    // A rendering of a frame that depends on the run and the frame alone, shared between the followers that
    // write a frame larger than one write; null when a follower's rendering is its own.
    virtual Run::Follower::Render shared() const { return nullptr; }
};

// Follows `run` after frame `cursor`, writing its frames to `res` (a stream the caller began) as they come, at
// most about 64 KiB of events per write, until the run ends (then writer.finished(), and the stream's end in the
// same write when `res` streams), the client leaves or the server stops. The run goes on without it. Returns
// whether the run's end was written; false when the client left or the server stops (the connection closes).
asio::awaitable<bool> write_run(net::ResponseWriter& res, std::shared_ptr<Run> run, std::uint64_t cursor,
                                RunWriter& writer);

// "<run id>:<n>" split; nullopt when it is not of that form.
std::optional<std::pair<std::string, std::uint64_t>> parse_frame_id(std::string_view id);

}  // namespace adk::server
