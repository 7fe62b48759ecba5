// adk::a2a's data model read from any JSON: as each of the protocol's types, a document either fails with
// adk::Error or gives a value that is written as JSON and reads back the same (a double within a unit in the
// last place: adk::fuzz::json_close), written again the same. Ids read are always valid ids. A2A 0.3's messages
// and send params likewise (what 0.3's JSON carries reads back the same). A card's security schemes read as an
// auth config (or refused with adk::Error), and any document as a credential presented for each kind of scheme:
// what is presented is always a header HTTP allows and a query of unreserved or percent-encoded characters.
#include <adk/a2a/card_auth.hpp>
#include <adk/a2a/types.hpp>
#include <adk/a2a/v03.hpp>
#include <adk/core/content.hpp>
#include <adk/core/json_limits.hpp>
#include <adk/net/url.hpp>

#include "fuzz.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_from.hpp>
#include <boost/json/value_to.hpp>

namespace a2a = adk::a2a;
namespace json = boost::json;

namespace {

template <class T>
void round_trip(const json::value& v)
{
    T read;
    if (!adk::fuzz::only_adk_errors([&] { read = json::value_to<T>(v); }))
        return;
    const json::value written = json::value_from(read);
    T again;
    const bool reread = adk::fuzz::only_adk_errors([&] { again = json::value_to<T>(json::parse(json::serialize(written))); });
    adk::fuzz::check(reread, "what was read and written reads back");
    adk::fuzz::check(adk::fuzz::json_close(json::value_from(again), written), "what is written reads back the same");
}

void check_ids(const a2a::Message& m)
{
    adk::fuzz::check(m.parts.size() <= adk::max_content_parts, "a message read holds at most max_content_parts parts");
    adk::fuzz::check(a2a::valid_id(m.message_id), "a message read has a valid id");
    adk::fuzz::check(m.context_id.empty() || a2a::valid_id(m.context_id), "a context id read is valid");
    adk::fuzz::check(m.task_id.empty() || a2a::valid_id(m.task_id), "a task id read is valid");
}

// A credential presented for `scheme`: adk::Error, or headers that cannot split a request and a query that
// cannot add a parameter or leave the URL.
void present(const json::object& scheme, const json::object& answered)
{
    a2a::PresentedCredential p;
    if (!adk::fuzz::only_adk_errors([&] { p = a2a::present_credential(scheme, answered); }))
        return;
    for (const auto& header : p.headers)
        adk::fuzz::check(adk::fuzz::only_adk_errors([&] { adk::net::validate_header(header.first, header.second); }),
                         "a presented header is one HTTP allows");
    const std::size_t equals = p.query.find('=');
    adk::fuzz::check(p.query.empty() || (equals != std::string::npos &&
                                         p.query.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuv"
                                                                   "wxyz0123456789-._~%=") == std::string::npos &&
                                         p.query.find('=', equals + 1) == std::string::npos),
                     "a presented query is one encoded parameter");
}

