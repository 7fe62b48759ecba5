// A2A 0.3's JSON, for the peers still on it (ADK Python's, ADK TypeScript's and ADK Java's A2A, @a2a-js/sdk's
// compat/v0_3 client): the same data model as 1.0 in its older form. Objects carry a "kind" ("task", "message",
// "status-update", "artifact-update"; parts "text", "data", "file"), states and roles are lower case
// ("input-required", "agent"), a file part holds {"bytes" | "uri", "mimeType", "name"}, a data part an object,
// and a status update says whether it is the stream's last ("final").
//
// Reading checks as the 1.0 codec does (adk::Error, invalid_argument, naming the member); members it does not
// know are kept in `extra` where the 1.0 type keeps them.
#pragma once

#include <adk/a2a/types.hpp>

#include <optional>
#include <string_view>

namespace adk::a2a::v03 {

std::string_view to_string(TaskState state) noexcept;  // "input-required"
std::optional<TaskState> parse_task_state(std::string_view text) noexcept;

json::value to_json(const Part& part);
json::value to_json(const Message& message);
json::value to_json(const Task& task);
// A 1.0 stream response as 0.3 writes it; a status update's "final" is true for a state that ends the stream
// (terminal, or waiting for the client).
json::value to_json(const StreamResponse& response);

Part part_from_json(const json::value& v);
Message message_from_json(const json::value& v);
Task task_from_json(const json::value& v);
// A 0.3 result as 1.0's StreamResponse, by its "kind": a task, a message, a status or an artifact update.
StreamResponse stream_response_from_json(const json::value& v);
// message/send's and message/stream's params (MessageSendParams): the message and its configuration
// (blocking: the opposite of 1.0's returnImmediately; historyLength; pushNotificationConfig).
SendMessageRequest send_params_from_json(const json::value& v);
// A webhook in 0.3's JSON: {"id", "url", "token", "authentication": {"schemes": ["Bearer"], "credentials"}} (the
// first scheme is the one used).
PushNotificationConfig push_config_from_json(const json::value& v);
// tasks/pushNotificationConfig/*'s TaskPushNotificationConfig: {"taskId", "pushNotificationConfig": {...}}.
json::value to_json(const PushNotificationConfig& config);

}  // namespace adk::a2a::v03
