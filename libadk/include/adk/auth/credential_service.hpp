// CredentialService: where the credentials that users give to tools are kept, per app, user and credential key.
//
// A tool declared with Tool::set_auth_config(auth_config) runs only once a credential for that auth config is
// kept for the user. Until then its calls ask the client through adk_request_credential (args
// {"functionCallId", "authConfig", "message"}, adk/tools/tool_confirmation.hpp) and the invocation pauses. The
// client answers with a functionResponse of that call's id whose response is the authConfig with its credential
// filled in (exchangedAuthCredential, or rawAuthCredential). The Runner keeps that answer here, stores the
// event with the credential taken out (a session's history is no place for secrets), and the tool runs; it
// reads the credential with ToolContext::load_credential(). Later calls of the same tool by the same user
// find it here and do not ask again.
//
// An auth config is ADK's AuthConfig JSON: {"authScheme": {...}, "rawAuthCredential": {...},
// "exchangedAuthCredential": {...}, "credentialKey": "..."}.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>

namespace adk {

namespace asio = boost::asio;
namespace json = boost::json;

class CredentialKey {
public:
    CredentialKey(std::string app_name_, std::string user_id_, std::string key_)
        : app_name(std::move(app_name_)), user_id(std::move(user_id_)), key(std::move(key_))
    {
    }
    std::string app_name;
    std::string user_id;
    std::string key;  // credential_key_of(auth_config)

    friend auto operator<=>(const CredentialKey&, const CredentialKey&) = default;
};

// The auth config's "credentialKey" when it has one; otherwise a key made from its authScheme and
// rawAuthCredential, so that two tools with the same scheme and client share the credential.
std::string credential_key_of(const json::object& auth_config);

class CredentialService {
public:
    virtual ~CredentialService() = default;
    // The auth config kept for the key, its credential filled in; nullopt when none is kept.
    virtual asio::awaitable<std::optional<json::object>> load_credential(CredentialKey key) = 0;
    virtual asio::awaitable<void> save_credential(CredentialKey key, json::object auth_config) = 0;
};

// Kept in memory: gone when the process ends (a tool then asks again). At most `max_credentials` are kept:
// past it, the one used (loaded or saved) longest ago goes, and its tool asks its user again; so users a client
// makes up by the thousand cannot fill the process. Safe from any thread.
class InMemoryCredentialService final : public CredentialService {
public:
    explicit InMemoryCredentialService(std::size_t max_credentials = 100000);
    asio::awaitable<std::optional<json::object>> load_credential(CredentialKey key) override;
    asio::awaitable<void> save_credential(CredentialKey key, json::object auth_config) override;
    std::size_t size() const;

private:
    class Kept {
    public:
        json::object auth_config;
        std::uint64_t used = 0;  // its stamp in used_
    };
    mutable std::mutex mutex_;
    std::size_t max_;
    std::uint64_t uses_ = 0;
    std::map<CredentialKey, Kept> credentials_;
    std::map<std::uint64_t, CredentialKey> used_;  // the keys by their last use, oldest first
};

}  // namespace adk