void check_auth(const json::value& v)
{
    a2a::AgentCard card;
    if (adk::fuzz::only_adk_errors([&] { card = json::value_to<a2a::AgentCard>(v); })) {
        std::optional<a2a::CardAuth> auth;
        if (adk::fuzz::only_adk_errors([&] { auth = a2a::card_auth(card, "http://h/a"); }) && auth) {
            const json::value* scheme = auth->auth_config.if_contains("authScheme");
            adk::fuzz::check(scheme && scheme->is_object(), "an auth config has its scheme");
            present(scheme->get_object(),
                    json::object{{"rawAuthCredential", json::object{{"apiKey", "k"},
                                                                    {"http", json::object{{"credentials",
                                                                        json::object{{"token", "t"},
                                                                                     {"username", "u"}}}}},
                                                                    {"oauth2", json::object{{"accessToken", "t"}}}}}});
        }
    }
    if (!v.is_object())
        return;
    for (const char* scheme : {R"({"type": "http", "scheme": "bearer"})", R"({"type": "http", "scheme": "basic"})",
                               R"({"type": "apiKey", "in": "header", "name": "K"})",
                               R"({"type": "apiKey", "in": "query", "name": "k"})",
                               R"({"type": "apiKey", "in": "cookie", "name": "c"})", R"({"type": "oauth2"})"})
        present(json::parse(scheme).get_object(), v.get_object());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, std::size_t size)
{
    boost::system::error_code ec;
    const json::value v = adk::parse_json(adk::fuzz::as_text(data, size), ec);
    if (ec)
        return 0;
    round_trip<a2a::Part>(v);
    round_trip<a2a::Message>(v);
    round_trip<a2a::TaskStatus>(v);
    round_trip<a2a::Artifact>(v);
    round_trip<a2a::Task>(v);
    round_trip<a2a::TaskStatusUpdateEvent>(v);
    round_trip<a2a::TaskArtifactUpdateEvent>(v);
    round_trip<a2a::PushNotificationConfig>(v);
    round_trip<a2a::SendMessageRequest>(v);
    round_trip<a2a::ListTasksRequest>(v);
    round_trip<a2a::ListTasksResponse>(v);
    round_trip<a2a::AgentCard>(v);
    check_auth(v);
    a2a::Message m;
    if (adk::fuzz::only_adk_errors([&] { m = json::value_to<a2a::Message>(v); }))
        check_ids(m);
    a2a::StreamResponse r;
    if (adk::fuzz::only_adk_errors([&] { r = a2a::stream_response_from_json(v); })) {
        const json::value written = a2a::to_json(r);
        a2a::StreamResponse again;
        const bool reread = adk::fuzz::only_adk_errors(
            [&] { again = a2a::stream_response_from_json(json::parse(json::serialize(written))); });
        adk::fuzz::check(reread && again.index() == r.index(), "a stream response reads back as the same case");
        adk::fuzz::check(adk::fuzz::json_close(a2a::to_json(again), written), "a stream response reads back the same");
    }
    a2a::Message legacy;
    if (adk::fuzz::only_adk_errors([&] { legacy = a2a::v03::message_from_json(v); })) {
        check_ids(legacy);
        const json::value written = a2a::v03::to_json(legacy);
        a2a::Message again;
        const bool reread = adk::fuzz::only_adk_errors(
            [&] { again = a2a::v03::message_from_json(json::parse(json::serialize(written))); });
        adk::fuzz::check(reread, "a 0.3 message written reads back");
        adk::fuzz::check(adk::fuzz::json_close(a2a::v03::to_json(again), written), "a 0.3 message reads back the same");
    }
    a2a::StreamResponse legacy_update;
    if (adk::fuzz::only_adk_errors([&] { legacy_update = a2a::v03::stream_response_from_json(v); })) {
        const json::value written = a2a::v03::to_json(legacy_update);
        a2a::StreamResponse again;
        const bool reread = adk::fuzz::only_adk_errors(
            [&] { again = a2a::v03::stream_response_from_json(json::parse(json::serialize(written))); });
        adk::fuzz::check(reread && again.index() == legacy_update.index(), "a 0.3 result reads back as the same kind");
        adk::fuzz::check(adk::fuzz::json_close(a2a::v03::to_json(again), written), "a 0.3 result reads back the same");
    }
    a2a::Artifact artifact;
    if (adk::fuzz::only_adk_errors([&] { artifact = json::value_to<a2a::Artifact>(v); }))
        adk::fuzz::check(artifact.parts.size() <= adk::max_content_parts, "an artifact read holds at most max_content_parts parts");
    a2a::PushNotificationConfig webhook;
    if (adk::fuzz::only_adk_errors([&] { webhook = a2a::v03::push_config_from_json(v); })) {
        const json::value written = a2a::v03::to_json(webhook).at("pushNotificationConfig");
        a2a::PushNotificationConfig again;
        const bool reread = adk::fuzz::only_adk_errors(
            [&] { again = a2a::v03::push_config_from_json(json::parse(json::serialize(written))); });
        adk::fuzz::check(reread && again.url == webhook.url && again.id == webhook.id && again.token == webhook.token &&
                             again.authentication == webhook.authentication,
                         "a 0.3 webhook reads back the same");
    }
    a2a::SendMessageRequest params;
    if (adk::fuzz::only_adk_errors([&] { params = a2a::v03::send_params_from_json(v); }))
        check_ids(params.message);
    return 0;
}
