// to_json_text(Event): an event's JSON written straight into a string, without building the json::value tree
// that tag_invoke(value_from_tag, Event) builds. The server writes one per streamed chunk, where the tree cost
// more than a quarter of the chunk's instructions (callgrind, tools/bench/pace.sh).
//
// The text is the same, byte for byte, as json::serialize(json::value_from(event)): the same members in the
// same order, omitted when tag_invoke omits them, strings escaped and numbers formatted as Boost.JSON's
// serializer does them, and an extra member skipped when a known one of that name was written (json::object's
// emplace keeps the first). tag_invoke stays the one mapping for everything else: parts other than text are
// written through it. The JSON fuzzer (tests/fuzz/json_decode_fuzz.cpp) checks the two agree on every event it
// reads, and so does tests/unit/event_text_test.cpp.
#include <adk/core/event.hpp>

#include <boost/json/serializer.hpp>
#include <boost/json/value_from.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace adk {

namespace {

namespace json = boost::json;

class Writer {
public:
    explicit Writer(std::string& out) : out_(out) {}

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

    // As Boost.JSON writes a double: the shortest digits that read back to it, in scientific notation with
    // an upper-case E and the exponent bare ("1.5E0", "-2.5E-7"). Infinities and NaN (which nothing read from
    // JSON holds) go through its serializer.
    //
    // The last number written on this thread is kept written: a streamed answer's deltas all carry their answer's
    // timestamp, so each chunk's frame reuses the text instead of formatting the double again.
    void number(double d)
    {
        if (!std::isfinite(d)) {
            const json::value v(d);
            serialize(v);
            return;
        }
        thread_local LastNumber last;
        if (last.size == 0 || std::memcmp(&last.value, &d, sizeof d) != 0) {  // bitwise: -0.0 is not 0.0
            last.size = format(d, last.text);
            last.value = d;
        }
        out_.append(last.text, last.size);
    }

private:
    class LastNumber {
    public:
        double value = 0;
        char text[48];
        std::size_t size = 0;  // 0: none yet
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

