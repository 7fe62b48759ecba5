#include <adk/a2a/v03.hpp>

#include <adk/core/content.hpp>
#include <adk/core/error.hpp>

#include <adk/core/json_fields.hpp>  // FieldReader, base64

#include <boost/json/value_to.hpp>

#include <array>

namespace adk::a2a::v03 {

namespace {

using adk::json_fields::FieldReader;

constexpr std::array<std::string_view, 9> state_names = {
    "unknown",  "submitted",      "working",  "completed",     "failed",
    "canceled", "input-required", "rejected", "auth-required",
};

[[noreturn]] void refuse(std::string message)
{
    throw Error(errc::invalid_argument, std::move(message));
}

void put_if(json::object& o, std::string_view key, const std::string& v)
{
    if (!v.empty())
        o[key] = v;
}

json::array parts_json(const std::vector<Part>& parts)
{
    json::array out;
    for (const Part& p : parts)
        out.push_back(to_json(p));
    return out;
}

json::value artifact_json(const Artifact& a)
{
    json::object o{{"artifactId", a.artifact_id}, {"parts", parts_json(a.parts)}};
    put_if(o, "name", a.name);
    put_if(o, "description", a.description);
    if (!a.metadata.empty())
        o["metadata"] = a.metadata;
    return o;
}

json::value status_json(const TaskStatus& s)
{
    json::object o{{"state", v03::to_string(s.state)}};
    if (s.message)
        o["message"] = to_json(*s.message);
    put_if(o, "timestamp", s.timestamp);
    return o;
}

}  // namespace

std::string_view to_string(TaskState state) noexcept
{
    return state_names[static_cast<std::size_t>(state)];
}

std::optional<TaskState> parse_task_state(std::string_view text) noexcept
{
    for (std::size_t i = 0; i < state_names.size(); ++i)
        if (state_names[i] == text)
            return static_cast<TaskState>(i);
    return std::nullopt;
}

json::value to_json(const Part& p)
{
    json::object o;
    if (const std::string* text = p.text()) {
        o = {{"kind", "text"}, {"text", *text}};
    } else if (const auto* data = std::get_if<Part::Data>(&p.content)) {
        // 0.3's data part holds an object: another value goes under "value".
        o = {{"kind", "data"}, {"data", data->value.is_object() ? data->value : json::object{{"value", data->value}}}};
    } else {
        json::object file;
        if (const auto* raw = std::get_if<Part::Raw>(&p.content))
            file["bytes"] = adk::json_fields::base64_encode(raw->bytes);
        else
            file["uri"] = std::get<Part::Url>(p.content).url;
        put_if(file, "mimeType", p.media_type);
        put_if(file, "name", p.filename);
        o = {{"kind", "file"}, {"file", std::move(file)}};
    }
    if (!p.metadata.empty())
        o["metadata"] = p.metadata;
    return o;
}

json::value to_json(const Message& m)
{
    json::object o{{"kind", "message"},
                   {"messageId", m.message_id},
                   {"role", m.role == Role::agent ? "agent" : "user"},
                   {"parts", parts_json(m.parts)}};
    put_if(o, "contextId", m.context_id);
    put_if(o, "taskId", m.task_id);
    if (!m.metadata.empty())
        o["metadata"] = m.metadata;
    return o;
}

json::value to_json(const Task& t)
{
    json::object o{{"kind", "task"}, {"id", t.id}, {"contextId", t.context_id}, {"status", status_json(t.status)}};
    if (!t.artifacts.empty()) {
        json::array artifacts;
        for (const Artifact& a : t.artifacts)
            artifacts.push_back(artifact_json(a));
        o["artifacts"] = std::move(artifacts);
    }
    if (!t.history.empty()) {
        json::array history;
        for (const Message& m : t.history)
            history.push_back(to_json(m));
        o["history"] = std::move(history);
    }
    if (!t.metadata.empty())
        o["metadata"] = t.metadata;
    return o;
}

json::value to_json(const StreamResponse& r)
{
    if (const auto* t = std::get_if<Task>(&r))
        return to_json(*t);
    if (const auto* m = std::get_if<Message>(&r))
        return to_json(*m);
    if (const auto* s = std::get_if<TaskStatusUpdateEvent>(&r)) {
        json::object o{{"kind", "status-update"},
                       {"taskId", s->task_id},
                       {"contextId", s->context_id},
                       {"status", status_json(s->status)},
                       {"final", is_terminal(s->status.state) || is_interrupted(s->status.state)}};
        if (!s->metadata.empty())
            o["metadata"] = s->metadata;
        return o;
    }
    const auto& a = std::get<TaskArtifactUpdateEvent>(r);
    json::object o{{"kind", "artifact-update"},
                   {"taskId", a.task_id},
                   {"contextId", a.context_id},
                   {"artifact", artifact_json(a.artifact)}};
    if (a.append)
        o["append"] = true;
    if (a.last_chunk)
        o["lastChunk"] = true;
    if (!a.metadata.empty())
        o["metadata"] = a.metadata;
    return o;
}

Part part_from_json(const json::value& v)
{
    FieldReader r(v, "Part");
    const std::optional<std::string> kind = r.string("kind");
    Part p;
    if (kind == "text") {
        std::optional<std::string> text = r.string("text");
        if (!text)
            refuse("Part.text is required in a text part (a string)");
        p.content = std::move(*text);
    } else if (kind == "data") {
        std::optional<json::object> data = r.object("data");
        if (!data)
            refuse("Part.data is required in a data part (an object)");
        p.content = Part::Data{json::value(std::move(*data))};
    } else if (kind == "file") {
        std::optional<json::object> file = r.object("file");
        if (!file)
            refuse("Part.file is required in a file part (an object with bytes or uri)");
        const json::value file_value(std::move(*file));  // the reader holds a reference
        FieldReader f(file_value, "FilePart.file");
        const std::optional<std::string> bytes = f.string("bytes");
        const std::optional<std::string> uri = f.string("uri");
        if (bytes.has_value() == uri.has_value())
            refuse("Part.file holds exactly one of bytes and uri");
        if (bytes)
            p.content = Part::Raw{adk::json_fields::base64_decode(*bytes, "Part.file.bytes")};
        else
            p.content = Part::Url{*uri};
        p.media_type = f.string("mimeType").value_or("");
        p.filename = f.string("name").value_or("");
    } else {
        refuse("Part.kind must be \"text\", \"data\" or \"file\" (A2A 0.3)");
    }
    if (std::optional<json::object> metadata = r.object("metadata"))
        p.metadata = std::move(*metadata);
    return p;
}

Message message_from_json(const json::value& v)
{
    FieldReader r(v, "Message");
    Message m;
    m.message_id = r.string("messageId").value_or("");
    if (m.message_id.empty() || !valid_id(m.message_id))
        refuse("Message.messageId is required (an id: printable ASCII, at most 256 bytes)");
    const std::optional<std::string> role = r.string("role");
    if (role == "user")
        m.role = Role::user;
    else if (role == "agent")
        m.role = Role::agent;
    else
        refuse("Message.role must be \"user\" or \"agent\" (A2A 0.3)");
    for (const char* key : {"contextId", "taskId"}) {
        std::string id = r.string(key).value_or("");
        if (!id.empty() && !valid_id(id))
            refuse(std::string("Message.") + key + " must be an id (printable ASCII, at most 256 bytes)");
        (std::string_view(key) == "contextId" ? m.context_id : m.task_id) = std::move(id);
    }
    const json::array* parts = r.array("parts");
    if (!parts)
        refuse("Message.parts is required (an array of parts)");
    adk::check_part_count(parts->size(), "Message.parts");
    for (const json::value& p : *parts)
        m.parts.push_back(part_from_json(p));
    if (std::optional<json::object> metadata = r.object("metadata"))
        m.metadata = std::move(*metadata);
    (void)r.string("kind");
    m.extra = r.rest();
    return m;
}

namespace {

TaskStatus status_from_json(const json::value& v)
{
    FieldReader r(v, "TaskStatus");
    TaskStatus s;
    const std::optional<std::string> state = r.string("state");
    std::optional<TaskState> parsed = state ? parse_task_state(*state) : std::nullopt;
    if (!parsed)
        refuse("TaskStatus.state must be a 0.3 task state (\"working\", \"input-required\", ...)");
    s.state = *parsed;
    if (const json::value* m = r.find("message"); m && !m->is_null())
        s.message = message_from_json(*m);
    if (std::optional<std::string> t = r.string("timestamp"); t && valid_timestamp(*t))
        s.timestamp = std::move(*t);  // 0.3 peers write other forms too: kept only when it is 1.0's
    return s;
}

Artifact artifact_from_json(const json::value& v)
{
    FieldReader r(v, "Artifact");
    Artifact a;
    a.artifact_id = r.string("artifactId").value_or("");
    if (a.artifact_id.empty() || !valid_id(a.artifact_id))
        refuse("Artifact.artifactId is required (an id)");
    a.name = r.string("name").value_or("");
    a.description = r.string("description").value_or("");
    const json::array* parts = r.array("parts");
    if (!parts)
        refuse("Artifact.parts is required (an array of parts)");
    adk::check_part_count(parts->size(), "Artifact.parts");
    for (const json::value& p : *parts)
        a.parts.push_back(part_from_json(p));
    if (std::optional<json::object> metadata = r.object("metadata"))
        a.metadata = std::move(*metadata);
    return a;
}

std::string id_of(FieldReader& r, std::string_view name, std::string_view what)
{
    std::string id = r.string(name).value_or("");
    if (id.empty() || !valid_id(id))
        refuse(std::string(what) + "." + std::string(name) + " is required (an id)");
    return id;
}

}  // namespace

Task task_from_json(const json::value& v)
{
    FieldReader r(v, "Task");
    Task t;
    t.id = id_of(r, "id", "Task");
    t.context_id = id_of(r, "contextId", "Task");
    const json::value* status = r.find("status");
    if (!status)
        refuse("Task.status is required");
    t.status = status_from_json(*status);
    if (const json::array* artifacts = r.array("artifacts"))
        for (const json::value& a : *artifacts)
            t.artifacts.push_back(artifact_from_json(a));
    if (const json::array* history = r.array("history"))
        for (const json::value& m : *history)
            t.history.push_back(message_from_json(m));
    if (std::optional<json::object> metadata = r.object("metadata"))
        t.metadata = std::move(*metadata);
    return t;
}

StreamResponse stream_response_from_json(const json::value& v)
{
    if (!v.is_object())
        refuse("a 0.3 result is an object with a kind");
    const json::value* kind = v.get_object().if_contains("kind");
    if (kind && *kind == "task")
        return task_from_json(v);
    if (kind && *kind == "message")
        return message_from_json(v);
    FieldReader r(v, "update");
    if (kind && *kind == "status-update") {
        TaskStatusUpdateEvent s;
        s.task_id = id_of(r, "taskId", "TaskStatusUpdateEvent");
        s.context_id = id_of(r, "contextId", "TaskStatusUpdateEvent");
        const json::value* status = r.find("status");
        if (!status)
            refuse("TaskStatusUpdateEvent.status is required");
        s.status = status_from_json(*status);
        return s;
    }
    if (kind && *kind == "artifact-update") {
        TaskArtifactUpdateEvent a;
        a.task_id = id_of(r, "taskId", "TaskArtifactUpdateEvent");
        a.context_id = id_of(r, "contextId", "TaskArtifactUpdateEvent");
        const json::value* artifact = r.find("artifact");
        if (!artifact)
            refuse("TaskArtifactUpdateEvent.artifact is required");
        a.artifact = artifact_from_json(*artifact);
        a.append = r.boolean("append").value_or(false);
        a.last_chunk = r.boolean("lastChunk").value_or(false);
        return a;
    }
    refuse("a 0.3 result's kind is \"task\", \"message\", \"status-update\" or \"artifact-update\"");
}

SendMessageRequest send_params_from_json(const json::value& v)
{
    FieldReader r(v, "MessageSendParams");
    SendMessageRequest s;
    const json::value* message = r.find("message");
    if (!message)
        refuse("MessageSendParams.message is required");
    s.message = message_from_json(*message);
    if (std::optional<json::object> config = r.object("configuration")) {
        const json::value config_value(std::move(*config));  // the reader holds a reference
        FieldReader c(config_value, "MessageSendConfiguration");
        SendMessageConfiguration out;
        out.return_immediately = !c.boolean("blocking").value_or(true);
        if (std::optional<std::int64_t> n = c.integer("historyLength")) {
            if (*n < 0 || *n > 1000000)
                refuse("MessageSendConfiguration.historyLength must be from 0 to 1000000");
            out.history_length = static_cast<std::int32_t>(*n);
        }
        if (const json::value* push = c.find("pushNotificationConfig"); push && !push->is_null())
            out.push_notification_config = push_config_from_json(*push);
        s.configuration = std::move(out);
    }
    if (std::optional<json::object> metadata = r.object("metadata"))
        s.metadata = std::move(*metadata);
    return s;
}

PushNotificationConfig push_config_from_json(const json::value& v)
{
    FieldReader p(v, "PushNotificationConfig");
    PushNotificationConfig webhook;
    webhook.id = p.string("id").value_or("");
    webhook.url = p.string("url").value_or("");
    if (webhook.url.empty())
        refuse("PushNotificationConfig.url is required");
    webhook.token = p.string("token").value_or("");
    if (std::optional<json::object> auth = p.object("authentication")) {
        const json::value auth_value(std::move(*auth));  // the reader holds a reference
        FieldReader a(auth_value, "PushNotificationAuthenticationInfo");
        const json::array* schemes = a.array("schemes");
        if (!schemes || schemes->empty() || !schemes->front().is_string() || schemes->front().get_string().empty())
            refuse("PushNotificationAuthenticationInfo.schemes must name a scheme (\"Bearer\")");
        AuthenticationInfo info;
        info.scheme = std::string(schemes->front().get_string());
        info.credentials = a.string("credentials").value_or("");
        webhook.authentication = std::move(info);
    }
    return webhook;
}

json::value to_json(const PushNotificationConfig& config)
{
    json::object webhook{{"url", config.url}};
    put_if(webhook, "id", config.id);
    put_if(webhook, "token", config.token);
    if (config.authentication) {
        json::object auth{{"schemes", json::array{json::value(config.authentication->scheme)}}};
        put_if(auth, "credentials", config.authentication->credentials);
        webhook["authentication"] = std::move(auth);
    }
    return json::object{{"taskId", config.task_id}, {"pushNotificationConfig", std::move(webhook)}};
}

}  // namespace adk::a2a::v03
