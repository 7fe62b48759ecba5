// decode_text_chunk (codec.hpp): a streamed chunk decoded from its text by Boost.JSON's SAX parser, without
// building the JSON tree of the whole chunk. Members that decode_response keeps as JSON (usage details,
// grounding, extra members of a part) are built alone, through a json::value_stack. It declines whatever
// it could decode differently from decode_response; the caller then decodes the chunk the general way.
#include <adk/providers/gemini/codec.hpp>

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/value_stack.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace adk::gemini {

namespace {

// The container being read. `skipped`: a value decode_response ignores.
enum class At : std::uint8_t { root, candidates, candidate, content, parts, part, usage, skipped };

// What the value that starts now is to decode_response.
enum class Slot : std::uint8_t {
    skip,      // ignored by decode_response
    decline,   // only the general path decodes it
    extra,     // kept as JSON in the current object's `extra` (nulls left out)
    provider,  // kept as JSON in provider_metadata (nulls kept)
    root, candidates, candidate, usage, content, parts, part,
    model_version, finish_reason, role, text, thought,
    prompt_tokens, candidates_tokens, total_tokens, thoughts_tokens, cached_tokens,
};

// The slot of member `key` of an object `at`. FieldReader also reads the snake_case spelling of a field,
// so a key with '_' where FieldReader reads is left to the general path. Keys are compared as std::string_view
// against literals of known length (a size test, then a short memcmp): this runs for every key of every chunk.
Slot classify(At at, json::string_view json_key)
{
    using namespace std::string_view_literals;
    const std::string_view key(json_key.data(), json_key.size());
    const auto unknown = [&] { return key.find('_') != std::string_view::npos ? Slot::decline : Slot::extra; };
    switch (at) {
    case At::root:
        if (key == "candidates"sv) return Slot::candidates;
        if (key == "usageMetadata"sv) return Slot::usage;
        if (key == "modelVersion"sv) return Slot::model_version;
        if (key == "error"sv || key == "promptFeedback"sv) return Slot::decline;
        return Slot::skip;
    case At::candidate:
        if (key == "content"sv) return Slot::content;
        if (key == "finishReason"sv) return Slot::finish_reason;
        if (key == "groundingMetadata"sv || key == "citationMetadata"sv || key == "safetyRatings"sv)
            return Slot::provider;
        return Slot::skip;
    case At::content:
        if (key == "role"sv) return Slot::role;
        if (key == "parts"sv) return Slot::parts;
        return unknown();
    case At::part:
        if (key == "text"sv) return Slot::text;
        if (key == "thought"sv) return Slot::thought;
        // inline data, function calls and responses, code, signatures (base64): the general path
        if (key == "inlineData"sv || key == "fileData"sv || key == "functionCall"sv || key == "functionResponse"sv ||
            key == "executableCode"sv || key == "codeExecutionResult"sv || key == "thoughtSignature"sv)
            return Slot::decline;
        return unknown();
    case At::usage:
        if (key == "promptTokenCount"sv) return Slot::prompt_tokens;
        if (key == "candidatesTokenCount"sv) return Slot::candidates_tokens;
        if (key == "totalTokenCount"sv) return Slot::total_tokens;
        if (key == "thoughtsTokenCount"sv) return Slot::thoughts_tokens;
        if (key == "cachedContentTokenCount"sv) return Slot::cached_tokens;
        return unknown();
    default:
        return Slot::skip;
    }
}

class Handler {
public:
    static constexpr std::size_t max_array_size = -1;
    static constexpr std::size_t max_object_size = -1;
    static constexpr std::size_t max_string_size = -1;
    static constexpr std::size_t max_key_size = -1;

    Handler(LlmResponse& r, unsigned char* scratch, std::size_t size) : r_(r), capture_({}, scratch, size) {}

    bool declined() const noexcept { return declined_; }

    bool on_document_begin(json::error_code&) { return true; }
    bool on_document_end(json::error_code&) { return true; }

    bool on_object_begin(json::error_code& ec)
    {
        if (capturing())
            return ++capture_depth_, true;
        const Slot at = slot();
        switch (at) {
        case Slot::root: return push(At::root, ec);
        case Slot::candidate: return push(At::candidate, ec);
        case Slot::usage: r_.usage_metadata.emplace(); return push(At::usage, ec);
        case Slot::content: r_.content.emplace(); return push(At::content, ec);
        case Slot::part: r_.content->parts.emplace_back(); return push(At::part, ec);
        case Slot::skip: return push(At::skipped, ec);
        case Slot::extra:
        case Slot::provider: return begin_capture(at), ++capture_depth_, true;
        default: return decline(ec);
        }
    }
    bool on_object_end(std::size_t n, json::error_code& ec)
    {
        if (capturing())
            return capture_.push_object(n), end_container(ec);
        --depth_;
        return true;
    }

    bool on_array_begin(json::error_code& ec)
    {
        if (capturing())
            return ++capture_depth_, true;
        const Slot at = slot();
        switch (at) {
        case Slot::candidates: return push(At::candidates, ec);
        case Slot::parts: return push(At::parts, ec);
        case Slot::skip: return push(At::skipped, ec);
        case Slot::extra:
        case Slot::provider: return begin_capture(at), ++capture_depth_, true;
        default: return decline(ec);
        }
    }
    bool on_array_end(std::size_t n, json::error_code& ec)
    {
        if (capturing())
            return capture_.push_array(n), end_container(ec);
        if (top() == At::candidates && n == 0)
            return decline(ec);  // no candidate: decode_response looks for promptFeedback then
        --depth_;
        return true;
    }

    bool on_key_part(json::string_view s, std::size_t, json::error_code&) { return part(s, key_); }
    bool on_key(json::string_view s, std::size_t, json::error_code& ec)
    {
        if (capturing())
            return capture_.push_key(s), true;
        if (!key_.empty()) {
            key_.append(s.data(), s.size());
            s = key_;
        }
        const At at = top();
        pending_ = at == At::skipped ? Slot::skip : classify(at, s);
        if (pending_ == Slot::extra || pending_ == Slot::provider)
            pending_key_.assign(s.data(), s.size());
        key_.clear();
        if (pending_ == Slot::decline)
            return decline(ec);
        // A field given twice: the general path decides which one counts.
        if (pending_ > Slot::provider) {
            const std::uint32_t bit = std::uint32_t{1} << static_cast<unsigned>(pending_);
            if (seen_[depth_ - 1] & bit)
                return decline(ec);
            seen_[depth_ - 1] |= bit;
        }
        return true;
    }

    bool on_string_part(json::string_view s, std::size_t, json::error_code&) { return part(s, text_); }
    bool on_string(json::string_view s, std::size_t, json::error_code& ec)
    {
        if (capturing())
            return capture_.push_string(s), true;
        std::string value;
        if (text_.empty()) {
            value.assign(s.data(), s.size());
        } else {
            text_.append(s.data(), s.size());
            value = std::exchange(text_, std::string());
        }
        const Slot at = slot();
        switch (at) {
        case Slot::model_version: r_.model_version = std::move(value); return true;
        case Slot::finish_reason: r_.finish_reason = std::move(value); return true;
        case Slot::role: r_.content->role = std::move(value); return true;
        case Slot::text: r_.content->parts.back().text = std::move(value); return true;
        default: return other_scalar(at, [&] { capture_.push_string(value); }, ec);
        }
    }

    bool on_number_part(json::string_view, json::error_code&) { return true; }
    bool on_int64(std::int64_t i, json::string_view, json::error_code& ec)
    {
        if (capturing())
            return capture_.push_int64(i), true;
        return count(slot(), i, [&] { capture_.push_int64(i); }, ec);
    }
    bool on_uint64(std::uint64_t u, json::string_view, json::error_code& ec)
    {
        if (capturing())
            return capture_.push_uint64(u), true;
        const Slot at = slot();
        if (u <= static_cast<std::uint64_t>(INT64_MAX))
            return count(at, static_cast<std::int64_t>(u), [&] { capture_.push_uint64(u); }, ec);
        return other_scalar(at, [&] { capture_.push_uint64(u); }, ec);
    }
    // A count written as a double, a null where a field is read: left to the general path.
    bool on_double(double d, json::string_view, json::error_code& ec)
    {
        if (capturing())
            return capture_.push_double(d), true;
        return other_scalar(slot(), [&] { capture_.push_double(d); }, ec);
    }
    bool on_null(json::error_code& ec)
    {
        if (capturing())
            return capture_.push_null(), true;
        return other_scalar(slot(), [&] { capture_.push_null(); }, ec);
    }
    bool on_bool(bool b, json::error_code& ec)
    {
        if (capturing())
            return capture_.push_bool(b), true;
        const Slot at = slot();
        if (at == Slot::thought) {
            r_.content->parts.back().thought = b;
            return true;
        }
        return other_scalar(at, [&] { capture_.push_bool(b); }, ec);
    }
    bool on_comment_part(json::string_view, json::error_code&) { return true; }
    bool on_comment(json::string_view, json::error_code&) { return true; }

private:
    static constexpr int max_depth = 32;

    // A piece of a key or string that the parser hands over before the rest of it.
    bool part(json::string_view s, std::string& pieces)
    {
        if (capturing())
            capture_.push_chars(s);
        else
            pieces.append(s.data(), s.size());
        return true;
    }

    // The slot of the value that starts now; consumes the pending key.
    Slot slot()
    {
        if (depth_ == 0)
            return Slot::root;
        switch (top()) {
        case At::skipped: return Slot::skip;
        case At::candidates: return candidate_count_++ == 0 ? Slot::candidate : Slot::skip;
        case At::parts: return Slot::part;
        default: return std::exchange(pending_, Slot::skip);
        }
    }

    At top() const noexcept { return stack_[depth_ - 1]; }

    bool push(At at, json::error_code& ec)
    {
        if (depth_ == max_depth)
            return decline(ec);
        stack_[depth_] = at;
        seen_[depth_] = 0;
        ++depth_;
        pending_ = Slot::skip;
        return true;
    }

    template <class Push>
    bool count(Slot at, std::int64_t n, Push push_value, json::error_code& ec)
    {
        switch (at) {
        case Slot::prompt_tokens: r_.usage_metadata->prompt_token_count = n; return true;
        case Slot::candidates_tokens: r_.usage_metadata->candidates_token_count = n; return true;
        case Slot::total_tokens: r_.usage_metadata->total_token_count = n; return true;
        case Slot::thoughts_tokens: r_.usage_metadata->thoughts_token_count = n; return true;
        case Slot::cached_tokens: r_.usage_metadata->cached_content_token_count = n; return true;
        default: return other_scalar(at, push_value, ec);
        }
    }

    // A scalar no field reads: skipped, kept as JSON, or left to the general path.
    template <class Push>
    bool other_scalar(Slot at, Push push_value, json::error_code& ec)
    {
        switch (at) {
        case Slot::skip: return true;
        case Slot::extra:
        case Slot::provider: begin_capture(at); push_value(); return store(ec);
        default: return decline(ec);
        }
    }

    // ---- a member kept as JSON (the key in pending_key_), built through the value stack ---------------

    bool capturing() const noexcept { return capture_target_ != Slot::skip; }

    void begin_capture(Slot target)
    {
        capture_target_ = target;
        capture_.reset();
    }

    bool end_container(json::error_code& ec) { return --capture_depth_ == 0 ? store(ec) : true; }

    bool store(json::error_code& ec)
    {
        json::value v = capture_.release();
        const Slot target = std::exchange(capture_target_, Slot::skip);
        json::object* into = nullptr;
        if (target == Slot::provider) {
            into = &r_.provider_metadata;  // nulls kept, as decode_response keeps them
        } else if (v.is_null()) {
            return true;  // FieldReader::rest leaves nulls out
        } else {
            switch (top()) {
            case At::usage: into = &r_.usage_metadata->extra; break;
            case At::content: into = &r_.content->extra; break;
            case At::part: into = &r_.content->parts.back().extra; break;
            default: return decline(ec);
            }
        }
        if (into->contains(pending_key_))
            return decline(ec);  // given twice
        into->emplace(pending_key_, std::move(v));
        return true;
    }

    bool decline(json::error_code& ec)
    {
        declined_ = true;
        ec = json::error::exception;  // stops the parser; the caller looks at declined()
        return false;
    }

    LlmResponse& r_;
    At stack_[max_depth] = {};
    std::uint32_t seen_[max_depth] = {};  // fields seen, by slot, per object
    int depth_ = 0;
    Slot pending_ = Slot::skip;  // the slot of the member whose key was just read
    int candidate_count_ = 0;
    bool declined_ = false;
    std::string key_;          // a key that arrived in parts
    std::string text_;         // a string that arrived in parts
    std::string pending_key_;  // the key of a member kept as JSON
    json::value_stack capture_;
    Slot capture_target_ = Slot::skip;  // extra or provider while a member is being built
    int capture_depth_ = 0;
};

}  // namespace

bool decode_text_chunk(std::string_view text, bool partial, LlmResponse& out, Utf8 text_is)
{
    unsigned char scratch[512];  // the value stack's own working memory
    json::parse_options options;
    options.allow_invalid_utf8 = text_is == Utf8::valid;  // checked already: Boost.JSON need not look again
    json::basic_parser<Handler> parser(options, out, scratch, sizeof scratch);
    json::error_code ec;
    const std::size_t used = parser.write_some(false, text.data(), text.size(), ec);
    if (ec || used != text.size() || parser.handler().declined())
        return false;
    out.partial = partial;
    if (out.finish_reason && !partial)
        out.turn_complete = true;
    return true;
}

}  // namespace adk::gemini