    // The index of the first character from `i` on that must be escaped, or s.size(): eight at a time.
    static std::size_t plain_run(std::string_view s, std::size_t i)
    {
        constexpr std::uint64_t ones = 0x0101010101010101, highs = 0x8080808080808080;
        for (; i + 8 <= s.size(); i += 8) {
            std::uint64_t v;
            std::memcpy(&v, s.data() + i, 8);
            const std::uint64_t quote = v ^ (ones * '"'), backslash = v ^ (ones * '\\');
            const std::uint64_t hit = ((v - ones * 0x20) & ~v) | ((quote - ones) & ~quote) | ((backslash - ones) & ~backslash);
            if (hit & highs)
                break;  // one of these eight (the test may also stop at a byte past 0x7f: the loop below decides)
        }
        while (i < s.size() && !escaped(static_cast<unsigned char>(s[i])))
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
    Level levels_[8];  // an event, its actions, a compaction, its content, parts, a part: 6 deep
    std::size_t depth_ = 0;
};

void put(Writer& w, std::string_view key, const std::optional<std::string>& v)
{
    if (v) {
        w.key(key);
        w.string(*v);
    }
}

void put_nonempty(Writer& w, std::string_view key, const std::string& v)
{
    if (!v.empty()) {
        w.key(key);
        w.string(v);
    }
}

void put_true(Writer& w, std::string_view key, bool v)
{
    if (v) {
        w.key(key);
        w.boolean(true);
    }
}

void put_value(Writer& w, std::string_view key, const json::value& v)
{
    w.key(key);
    w.value(v);
}

void put_value(Writer& w, std::string_view key, const json::object& o)
{
    w.key(key);
    w.value(o);
}

void put_extra(Writer& w, const json::object& extra)
{
    for (const auto& kv : extra)
        if (w.extra_key(kv.key()))
            w.value(kv.value());
}

// A part that holds text only (what a streamed chunk is), written here; any other through tag_invoke.
bool text_only(const Part& p)
{
    return !p.thought_signature && !p.inline_data && !p.file_data && !p.function_call && !p.function_response &&
           !p.executable_code && !p.code_execution_result;
}

void write_content(Writer& w, const Content& c)
{
    w.begin_object();
    w.key("parts");
    w.begin_array();
    for (const Part& p : c.parts) {
        w.element();
        if (!text_only(p)) {
            w.value(json::value_from(p));
            continue;
        }
        w.begin_object();
        put(w, "text", p.text);
        put_true(w, "thought", p.thought);
        put_extra(w, p.extra);
        w.end_object();
    }
    w.end_array();
    put_nonempty(w, "role", c.role);
    put_extra(w, c.extra);
    w.end_object();
}

void put_count(Writer& w, std::string_view key, const std::optional<std::int64_t>& v)
{
    if (v) {
        w.key(key);
        w.integer(*v);
    }
}

void write_actions(Writer& w, const EventActions& a)
{
    w.begin_object();
    put_value(w, "stateDelta", a.state_delta);
    w.key("artifactDelta");
    w.begin_object();
    for (const auto& [name, version] : a.artifact_delta)
        if (w.extra_key(name))  // names of files: escaped
            w.integer(version);
    w.end_object();
    put_true(w, "skipSummarization", a.skip_summarization);
    put(w, "transferToAgent", a.transfer_to_agent);
    put_true(w, "escalate", a.escalate);
    put_value(w, "requestedAuthConfigs", a.requested_auth_configs);
    put_value(w, "requestedToolConfirmations", a.requested_tool_confirmations);
    if (a.compaction) {
        const EventCompaction& c = *a.compaction;
        w.key("compaction");
        w.begin_object();
        if (c.start_timestamp) {
            w.key("startTimestamp");
            w.number(*c.start_timestamp);
        }
        if (c.end_timestamp) {
            w.key("endTimestamp");
            w.number(*c.end_timestamp);
        }
        if (c.compacted_content) {
            w.key("compactedContent");
            write_content(w, *c.compacted_content);
        }
        put_extra(w, c.extra);
        w.end_object();
    }
    put_true(w, "endOfAgent", a.end_of_agent);
    if (a.agent_state)
        put_value(w, "agentState", *a.agent_state);
    put(w, "rewindBeforeInvocationId", a.rewind_before_invocation_id);
    if (a.route)
        put_value(w, "route", *a.route);
    put_extra(w, a.extra);
    w.end_object();
}

}  // namespace

std::string to_json_text(const Event& e)
{
    std::string out;
    out.reserve(512);
    append_json_text(out, e);
    return out;
}

void append_json_text(std::string& out, const Event& e)
{
    Writer w(out);
    w.begin_object();
    put_nonempty(w, "id", e.id);
    put_nonempty(w, "invocationId", e.invocation_id);
    w.key("author");
    w.string(e.author);
    put_nonempty(w, "branch", e.branch);
    w.key("timestamp");
    w.number(e.timestamp);
    if (e.content) {
        w.key("content");
        write_content(w, *e.content);
    }
    w.key("actions");
    write_actions(w, e.actions);
    put_true(w, "partial", e.partial);
    put_true(w, "turnComplete", e.turn_complete);
    put_true(w, "interrupted", e.interrupted);
    put(w, "finishReason", e.finish_reason);
    put(w, "errorCode", e.error_code);
    put(w, "errorMessage", e.error_message);
    if (e.usage_metadata) {
        const UsageMetadata& u = *e.usage_metadata;
        w.key("usageMetadata");
        w.begin_object();
        put_count(w, "promptTokenCount", u.prompt_token_count);
        put_count(w, "candidatesTokenCount", u.candidates_token_count);
        put_count(w, "totalTokenCount", u.total_token_count);
        put_count(w, "thoughtsTokenCount", u.thoughts_token_count);
        put_count(w, "cachedContentTokenCount", u.cached_content_token_count);
        put_extra(w, u.extra);
        w.end_object();
    }
    put(w, "modelVersion", e.model_version);
    if (!e.long_running_tool_ids.empty()) {
        w.key("longRunningToolIds");
        w.begin_array();
        for (const auto& id : e.long_running_tool_ids) {
            w.element();
            w.string(id);
        }
        w.end_array();
    }
    if (!e.custom_metadata.empty())
        put_value(w, "customMetadata", e.custom_metadata);
    if (e.node_info) {
        const NodeInfo& n = *e.node_info;
        w.key("nodeInfo");
        w.begin_object();
        put(w, "path", n.path);
        if (!n.output_for.empty()) {
            w.key("outputFor");
            w.begin_array();
            for (const auto& path : n.output_for) {
                w.element();
                w.string(path);
            }
            w.end_array();
        }
        put_true(w, "messageAsOutput", n.message_as_output);
        put_extra(w, n.extra);
        w.end_object();
    }
    if (e.output)
        put_value(w, "output", *e.output);
    put(w, "isolationScope", e.isolation_scope);
    put_extra(w, e.extra);
    w.end_object();
}

}  // namespace adk
