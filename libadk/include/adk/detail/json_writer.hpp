// JsonWriter: JSON text written straight into a string, without building a json::value tree first, the same byte
// for byte as Boost.JSON's serializer writes the tree (strings escaped and numbers formatted as it does them). For
// the texts written often enough that the tree costs: an event's JSON (core/event_text.cpp), the model's request and
// answer as spans keep them (telemetry/genai_spans.cpp), and a provider's request body (providers/gemini). Not part
// of the API.
#pragma once

#include <adk/core/event.hpp>

#include <boost/json/serializer.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace adk::detail {

namespace json = boost::json;

class JsonWriter {
public:
    explicit JsonWriter(std::string& out) : out_(out) {}

    void begin_object()
    {
        out_ += '{';
        push();
    }
    void end_object()
    {
        out_ += '}';
        pop();
    }
    void begin_array()
    {
        out_ += '[';
        push();
    }
    void end_array()
    {
        out_ += ']';
        pop();
    }

    // A member's key, known to need no escaping (the names of ADK's members); each is written once.
    void key(std::string_view k)
    {
        record(k);
        char buf[64];
        std::size_t n = 0;
        if (!levels_[depth_ - 1].first)
            buf[n++] = ',';
        levels_[depth_ - 1].first = false;
        buf[n++] = '"';
        const std::size_t len = std::min(k.size(), sizeof buf - 4);  // ADK's names are far shorter
        std::memcpy(buf + n, k.data(), len);
        n += len;
        buf[n++] = '"';
        buf[n++] = ':';
        out_.append(buf, n);
    }

    // The key of an extra member: false (and nothing written) when the object has a member of that name already.
    bool extra_key(std::string_view k)
    {
        const Level& level = levels_[depth_ - 1];
        for (std::size_t i = 0; i < level.keys; ++i)
            if (std::string_view(level.names[i].data, level.names[i].size) == k)
                return false;
        record(k);
        separate();
        string(k);
        out_ += ':';
        return true;
    }

    // An element of an array.
    void element() { separate(); }

    // A value's JSON text as it is (a member's value after key(), or an element after element()).
    void raw(std::string_view json_text) { out_.append(json_text); }

    void string(std::string_view s)
    {
        static constexpr char hex[] = "0123456789abcdef";
        out_ += '"';
        std::size_t run = 0;
        for (std::size_t i = 0; i < s.size(); ++i) {
            i = plain_run(s, i);
            if (i == s.size())
                break;
            const auto c = static_cast<unsigned char>(s[i]);
            out_.append(s.data() + run, i - run);
            run = i + 1;
            switch (c) {
            case '"': out_ += "\\\""; break;
            case '\\': out_ += "\\\\"; break;
            case '\b': out_ += "\\b"; break;
            case '\t': out_ += "\\t"; break;
            case '\n': out_ += "\\n"; break;
            case '\f': out_ += "\\f"; break;
            case '\r': out_ += "\\r"; break;
            default:
                out_ += "\\u00";
                out_ += hex[c >> 4];
                out_ += hex[c & 15];
            }
        }
        out_.append(s.data() + run, s.size() - run);
        out_ += '"';
    }

    void boolean(bool b) { out_ += b ? "true" : "false"; }

    void integer(std::int64_t v)
    {
        char buf[24];
        const auto r = std::to_chars(buf, buf + sizeof buf, v);
        out_.append(buf, r.ptr);
    }

    // Any JSON value, as Boost.JSON's serializer writes it; the common small ones without it.
    void value(const json::value& v)
    {
        switch (v.kind()) {
        case json::kind::null: out_ += "null"; return;
        case json::kind::bool_: boolean(v.get_bool()); return;
        case json::kind::int64: integer(v.get_int64()); return;
        case json::kind::string: string(v.get_string()); return;
        case json::kind::object:
            if (v.get_object().empty()) {
                out_ += "{}";
                return;
            }
            break;
        case json::kind::array:
            if (v.get_array().empty()) {
                out_ += "[]";
                return;
            }
            break;
        default: break;
        }
        serialize(v);
    }

    void value(const json::object& o)
    {
        if (o.empty())
            out_ += "{}";
        else
            serialize(o);
    }

    void value(const json::array& a)
    {
        if (a.empty())
            out_ += "[]";
        else
            serialize(a);
    }

    // A member written only when it has a value, as the JSON trees leave an absent optional out (a std::optional
    // or a Boxed).
    template <class Optional>
    void member(std::string_view k, const Optional& v)
    {
        if (!v)
            return;
        using T = typename Optional::value_type;
        key(k);
        if constexpr (std::is_same_v<T, std::string>)
            string(*v);
        else if constexpr (std::is_same_v<T, bool>)
            boolean(*v);
        else if constexpr (std::is_integral_v<T>)
            integer(*v);
        else if constexpr (std::is_floating_point_v<T>)
            number(*v);
        else
            value(*v);
    }

    // As Boost.JSON writes a double: the shortest digits that read back to it, in scientific notation with
    // an upper-case E and the exponent bare ("1.5E0", "-2.5E-7"). Infinities and NaN (which nothing read from
    // JSON holds) go through its serializer.
    //
    // Numbers written on this thread are kept written, 64 of them by a hash of their bits: a streamed answer's
    // deltas all carry their answer's timestamp, so each chunk's frame reuses the text instead of formatting the
    // double again, also when the chunks of many answers come in turn.
    void number(double d)
    {
        if (!std::isfinite(d)) {
            const json::value v(d);
            serialize(v);
            return;
        }
        thread_local Written written[64];
        std::uint64_t bits;
        std::memcpy(&bits, &d, sizeof d);  // bitwise: -0.0 is not 0.0
        Written& slot = written[(bits * 0x9e3779b97f4a7c15) >> 58];
        if (slot.size == 0 || slot.bits != bits) {
            slot.size = format(d, slot.text);
            slot.bits = bits;
        }
        out_.append(slot.text, slot.size);
    }

private:
    class Written {
    public:
        std::uint64_t bits = 0;
        std::size_t size = 0;  // 0: none yet
        char text[48];
    };

