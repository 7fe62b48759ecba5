// Content and Part: the messages exchanged with models, in the shape of google.genai's types.
//
// DESIGN: a Part is one struct with optional members, as in genai, not a std::variant: real payloads put
// several members on one part (a functionCall with a sibling thoughtSignature; text with thought=true).
// The members that are large and usually absent are Boxed (heap-held optionals) so that a Part stays small.
// Members adk-cpp does not model are kept in `extra` and written back unchanged, so a round trip through
// adk-cpp never loses what a newer ADK or model wrote.
//
// Every type here has a user-declared constructor and is checked not to be an aggregate: g++ 12
// miscompiles aggregate temporaries built inside co_await expressions (a class-type temporary there is copied bitwise and freed twice).
#pragma once

#include <adk/core/boxed.hpp>

#include <boost/json/fwd.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace adk {

namespace json = boost::json;

// The largest inlineData payload accepted, decoded: 10 MB. Bigger files belong in an artifact service. It is
// checked wherever a Part crosses a boundary: read from JSON and written to JSON (a model request, a stored
// event), and when an event is committed to a session.
inline constexpr std::size_t max_inline_data_bytes = 10 * 1000 * 1000;

// The most parts one message (a Content, an A2A Message or Artifact) may hold: 4,096, past the 3,000 images a
// Gemini prompt takes. A part costs far more held than its smallest JSON (`{"text":"a"}`, 12 bytes), so a bound
// on bytes alone let a 15 MiB request hold a million parts; checked when JSON is read, before a part is made.
inline constexpr std::size_t max_content_parts = 4096;

// Raw bytes with a MIME type (genai Blob). `data` holds the decoded bytes; JSON carries them in base64.
class Blob {
public:
    Blob() = default;
    Blob(std::string mime_type_, std::string data_);
    std::string mime_type;
    std::string data;
    std::optional<std::string> display_name;
    json::object extra;

    friend bool operator==(const Blob&, const Blob&) = default;
};

// A reference to a file by URI (genai FileData).
class FileData {
public:
    FileData() = default;
    FileData(std::string mime_type_, std::string file_uri_);
    std::string mime_type;
    std::string file_uri;
    std::optional<std::string> display_name;
    json::object extra;

    friend bool operator==(const FileData&, const FileData&) = default;
};

class FunctionCall {
public:
    FunctionCall() = default;
    FunctionCall(std::string id_, std::string name_, json::object args_);
    std::string id;  // empty when the model gave none; ADK assigns "adk-<uuid>"
    std::string name;
    json::object args;
    json::object extra;

    friend bool operator==(const FunctionCall&, const FunctionCall&) = default;
};

class FunctionResponse {
public:
    FunctionResponse() = default;
    FunctionResponse(std::string id_, std::string name_, json::object response_);
    std::string id;
    std::string name;
    json::object response;
    json::object extra;  // willContinue, scheduling, parts, ...

    friend bool operator==(const FunctionResponse&, const FunctionResponse&) = default;
};

class ExecutableCode {
public:
    ExecutableCode() = default;
    ExecutableCode(std::string language_, std::string code_);
    std::string language;  // "PYTHON"
    std::string code;
    json::object extra;

    friend bool operator==(const ExecutableCode&, const ExecutableCode&) = default;
};

class CodeExecutionResult {
public:
    CodeExecutionResult() = default;
    CodeExecutionResult(std::string outcome_, std::string output_);
    std::string outcome;  // "OUTCOME_OK", "OUTCOME_FAILED", "OUTCOME_DEADLINE_EXCEEDED"
    std::string output;
    json::object extra;

    friend bool operator==(const CodeExecutionResult&, const CodeExecutionResult&) = default;
};

class Part {
public:
    Part() = default;

    static Part from_text(std::string text);
    static Part from_thought(std::string text);
    // Throws adk::Error when `data` is larger than max_inline_data_bytes.
    static Part from_bytes(std::string data, std::string mime_type);
    static Part from_uri(std::string file_uri, std::string mime_type);
    static Part from_function_call(std::string name, json::object args, std::string id = {});
    static Part from_function_response(std::string name, json::object response, std::string id = {});

    std::optional<std::string> text;
    bool thought = false;                          // written only when true
    std::optional<std::string> thought_signature;  // raw bytes (base64 in JSON)
    Boxed<Blob> inline_data;
    Boxed<FileData> file_data;
    Boxed<FunctionCall> function_call;
    Boxed<FunctionResponse> function_response;
    Boxed<ExecutableCode> executable_code;
    Boxed<CodeExecutionResult> code_execution_result;
    json::object extra;  // videoMetadata, partMetadata, ... kept as read

    friend bool operator==(const Part&, const Part&) = default;
};

class Content {
public:
    Content() = default;
    Content(std::string role_, std::vector<Part> parts_);

    static Content user(std::string text);
    static Content model(std::string text);

    // The text parts that are not thoughts, joined without separator.
    std::string text() const;

    std::string role;  // "user" or "model"; empty when unset
    std::vector<Part> parts;
    json::object extra;

    friend bool operator==(const Content&, const Content&) = default;
};

static_assert(!std::is_aggregate_v<Blob> && !std::is_aggregate_v<FileData>);
static_assert(!std::is_aggregate_v<FunctionCall> && !std::is_aggregate_v<FunctionResponse>);
static_assert(!std::is_aggregate_v<ExecutableCode> && !std::is_aggregate_v<CodeExecutionResult>);
static_assert(!std::is_aggregate_v<Part> && !std::is_aggregate_v<Content>);

// Throws adk::Error (too_large: 413 over HTTP) when a payload of `n` bytes is over max_inline_data_bytes.
void check_inline_size(std::size_t n);
// Throws adk::Error (too_large) when `what` (e.g. "Content.parts") holds `n` parts, over max_content_parts.
void check_part_count(std::size_t n, std::string_view what);
// The same for every inline payload of `content`.
void check_inline_data(const Content& content);

// JSON in ADK's form (camelCase, nulls omitted, base64 bytes). Reading accepts snake_case keys too and
// throws adk::Error (errc::invalid_argument) naming the field when a value has the wrong type.
void tag_invoke(const json::value_from_tag&, json::value& out, const Blob& v);
void tag_invoke(const json::value_from_tag&, json::value& out, const FileData& v);
void tag_invoke(const json::value_from_tag&, json::value& out, const FunctionCall& v);
void tag_invoke(const json::value_from_tag&, json::value& out, const FunctionResponse& v);
void tag_invoke(const json::value_from_tag&, json::value& out, const ExecutableCode& v);
void tag_invoke(const json::value_from_tag&, json::value& out, const CodeExecutionResult& v);
void tag_invoke(const json::value_from_tag&, json::value& out, const Part& v);
void tag_invoke(const json::value_from_tag&, json::value& out, const Content& v);
Blob tag_invoke(const json::value_to_tag<Blob>&, const json::value& v);
FileData tag_invoke(const json::value_to_tag<FileData>&, const json::value& v);
FunctionCall tag_invoke(const json::value_to_tag<FunctionCall>&, const json::value& v);
FunctionResponse tag_invoke(const json::value_to_tag<FunctionResponse>&, const json::value& v);
ExecutableCode tag_invoke(const json::value_to_tag<ExecutableCode>&, const json::value& v);
CodeExecutionResult tag_invoke(const json::value_to_tag<CodeExecutionResult>&, const json::value& v);
Part tag_invoke(const json::value_to_tag<Part>&, const json::value& v);
Content tag_invoke(const json::value_to_tag<Content>&, const json::value& v);

}  // namespace adk
