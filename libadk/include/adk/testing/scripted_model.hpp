// ScriptedModel: a Model that replays scripted turns and records every request, for tests of agents
// (ours and users'). Nothing is faked below it: agents run their real loop against it.
#pragma once

#include <adk/core/error.hpp>
#include <adk/models/model.hpp>

#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace adk::testing {

class ScriptedModel final : public Model {
public:
    // One model call's answer.
    class Turn {
    public:
        Turn(LlmResponse response);  // NOLINT: implicit, so a list of responses reads as a script
        // Streamed as chunks (partial responses) when the agent streams, one response otherwise. Chunks come a
        // turn of the scheduler apart, as a model's chunks that each come from a read of its socket.
        static Turn streamed(std::vector<LlmResponse> chunks);
        // generate() throws this error, as a provider does on a refused request.
        static Turn raise(Error error);
        // Streams `chunks`, then waits (for an hour) until cancelled: for cancellation tests.
        Turn& then_hang();

        std::vector<LlmResponse> responses;
        std::optional<Error> failure;
        bool chunked = false;
        bool hang = false;
    };

    explicit ScriptedModel(std::vector<Turn> turns, std::string name = "scripted-model");

    // A streamed turn of text chunks: "It is ", "sunny ", "in Paris.".
    static Turn chunks(std::vector<std::string> texts);

    std::string_view name() const override { return name_; }
    asio::awaitable<Stream<LlmResponse>> generate(LlmRequest request, bool stream) override;

    // Every request received, in order.
    std::vector<LlmRequest> requests() const;
    std::size_t turns_left() const;

private:
    std::string name_;
    mutable std::mutex mutex_;
    std::deque<Turn> turns_;
    std::vector<LlmRequest> requests_;
};

}  // namespace adk::testing
