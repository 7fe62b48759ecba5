// An app's agent card, made from its agent tree: the root agent's name and description, a skill for the root,
// one for each of its tools and one for each sub-agent; the interfaces an adk::a2a::Server serves (JSON-RPC and
// HTTP+JSON at one URL, A2A 1.0); a bearer security scheme when the server takes a token.
#pragma once

#include <adk/a2a/types.hpp>
#include <adk/agents/agent.hpp>

#include <string>

namespace adk::a2a {

class CardOptions {
public:
    CardOptions() = default;
    std::string url;        // where the app's A2A endpoints are: "http://127.0.0.1:8000/a2a/weather"
    std::string version = "0.1.0";  // the agent's own version, not the protocol's
    bool bearer = false;    // requests must carry "Authorization: Bearer <token>"
    bool streaming = true;
    bool push_notifications = false;
};

AgentCard agent_card(const Agent& root, const CardOptions& options);

}  // namespace adk::a2a
