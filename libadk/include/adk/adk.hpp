// The umbrella header: everything a user of adk-cpp needs.
#pragma once

#include <adk/agents/agent.hpp>
#include <adk/agents/callback_context.hpp>
#include <adk/agents/event_sink.hpp>
#include <adk/agents/invocation_context.hpp>
#include <adk/agents/run_config.hpp>
#include <adk/core/content.hpp>
#include <adk/core/error.hpp>
#include <adk/core/event.hpp>
#include <adk/core/ids.hpp>
#include <adk/core/stream.hpp>
#include <adk/runner/runner.hpp>
#include <adk/sessions/in_memory_session_service.hpp>
#include <adk/sessions/session.hpp>
#include <adk/sessions/session_service.hpp>
#include <adk/sessions/state.hpp>