    // Writes `d` (finite) as Boost.JSON does into `out`; returns the length.
    static std::size_t format(double d, char (&out)[48])
    {
        char buf[40];
        const auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
        const char* e = std::find(static_cast<const char*>(buf), static_cast<const char*>(r.ptr), 'e');
        std::size_t n = static_cast<std::size_t>(e - buf);
        std::memcpy(out, buf, n);
        out[n++] = 'E';
        const char* p = e + 1;
        if (*p == '-')
            out[n++] = '-';
        ++p;  // the sign
        while (p + 1 < r.ptr && *p == '0')
            ++p;
        const auto rest = static_cast<std::size_t>(r.ptr - p);
        std::memcpy(out + n, p, rest);
        return n + rest;
    }

    static bool escaped(unsigned char c) { return c < 0x20 || c == '"' || c == '\\'; }

    // Whether one of the eight bytes at `p` may need escaping (a control character, '"' or '\\'). Never false
    // when one does; true at times for a byte past 0x7f next to another (the caller then looks byte by byte).
    static bool may_escape(const char* p)
    {
        constexpr std::uint64_t ones = 0x0101010101010101, highs = 0x8080808080808080;
        std::uint64_t v;
        std::memcpy(&v, p, 8);
        const std::uint64_t quote = v ^ (ones * '"'), backslash = v ^ (ones * '\\');
        const std::uint64_t hit = ((v - ones * 0x20) & ~v) | ((quote - ones) & ~quote) | ((backslash - ones) & ~backslash);
        return (hit & highs) != 0;
    }

    // The index of the first character from `i` on that must be escaped, or s.size(): eight at a time, and the
    // last few as the eight that end the string (overlapping what was looked at).
    static std::size_t plain_run(std::string_view s, std::size_t i)
    {
        const std::size_t n = s.size();
        while (i + 8 <= n) {
            if (!may_escape(s.data() + i)) {
                i += 8;
                continue;
            }
            for (const std::size_t end = i + 8; i < end; ++i)
                if (escaped(static_cast<unsigned char>(s[i])))
                    return i;
        }
        if (i < n && n >= 8 && !may_escape(s.data() + n - 8))
            return n;
        while (i < n && !escaped(static_cast<unsigned char>(s[i])))
            ++i;
        return i;
    }

    void record(std::string_view k)
    {
        Level& level = levels_[depth_ - 1];
        if (level.keys < max_keys)
            level.names[level.keys++] = Name{k.data(), k.size()};
    }

    template <class T>
    void serialize(const T& v)
    {
        json::serializer sr;
        sr.reset(&v);
        char buf[1024];
        while (!sr.done())
            out_.append(sr.read(buf, sizeof buf));
    }

    // An open object or array: whether it has a member yet, and the keys it has (enough for every object
    // written here: past max_keys, a duplicate extra could not be told, and no ADK object has that many known
    // members). Left uninitialised: set as they are written.
    static constexpr std::size_t max_keys = 32;
    struct Name {
        const char* data;
        std::size_t size;
    };
    struct Level {
        bool first;
        std::size_t keys;
        Name names[max_keys];
    };

    void push()
    {
        ++depth_;
        levels_[depth_ - 1].first = true;
        levels_[depth_ - 1].keys = 0;
    }
    void pop() { --depth_; }
    void separate()
    {
        Level& level = levels_[depth_ - 1];
        if (!level.first)
            out_ += ',';
        level.first = false;
    }

    std::string& out_;
    Level levels_[8];  // an event, its actions, a compaction, its content, parts, a part: 6 deep (a request: 5)
    std::size_t depth_ = 0;
};

// A Content as tag_invoke(value_from_tag, Content) makes it; text parts written here, others through tag_invoke.
// With `default_role`, a content without a role gets that one, where assigning "role" to that tree puts it (in
// place of an extra member named "role", else last). Without `with_role`, the role is left out: the tree with "role"
// erased, for a content without extra members (erasing from a tree with them moves its last member).
void write_content(JsonWriter& w, const Content& c, std::string_view default_role = {}, bool with_role = true);
// Usage counts as tag_invoke(value_from_tag, UsageMetadata) makes them.
void write_usage(JsonWriter& w, const UsageMetadata& u);

// The JSON text of an answer's streamed deltas of plain text, from pieces of its first delta written once: the
// same text as append_json_text of each delta, which differs from `base` only in its one text part's text, its
// usage counts and its finish reason (what a server's run log keeps of a delta). A server writes one per chunk.
class DeltaJson {
public:
    // `base`: a partial event with one text part, without what append_json_text writes between "partial" and a
    // delta's members (turn_complete, interrupted, an error code or message). usable() is false for any other.
    explicit DeltaJson(const Event& base);
    bool usable() const noexcept { return usable_; }
    // A delta's text, and its usage counts and finish reason when it has them (null when not).
    void append(std::string& out, std::string_view text, const UsageMetadata* usage,
                const std::string* finish_reason) const;

private:
    std::string head_;    // up to the text's value
    std::string middle_;  // after the text's value, through the members before "finishReason"
    std::string tail_;    // the members after "usageMetadata", and the end
    bool usable_ = false;
};

}  // namespace adk::detail
