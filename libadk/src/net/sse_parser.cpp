#include <adk/net/sse_parser.hpp>

#include <adk/core/error.hpp>

#include <algorithm>
#include <cstring>

namespace adk::net {

namespace {

// How many leading bytes are ASCII, eight at a time.
std::size_t ascii_prefix(std::string_view in)
{
    std::size_t n = 0;
    for (; n + 8 <= in.size(); n += 8) {
        std::uint64_t word;
        std::memcpy(&word, in.data() + n, 8);
        if (word & 0x8080808080808080ULL)
            break;
    }
    while (n < in.size() && static_cast<unsigned char>(in[n]) < 0x80)
        ++n;
    return n;
}

// What an event's data string keeps of its room for the next event; a larger one is given back.
constexpr std::size_t kept_room = std::size_t{64} << 10;

// Appends each event to a vector.
class Appender final : public SseParser::Receiver {
public:
    explicit Appender(std::vector<SseEvent>& out) : out_(out) {}
    void on_event(SseEvent& event) override { out_.push_back(std::move(event)); }

private:
    std::vector<SseEvent>& out_;
};

// `to` holds `from` made valid UTF-8, reusing its room when `from` is ASCII (the usual case).
void assign_valid_utf8(std::string& to, std::string_view from)
{
    if (ascii_prefix(from) == from.size())
        to.assign(from);
    else
        to = to_valid_utf8(from);
}

}  // namespace

void SseParser::feed(std::string_view bytes, std::vector<SseEvent>& out)
{
    Appender appender(out);
    feed(bytes, appender);
}

void SseParser::finish(std::vector<SseEvent>& out)
{
    Appender appender(out);
    finish(appender);
}

void SseParser::feed(std::string_view bytes, Receiver& out)
{
    if (!started_) {
        // Skip a byte order mark at the very start, even when it arrives a byte at a time.
        static constexpr std::string_view bom = "\xEF\xBB\xBF";
        std::string_view seen = std::string_view(partial_);
        std::size_t take = std::min(bytes.size(), bom.size() - seen.size());
        std::string candidate = partial_ + std::string(bytes.substr(0, take));
        if (bom.substr(0, candidate.size()) == candidate) {
            if (candidate.size() < bom.size()) {
                partial_ = candidate;  // not sure yet
                return;
            }
            partial_.clear();
            bytes.remove_prefix(take);
        }
        started_ = true;
    }
    std::size_t start = 0;
    const char* const end = bytes.data() + bytes.size();
    while (start < bytes.size()) {
        if (after_cr_) {  // the LF of a CRLF whose CR ended the line already
            after_cr_ = false;
            if (bytes[start] == '\n') {
                ++start;
                continue;
            }
        }
        // The line's end: the first CR or LF, found with memchr (lines are hundreds of bytes of JSON).
        const char* from = bytes.data() + start;
        const char* lf = static_cast<const char*>(std::memchr(from, '\n', static_cast<std::size_t>(end - from)));
        const char* cr = static_cast<const char*>(std::memchr(from, '\r', static_cast<std::size_t>((lf ? lf : end) - from)));
        const char* eol = cr ? cr : lf;
        if (!eol)
            break;
        const std::size_t i = static_cast<std::size_t>(eol - bytes.data());
        if (partial_.size() + (i - start) > max_event_bytes_)
            too_large();
        if (partial_.empty()) {
            line(bytes.substr(start, i - start), out);
        } else {
            partial_.append(bytes.substr(start, i - start));
            line(partial_, out);
            partial_.clear();
        }
        after_cr_ = *eol == '\r';
        start = i + 1;
    }
    const std::string_view rest = bytes.substr(std::min(start, bytes.size()));
    if (partial_.size() + rest.size() > max_event_bytes_)
        too_large();
    partial_.append(rest);
}

void SseParser::too_large() const
{
    throw Error(errc::bad_response, "an SSE event over " + std::to_string(max_event_bytes_) +
                                        " bytes (a line, or the data lines before a blank line): the server's "
                                        "stream is broken; raise ResponseLimits::max_event_bytes if it is right");
}

void SseParser::finish(Receiver& out)
{
    if (!partial_.empty()) {
        std::string last = std::move(partial_);
        partial_.clear();
        line(last, out);
    }
    dispatch(out);
}

void SseParser::line(std::string_view text, Receiver& out)
{
    if (text.empty()) {
        dispatch(out);
        return;
    }
    if (text.front() == ':')
        return;  // a comment (keep-alives such as ": OPENROUTER PROCESSING")
    std::string_view field = text;
    std::string_view value;
    if (auto colon = text.find(':'); colon != std::string_view::npos) {
        field = text.substr(0, colon);
        value = text.substr(colon + 1);
        if (!value.empty() && value.front() == ' ')
            value.remove_prefix(1);
    }
    if (field == "data") {
        if (data_.size() + value.size() + 1 > max_event_bytes_)
            too_large();
        data_.append(value);
        data_.push_back('\n');
        has_data_ = true;
    } else if (field == "event") {
        event_type_ = std::string(value);
    } else if (field == "id") {
        if (value.find('\0') == std::string_view::npos)
            last_id_ = std::string(value);
    } else if (field == "retry") {
        if (!value.empty() && std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
            value.size() < 19)
            retry_ = std::stoll(std::string(value));
    } else if (unparsed_.size() + text.size() < max_unparsed_bytes) {
        unparsed_.append(text);
        unparsed_.push_back('\n');
    }
}

void SseParser::dispatch(Receiver& out)
{
    if (!has_data_) {
        event_type_.clear();  // the spec resets the type even when nothing is dispatched
        return;
    }
    data_.pop_back();  // the "\n" after the last data line
    if (ascii_prefix(data_) != data_.size())
        data_ = to_valid_utf8(data_);
    // The data changes places with the last event's: each string keeps its room for the next event.
    event_.data.swap(data_);
    data_.clear();
    if (event_type_.empty())
        event_.event.assign("message");
    else
        assign_valid_utf8(event_.event, event_type_);
    assign_valid_utf8(event_.id, last_id_);
    event_.retry = retry_;
    has_data_ = false;
    event_type_.clear();
    retry_.reset();
    out.on_event(event_);
    // A large event's room is not kept past it (an image in one event of a model's answer).
    if (event_.data.capacity() > kept_room)
        std::string().swap(event_.data);
}

std::string to_valid_utf8(std::string_view in)
{
    const std::size_t ascii = ascii_prefix(in);  // the usual case: JSON that is all ASCII, copied as it is
    if (ascii == in.size())
        return std::string(in);
    std::string out;
    out.reserve(in.size());
    static constexpr std::string_view replacement = "\xEF\xBF\xBD";
    std::size_t i = 0;
    while (i < in.size()) {
        auto b = static_cast<unsigned char>(in[i]);
        std::size_t len = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
        bool ok = len > 0 && i + len <= in.size();
        for (std::size_t k = 1; ok && k < len; ++k)
            ok = (static_cast<unsigned char>(in[i + k]) & 0xC0) == 0x80;
        if (ok && len > 1) {
            // Overlong forms, surrogates and values past U+10FFFF are invalid too.
            std::uint32_t cp = b & (0x7F >> len);
            for (std::size_t k = 1; k < len; ++k)
                cp = (cp << 6) | (static_cast<unsigned char>(in[i + k]) & 0x3F);
            static constexpr std::uint32_t min_for_len[] = {0, 0, 0x80, 0x800, 0x10000};
            ok = cp >= min_for_len[len] && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
        }
        if (ok) {
            out.append(in.substr(i, len));
            i += len;
        } else {
            out.append(replacement);
            ++i;
        }
    }
    return out;
}

}  // namespace adk::net
