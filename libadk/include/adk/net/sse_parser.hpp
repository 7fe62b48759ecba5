// SseParser: Server-Sent Events, sans I/O. Bytes in, events out, as the WHATWG specification parses them:
//   * lines end with LF, CRLF or CR (a CRLF split across two feeds counts once);
//   * a leading UTF-8 byte order mark is skipped; lines starting with ':' are comments;
//   * "field: value" (one space after the colon removed), or a bare "field" with an empty value;
//   * event / data / id / retry fields; several data lines are joined with "\n"; an id holding NUL and
//     a retry that is not all digits are ignored; other fields are ignored;
//   * a blank line dispatches the event (nothing when no data came);
//   * each event's text is decoded as UTF-8 when it is dispatched, invalid sequences becoming U+FFFD, so a
//     character split across reads arrives whole.
// Unlike the browser's parser, finish() dispatches a pending event at the end of the body: providers end
// streams without the final blank line. Lines that are neither fields nor comments (Gemini sends a bare
// JSON error object mid-stream) are kept, up to 1 MiB, in unparsed() for the provider to look at. And the
// memory it holds is bounded: a line, or an event's lines together, over `max_event_bytes` throws adk::Error
// (errc::bad_response) instead of growing without end on a stream that never sends a newline. (The limit
// counts bytes received: an event's data, with each invalid byte made U+FFFD, is at most three times it.)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace adk::net {

class SseEvent {
public:
    SseEvent() = default;
    SseEvent(std::string event_, std::string data_) : event(std::move(event_)), data(std::move(data_)) {}
    std::string event = "message";  // the event type
    std::string data;
    std::string id;                 // the last event id seen so far in the stream
    std::optional<std::int64_t> retry;  // a reconnection time sent with this event, in milliseconds
    friend bool operator==(const SseEvent&, const SseEvent&) = default;
};
static_assert(!std::is_aggregate_v<SseEvent>);

class SseParser {
public:
    static constexpr std::size_t default_max_event_bytes = std::size_t{32} << 20;

    explicit SseParser(std::size_t max_event_bytes = default_max_event_bytes) : max_event_bytes_(max_event_bytes) {}

    // What is given each event as it is dispatched: the parser's own event, valid during the call, whose
    // strings the parser reuses for the next event (a stream of events allocates nothing per event once they
    // have grown; the data of an event over 64 KiB is given back after it). A receiver may move from it.
    class Receiver {
    public:
        virtual void on_event(SseEvent& event) = 0;

    protected:
        ~Receiver() = default;
    };

    // Parses `bytes` and gives every event they complete to `out`. Throws adk::Error (bad_response) when
    // a line or an event grows over the limit (or what `out` throws); the parser is unusable after that.
    void feed(std::string_view bytes, Receiver& out);
    // The end of the body: the last line and a pending event are dispatched.
    void finish(Receiver& out);
    // The same, appending the events to `out`.
    void feed(std::string_view bytes, std::vector<SseEvent>& out);
    void finish(std::vector<SseEvent>& out);

    // Lines that were neither a known field nor a comment, each followed by "\n".
    const std::string& unparsed() const noexcept { return unparsed_; }

    static constexpr std::size_t max_unparsed_bytes = 1 << 20;

private:
    void line(std::string_view text, Receiver& out);
    void dispatch(Receiver& out);
    [[noreturn]] void too_large() const;

    std::size_t max_event_bytes_;
    SseEvent event_;            // the event given to the receiver; its strings keep their room
    std::string partial_;       // the line read so far
    bool after_cr_ = false;     // the last byte was CR: a following LF belongs to it
    bool started_ = false;      // the BOM check is done
    std::string data_;
    bool has_data_ = false;
    std::string event_type_;
    std::string last_id_;
    std::optional<std::int64_t> retry_;
    std::string unparsed_;
};

// Decodes bytes as UTF-8, replacing each invalid sequence with U+FFFD.
std::string to_valid_utf8(std::string_view bytes);

}  // namespace adk::net
