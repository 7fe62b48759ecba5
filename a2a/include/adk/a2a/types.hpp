// The Agent2Agent protocol's data model (A2A 1.0: specification/a2a.proto, package lf.a2a.v1) and its JSON form
// (ProtoJSON): camelCase names (snake_case read too), enums by their names ("TASK_STATE_INPUT_REQUIRED",
// "ROLE_USER"), bytes as base64, timestamps as ISO 8601 in UTC, a oneof as the member of its case
// ({"statusUpdate": {...}}). Members this version does not know are kept (`extra`) and written back.
//
// Reading (value_to) checks everything: kinds, enums, required members, ids (non-empty, at most 256 bytes,
// printable ASCII: they name sessions and path segments), timestamps; a refusal is adk::Error (invalid_argument)
// naming the member. Numbers are finite, and a JSON document nests at most as deep as adk::parse_json allows.
#pragma once

#include <boost/json/fwd.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

namespace adk::a2a {

namespace json = boost::json;

// The protocol version this component speaks first, and the one it speaks to older peers.
inline constexpr std::string_view protocol_version = "1.0";
inline constexpr std::string_view legacy_protocol_version = "0.3";

enum class TaskState {
    unspecified,
    submitted,
    working,
    completed,
    failed,
    canceled,
    input_required,
    rejected,
    auth_required,
};
// "TASK_STATE_WORKING"; reading accepts only those names.
std::string_view to_string(TaskState state) noexcept;
std::optional<TaskState> parse_task_state(std::string_view text) noexcept;
// Completed, failed, canceled and rejected: a task in one of them takes no more messages.
bool is_terminal(TaskState state) noexcept;
// Input or authorization required: the task waits for its client.
bool is_interrupted(TaskState state) noexcept;

enum class Role { unspecified, user, agent };
std::string_view to_string(Role role) noexcept;
std::optional<Role> parse_role(std::string_view text) noexcept;

// One piece of a message or an artifact: text, bytes (raw; base64 in JSON), a URL, or any JSON value (data).
class Part {
public:
    class Raw {
    public:
        std::string bytes;
        friend bool operator==(const Raw&, const Raw&) = default;
    };
    class Url {
    public:
        std::string url;
        friend bool operator==(const Url&, const Url&) = default;
    };
    class Data {
    public:
        json::value value;
        friend bool operator==(const Data&, const Data&) = default;
    };

    Part() = default;
    static Part text_part(std::string text);
    static Part raw_part(std::string bytes, std::string media_type);
    static Part url_part(std::string url, std::string media_type);
    static Part data_part(json::value value);

    std::variant<std::string, Raw, Url, Data> content;  // the oneof; text by default
    json::object metadata;
    std::string filename;
    std::string media_type;
    json::object extra;

    const std::string* text() const { return std::get_if<std::string>(&content); }
    friend bool operator==(const Part&, const Part&) = default;
};

class Message {
public:
    Message() = default;
    std::string message_id;
    std::string context_id;
    std::string task_id;
    Role role = Role::unspecified;
    std::vector<Part> parts;
    json::object metadata;
    std::vector<std::string> extensions;
    std::vector<std::string> reference_task_ids;
    json::object extra;

