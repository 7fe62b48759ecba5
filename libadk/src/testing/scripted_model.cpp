#include <adk/core/clock.hpp>
#include <adk/testing/scripted_model.hpp>

#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>

namespace adk::testing {

ScriptedModel::Turn::Turn(LlmResponse response)
{
    responses.push_back(std::move(response));
}

ScriptedModel::Turn ScriptedModel::Turn::streamed(std::vector<LlmResponse> chunks)
{
    Turn t(LlmResponse{});
    t.responses = std::move(chunks);
    t.chunked = true;
    return t;
}

ScriptedModel::Turn ScriptedModel::Turn::raise(Error error)
{
    Turn t(LlmResponse{});
    t.responses.clear();
    t.failure = std::move(error);
    return t;
}

ScriptedModel::Turn& ScriptedModel::Turn::then_hang()
{
    hang = true;
    return *this;
}

ScriptedModel::Turn ScriptedModel::chunks(std::vector<std::string> texts)
{
    std::vector<LlmResponse> chunks;
    for (auto& text : texts)
        chunks.push_back(LlmResponse::text(std::move(text)));
    return Turn::streamed(std::move(chunks));
}

ScriptedModel::ScriptedModel(std::vector<Turn> turns, std::string name)
    : name_(std::move(name)), turns_(turns.begin(), turns.end())
{
}

std::vector<LlmRequest> ScriptedModel::requests() const
{
    std::lock_guard lock(mutex_);
    return requests_;
}

std::size_t ScriptedModel::turns_left() const
{
    std::lock_guard lock(mutex_);
    return turns_.size();
}

namespace {

// The chunks of a chunked turn joined into one response, for a caller that does not stream.
LlmResponse joined(const std::vector<LlmResponse>& chunks)
{
    LlmResponse out(Content("model", {}));
    std::string text;
    for (const auto& c : chunks) {
        if (c.content)
            for (const Part& p : c.content->parts) {
                if (p.text && !p.thought)
                    text += *p.text;
                else
                    out.content->parts.push_back(p);
            }
        if (c.finish_reason)
            out.finish_reason = c.finish_reason;
        if (c.usage_metadata)
            out.usage_metadata = c.usage_metadata;
    }
    if (!text.empty())
        out.content->parts.insert(out.content->parts.begin(), Part::from_text(text));
    return out;
}

}  // namespace

asio::awaitable<Stream<LlmResponse>> ScriptedModel::generate(LlmRequest request, bool stream)
{
    Turn turn(LlmResponse{});
    {
        std::lock_guard lock(mutex_);
        requests_.push_back(std::move(request));
        if (turns_.empty())
            throw Error(errc::invalid_argument, "ScriptedModel '" + name_ + "' has no turn left for request " +
                                                    std::to_string(requests_.size()) +
                                                    ": script one more turn, or find why the agent calls again");
        turn = std::move(turns_.front());
        turns_.pop_front();
    }
    if (turn.failure)
        throw *turn.failure;

    std::vector<LlmResponse> out;
    if (turn.chunked && stream) {
        out = std::move(turn.responses);
        for (auto& r : out)
            r.partial = true;
        if (!out.empty() && !out.back().finish_reason)
            out.back().finish_reason = "STOP";
    } else if (turn.chunked) {
        out.push_back(joined(turn.responses));
    } else {
        out = std::move(turn.responses);
    }
    bool hang = turn.hang;
    auto producer = [out = std::move(out), hang](Sink<LlmResponse> sink) mutable -> asio::awaitable<void> {
        for (std::size_t i = 0; i < out.size(); ++i) {
            if (i > 0)  // each chunk a wake-up of its own, as a model's chunks come from its socket
                co_await asio::post(co_await asio::this_coro::executor, asio::use_awaitable);
            co_await sink.emit(std::move(out[i]));
        }
        if (hang) {
            adk::Timer forever(co_await asio::this_coro::executor, std::chrono::hours(1));
            co_await forever.async_wait(asio::use_awaitable);
        }
    };
    co_return spawn_stream<LlmResponse>(co_await asio::this_coro::executor, std::move(producer));
}

}  // namespace adk::testing
