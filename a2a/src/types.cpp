#include <adk/a2a/types.hpp>

#include <adk/core/content.hpp>
#include <adk/core/error.hpp>

#include <adk/core/json_fields.hpp>  // libadk's FieldReader: camelCase with snake_case read too, as ProtoJSON reads

#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

#include <array>
#include <chrono>
#include <limits>
#include <cmath>
#include <cstdio>
#include <ctime>

namespace adk::a2a {

using adk::json_fields::FieldReader;

namespace {

constexpr std::array<std::string_view, 9> task_state_names = {
    "TASK_STATE_UNSPECIFIED", "TASK_STATE_SUBMITTED", "TASK_STATE_WORKING",
    "TASK_STATE_COMPLETED",   "TASK_STATE_FAILED",    "TASK_STATE_CANCELED",
    "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_REJECTED", "TASK_STATE_AUTH_REQUIRED",
};
constexpr std::array<std::string_view, 3> role_names = {"ROLE_UNSPECIFIED", "ROLE_USER", "ROLE_AGENT"};

[[noreturn]] void refuse(std::string message)
{
    throw Error(errc::invalid_argument, std::move(message));
}

std::string required_string(FieldReader& r, std::string_view name, std::string_view what)
{
    std::optional<std::string> s = r.string(name);
    if (!s)
        refuse(std::string(what) + "." + std::string(name) + " is required (a string)");
    return std::move(*s);
}

// An id: absent is empty; present, it must be one (valid_id).
std::string id_member(FieldReader& r, std::string_view name, std::string_view what, bool required)
{
    std::optional<std::string> s = r.string(name);
    if (!s || s->empty()) {
        if (required)
            refuse(std::string(what) + "." + std::string(name) + " is required (an id)");
        return {};
    }
    if (!valid_id(*s))
        refuse(std::string(what) + "." + std::string(name) +
               " must be an id of at most 256 printable ASCII characters");
    return std::move(*s);
}

std::vector<std::string> strings(FieldReader& r, std::string_view name, std::string_view what)
{
    std::vector<std::string> out;
    if (const json::array* a = r.array(name)) {
        out.reserve(a->size());
        for (const json::value& v : *a) {
            if (!v.is_string())
                refuse(std::string(what) + "." + std::string(name) + " must be an array of strings");
            out.emplace_back(v.get_string());
        }
    }
    return out;
}

json::array array_member(FieldReader& r, std::string_view name, std::string_view what)
{
    const json::array* a = r.array(name);
    if (!a)
        return {};
    json::value copy = *a;
    adk::json_fields::check_finite(copy, std::string(what) + "." + std::string(name));
    return std::move(copy.get_array());
}

template <class T>
std::vector<T> objects(FieldReader& r, std::string_view name)
{
    std::vector<T> out;
    if (const json::array* a = r.array(name)) {
        out.reserve(a->size());
        for (const json::value& v : *a)
            out.push_back(json::value_to<T>(v));
    }
    return out;
}

// A member the protocol requires: absent, it is refused, naming it and its type.
template <class T>
T required_member(FieldReader& r, std::string_view name, std::string_view what, std::string_view type)
{
    const json::value* v = r.find(name);
    if (!v)
        refuse(std::string(what) + "." + std::string(name) + " is required (a" +
               (type.front() == 'A' ? "n " : " ") + std::string(type) + ")");
    return json::value_to<T>(*v);
}

template <class T>
std::optional<T> object_member(FieldReader& r, std::string_view name)
{
    if (const json::value* v = r.find(name))
        return json::value_to<T>(*v);
    return std::nullopt;
}

void put_string(json::object& o, std::string_view key, const std::string& v)
{
    if (!v.empty())
        o[key] = v;
}

json::array strings_array(const std::vector<std::string>& v)
{
    json::array a;
    a.reserve(v.size());
    for (const auto& s : v)
        a.emplace_back(s);
    return a;
}

void put_strings(json::object& o, std::string_view key, const std::vector<std::string>& v)
{
    if (!v.empty())
        o[key] = strings_array(v);
}

template <class T>
void put_objects(json::object& o, std::string_view key, const std::vector<T>& v)
{
    if (v.empty())
        return;
    json::array a;
    a.reserve(v.size());
    for (const auto& e : v)
        a.push_back(json::value_from(e));
    o[key] = std::move(a);
}

template <class T>
json::array objects_array(const std::vector<T>& v)
{
    json::array a;
    a.reserve(v.size());
    for (const auto& e : v)
        a.push_back(json::value_from(e));
    return a;
}

void put_object(json::object& o, std::string_view key, const json::object& v)
{
    if (!v.empty())
        o[key] = v;
}

void put_array(json::object& o, std::string_view key, const json::array& v)
{
    if (!v.empty())
        o[key] = v;
}

json::object object_or_empty(FieldReader& r, std::string_view name)
{
    std::optional<json::object> o = r.object(name);
    return o ? std::move(*o) : json::object();
}

bool digits(std::string_view s, std::size_t from, std::size_t n)
{
    for (std::size_t i = from; i < from + n; ++i)
        if (i >= s.size() || s[i] < '0' || s[i] > '9')
            return false;
    return true;
}

}  // namespace

std::string_view to_string(TaskState state) noexcept
{
    return task_state_names[static_cast<std::size_t>(state)];
}

std::optional<TaskState> parse_task_state(std::string_view text) noexcept
{
    for (std::size_t i = 0; i < task_state_names.size(); ++i)
        if (task_state_names[i] == text)
            return static_cast<TaskState>(i);
    return std::nullopt;
}

bool is_terminal(TaskState state) noexcept
{
    return state == TaskState::completed || state == TaskState::failed || state == TaskState::canceled ||
           state == TaskState::rejected;
}

bool is_interrupted(TaskState state) noexcept
{
    return state == TaskState::input_required || state == TaskState::auth_required;
}

std::string_view to_string(Role role) noexcept
{
    return role_names[static_cast<std::size_t>(role)];
}

std::optional<Role> parse_role(std::string_view text) noexcept
{
    for (std::size_t i = 0; i < role_names.size(); ++i)
        if (role_names[i] == text)
            return static_cast<Role>(i);
    return std::nullopt;
}

bool valid_id(std::string_view id) noexcept
{
    if (id.empty() || id.size() > 256)
        return false;
    for (char c : id)
        if (c < 0x21 || c > 0x7e)
            return false;
    return true;
}

double now_seconds()
{
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string format_timestamp(double seconds)
{
    if (!std::isfinite(seconds) || seconds < 0 || seconds > 253402300799.0)  // before 10000-01-01
        seconds = 0;
    const auto whole = static_cast<std::time_t>(seconds);
    const int millis = std::min(999, static_cast<int>((seconds - static_cast<double>(whole)) * 1000));
    std::tm tm{};
    gmtime_r(&whole, &tm);
    char buf[96];  // room for any int the format could print, as the compiler counts it
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                  tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, millis);
    return buf;
}

bool valid_timestamp(std::string_view s) noexcept
{
    // YYYY-MM-DDTHH:MM:SS
    if (s.size() < 20 || s.size() > 30 || !digits(s, 0, 4) || s[4] != '-' || !digits(s, 5, 2) || s[7] != '-' ||
        !digits(s, 8, 2) || (s[10] != 'T' && s[10] != 't') || !digits(s, 11, 2) || s[13] != ':' || !digits(s, 14, 2) ||
        s[16] != ':' || !digits(s, 17, 2))
        return false;
    std::size_t i = 19;
    if (s[i] == '.') {
        const std::size_t start = ++i;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9')
            ++i;
        if (i == start || i - start > 9)
            return false;
    }
    return i + 1 == s.size() && (s[i] == 'Z' || s[i] == 'z');
}

std::optional<double> parse_timestamp(std::string_view s) noexcept
{
    if (!valid_timestamp(s))
        return std::nullopt;
    auto number = [&](std::size_t from, std::size_t n) {
        int v = 0;
        for (std::size_t i = from; i < from + n; ++i)
            v = v * 10 + (s[i] - '0');
        return v;
    };
    using namespace std::chrono;
    const year_month_day date{year(number(0, 4)), month(static_cast<unsigned>(number(5, 2))),
                              day(static_cast<unsigned>(number(8, 2)))};
    const int hours = number(11, 2), minutes = number(14, 2), seconds = number(17, 2);
    if (!date.ok() || hours > 23 || minutes > 59 || seconds > 60)
        return std::nullopt;
    double fraction = 0, scale = 0.1;
    for (std::size_t i = 20; s[19] == '.' && s[i] >= '0' && s[i] <= '9'; ++i, scale /= 10)
        fraction += (s[i] - '0') * scale;
    const auto days = sys_days(date).time_since_epoch().count();
    return static_cast<double>(days) * 86400.0 + hours * 3600.0 + minutes * 60.0 + seconds + fraction;
}

Part Part::text_part(std::string text)
{
    Part p;
    p.content = std::move(text);
    return p;
}

Part Part::raw_part(std::string bytes, std::string media_type_)
{
    Part p;
    p.content = Raw{std::move(bytes)};
    p.media_type = std::move(media_type_);
    return p;
}

Part Part::url_part(std::string url, std::string media_type_)
{
    Part p;
    p.content = Url{std::move(url)};
    p.media_type = std::move(media_type_);
    return p;
}

Part Part::data_part(json::value value)
{
    Part p;
    p.content = Data{std::move(value)};
    return p;
}

std::string Message::text() const
{
    std::string out;
    for (const Part& p : parts)
        if (const std::string* t = p.text())
            out += *t;
    return out;
}

const AgentInterface* AgentCard::find_interface(std::string_view binding, std::string_view wanted_version) const
{
    for (const AgentInterface& i : supported_interfaces)
        if (i.protocol_binding == binding && i.protocol_version == wanted_version)
            return &i;
    return nullptr;
}

// Part: {"text"} | {"raw"} | {"url"} | {"data"}, with metadata, filename, mediaType.
void tag_invoke(const json::value_from_tag&, json::value& out, const Part& v)
{
    json::object o;
    if (const std::string* text = std::get_if<std::string>(&v.content))
        o["text"] = *text;
    else if (const auto* raw = std::get_if<Part::Raw>(&v.content))
        o["raw"] = adk::json_fields::base64_encode(raw->bytes);
    else if (const auto* url = std::get_if<Part::Url>(&v.content))
        o["url"] = url->url;
    else
        o["data"] = std::get<Part::Data>(v.content).value;
    put_object(o, "metadata", v.metadata);
    put_string(o, "filename", v.filename);
    put_string(o, "mediaType", v.media_type);
    adk::json_fields::put_extra(o, v.extra);
    out = std::move(o);
}

Part tag_invoke(const json::value_to_tag<Part>&, const json::value& v)
{
    FieldReader r(v, "Part");
    Part p;
    int cases = 0;
    if (std::optional<std::string> text = r.string("text")) {
        p.content = std::move(*text);
        ++cases;
    }
    if (std::optional<std::string> raw = r.string("raw")) {
        p.content = Part::Raw{adk::json_fields::base64_decode(*raw, "Part.raw")};
        ++cases;
    }
    if (std::optional<std::string> url = r.string("url")) {
        p.content = Part::Url{std::move(*url)};
        ++cases;
    }
    if (const json::value* data = r.find("data")) {
        adk::json_fields::check_finite(*data, "Part.data");
        p.content = Part::Data{*data};
        ++cases;
    }
    if (cases != 1)
        refuse("a Part holds exactly one of text, raw, url and data (this one holds " + std::to_string(cases) + ")");
    p.metadata = object_or_empty(r, "metadata");
    p.filename = r.string("filename").value_or("");
    p.media_type = r.string("mediaType").value_or("");
    p.extra = r.rest();
    return p;
}

void tag_invoke(const json::value_from_tag&, json::value& out, const Message& v)
{
    json::object o;
    o["messageId"] = v.message_id;
    put_string(o, "contextId", v.context_id);
    put_string(o, "taskId", v.task_id);
    o["role"] = to_string(v.role);
    o["parts"] = objects_array(v.parts);
    put_object(o, "metadata", v.metadata);
    put_strings(o, "extensions", v.extensions);
    put_strings(o, "referenceTaskIds", v.reference_task_ids);
    adk::json_fields::put_extra(o, v.extra);
    out = std::move(o);
}

Message tag_invoke(const json::value_to_tag<Message>&, const json::value& v)
{
    FieldReader r(v, "Message");
    Message m;
    m.message_id = id_member(r, "messageId", "Message", true);
    m.context_id = id_member(r, "contextId", "Message", false);
    m.task_id = id_member(r, "taskId", "Message", false);
    const std::string role = required_string(r, "role", "Message");
    std::optional<Role> parsed = parse_role(role);
    if (!parsed || *parsed == Role::unspecified)
        refuse("Message.role must be \"ROLE_USER\" or \"ROLE_AGENT\"");
    m.role = *parsed;
    if (!r.array("parts"))
        refuse("Message.parts is required (an array of Parts)");
    if (const json::array* parts = r.array("parts"))
        adk::check_part_count(parts->size(), "Message.parts");
    m.parts = objects<Part>(r, "parts");
    m.metadata = object_or_empty(r, "metadata");
    m.extensions = strings(r, "extensions", "Message");
    m.reference_task_ids = strings(r, "referenceTaskIds", "Message");
    for (const auto& id : m.reference_task_ids)
        if (!valid_id(id))
            refuse("Message.referenceTaskIds holds a string that is not an id");
    m.extra = r.rest();
    return m;
}

void tag_invoke(const json::value_from_tag&, json::value& out, const TaskStatus& v)
{
    json::object o;
    o["state"] = to_string(v.state);
    if (v.message)
        o["message"] = json::value_from(*v.message);
    put_string(o, "timestamp", v.timestamp);
    adk::json_fields::put_extra(o, v.extra);
    out = std::move(o);
}

TaskStatus tag_invoke(const json::value_to_tag<TaskStatus>&, const json::value& v)
{
    FieldReader r(v, "TaskStatus");
    TaskStatus s;
    const std::string state = required_string(r, "state", "TaskStatus");
    std::optional<TaskState> parsed = parse_task_state(state);
    if (!parsed)
        refuse("TaskStatus.state must be a TaskState (\"TASK_STATE_WORKING\", ...)");
    s.state = *parsed;
    s.message = object_member<Message>(r, "message");
    if (std::optional<std::string> t = r.string("timestamp")) {
        if (!valid_timestamp(*t))
            refuse("TaskStatus.timestamp must be an ISO 8601 time in UTC (\"2026-11-28T10:30:00.000Z\")");
        s.timestamp = std::move(*t);
    }
    s.extra = r.rest();
    return s;
}

void tag_invoke(const json::value_from_tag&, json::value& out, const Artifact& v)
{
    json::object o;
    o["artifactId"] = v.artifact_id;
    put_string(o, "name", v.name);
    put_string(o, "description", v.description);
    o["parts"] = objects_array(v.parts);
    put_object(o, "metadata", v.metadata);
    put_strings(o, "extensions", v.extensions);
    adk::json_fields::put_extra(o, v.extra);
    out = std::move(o);
}

Artifact tag_invoke(const json::value_to_tag<Artifact>&, const json::value& v)
{
    FieldReader r(v, "Artifact");
    Artifact a;
    a.artifact_id = id_member(r, "artifactId", "Artifact", true);
    a.name = r.string("name").value_or("");
    a.description = r.string("description").value_or("");
    if (!r.array("parts"))
        refuse("Artifact.parts is required (an array of Parts)");
    if (const json::array* parts = r.array("parts"))
        adk::check_part_count(parts->size(), "Artifact.parts");
    a.parts = objects<Part>(r, "parts");
    a.metadata = object_or_empty(r, "metadata");
    a.extensions = strings(r, "extensions", "Artifact");
    a.extra = r.rest();
    return a;
}

void tag_invoke(const json::value_from_tag&, json::value& out, const Task& v)
{
    json::object o;
    o["id"] = v.id;
    put_string(o, "contextId", v.context_id);
    o["status"] = json::value_from(v.status);
    put_objects(o, "artifacts", v.artifacts);
    put_objects(o, "history", v.history);
    put_object(o, "metadata", v.metadata);
    adk::json_fields::put_extra(o, v.extra);
    out = std::move(o);
}

Task tag_invoke(const json::value_to_tag<Task>&, const json::value& v)
{
    FieldReader r(v, "Task");
    Task t;
    t.id = id_member(r, "id", "Task", true);
    t.context_id = id_member(r, "contextId", "Task", false);
    t.status = required_member<TaskStatus>(r, "status", "Task", "TaskStatus");
    t.artifacts = objects<Artifact>(r, "artifacts");
    t.history = objects<Message>(r, "history");
    t.metadata = object_or_empty(r, "metadata");
    t.extra = r.rest();
    return t;
}

void tag_invoke(const json::value_from_tag&, json::value& out, const TaskStatusUpdateEvent& v)
{
    json::object o;
    o["taskId"] = v.task_id;
    o["contextId"] = v.context_id;
    o["status"] = json::value_from(v.status);
    put_object(o, "metadata", v.metadata);
    adk::json_fields::put_extra(o, v.extra);
    out = std::move(o);
}

TaskStatusUpdateEvent tag_invoke(const json::value_to_tag<TaskStatusUpdateEvent>&, const json::value& v)
{
    FieldReader r(v, "TaskStatusUpdateEvent");
    TaskStatusUpdateEvent e;
    e.task_id = id_member(r, "taskId", "TaskStatusUpdateEvent", true);
    e.context_id = id_member(r, "contextId", "TaskStatusUpdateEvent", true);
    e.status = required_member<TaskStatus>(r, "status", "TaskStatusUpdateEvent", "TaskStatus");
    e.metadata = object_or_empty(r, "metadata");
    e.extra = r.rest();
    return e;
}

void tag_invoke(const json::value_from_tag&, json::value& out, const TaskArtifactUpdateEvent& v)
{
    json::object o;
    o["taskId"] = v.task_id;
    o["contextId"] = v.context_id;
    o["artifact"] = json::value_from(v.artifact);
    if (v.append)
        o["append"] = true;
    if (v.last_chunk)
        o["lastChunk"] = true;
    put_object(o, "metadata", v.metadata);
    adk::json_fields::put_extra(o, v.extra);
    out = std::move(o);
}

TaskArtifactUpdateEvent tag_invoke(const json::value_to_tag<TaskArtifactUpdateEvent>&, const json::value& v)
{
    FieldReader r(v, "TaskArtifactUpdateEvent");
    TaskArtifactUpdateEvent e;
    e.task_id = id_member(r, "taskId", "TaskArtifactUpdateEvent", true);
    e.context_id = id_member(r, "contextId", "TaskArtifactUpdateEvent", true);
    e.artifact = required_member<Artifact>(r, "artifact", "TaskArtifactUpdateEvent", "Artifact");
    e.append = r.boolean("append").value_or(false);
    e.last_chunk = r.boolean("lastChunk").value_or(false);
    e.metadata = object_or_empty(r, "metadata");
    e.extra = r.rest();
    return e;
}

void tag_invoke(const json::value_from_tag&, json::value& out, const AuthenticationInfo& v)
{
    json::object o;
    o["scheme"] = v.scheme;
    put_string(o, "credentials", v.credentials);
    adk::json_fields::put_extra(o, v.extra);
    out = std::move(o);
}

AuthenticationInfo tag_invoke(const json::value_to_tag<AuthenticationInfo>&, const json::value& v)
{
    FieldReader r(v, "AuthenticationInfo");
    AuthenticationInfo a;
    a.scheme = required_string(r, "scheme", "AuthenticationInfo");
    a.credentials = r.string("credentials").value_or("");
    a.extra = r.rest();
    return a;
}

void tag_invoke(const json::value_from_tag&, json::value& out, const PushNotificationConfig& v)
{
    json::object o;
    put_string(o, "tenant", v.tenant);
    put_string(o, "id", v.id);
    put_string(o, "taskId", v.task_id);
    o["url"] = v.url;
    put_string(o, "token", v.token);
    if (v.authentication)
        o["authentication"] = json::value_from(*v.authentication);
    adk::json_fields::put_extra(o, v.extra);
    out = std::move(o);
}

PushNotificationConfig tag_invoke(const json::value_to_tag<PushNotificationConfig>&, const json::value& v)
{
    FieldReader r(v, "PushNotificationConfig");
    PushNotificationConfig c;
    c.tenant = r.string("tenant").value_or("");
    c.id = id_member(r, "id", "PushNotificationConfig", false);
    c.task_id = id_member(r, "taskId", "PushNotificationConfig", false);
    c.url = required_string(r, "url", "PushNotificationConfig");
    c.token = r.string("token").value_or("");
    c.authentication = object_member<AuthenticationInfo>(r, "authentication");
    c.extra = r.rest();
    return c;
}

void tag_invoke(const json::value_from_tag&, json::value& out, const SendMessageConfiguration& v)
{
    json::object o;
    put_strings(o, "acceptedOutputModes", v.accepted_output_modes);
    if (v.push_notification_config)
        o["taskPushNotificationConfig"] = json::value_from(*v.push_notification_config);
    if (v.history_length)
        o["historyLength"] = *v.history_length;
    if (v.return_immediately)
        o["returnImmediately"] = true;
    adk::json_fields::put_extra(o, v.extra);
    out = std::move(o);
}

SendMessageConfiguration tag_invoke(const json::value_to_tag<SendMessageConfiguration>&, const json::value& v)
{
    FieldReader r(v, "SendMessageConfiguration");
    SendMessageConfiguration c;
    c.accepted_output_modes = strings(r, "acceptedOutputModes", "SendMessageConfiguration");
    c.push_notification_config = object_member<PushNotificationConfig>(r, "taskPushNotificationConfig");
    if (std::optional<std::int64_t> n = r.integer("historyLength")) {
        if (*n < 0 || *n > 1000000)
            refuse("SendMessageConfiguration.historyLength must be from 0 to 1000000");
        c.history_length = static_cast<std::int32_t>(*n);
    }
    c.return_immediately = r.boolean("returnImmediately").value_or(false);
    c.extra = r.rest();
    return c;
}

void tag_invoke(const json::value_from_tag&, json::value& out, const SendMessageRequest& v)
{
    json::object o;
    put_string(o, "tenant", v.tenant);
    o["message"] = json::value_from(v.message);
    if (v.configuration)
        o["configuration"] = json::value_from(*v.configuration);
    put_object(o, "metadata", v.metadata);
    adk::json_fields::put_extra(o, v.extra);
    out = std::move(o);
}

SendMessageRequest tag_invoke(const json::value_to_tag<SendMessageRequest>&, const json::value& v)
{
    FieldReader r(v, "SendMessageRequest");
    SendMessageRequest s;
    s.tenant = r.string("tenant").value_or("");
    s.message = required_member<Message>(r, "message", "SendMessageRequest", "Message");
    s.configuration = object_member<SendMessageConfiguration>(r, "configuration");
    s.metadata = object_or_empty(r, "metadata");
    s.extra = r.rest();
    return s;
}

void tag_invoke(const json::value_from_tag&, json::value& out, const ListTasksRequest& v)
{
    json::object o;
    put_string(o, "tenant", v.tenant);
    put_string(o, "contextId", v.context_id);
    if (v.status != TaskState::unspecified)
        o["status"] = to_string(v.status);
    if (v.page_size)
        o["pageSize"] = *v.page_size;
    put_string(o, "pageToken", v.page_token);
    if (v.history_length)
        o["historyLength"] = *v.history_length;
    put_string(o, "statusTimestampAfter", v.status_timestamp_after);
    if (v.include_artifacts)
        o["includeArtifacts"] = *v.include_artifacts;
    adk::json_fields::put_extra(o, v.extra);
    out = std::move(o);
}

ListTasksRequest tag_invoke(const json::value_to_tag<ListTasksRequest>&, const json::value& v)
{
    FieldReader r(v, "ListTasksRequest");
    ListTasksRequest l;
    l.tenant = r.string("tenant").value_or("");
    l.context_id = r.string("contextId").value_or("");
    if (!l.context_id.empty() && !valid_id(l.context_id))
        refuse("ListTasksRequest.contextId must be an id (printable ASCII, at most 256 bytes)");
    // @a2a-js/sdk 1.3.0 writes an unset status as ts-proto's "UNRECOGNIZED": no filter, as it meant.
    if (std::optional<std::string> status = r.string("status"); status && *status != "UNRECOGNIZED") {
        std::optional<TaskState> parsed = parse_task_state(*status);
        if (!parsed)
            refuse("ListTasksRequest.status must be a TaskState (\"TASK_STATE_WORKING\", ...)");
        l.status = *parsed;
    }
    if (std::optional<std::int64_t> n = r.integer("pageSize")) {
        if (*n < 1 || *n > 100)
            refuse("ListTasksRequest.pageSize must be from 1 to 100");
        l.page_size = static_cast<std::int32_t>(*n);
    }
    l.page_token = r.string("pageToken").value_or("");
    if (l.page_token.size() > 512)
        refuse("ListTasksRequest.pageToken is longer than any this server gives");
    if (std::optional<std::int64_t> n = r.integer("historyLength")) {
        if (*n < 0 || *n > 1000000)
            refuse("ListTasksRequest.historyLength must be from 0 to 1000000");
        l.history_length = static_cast<std::int32_t>(*n);
    }
    if (std::optional<std::string> t = r.string("statusTimestampAfter")) {
        if (!valid_timestamp(*t))
            refuse("ListTasksRequest.statusTimestampAfter must be an ISO 8601 time in UTC (\"2026-11-28T10:30:00Z\")");
        l.status_timestamp_after = std::move(*t);
    }
    l.include_artifacts = r.boolean("includeArtifacts");
    l.extra = r.rest();
    return l;
}

void tag_invoke(const json::value_from_tag&, json::value& out, const ListTasksResponse& v)
{
    json::object o;
    o["tasks"] = objects_array(v.tasks);
    o["nextPageToken"] = v.next_page_token;  // always written: empty on the last page
    o["pageSize"] = v.page_size;
    o["totalSize"] = v.total_size;
    adk::json_fields::put_extra(o, v.extra);
    out = std::move(o);
}

ListTasksResponse tag_invoke(const json::value_to_tag<ListTasksResponse>&, const json::value& v)
{
    FieldReader r(v, "ListTasksResponse");
    ListTasksResponse l;
    l.tasks = objects<Task>(r, "tasks");
    l.next_page_token = r.string("nextPageToken").value_or("");
    auto count = [&](std::string_view name) {
        const std::int64_t n = r.integer(name).value_or(0);
        if (n < 0 || n > std::numeric_limits<std::int32_t>::max())
            refuse("ListTasksResponse." + std::string(name) + " must be a count");
        return static_cast<std::int32_t>(n);
    };
    l.page_size = count("pageSize");
    l.total_size = count("totalSize");
    l.extra = r.rest();
    return l;
}

void tag_invoke(const json::value_from_tag&, json::value& out, const AgentInterface& v)
{
    json::object o;
    o["url"] = v.url;
    o["protocolBinding"] = v.protocol_binding;
    put_string(o, "tenant", v.tenant);
    o["protocolVersion"] = v.protocol_version;
    adk::json_fields::put_extra(o, v.extra);
    out = std::move(o);
}

AgentInterface tag_invoke(const json::value_to_tag<AgentInterface>&, const json::value& v)
{
    FieldReader r(v, "AgentInterface");
    AgentInterface i;
    i.url = required_string(r, "url", "AgentInterface");
    i.protocol_binding = required_string(r, "protocolBinding", "AgentInterface");
    i.tenant = r.string("tenant").value_or("");
    i.protocol_version = required_string(r, "protocolVersion", "AgentInterface");
    i.extra = r.rest();
    return i;
}

void tag_invoke(const json::value_from_tag&, json::value& out, const AgentSkill& v)
{
    json::object o;
    o["id"] = v.id;
    o["name"] = v.name;
    o["description"] = v.description;
    o["tags"] = strings_array(v.tags);
    put_strings(o, "examples", v.examples);
    put_strings(o, "inputModes", v.input_modes);
    put_strings(o, "outputModes", v.output_modes);
    put_array(o, "securityRequirements", v.security_requirements);
    adk::json_fields::put_extra(o, v.extra);
    out = std::move(o);
}

AgentSkill tag_invoke(const json::value_to_tag<AgentSkill>&, const json::value& v)
{
    FieldReader r(v, "AgentSkill");
    AgentSkill s;
    s.id = required_string(r, "id", "AgentSkill");
    s.name = required_string(r, "name", "AgentSkill");
    s.description = r.string("description").value_or("");
    s.tags = strings(r, "tags", "AgentSkill");
    s.examples = strings(r, "examples", "AgentSkill");
    s.input_modes = strings(r, "inputModes", "AgentSkill");
    s.output_modes = strings(r, "outputModes", "AgentSkill");
    s.security_requirements = array_member(r, "securityRequirements", "AgentSkill");
    s.extra = r.rest();
    return s;
}

void tag_invoke(const json::value_from_tag&, json::value& out, const AgentCapabilities& v)
{
    json::object o;
    if (v.streaming)
        o["streaming"] = *v.streaming;
    if (v.push_notifications)
        o["pushNotifications"] = *v.push_notifications;
    put_array(o, "extensions", v.extensions);
    if (v.extended_agent_card)
        o["extendedAgentCard"] = *v.extended_agent_card;
    adk::json_fields::put_extra(o, v.extra);
    out = std::move(o);
}

AgentCapabilities tag_invoke(const json::value_to_tag<AgentCapabilities>&, const json::value& v)
{
    FieldReader r(v, "AgentCapabilities");
    AgentCapabilities c;
    c.streaming = r.boolean("streaming");
    c.push_notifications = r.boolean("pushNotifications");
    c.extensions = array_member(r, "extensions", "AgentCapabilities");
    c.extended_agent_card = r.boolean("extendedAgentCard");
    c.extra = r.rest();
    return c;
}

void tag_invoke(const json::value_from_tag&, json::value& out, const AgentCard& v)
{
    json::object o;
    o["name"] = v.name;
    o["description"] = v.description;
    o["supportedInterfaces"] = objects_array(v.supported_interfaces);
    if (v.provider)
        o["provider"] = *v.provider;
    o["version"] = v.version;
    adk::json_fields::put(o, "documentationUrl", v.documentation_url);
    o["capabilities"] = json::value_from(v.capabilities);
    put_object(o, "securitySchemes", v.security_schemes);
    put_array(o, "securityRequirements", v.security_requirements);
    o["defaultInputModes"] = strings_array(v.default_input_modes);
    o["defaultOutputModes"] = strings_array(v.default_output_modes);
    o["skills"] = objects_array(v.skills);
    put_array(o, "signatures", v.signatures);
    adk::json_fields::put(o, "iconUrl", v.icon_url);
    adk::json_fields::put_extra(o, v.extra);
    out = std::move(o);
}

AgentCard tag_invoke(const json::value_to_tag<AgentCard>&, const json::value& v)
{
    FieldReader r(v, "AgentCard");
    AgentCard c;
    c.name = required_string(r, "name", "AgentCard");
    c.description = r.string("description").value_or("");
    c.supported_interfaces = objects<AgentInterface>(r, "supportedInterfaces");
    c.provider = r.object("provider");
    c.version = r.string("version").value_or("");
    c.documentation_url = r.string("documentationUrl");
    if (const json::value* caps = r.find("capabilities"))
        c.capabilities = json::value_to<AgentCapabilities>(*caps);
    c.security_schemes = object_or_empty(r, "securitySchemes");
    c.security_requirements = array_member(r, "securityRequirements", "AgentCard");
    c.default_input_modes = strings(r, "defaultInputModes", "AgentCard");
    c.default_output_modes = strings(r, "defaultOutputModes", "AgentCard");
    c.skills = objects<AgentSkill>(r, "skills");
    c.signatures = array_member(r, "signatures", "AgentCard");
    c.icon_url = r.string("iconUrl");
    c.extra = r.rest();
    return c;
}

json::value to_json(const StreamResponse& response)
{
    static constexpr std::array<std::string_view, 4> names = {"task", "message", "statusUpdate", "artifactUpdate"};
    json::object o;
    std::visit([&](const auto& payload) { o[names[response.index()]] = json::value_from(payload); }, response);
    return o;
}

StreamResponse stream_response_from_json(const json::value& v)
{
    FieldReader r(v, "StreamResponse");
    std::optional<StreamResponse> out;
    int cases = 0;
    if (const json::value* t = r.find("task")) {
        out.emplace(json::value_to<Task>(*t));
        ++cases;
    }
    if (const json::value* m = r.find("message")) {
        out.emplace(json::value_to<Message>(*m));
        ++cases;
    }
    if (const json::value* s = r.find("statusUpdate")) {
        out.emplace(json::value_to<TaskStatusUpdateEvent>(*s));
        ++cases;
    }
    if (const json::value* a = r.find("artifactUpdate")) {
        out.emplace(json::value_to<TaskArtifactUpdateEvent>(*a));
        ++cases;
    }
    if (cases != 1)
        refuse("a StreamResponse holds exactly one of task, message, statusUpdate and artifactUpdate");
    return std::move(*out);
}

}  // namespace adk::a2a