    // The text parts, joined.
    std::string text() const;
    friend bool operator==(const Message&, const Message&) = default;
};

class TaskStatus {
public:
    TaskStatus() = default;
    TaskState state = TaskState::unspecified;
    std::optional<Message> message;
    std::string timestamp;  // ISO 8601, UTC ("2026-11-28T10:30:00.000Z"); empty when absent
    json::object extra;
    friend bool operator==(const TaskStatus&, const TaskStatus&) = default;
};

class Artifact {
public:
    Artifact() = default;
    std::string artifact_id;
    std::string name;
    std::string description;
    std::vector<Part> parts;
    json::object metadata;
    std::vector<std::string> extensions;
    json::object extra;
    friend bool operator==(const Artifact&, const Artifact&) = default;
};

class Task {
public:
    Task() = default;
    std::string id;
    std::string context_id;
    TaskStatus status;
    std::vector<Artifact> artifacts;
    std::vector<Message> history;
    json::object metadata;
    json::object extra;
    friend bool operator==(const Task&, const Task&) = default;
};

class TaskStatusUpdateEvent {
public:
    TaskStatusUpdateEvent() = default;
    std::string task_id;
    std::string context_id;
    TaskStatus status;
    json::object metadata;
    json::object extra;
    friend bool operator==(const TaskStatusUpdateEvent&, const TaskStatusUpdateEvent&) = default;
};

class TaskArtifactUpdateEvent {
public:
    TaskArtifactUpdateEvent() = default;
    std::string task_id;
    std::string context_id;
    Artifact artifact;
    bool append = false;      // the parts extend the artifact of that id sent before
    bool last_chunk = false;  // the artifact is whole
    json::object metadata;
    json::object extra;
    friend bool operator==(const TaskArtifactUpdateEvent&, const TaskArtifactUpdateEvent&) = default;
};

// What a stream carries, one per SSE event: {"task"}, {"message"}, {"statusUpdate"} or {"artifactUpdate"}.
// SendMessage's answer is a Task or a Message in the same form.
using StreamResponse = std::variant<Task, Message, TaskStatusUpdateEvent, TaskArtifactUpdateEvent>;

class AuthenticationInfo {
public:
    AuthenticationInfo() = default;
    std::string scheme;  // "Bearer"
    std::string credentials;
    json::object extra;
    friend bool operator==(const AuthenticationInfo&, const AuthenticationInfo&) = default;
};

// A webhook that the server posts a task's updates to.
class PushNotificationConfig {
public:
    PushNotificationConfig() = default;
    std::string tenant;
    std::string id;
    std::string task_id;
    std::string url;
    std::string token;  // sent back in the X-A2A-Notification-Token header, for the webhook to check
    std::optional<AuthenticationInfo> authentication;
    json::object extra;
    friend bool operator==(const PushNotificationConfig&, const PushNotificationConfig&) = default;
};

class SendMessageConfiguration {
public:
    SendMessageConfiguration() = default;
    std::vector<std::string> accepted_output_modes;
    std::optional<PushNotificationConfig> push_notification_config;
    std::optional<std::int32_t> history_length;
    bool return_immediately = false;
    json::object extra;
    friend bool operator==(const SendMessageConfiguration&, const SendMessageConfiguration&) = default;
};

class SendMessageRequest {
public:
    SendMessageRequest() = default;
    std::string tenant;
    Message message;
    std::optional<SendMessageConfiguration> configuration;
    json::object metadata;
    json::object extra;
    friend bool operator==(const SendMessageRequest&, const SendMessageRequest&) = default;
};

// ListTasks: its filters and its page (the HTTP+JSON binding reads them from the query of GET /tasks).
class ListTasksRequest {
public:
    ListTasksRequest() = default;
    std::string tenant;
    std::string context_id;                      // empty: every context
    TaskState status = TaskState::unspecified;   // unspecified: every state
    std::optional<std::int32_t> page_size;       // 1 to 100; 50 when unset
    std::string page_token;                      // a previous answer's next_page_token
    std::optional<std::int32_t> history_length;  // of each task
    std::string status_timestamp_after;          // ISO 8601, UTC: tasks whose status is as recent or more
    std::optional<bool> include_artifacts;       // false: each task without its artifacts
    json::object extra;
    friend bool operator==(const ListTasksRequest&, const ListTasksRequest&) = default;
};

class ListTasksResponse {
public:
    ListTasksResponse() = default;
    std::vector<Task> tasks;      // the most recently updated first
    std::string next_page_token;  // empty on the last page
    std::int32_t page_size = 0;
    std::int32_t total_size = 0;  // the tasks that match, on every page
    json::object extra;
    friend bool operator==(const ListTasksResponse&, const ListTasksResponse&) = default;
};

class AgentInterface {
public:
    AgentInterface() = default;
    AgentInterface(std::string url_, std::string binding, std::string version = std::string(a2a::protocol_version))
        : url(std::move(url_)), protocol_binding(std::move(binding)), protocol_version(std::move(version))
    {
    }
    std::string url;
    std::string protocol_binding;  // "JSONRPC", "HTTP+JSON", "GRPC"
    std::string tenant;
    std::string protocol_version;  // "1.0", "0.3"
    json::object extra;
    friend bool operator==(const AgentInterface&, const AgentInterface&) = default;
};

class AgentSkill {
public:
    AgentSkill() = default;
    std::string id;
    std::string name;
    std::string description;
    std::vector<std::string> tags;
    std::vector<std::string> examples;
    std::vector<std::string> input_modes;
    std::vector<std::string> output_modes;
    json::array security_requirements;
    json::object extra;
    friend bool operator==(const AgentSkill&, const AgentSkill&) = default;
};

class AgentCapabilities {
public:
    AgentCapabilities() = default;
    std::optional<bool> streaming;
    std::optional<bool> push_notifications;
    json::array extensions;  // AgentExtension objects: {uri, description, required, params}
    std::optional<bool> extended_agent_card;
    json::object extra;
    friend bool operator==(const AgentCapabilities&, const AgentCapabilities&) = default;
};

class AgentCard {
public:
    AgentCard() = default;
    std::string name;
    std::string description;
    std::vector<AgentInterface> supported_interfaces;
    std::optional<json::object> provider;  // {url, organization}
    std::string version;
    std::optional<std::string> documentation_url;
    AgentCapabilities capabilities;
    json::object security_schemes;  // name -> SecurityScheme ({"httpAuthSecurityScheme": {"scheme": "Bearer"}})
    json::array security_requirements;
    std::vector<std::string> default_input_modes;
    std::vector<std::string> default_output_modes;
    std::vector<AgentSkill> skills;
    json::array signatures;
    std::optional<std::string> icon_url;
    json::object extra;

