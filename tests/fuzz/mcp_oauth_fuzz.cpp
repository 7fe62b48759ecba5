// What an MCP server (or its authorization server) sends that adk::mcp's OAuth client reads before it trusts
// anything: the WWW-Authenticate challenge, the URL the browser came back to, and the URLs the metadata names.
// Nothing throws but adk::Error for a URL it refuses; a challenge's values come from the header (none is longer
// than it); a resource covers a server only on the server's own origin.
#include <adk/core/error.hpp>
#include <adk/mcp/oauth.hpp>
#include <adk/net/url.hpp>

#include "fuzz.hpp"

namespace mcp = adk::mcp;

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size)
{
    const std::string_view text = adk::fuzz::as_text(data, size);
    if (auto challenge = mcp::parse_bearer_challenge(text)) {
        for (const std::string* value : {&challenge->scope, &challenge->resource_metadata, &challenge->error,
                                         &challenge->error_description})
            adk::fuzz::check(value->size() <= text.size(), "a challenge's values come from the header");
    }
    (void)mcp::query_parameters(text);
    const std::string server = "https://mcp.example.com/api/mcp";
    if (mcp::resource_covers(text, server))
        adk::fuzz::check(adk::net::parse_url(text).origin() == adk::net::parse_url(server).origin(),
                         "a resource covers a server of its own origin only");
    try {
        for (const std::string& url : mcp::protected_resource_metadata_urls(text))
            (void)adk::net::parse_url(url);  // what is built from an accepted URL parses again
        for (const std::string& url : mcp::authorization_server_metadata_urls(text))
            (void)adk::net::parse_url(url);
    } catch (const adk::Error&) {
        // a URL refused, with what is wrong
    }
    return 0;
}
