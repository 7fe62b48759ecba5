// adk::mcp's JSON-RPC codec: any bytes decode without throwing; whatever is read as a message writes as one
// line and reads back as the same message (a double within a unit in the last place); whatever is refused is
// answered with an error response that reads back with the same id.
#include <adk/mcp/jsonrpc.hpp>

#include "fuzz.hpp"

#include <type_traits>

namespace rpc = adk::mcp::jsonrpc;

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size)
{
    const rpc::Decoded decoded = rpc::decode(adk::fuzz::as_text(data, size));
    adk::fuzz::check(!decoded.items.empty(), "a decode gives at least one item");
    for (const rpc::Item& item : decoded.items) {
        std::visit(
            [](const auto& read) {
                using T = std::decay_t<decltype(read)>;
                if constexpr (std::is_same_v<T, rpc::Invalid>) {
                    const rpc::Item answer = rpc::decode_value(rpc::to_json(read));
                    const auto* response = std::get_if<rpc::Response>(&answer);
                    adk::fuzz::check(response && !response->ok() && response->id == read.id,
                                     "a refusal is answered with an error response of the same id");
                } else {
                    const rpc::Message message(read);
                    const std::string text = rpc::encode(message);
                    adk::fuzz::check(text.find('\n') == std::string::npos, "a message is written on one line");
                    const rpc::Decoded again = rpc::decode(text);
                    adk::fuzz::check(again.items.size() == 1 && !again.batch, "a message reads back as one");
                    const auto* back = std::get_if<T>(&again.items[0]);
                    // The same message, but for a double a unit in the last place off (see json_close).
                    adk::fuzz::check(back && adk::fuzz::json_close(rpc::to_json(rpc::Message(*back)), rpc::to_json(message)),
                                     "a message reads back the same");
                }
            },
            item);
    }
    return 0;
}