    // The interface of that binding ("JSONRPC", "HTTP+JSON") and version, or null.
    const AgentInterface* find_interface(std::string_view binding, std::string_view wanted_version) const;
    friend bool operator==(const AgentCard&, const AgentCard&) = default;
};

// A2A's errors, by their JSON-RPC codes (HTTP statuses in the HTTP+JSON binding: adk::a2a::http_status).
namespace code {
inline constexpr int task_not_found = -32001;
inline constexpr int task_not_cancelable = -32002;
inline constexpr int push_notification_not_supported = -32003;
inline constexpr int unsupported_operation = -32004;
inline constexpr int content_type_not_supported = -32005;
inline constexpr int invalid_agent_response = -32006;
inline constexpr int extended_agent_card_not_configured = -32007;
inline constexpr int extension_support_required = -32008;
inline constexpr int version_not_supported = -32009;
}  // namespace code

#define ADK_A2A_JSON(T)                                                                                                \
    void tag_invoke(const json::value_from_tag&, json::value& out, const T& v);                                      \
    T tag_invoke(const json::value_to_tag<T>&, const json::value& v)
ADK_A2A_JSON(Part);
ADK_A2A_JSON(Message);
ADK_A2A_JSON(TaskStatus);
ADK_A2A_JSON(Artifact);
ADK_A2A_JSON(Task);
ADK_A2A_JSON(TaskStatusUpdateEvent);
ADK_A2A_JSON(TaskArtifactUpdateEvent);
ADK_A2A_JSON(AuthenticationInfo);
ADK_A2A_JSON(PushNotificationConfig);
ADK_A2A_JSON(SendMessageConfiguration);
ADK_A2A_JSON(SendMessageRequest);
ADK_A2A_JSON(ListTasksRequest);
ADK_A2A_JSON(ListTasksResponse);
ADK_A2A_JSON(AgentInterface);
ADK_A2A_JSON(AgentSkill);
ADK_A2A_JSON(AgentCapabilities);
ADK_A2A_JSON(AgentCard);
#undef ADK_A2A_JSON

// A StreamResponse (or a SendMessage answer) as its oneof: {"task": ...}, {"message": ...}, ...
json::value to_json(const StreamResponse& response);
StreamResponse stream_response_from_json(const json::value& v);

// Whether `id` may name a task, a context or a message: non-empty, at most 256 bytes, printable ASCII.
bool valid_id(std::string_view id) noexcept;
// The time as A2A writes it: "2026-11-28T10:30:00.123Z" (UTC, milliseconds), from seconds since the epoch.
std::string format_timestamp(double seconds_since_epoch);
// Seconds since the epoch now, by the system clock (a task's times).
double now_seconds();
// Whether `text` is such a time ("YYYY-MM-DDTHH:MM:SS", an optional fraction of 1 to 9 digits, then "Z").
bool valid_timestamp(std::string_view text) noexcept;
// Such a time as seconds since the epoch; nullopt when it is not one.
std::optional<double> parse_timestamp(std::string_view text) noexcept;

static_assert(!std::is_aggregate_v<Message> && !std::is_aggregate_v<Task> && !std::is_aggregate_v<AgentCard>);

}  // namespace adk::a2a
