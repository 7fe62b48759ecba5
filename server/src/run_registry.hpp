// Runs that belong to the server, not to the connection that started them. A run's pump reads the Runner's
// EventStream into the run's log, a bounded list of numbered frames (the SSE text of one event each); any
// number of connections follow the log from where they are. When no connection follows an unfinished run,
// a grace timer starts; if nobody comes back before it fires, the run is cancelled. A finished run stays for
// the same grace period, so that a client that lost the end of its stream can still read it.
//
// Frame ids: "<run id>:<n>", n from 1; a client that sends Last-Event-ID "<run id>:<n>" gets the frames
// after n. Past the log's bound, partial frames (deltas whose text the next whole event repeats) are dropped
// first, then the oldest whole ones; a follower that missed a whole frame gets an error frame that says so.
// Partial frames have a bound of their own (16 KiB): a run keeps its newest deltas, not all it streamed.
//
// Memory: a run's log holds at most max_log_bytes, or its newest frame alone when that one is larger (an event
// is kept whole until the next one comes); all runs' logs together at most about max_total_log_bytes: past it,
// starting a run forgets the oldest finished runs (their sessions hold every whole event). A follower copies
// at most 64 KiB of small frames per write and shares large ones with the log: a client that stops reading
// holds no copy of its own of the frame it is stuck on, and is closed after the server's write timeout.
//
// Threads: a run's log is guarded by its mutex; its timers live on the run's strand; a follower that waits is
// woken through a channel of its own, whose handler runs on the follower's executor.
#pragma once

#include <adk/agents/event_sink.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/experimental/concurrent_channel.hpp>
#include <boost/asio/steady_timer.hpp>

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

namespace adk::server::detail {

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

class Run : public std::enable_shared_from_this<Run> {
public:
    Run(std::string id_, std::uint64_t number_, RunOwner owner_, asio::any_io_executor strand, RunLimits limits,
        std::weak_ptr<RunRegistry> registry, Canceller canceller, std::shared_ptr<std::atomic<std::size_t>> total_bytes);
    ~Run();

    const std::string id;
    const std::uint64_t number;  // the order the server started runs in
    const RunOwner owner;

    // What a follower read: frames to write (SSE text, whole frames only), and whether the run is over and
    // they were the last. Small frames are copied together (at most max_bytes); a frame larger than that is
    // shared with the log and every other follower, not copied.
    class Read {
    public:
        std::string text;
        std::shared_ptr<const std::string> frame;  // one large frame, when `text` is empty
        bool finished = false;
        std::string_view data() const { return frame ? std::string_view(*frame) : std::string_view(text); }
    };

    // A connection that follows the run; detaches when destroyed.
    class Follower {
    public:
        Follower(std::shared_ptr<Run> run, asio::any_io_executor executor);
        ~Follower();
        Follower(const Follower&) = delete;
        Follower& operator=(const Follower&) = delete;

        // The frames after `cursor` (moved on past them), up to about `max_bytes` (at least one frame; one
        // frame alone is shared with the log, not copied). When there are none and the run is not over, the
        // next frame (or the run's end) ends the wait() that follows.
        Read read(std::uint64_t& cursor, std::size_t max_bytes);
        // Waits for frames after read() found none: returns when they come, the run ends, stop() is
        // called, or the awaiting coroutine is cancelled.
        asio::awaitable<void> wait();
        // Ends a wait() under way; on the follower's executor.
        void stop();

    private:
        friend class Run;
        std::shared_ptr<Run> run_;
        // One token: the run sends it when a frame comes while the follower waits (or is about to), stop() too.
        asio::experimental::concurrent_channel<void(boost::system::error_code)> wake_;
        bool waiting_ = false;  // under the run's mutex: read() found nothing, no token sent since
        std::uint64_t read_to_ = 0;  // under the run's mutex: the last frame read() gave
    };

    // The pump's side. Starts reading `stream` (whose canceller the run was made with) on the run's strand.
    void start(EventStream stream);
    // Cancels the run from any thread; false when it had finished.
    bool cancel(const std::string& why);
    // Cancels the run and its timer for good (the server stops).
    void close(const std::string& why);

    bool finished() const;
    std::string invocation_id() const;
    std::uint64_t last_frame() const;
    std::size_t followers() const;
    std::size_t log_bytes() const;
    // The frames of the log its followers have not read yet, each follower's counted (a slow client's backlog).
    std::size_t unread_frames() const;

private:
    friend class Follower;
    static asio::awaitable<void> pump(std::shared_ptr<Run> self, EventStream stream);
    void append(std::string json, bool partial);
    void finish();
    void wake_waiting(std::unique_lock<std::mutex>& lock);
    void detach(Follower* follower);
    void arm_timer();  // on the strand: grace for an unfollowed run, retention for a finished one

    class Frame {
    public:
        Frame(std::uint64_t n_, bool partial_, std::string text_)
            : n(n_), partial(partial_), text(std::make_shared<const std::string>(std::move(text_)))
        {
        }
        std::uint64_t n;
        bool partial;
        std::shared_ptr<const std::string> text;  // shared with the followers writing it
    };

    asio::any_io_executor strand_;
    RunLimits limits_;
    std::weak_ptr<RunRegistry> registry_;
    asio::steady_timer timer_;  // on strand_
    const Canceller canceller_;
    const std::shared_ptr<std::atomic<std::size_t>> total_bytes_;  // of every run of the registry

    mutable std::mutex mutex_;
    std::deque<Frame> log_;
    std::size_t log_bytes_ = 0;
    std::size_t partial_bytes_ = 0;  // of log_bytes_, what partial frames take
    std::uint64_t next_frame_ = 1;
    std::uint64_t last_whole_dropped_ = 0;  // the highest frame number of a whole frame dropped from the log
    bool finished_ = false;
    bool closed_ = false;
    std::string invocation_id_;
    std::vector<Follower*> followers_;  // each detaches in its destructor
};

class RunRegistry : public std::enable_shared_from_this<RunRegistry> {
public:
    // Each run's pump and timers run on a strand of `executor`, or on `executor` itself when one thread runs it.
    RunRegistry(asio::any_io_executor executor, RunLimits limits, std::size_t max_runs, bool single_threaded);

    // Whether the registry holds max_runs runs (check before starting an invocation: start() takes one more).
    bool full() const;
    // A new run of `owner`'s, reading `stream`.
    std::shared_ptr<Run> start(RunOwner owner, EventStream stream);
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

// "<run id>:<n>" split; nullopt when it is not of that form.
std::optional<std::pair<std::string, std::uint64_t>> parse_frame_id(std::string_view id);

}  // namespace adk::server::detail
