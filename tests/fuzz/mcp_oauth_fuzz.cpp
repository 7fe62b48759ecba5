// What an MCP server (or its authorization server) sends that adk::mcp's OAuth client reads before it trusts
// anything: the WWW-Authenticate challenge, the URL the browser came back to, and the URLs the metadata names; and
// what a client answers to adk_request_credential (OAuthOptions::per_user), and the request built for it, which
// carries the authorization URL unchanged and reads back as it was written.
// Nothing throws but adk::Error for a URL it refuses; a challenge's values come from the header (none is longer
// than it); a resource covers a server only on the server's own origin.
#include <adk/core/error.hpp>
#include <adk/mcp/oauth.hpp>
#include <adk/net/url.hpp>

#include "fuzz.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

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
    boost::system::error_code ec;
    const boost::json::value answered = boost::json::parse(text, ec);
    if (!ec && answered.is_object())
        (void)mcp::authorization_answer(answered.get_object());
    const std::string url(text);
    (void)boost::json::parse(boost::json::serialize(boost::json::value(url)), ec);
    if (!ec) {  // URLs come from JSON metadata: valid UTF-8
        const boost::json::object request = mcp::authorization_request("https://mcp.example.com/mcp", url);
        adk::fuzz::check(request.at("exchangedAuthCredential").at("oauth2").at("authUri").as_string() == url,
                         "the request carries the authorization URL as it was");
        adk::fuzz::check(boost::json::parse(boost::json::serialize(request)) == request, "the request reads back");
    }
    const std::string server = "https://mcp.example.com/api/mcp";
    if (mcp::resource_covers(text, server))
        adk::fuzz::check(adk::net::parse_url(text).origin() == adk::net::parse_url(server).origin(),
                         "a resource covers a server of its own origin only");
    try {
        for (const std::string& built : mcp::protected_resource_metadata_urls(text))
            (void)adk::net::parse_url(built);  // what is built from an accepted URL parses again
        for (const std::string& built : mcp::authorization_server_metadata_urls(text))
            (void)adk::net::parse_url(built);
    } catch (const adk::Error&) {
        // a URL refused, with what is wrong
    }
    return 0;
}
